"""The life of a turn (its arrival, each compaction that moved it, each recall that found
it) and of a memory block (each version an edit made)."""

from collections.abc import Callable
from typing import Any

from memtape.core.commands import Consolidate
from memtape.core.errors import BadInput
from memtape.core.events import (
    BlockEdited,
    CompactionTriggered,
    Recalled,
    TurnAdded,
    WarmItem,
)
from memtape.core.plural import counted
from memtape.core.run import Run
from memtape.core.state import State, Tier
from memtape.core.visible import quoted, visible
from memtape.policies.plumbing.protocols import (
    CompactionPolicy,
    is_explained,
)
from memtape.policies.session import Policies
from memtape.projections.audit.lives import Moment, Seeker, Standing, Step, Subject
from memtape.projections.timeline import BLOCK_VERBS


def turn_life(run: Run, policies_at: Callable[[int], Policies], turn: int) -> Subject:
    final = run.state.window
    if not 1 <= turn <= final.turns:
        known = f"turns 1..{final.turns}" if final.turns else "no turns"
        raise BadInput(f"no turn {turn}: the run has {known}")
    seeker = Seeker(run)
    steps: list[Step] = []
    added: TurnAdded | None = None
    tier: Tier | None = None
    for at, event in enumerate(run.events, start=1):
        if isinstance(event, TurnAdded) and event.turn == turn:
            added = event
            tier = "hot"
            compaction = policies_at(at).compaction
            budget = compaction.budget if compaction is not None else None
            steps.append(_arrival(seeker.around(at), event, budget))
        elif isinstance(event, CompactionTriggered) and (
            tier == "hot" or (tier == "warm" and event.cold > 0)
        ):
            moment = seeker.around(at)
            moved = moment.after.window.tier_of(turn)
            if tier == moved == "warm":
                continue
            reason = _reason(policies_at(at).compaction, moment.after.window.turns)
            steps.append(_compaction(moment, event, turn, tier, moved, reason=reason))
            tier = moved
        elif isinstance(event, Recalled) and turn in event.found:
            steps.append(_recall_step(seeker.around(at), event, turn))
        if tier in ("cold", "dropped") and policies_at(at).recall is None:
            break
    assert added is not None, f"turn {turn} is in the window but never arrived"
    kind = "salient" if added.salient else "chatter"
    role = visible(added.role)
    label = f"turn {turn} ({role}, {kind}): {role}: {visible(added.text)}"
    return Subject("turn", turn, label, tuple(steps), _turn_now(run.state, turn))


def _recall_step(moment: Moment, event: Recalled, turn: int) -> Step:
    """A recall that found the turn: its rank and score, and whether it came back."""
    place = event.found.index(turn)
    score = event.scores[place]
    brought = next((item for item in event.brought if item.turn == turn), None)
    before, after = moment.before.window.tokens, moment.after.window.tokens
    found = (
        f"found by recall {quoted(event.query)}, rank {place + 1} of {len(event.found)} "
        f"(top {event.k}), score {score:.4f}"
    )
    if brought is None:
        what = f"{found}; not brought back: it did not fit under the budget"
    else:
        tokens = counted(brought.tokens, "token")
        what = f"{found}; brought back verbatim ({tokens}): window {before} → {after}"
    numbers = {
        "rank": place + 1,
        "score": score,
        "k": event.k,
        "brought": brought is not None,
        "window_before": before,
        "window_after": after,
    }
    return Step(moment.at, moment.step, "Recalled", moment.after.clock, what, numbers)


def block_life(run: Run, label: str) -> Subject:
    """Every version of memory block ``label``: what each edit made it, at what cost to the
    window (a refused edit left no event, so it has no step)."""
    final = run.state.window
    block = final.block(label)
    if block is None:
        known = ", ".join(repr(b.label) for b in final.blocks) or "none"
        raise BadInput(f"no memory block is labelled {label!r} (blocks: {known})")
    seeker = Seeker(run)
    steps: list[Step] = []
    for at, event in enumerate(run.events, start=1):
        if isinstance(event, BlockEdited) and event.label == label:
            moment = seeker.around(at)
            before, after = moment.before.window.tokens, moment.after.window.tokens
            held = f"{len(event.value)}/{block.limit} characters, {counted(event.tokens, 'token')}"
            by = " by consolidation" if type(run.commands[moment.step - 1]) is Consolidate else ""
            what = (
                f"{BLOCK_VERBS.get(event.op, visible(event.op))}{by}, version {event.version}: "
                f"{visible(event.value)}  ({held}; window {before} → {after})"
            )
            numbers = {
                "op": event.op,
                "version": event.version,
                "chars": len(event.value),
                "limit": block.limit,
                "tokens": event.tokens,
                "window_before": before,
                "window_after": after,
            }
            steps.append(Step(at, moment.step, "BlockEdited", moment.after.clock, what, numbers))
    place = next(n for n, b in enumerate(final.blocks, start=1) if b.label == label)
    now = Standing(
        "pinned",
        f"now version {block.version}, pinned in the window: {counted(block.tokens, 'token')} "
        f"of every turn's budget",
        {"version": block.version, "tokens": block.tokens, "chars": len(block.value)},
    )
    read_only = ", read-only" if block.read_only else ""
    label_line = f"block {quoted(label)} (at most {counted(block.limit, 'character')}{read_only})"
    return Subject("block", place, label_line, tuple(steps), now)


