"""The bench's comparison table, rendered with rich.

A scenario's name, a policy's and its parameters are text from files: each
cell holds them ``visible``, as rich ``Text`` (never read as markup).
"""

from collections import Counter
from collections.abc import Sequence
from typing import Any

import attrs
from rich import box
from rich.table import Table
from rich.text import Text

from memtape.core.errors import BadInput
from memtape.core.plural import counted
from memtape.core.visible import quoted, visible
from memtape.lab.bench import Result
from memtape.projections.metrics import ProbeLoss
from memtape.scenarios.probes import PROBE_KINDS

COLUMNS = (
    ("peak_tokens", "peak"),
    ("tokens_resent", "re-sent"),
    ("usd", "usd"),
    ("billed_input_tokens", "billed in"),
    ("cache_read_tokens", "cache read"),
    ("cache_write_tokens", "cache write"),
    ("cache_breaks", "breaks"),
    ("compactions", "compactions"),
    ("probe_retention", "probes kept"),
    ("harmful_losses", "harmful"),
    ("hit_at_k", "hit@k"),
    ("stale_reads", "stale reads"),
    ("evictions", "evictions"),
    ("regret", "regret"),
    ("decide_us_per_command", "µs/command"),
    ("llm_calls", "llm calls"),
    ("llm_cache_hits", "cached"),
    ("llm_prompt_tokens", "tok in"),
    ("llm_completion_tokens", "tok out"),
    ("llm_seconds", "llm s"),
    ("answers_correct", "answers"),
    ("answers_judged", "judged"),
)
"""Each metric's column and heading, in the JSON contract's order but for the cost ones,
beside the tokens re-sent (``peak_over_budget`` has no column of its own: it marks the
peak, with a footnote)."""

OVER_BUDGET_MARKS = {"floor": "*", "unbounded": "†", "unexplained": "!"}
"""The mark after a peak over the budget, for each cause (``Result.over_budget``)."""

OVER_BUDGET_NOTES = {
    "floor": (
        "peak over budget because the policy's floor was: what its own rules must keep "
        "(its recent turns, pinned turns, the newest turn, a summary) held more than the budget"
    ),
    "unbounded": "peak over budget: the policy promises no budget bound",
    "unexplained": (
        "peak over budget beyond the policy's floor: it breaks its BUDGET promise "
        "(memtape check finds the turn)"
    ),
}
"""The footnote under the table for each mark used."""

LLM_COLUMNS = frozenset(name for name, _ in COLUMNS if name.startswith("llm_"))
"""The model columns, shown only when some result asked a model."""

COST_COLUMNS = frozenset(
    ("usd", "billed_input_tokens", "cache_read_tokens", "cache_write_tokens", "cache_breaks")
)
"""The cost columns, shown only when some result was priced (a ``[cost] model``)."""

ANSWER_COLUMNS = frozenset({"answers_correct", "answers_judged"})
"""The columns of ``bench --judge``, shown only when some result was judged."""

ASKED_FOR = frozenset({"harmful_losses"})
"""The columns shown only when ``--columns`` names them: the JSON always has them."""

LEAST_IMPORTANT_FIRST = (
    "llm_seconds",
    "llm_cache_hits",
    "llm_completion_tokens",
    "llm_prompt_tokens",
    "decide_us_per_command",
    "cache_write_tokens",
    "cache_read_tokens",
    "billed_input_tokens",
    "stale_reads",
    "evictions",
    "regret",
    "llm_calls",
    "cache_breaks",
    "answers_judged",
    "harmful_losses",
    "compactions",
    "hit_at_k",
    "peak_tokens",
    "tokens_resent",
    "usd",
    "probe_retention",
    "answers_correct",
)
"""The order in which metric columns are left out of a table too wide for its terminal,
after those no row has a value in (all ``-``): timings and model accounting first, the
tokens re-sent, what they cost and the probes kept last (what a comparison is for).
``--columns`` chooses them instead."""

LAST_TO_GO = ("tokens_resent", "usd", "probe_retention")
"""The columns that, rather than be left out, have the policy and its params share a
column (wrapping in it) to make room."""

GAP = 3
"""The characters between two columns: padding, the divider, padding."""

TEXT_MIN_WIDTHS = {"scenario": 10, "params": 12}
"""The narrowest the wrapping text columns become before metric columns are left out
(never narrower than their longest word, up to ``LONGEST_WORD``)."""

LONGEST_WORD = 20
"""The longest word a text column makes room for; a longer one (a path) is cut to fit."""

SHARED_HEADING = "policy, params"
"""The heading of the column the policy and its params share on a narrow terminal."""


