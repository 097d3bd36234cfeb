"""The diff of two points, as JSON-ready data and as text for a terminal.

Two points are two positions of one run (``Run.diff``), or the states after
the same step of two runs of the same inputs under different policies
(``step_diff``). Field names here are a contract (``memtape diff --json``);
numbers are exact, the text rounds them.
"""

from collections.abc import Iterator
from typing import Any

import attrs

from memtape.core.diff import FactChange, StateDiff, diff_states
from memtape.core.errors import BadInput
from memtape.core.plural import counted
from memtape.core.run import Run
from memtape.core.state import Fact
from memtape.core.visible import quoted, visible
from memtape.projections.meter import Meter
from memtape.projections.text import paint
from memtape.projections.view import episode_data, fact_data, procedural_data, semantic_data


@attrs.frozen
class StepDiff:
    """Two runs compared after the same step: the positions that step ends at in each."""

    step: int
    before: int
    """The position after ``step`` in run A."""
    after: int
    """The position after ``step`` in run B."""
    diff: StateDiff


def step_diff(run_a: Run, run_b: Run, step: int) -> StepDiff:
    """Compare the states after the ``step``-th command of two runs of the same inputs.

    Steps count commands, not events: two policies honour the same command
    with different numbers of events. The two runs must have recorded the
    same commands up to ``step``, or their states say nothing about the
    policies.
    """
    last = min(run_a.steps, run_b.steps)
    if not 1 <= step <= last:
        raise BadInput(
            f"step {step} is out of range 1..{last} "
            f"(run A has {run_a.steps} steps, run B has {run_b.steps})"
        )
    for n, (command_a, command_b) in enumerate(
        zip(run_a.commands[:step], run_b.commands[:step], strict=True), start=1
    ):
        if command_a != command_b:
            raise BadInput(
                f"the runs diverge at step {n}: A recorded {command_a!r}, B recorded "
                f"{command_b!r}, so their states after step {step} do not compare"
            )
    before, after = run_a.batch(step)[1], run_b.batch(step)[1]
    return StepDiff(step, before, after, diff_states(run_a.state_at(before), run_b.state_at(after)))


def diff_data(
    diff: StateDiff,
    *,
    before: int | None,
    after: int | None,
    budgets: tuple[int | None, int | None] = (None, None),
    step: int | None = None,
) -> dict[str, Any]:
    """Everything ``diff`` reports, as JSON-ready data with exact numbers.

    ``before`` and ``after`` are the positions compared (``from`` and ``to``);
    ``budgets`` are the compaction budgets in force at each side (None: no
    compaction policy, so no meter on that side; ``meter`` is null when
    neither side has one). ``step`` is set for a diff of two runs, whose
    ``from`` is a position in run A and ``to`` a position in run B.
    """
    return {
        "step": step,
        "from": before,
        "to": after,
        "clock": {"before": diff.clock[0], "after": diff.clock[1]},
        "meter": _meter_data(diff.tokens, budgets),
        "turns": [
            {"turn": move.turn, "before": move.before, "after": move.after} for move in diff.turns
        ],
        "facts": [fact_change_data(change) for change in diff.facts],
        "episodes": {
            "recorded": [episode_data(e) for e in diff.episodes_recorded],
            "consumed": [episode_data(e) for e in diff.episodes_consumed],
        },
        "semantic": [semantic_data(f) for f in diff.semantic],
        "procedural": [procedural_data(r) for r in diff.procedural],
        **_block_changes(diff),
    }


def _block_changes(diff: StateDiff) -> dict[str, Any]:
    """The memory blocks that changed, under ``blocks``, each with its fields at both
    points (None: not created there); nothing while none did (so a run without blocks
    diffs as it always did)."""
    if not diff.blocks:
        return {}
    return {
        "blocks": [
            {
                "label": change.label,
                "before": None if change.before is None else attrs.asdict(change.before),
                "after": None if change.after is None else attrs.asdict(change.after),
            }
            for change in diff.blocks
        ]
    }


def step_diff_data(
    compared: StepDiff, budgets: tuple[int | None, int | None] = (None, None)
) -> dict[str, Any]:
    """``diff_data`` of a two-run comparison: ``from`` is in run A, ``to`` in run B."""
    return diff_data(
        compared.diff,
        before=compared.before,
        after=compared.after,
        budgets=budgets,
        step=compared.step,
    )


def _meter_data(
    tokens: tuple[int, int], budgets: tuple[int | None, int | None]
) -> dict[str, Any] | None:
    if budgets[0] is None and budgets[1] is None:
        return None
    sides = [
        None if budget is None else Meter(count, budget).data()
        for count, budget in zip(tokens, budgets, strict=True)
    ]
    return {"before": sides[0], "after": sides[1]}


def fact_change_data(change: FactChange) -> dict[str, Any]:
    """A changed fact: how it changed, and all its fields at both points."""
    known = change.after if change.after is not None else change.before
    return {
        "id": change.id,
        "key": known.key if known is not None else None,
        "change": change.kind,
        "before": _fact_fields(change.before),
        "after": _fact_fields(change.after),
    }


