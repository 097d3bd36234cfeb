"""Text renderers: the view and the timeline for a terminal (numbers rounded).

They read the same JSON-ready data as ``--json`` prints, so the two never
disagree. Each text of the run is printed ``visible`` as a field: in one
line, so a turn's newline cannot break its row.
"""

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from memtape.core.plural import counted
from memtape.core.visible import quoted, visible
from memtape.projections.meter import Meter

if TYPE_CHECKING:
    from memtape.projections.timeline import TimelineRow

_ANSI = {"red": "31", "green": "32", "yellow": "33", "dim": "2", "bold": "1"}


def paint(text: str, style: str, color: bool) -> str:
    """``text`` in an ANSI ``style`` when ``color`` is on, unchanged otherwise."""
    return f"\033[{_ANSI[style]}m{text}\033[0m" if color else text


OVERFLOW = 10
"""The most cells the overflow past a full bar takes."""

NARROWEST_BAR = 10
"""The narrowest a bar becomes to fit a narrow terminal."""


def meter_line(meter: Meter, color: bool, width: int = 40, room: int | None = None) -> str:
    """A bar scaled so the budget fills ``width``; the overflow shows past it.

    With ``room`` (the cells left on the line for the meter), the bar is narrowed, down
    to ``NARROWEST_BAR``, so that the meter at its longest fits: a full overflow, the
    figures (up to ten times the budget), and ``OVER BUDGET``.
    """
    if room is not None:
        figures = 2 * len(str(meter.budget)) + 2
        width = max(NARROWEST_BAR, min(width, room - OVERFLOW - figures - len("  OVER BUDGET")))
    filled = round(meter.tokens / meter.budget * width)
    bar = "█" * min(filled, width) + "·" * max(width - filled, 0)
    overflow = "▶" * min(max(filled - width, 0), OVERFLOW)
    label = f"{meter.tokens}/{meter.budget}"
    if meter.over:
        return paint(f"{bar}{overflow} {label} OVER BUDGET", "red", color)
    return paint(f"{bar} {label}", "green", color)


def render_view(
    view: dict[str, Any], color: bool = False, width: int | None = None
) -> Iterator[str]:
    """The lines of ``memtape show``; the meter's bar narrowed to fit ``width``, if given."""
    yield paint(f"at event {view['at']} · clock t={view['clock']:g}", "bold", color)
    if view["window"] is not None:
        yield from _window_lines(view["window"], color, width)
    if view["store"] is not None:
        yield from _store_lines(view["store"], view["clock"])
    if view["episodes"] is not None:
        yield from _memory_lines(view)


def _window_lines(window: dict[str, Any], color: bool, width: int | None) -> Iterator[str]:
    meter = Meter(window["tokens"], window["budget"])
    head = "window  "
    yield head + meter_line(meter, color, room=None if width is None else width - len(head))
    for n, block in enumerate(window.get("blocks", ())):
        tier = "BLOCK" if n == 0 else "     "
        held = f"v{block['version']}, {block['chars']}/{block['limit']} chars"
        if block.get("read_only"):
            held += ", read-only"
        said = f"{visible(block['label'])} ({held}): {visible(block['value'])}"
        yield f"  {tier} {said}  ({block['tokens']})"
    cold = window["cold"]
    if cold["turns"]:
        held = f"{counted(cold['turns'], 'turn')}, {counted(cold['tokens'], 'token')}"
        yield f"  COLD  {visible(cold['gist'])}  ({held})"
    else:
        yield "  COLD  (empty)"
    for n, item in enumerate(window["warm"]):
        tier = "WARM" if n == 0 else "    "
        yield f"  {tier}  turn {item['turn']:>3}  {visible(item['text'])}  ({item['tokens']})"
    if not window["warm"]:
        yield "  WARM  (empty)"
    for n, turn in enumerate(window["hot"]):
        tier = "HOT " if n == 0 else "    "
        said = f"{visible(turn['role'])}: {visible(turn['text'])}"
        yield f"  {tier}  turn {turn['turn']:>3}  {said}  ({turn['tokens']})"
    if not window["hot"]:
        yield "  HOT   (empty)"
    # Shown only while it holds something: most runs never recall.
    for n, item in enumerate(window.get("recalled", ())):
        tier = "RECALL" if n == 0 else "      "
        yield f"  {tier}  turn {item['turn']:>3}  {visible(item['text'])}  ({item['tokens']})"
    dropped = ", ".join(str(t) for t in window["dropped"]) or "none"
    yield paint(f"  dropped turns: {dropped}", "dim", color)