@attrs.frozen
class Fitted:
    """The table, and the metric columns left out of it to fit ``width`` (none when
    everything fits, or when no width was given); ``shared`` when the policy and its
    params share a column to make room."""

    table: Table
    left_out: tuple[str, ...]
    width: int | None
    shared: bool = False
    empty: tuple[str, ...] = ()
    """The left-out columns that had no value in any row (left out first)."""


def column_names(chosen: str) -> tuple[str, ...]:
    """The metric columns ``--columns a,b,c`` names, in its order; an unknown name is
    refused with the list of the known ones."""
    known = [name for name, _ in COLUMNS]
    names = tuple(name.strip() for name in chosen.split(",") if name.strip())
    unknown = [name for name in names if name not in known]
    if unknown or not names:
        problem = f"unknown column {unknown[0]!r}" if unknown else "no column named"
        raise BadInput(f"--columns: {problem} (known: {', '.join(known)})")
    return names


def comparison_table(
    results: Sequence[Result], *, width: int | None = None, columns: Sequence[str] | None = None
) -> Fitted:
    """One row per result that applies: the scenario, the policy and its notable parameters
    (the shared one and those off the defaults; ``--json`` has them all), each metric,
    and after a peak over the budget its cause's mark (``over_budget_lines`` explains it).
    A policy with nothing to apply to the scenario has its row too, saying why, without
    metrics.

    ``columns`` chooses the metric columns (default: every one, the model ones when a
    model was asked, the cost ones when a run was priced). Within ``width`` no number is
    cut: the scenario and params columns wrap, and metric columns are left out in
    ``LEAST_IMPORTANT_FIRST``'s order until the rest fit (``left_out_line`` says which);
    when that would leave out one of ``LAST_TO_GO`` with a value in some row, the policy
    and its params share one column
    if that keeps more.

    No edge, so no blank line above or below it and no padding at the ends of its lines.
    """
    applied = [r for r in results if r.idle is None and r.params is not None]
    asked = any(r.metrics.get("llm_calls") for r in applied)
    priced = any(r.metrics.get("usd") is not None for r in applied)
    judged = any(r.metrics.get("answers_correct") is not None for r in applied)
    if columns is None:
        names = [
            n
            for n, _ in COLUMNS
            if (asked or n not in LLM_COLUMNS)
            and (priced or n not in COST_COLUMNS)
            and (judged or n not in ANSWER_COLUMNS)
            and n not in ASKED_FOR
        ]
    else:
        names = list(dict.fromkeys(columns))
    shown = [r for r in results if r.params is not None or r.idle is not None]
    rows = [_row(result, names) for result in shown]
    texts = {name: [row[3 + i] for row in rows] for i, name in enumerate(names)}
    headings = dict(COLUMNS)
    needed = {name: max([len(headings[name]), *map(len, texts[name])]) for name in names}
    left_out = [] if width is None else _left_out(rows, texts, needed, width, shared=False)
    shared = False
    valued = [name for name in LAST_TO_GO if any(cell != "-" for cell in texts.get(name, ()))]
    if width is not None and any(name in left_out for name in valued):
        sharing = _left_out(rows, texts, needed, width, shared=True)
        shared = len(sharing) < len(left_out)
        left_out = sharing if shared else left_out
    kept = [n for n in names if n not in left_out]
    text_columns = _text_columns(rows, shared=shared)
    widths = [natural for _, _, natural in text_columns]
    if width is not None:
        metrics = sum(needed[name] + GAP for name in kept)
        widths = _spread(text_columns, width - metrics - GAP * (len(text_columns) - 1))
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for (heading, _, _), room in zip(text_columns, widths, strict=True):
        # Without a width, each column is as wide as its cells.
        wide = None if width is None else room
        if heading == "policy":
            table.add_column(heading, no_wrap=True, width=wide)
        else:
            table.add_column(heading, overflow="fold", width=wide)
    for name in kept:
        table.add_column(headings[name], justify="right", no_wrap=True, min_width=needed[name])
    places = [3 + names.index(name) for name in kept]
    for row in rows:
        text = [row[0], f"{row[1]} {row[2]}"] if shared else row[:3]
        table.add_row(*(Text(cell) for cell in text), *(row[i] for i in places))
    empty = tuple(name for name in left_out if all(cell == "-" for cell in texts[name]))
    return Fitted(table, tuple(left_out), width, shared, empty)