def _fact_fields(fact: Fact | None) -> dict[str, Any] | None:
    """A fact's own fields and what the store knows of its life (None: not written)."""
    if fact is None:
        return None
    fields = {
        **fact_data(fact),
        "last_read_at": fact.last_read_at,
        "status": fact.status,
        "ended_at": fact.ended_at,
        "superseded_by": fact.superseded_by,
        "evicted_score": fact.evicted_score,
    }
    if fact.expires_at is not None:
        # Only a fact that can expire says so: every other diff reads as it always did.
        fields.update(expires_at=fact.expires_at, expired_reason=fact.expired_reason)
    if fact.closed_to is not None:
        fields.update(valid_to=fact.closed_to, closed_by=fact.closed_by)
    return fields


def render_diff(data: dict[str, Any], color: bool = False) -> Iterator[str]:
    """The lines of ``memtape diff``, from the same data as ``--json``; each text of the
    run ``visible`` as a field, in one line."""
    two_runs = data["step"] is not None
    first = _point(data["from"], "the first point")
    there = "B" if two_runs else _point(data["to"], "the second point")
    if two_runs:
        header = f"diff after step {data['step']}: A ({first}) → B ({_point(data['to'], '?')})"
    else:
        header = f"diff {first} → {there}"
    yield paint(header, "bold", color)
    meter = data["meter"]
    clock = data["clock"]
    changed = (
        clock["before"] != clock["after"]
        or (meter is not None and meter["before"] != meter["after"])
        or data["turns"]
        or data["facts"]
        or data["episodes"]["recorded"]
        or data["episodes"]["consumed"]
        or data["semantic"]
        or data["procedural"]
        or data.get("blocks")
    )
    if not changed:
        yield "no change"
        return
    if clock["before"] != clock["after"]:
        yield f"clock t={clock['before']:g} → t={clock['after']:g}"
    if meter is not None:
        yield f"window {_gauge(meter['before'], color)} → {_gauge(meter['after'], color)}"
    for move in data["turns"]:
        yield f"turn {move['turn']}: {_tier(move['before'], 'new')} → {_tier(move['after'])}"
    for change in data.get("blocks", ()):
        yield _block_line(change)
    for change in data["facts"]:
        yield _fact_line(change, there)
    for episode in data["episodes"]["recorded"]:
        yield f"episode {episode['id']} recorded: {visible(episode['text'])}"
    for episode in data["episodes"]["consumed"]:
        yield f"episode {episode['id']} consumed: {visible(episode['text'])}"
    held = _held(data)
    for fact in data["semantic"]:
        yield (
            f"semantic {held}: {visible(fact['text'])}  (key {visible(fact['key'])}, importance "
            f"{fact['importance']:g}, from episode {fact['episode']})"
        )
    for rule in data["procedural"]:
        yield f"procedural {held}: {visible(rule['text'])}  (from episode {rule['episode']})"


def _point(position: int | None, unknown: str) -> str:
    return unknown if position is None else f"event {position}"


def _gauge(meter: dict[str, Any] | None, color: bool) -> str:
    if meter is None:
        return "no meter"
    label = f"{meter['tokens']}/{meter['budget']}"
    if meter["over"]:
        return paint(f"{label} OVER", "red", color)
    return paint(label, "green", color)


def _tier(tier: str | None, absent: str = "not arrived") -> str:
    if tier is None:
        return absent
    return "dropped" if tier == "dropped" else tier.upper()


def _block_line(change: dict[str, Any]) -> str:
    """One changed memory block: its versions at both points, and what it holds at the
    second."""
    before, after = change["before"], change["after"]
    was = "new" if before is None else f"version {before['version']}"
    if after is None:
        return f"block {quoted(change['label'])}: {was} → not created"
    held = f"{len(after['value'])}/{after['limit']} characters, {counted(after['tokens'], 'token')}"
    return (
        f"block {quoted(change['label'])}: {was} → version {after['version']}: "
        f"{visible(after['value'])}  ({held})"
    )


def _fact_line(change: dict[str, Any], there: str) -> str:
    """One changed fact; ``there`` names the second point (``event 7``, ``B``)."""
    kind = change["change"]
    before, after = change["before"], change["after"]
    head = f"fact {change['id']} {quoted(change['key'])} {kind}"
    match kind:
        case "added":
            return f"{head}: {visible(after['text'])}  (importance {after['importance']:g})"
        case "retired":
            by = after["superseded_by"]
            why = "deleted by a judged write" if by is None else f"superseded by {by}"
            return f"{head}: {why} at t={after['ended_at']:g}"
        case "evicted":
            return f"{head} (score {after['evicted_score']:.4f}) at t={after['ended_at']:g}"
        case "expired":
            return f"{head} at t={after['ended_at']:g}: {visible(after['expired_reason'])}"
        case "removed":
            return f"{head}: not in the store at {there}"
        case "restored":
            return f"{head}: active again at {there}"
    # A read, or any other change of an active fact's fields: name each field.
    fields = ", ".join(
        f"{name} {_value(before.get(name))} → {_value(value)}"
        for name, value in after.items()
        if before.get(name) != value
    )
    return f"{head}: {fields}"


def _value(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, str):
        return quoted(value)
    return str(value)


def _held(data: dict[str, Any]) -> str:
    """What holding a distilled item at one point only means for this pair of points."""
    if data["step"] is not None:
        # A StateDiff lists what one side holds beyond the other, not which side.
        return "(one side only)"
    if data["from"] is not None and data["to"] is not None and data["from"] > data["to"]:
        return "undone"
    return "distilled"