def _store_lines(store: dict[str, Any], clock: float) -> Iterator[str]:
    ranking = store["ranking"]
    if "unscored" in store:
        yield f"store  {len(ranking)} of {store['capacity']} active facts, unscored"
        yield f"  {visible(store['unscored'], 'message')}"
    else:
        yield f"store  {len(ranking)} of {store['capacity']} active facts, ranked at t={clock:g}"
    if ranking:
        names = list(ranking[0]["factors"])
        yield "  " + "  ".join(["id", "key".ljust(12), "score ", *names, "reads", "text"])
        for fact in ranking:
            factors = "  ".join(f"{fact['factors'][n]:.4f}".ljust(len(n)) for n in names)
            key = visible(fact["key"]).ljust(12)
            yield (
                f"  {fact['id']:>2}  {key}  {_score(fact['score'])}  {factors}  "
                f"{fact['reads']:>5}  {visible(fact['text'])}"
            )
    for fact in store["retired"]:
        yield (
            f"  retired  {fact['id']} {quoted(fact['key'])}: {visible(fact['text'])}  "
            f"({_retired_by(fact['superseded_by'])} at t={fact['retired_at']:g})"
        )
    for fact in store["evicted"]:
        yield (
            f"  evicted  {fact['id']} {quoted(fact['key'])}: {visible(fact['text'])}  "
            f"(score {fact['score']:.4f} at t={fact['evicted_at']:g})"
        )
    for fact in store.get("expired", ()):
        yield (
            f"  expired  {fact['id']} {quoted(fact['key'])}: {visible(fact['text'])}  "
            f"(at t={fact['expired_at']:g}: {visible(fact['reason'])})"
        )


def _score(score: float | None) -> str:
    return "     -" if score is None else f"{score:.4f}"


def _memory_lines(view: dict[str, Any]) -> Iterator[str]:
    yield f"memory  {counted(len(view['episodes']), 'episode')} pending"
    for episode in view["episodes"]:
        yield f"  episode {episode['id']}: {visible(episode['text'])}"
    for fact in view["semantic"]:
        yield (
            f"  semantic    {visible(fact['text'])}  (key {visible(fact['key'])}, importance "
            f"{fact['importance']:g}, from episode {fact['episode']})"
        )
    for rule in view["procedural"]:
        yield f"  procedural  {visible(rule['text'])}  (from episode {rule['episode']})"


def render_timeline(rows: "Iterable[TimelineRow]", color: bool = False) -> Iterator[str]:
    """The lines of ``memtape timeline``: position, step, type, meter, summary.

    The meter's column is as wide as the run's largest figures, so a 4-digit
    budget does not run into the summary. An episode's line shows its text whole
    (a terminal's width wraps it, ``memtape.projections.wrapping``).
    """
    rows = list(rows)
    meters = [row.meter for row in rows if row.meter is not None]
    # At least the width two-digit budgets always had, and two spaces after the budget.
    tokens = max([4, *(len(str(meter.tokens)) for meter in meters)])
    budget = max([4, *(len(str(meter.budget)) + 2 for meter in meters)])
    for row in rows:
        gauge = ""
        if row.meter is not None:
            gauge = f"{row.meter.tokens:>{tokens}}/{row.meter.budget:<{budget}}"
            gauge = paint(gauge, "red" if row.meter.over else "green", color) + " "
        name = type(row.event).__name__
        yield f"{row.at:>5}  step {row.step:>4}  {name:<19} {gauge}{row.summary}"


def _retired_by(superseded_by: int | None) -> str:
    """Why a retired fact left: the fact that superseded it, or a judged write's DELETE."""
    if superseded_by is None:
        return "deleted by a judged write"
    return f"superseded by {superseded_by}"