def _left_out(
    rows: Sequence[Sequence[str]],
    texts: dict[str, list[str]],
    needed: dict[str, int],
    width: int,
    *,
    shared: bool,
) -> list[str]:
    """The metric columns to leave out, in order, for the rest to fit ``width`` (the policy
    and its params in one column when ``shared``): first those with no value in any row,
    then ``LEAST_IMPORTANT_FIRST``'s."""
    empty = [name for name, cells in texts.items() if all(cell == "-" for cell in cells)]
    ranked = [*empty, *(n for n in LEAST_IMPORTANT_FIRST if n in texts and n not in empty)]
    kept = list(texts)
    fixed = _fixed_width(rows, shared=shared)
    left_out = []
    while kept and fixed + sum(needed[name] + GAP for name in kept) > width:
        name = ranked.pop(0)
        kept.remove(name)
        left_out.append(name)
    return left_out


def left_out_line(fitted: Fitted) -> str | None:
    """The line under a table that had to leave columns out, naming them by heading."""
    if not fitted.left_out:
        return None
    headings = dict(COLUMNS)
    fit = ", ".join(headings[name] for name in fitted.left_out if name not in fitted.empty)
    empty = ", ".join(headings[name] for name in fitted.left_out if name in fitted.empty)
    said = [f"left out to fit {fitted.width} columns: {fit}"] if fit else []
    said += [f"left out, no value in any row: {empty}"] if empty else []
    return f"columns {'; '.join(said)}; --columns to choose"


def _row(result: Result, names: Sequence[str]) -> list[str]:
    """A result's cells: its three text cells, then one per metric of ``names``."""
    if result.idle is not None:
        return [
            visible(result.scenario),
            visible(result.policy),
            f"nothing to apply: {visible(result.idle, 'message')}",
            *(["-"] * len(names)),
        ]
    cells = [_spread_cell(name, result) + _mark(name, result) for name in names]
    return [visible(result.scenario), visible(result.policy), _params(result.notable), *cells]


WITHIN_SPREAD = "~"
"""The mark after a replicated metric whose spread overlaps another policy's on the same
scenario: the difference between them is inside the run-to-run spread."""


def _spread_cell(name: str, result: Result) -> str:
    """A metric's cell: its value, or for replicates the median and its interval
    (``median [low–high]``, the interval left out when it has no width) and
    ``WITHIN_SPREAD`` when another policy's interval overlaps it."""
    value = _cell(name, result.metrics[name])
    replicated = result.spread
    spread = None if replicated is None else replicated.spreads.get(name)
    if replicated is None or spread is None:
        return value
    if spread.high > spread.low:
        value += f" [{_cell(name, spread.low)}–{_cell(name, spread.high)}]"
    return value + (WITHIN_SPREAD if name in replicated.within else "")


def spread_line(results: Sequence[Result]) -> str | None:
    """The line under a table of replicates: how many, which interval, and the mark."""
    spreads = [r.spread for r in results if r.spread is not None]
    if not spreads:
        return None
    replicates = spreads[0].replicates
    kinds = {s.interval for spread in spreads for s in spread.spreads.values()}
    interval = "95% percentile interval" if "percentile-95" in kinds else "range"
    return (
        f"medians of {counted(replicates, 'replicate')} [{interval}]; {WITHIN_SPREAD} the "
        "difference from another policy on the scenario is inside their spread "
        "(within_spread in --json)"
    )


def _fixed_width(rows: Sequence[Sequence[str]], *, shared: bool) -> int:
    """The width of the text columns at their narrowest, with the gaps between them."""
    columns = _text_columns(rows, shared=shared)
    return sum(narrowest for _, narrowest, _ in columns) + GAP * (len(columns) - 1)


def _text_columns(rows: Sequence[Sequence[str]], *, shared: bool) -> list[tuple[str, int, int]]:
    """The text columns, each as its heading, its narrowest width and its natural one (its
    widest cell): the scenario, then the policy and its params, in two columns or
    ``shared`` in one. A policy's name never wraps; no column is narrower than its longest
    word (up to ``LONGEST_WORD``)."""
    scenarios, policies, params = ([row[column] for row in rows] for column in range(3))
    scenario = min(TEXT_MIN_WIDTHS["scenario"], max([8, *map(len, scenarios)]))
    columns = [
        (
            "scenario",
            max(scenario, _longest_word(scenarios)),
            max([len("scenario"), *map(len, scenarios)]),
        )
    ]
    policy = max([len("policy"), *map(len, policies)])
    if shared:
        together = [f"{name} {values}" for name, values in zip(policies, params, strict=True)]
        narrowest = max(policy, _longest_word(params))
        return [*columns, (SHARED_HEADING, narrowest, max([narrowest, *map(len, together)]))]
    least = min(TEXT_MIN_WIDTHS["params"], max([6, *map(len, params)]))
    return [
        *columns,
        ("policy", policy, policy),
        ("params", max(least, _longest_word(params)), max([len("params"), *map(len, params)])),
    ]