def _arrival(moment: Moment, event: TurnAdded, budget: int | None) -> Step:
    window_before, window_after = moment.before.window.tokens, moment.after.window.tokens
    over = None if budget is None else window_after > budget
    verdict = "" if budget is None else f", budget {budget}, {'over' if over else 'not over'}"
    arrived = counted(event.tokens, "token")
    what = f"arrived with {arrived}: window {window_before} → {window_after}{verdict}"
    numbers = {
        "tokens": event.tokens,
        "window_before": window_before,
        "window_after": window_after,
        "budget": budget,
        "over": over,
    }
    return Step(moment.at, moment.step, "TurnAdded", moment.after.clock, what, numbers)


def _reason(policy: CompactionPolicy | None, turn: int) -> str | None:
    """What the policy says of its compaction as turn ``turn`` arrived (``recorded``: where
    the agent did it), or None."""
    return policy.reason(turn) if policy is not None and is_explained(policy) else None


def _compaction(
    moment: Moment,
    event: CompactionTriggered,
    turn: int,
    tier: Tier | None,
    moved: Tier | None,
    *,
    reason: str | None = None,
) -> Step:
    before, window = moment.before, moment.after.window
    numbers: dict[str, Any] = {
        "trigger": window.turns,
        "tier_before": tier,
        "tier_after": moved,
        "window_before": before.window.tokens,
        "window_after": window.tokens,
        "budget": event.budget,
        "over": window.tokens > event.budget,
    }
    warm = next((item for item in event.warm if item.turn == turn), None)
    if warm is not None:
        numbers["warm_tokens"] = warm.tokens
    cleared = next((item for item in event.cleared if item.turn == turn), None)
    if moved == "hot" and cleared is not None:
        numbers["cleared_tokens"] = cleared.tokens
        cost = counted(cleared.tokens, "token")
        done = f"cleared in place: stays HOT, reading {quoted(cleared.text)} ({cost})"
    elif moved == "hot":
        numbers["hot"] = [t.turn for t in window.hot]
        done = f"stayed HOT (kept verbatim: {', '.join(str(t) for t in numbers['hot'])})"
    elif moved == "dropped":
        done = "dropped" if reason is not None else "dropped as chatter"
    elif moved == "warm":
        done = f"folded to WARM ({counted(numbers['warm_tokens'], 'token')})"
    elif not window.gist:
        # A summarizing policy (rolling-summary, recorded) keeps no gist: the turns it folds
        # (passing through WARM as empty items) and its last summary go COLD, and the summary
        # it writes now speaks for them.
        summary = _summary_of(event, turn)
        numbers["summary_turn"] = None if summary is None else summary.turn
        done = (
            "pushed COLD, with no summary or gist standing for it"
            if summary is None
            else f"folded into the summary (WARM under turn {summary.turn}, "
            f"{counted(summary.tokens, 'token')}) and pushed COLD"
        )
    else:
        numbers["gist"] = window.gist
        done = f"pushed COLD (gist {quoted(window.gist)})"
        if warm is not None:
            done = f"folded to WARM ({counted(warm.tokens, 'token')}), then {done}"
    said = ""
    if reason is not None:
        numbers["reason"] = reason
        said = f" ({visible(reason)})"
    what = (
        f"turn {window.turns}'s compaction{said}: {done}, "
        f"window {before.window.tokens} → {window.tokens}, budget {event.budget}"
    )
    return Step(moment.at, moment.step, "CompactionTriggered", moment.after.clock, what, numbers)


def _summary_of(event: CompactionTriggered, turn: int) -> WarmItem | None:
    """The summary a compaction wrote for the turns it folded, ``turn`` among them: its
    newest WARM item with text, under a turn at or after ``turn``."""
    return next((i for i in reversed(event.warm) if i.text and i.turn >= turn), None)


def _turn_now(state: State, turn: int) -> Standing:
    window = state.window
    tier = window.tier_of(turn)
    assert tier is not None
    numbers: dict[str, Any] = {"tier": tier}
    if tier == "warm":
        numbers["warm_tokens"] = next(i.tokens for i in window.warm if i.turn == turn)
        what = f"WARM ({counted(numbers['warm_tokens'], 'token')})"
    elif tier == "hot" and window.cleared and turn in window.cleared:
        held = next(t for t in window.hot if t.turn == turn)
        numbers["cleared_tokens"] = held.tokens
        what = f"HOT, cleared in place ({counted(held.tokens, 'token')})"
    elif tier == "cold":
        numbers["gist"] = window.gist
        what = f"COLD (gist {quoted(window.gist)})" if window.gist else "COLD (no gist)"
    else:
        what = tier.upper()
    if any(item.turn == turn for item in window.recalled):
        numbers["recalled"] = True
        what += ", and recalled"
    return Standing(tier, f"now {what}; window {counted(window.tokens, 'token')}", numbers)