def _spread(columns: Sequence[tuple[str, int, int]], room: int) -> list[int]:
    """Each text column's width within ``room``: its narrowest, then a cell more in turn to
    each column short of its natural width while room is left."""
    widths = [narrowest for _, narrowest, _ in columns]
    room -= sum(widths)
    while room > 0:
        short = [n for n, (_, _, natural) in enumerate(columns) if widths[n] < natural]
        if not short:
            break
        for n in short[:room]:
            widths[n] += 1
        room -= min(len(short), room)
    return widths


def _longest_word(cells: Sequence[str]) -> int:
    """The longest word of a text column's ``cells``, up to ``LONGEST_WORD``."""
    return min(max([0, *(len(word) for cell in cells for word in cell.split())]), LONGEST_WORD)


def over_budget_lines(results: Sequence[Result]) -> list[str]:
    """One footnote line for each mark the table's peaks carry, in the marks' order."""
    causes = {result.over_budget for result in results if result.params is not None}
    return [
        f"{mark} {OVER_BUDGET_NOTES[cause]} (peak_over_budget: true in --json)"
        for cause, mark in OVER_BUDGET_MARKS.items()
        if cause in causes
    ]


def skipped_line(results: Sequence[Result]) -> str | None:
    """The line under the table counting the cells that did not apply, if any.

    A line of its own rather than the table's caption, which rich centres and
    pads with spaces to the table's width.
    """
    skipped = sum(1 for result in results if result.params is None and result.idle is None)
    if not skipped:
        return None
    return (
        f"{counted(skipped, 'cell')} did not apply: the scenario has no turns or no store steps "
        "for that policy's axis (null in --json)"
    )


def _mark(name: str, result: Result) -> str:
    """The mark after a metric's cell: the peak's over-budget cause, if any."""
    if name != "peak_tokens" or result.over_budget is None:
        return ""
    return OVER_BUDGET_MARKS[result.over_budget]


def _params(params: dict[str, Any]) -> str:
    return " ".join(f"{name}={_param(value)}" for name, value in params.items())


def _param(value: Any) -> str:
    """A parameter as text, ``visible``; a string that would not read as one word is quoted,
    and a list shows how many items it holds (``recorded``'s compactions; ``--json`` has
    them whole)."""
    if isinstance(value, list):
        return str(len(value))
    if isinstance(value, str) and (not value or any(char.isspace() for char in value)):
        return f'"{visible(value)}"'
    return visible(str(value))


def _cell(name: str, value: Any) -> str:
    """A metric as text: exact integers, shares as percentages, times to 0.1 µs, dollars to
    a hundredth of a cent."""
    if value is None:
        return "-"
    if name in {"probe_retention", "hit_at_k"}:
        return f"{value:.1%}"
    if name == "decide_us_per_command":
        return f"{value:.1f}"
    if name == "llm_seconds":
        return f"{value:.2f}"
    if name == "usd":
        return f"{value:,.4f}"
    if isinstance(value, float):
        # A count's median or percentile (replicates) may fall between two counts.
        return f"{value:,.0f}" if value.is_integer() else f"{value:,.1f}"
    return f"{value:,}"


def loss_lines(results: Sequence[Result]) -> list[str]:
    """The lost probes of each result, one line each: where it went missing, and the event.

    A result whose lost probes have kinds (``--probes auto`` types them) is headed by a
    line counting its losses by kind, and its lines come grouped by kind (in the order of
    ``PROBE_KINDS``, the untyped last), each naming its kind; a result whose lost probes
    have none lists them as it always did, in the order they were lost."""
    lines = []
    for result in results:
        where = f"{visible(result.scenario)}, {visible(result.label)}"
        losses = result.losses
        if any(loss.kind is not None for loss in losses):
            losses = tuple(sorted(losses, key=_kind_order))
            counts = Counter(visible(loss.kind or UNTYPED) for loss in losses)
            tally = ", ".join(f"{kind} {count}" for kind, count in counts.items())
            lines.append(f"{where}: {counted(len(losses), 'loss', 'losses')} by kind: {tally}")
        for loss in losses:
            cause = (
                "never visible since it was due"
                if loss.at is None
                else f"lost by event {loss.at} ({loss.event})"
            )
            kind = "" if loss.kind is None else f"{visible(loss.kind)} "
            lines.append(
                f"{where}: {kind}{quoted(loss.probe)} missing at turn {loss.turn}, {cause}"
            )
    return lines


UNTYPED = "untyped"
"""How the count of ``loss_lines`` names the probes a scenario gave no kind."""


def _kind_order(loss: ProbeLoss) -> int:
    """Where a loss's kind comes among the groups: ``PROBE_KINDS``' order, then the rest."""
    return PROBE_KINDS.index(loss.kind) if loss.kind in PROBE_KINDS else len(PROBE_KINDS)
