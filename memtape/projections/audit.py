"""The audit: the life of one turn or fact, event by event, with the numbers behind each step.

``audit`` walks the log once, and only at the events that touch its target
does it rebuild the states around them (before and after the event), so every
figure it reports (a window's tokens, a fact's score, the ranking an eviction
beat) is recomputed from the states at that point, never read from a guess.
Field names of ``life_data`` are a contract (``memtape why --json``); numbers
are exact there and rounded in ``render_life``. Its labels and step lines are
words for a reader, the run's texts in them ``visible``.
"""

import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Literal

import attrs

from memtape.core.commands import Consolidate
from memtape.core.errors import BadInput
from memtape.core.events import (
    BlockEdited,
    CompactionTriggered,
    Consolidated,
    EpisodeRecorded,
    Evicted,
    Expired,
    FactRead,
    FactWritten,
    Judged,
    Queried,
    Recalled,
    Superseded,
    TurnAdded,
    ValidityClosed,
    WarmItem,
)
from memtape.core.integers import bounded
from memtape.core.plural import counted
from memtape.core.run import DEFAULT_SNAPSHOT_EVERY, Run
from memtape.core.state import Fact, State, Tier
from memtape.core.visible import quoted, visible
from memtape.policies.plumbing.protocols import (
    CompactionPolicy,
    ForgettingPolicy,
    Scored,
    is_explained,
)
from memtape.policies.session import Policies
from memtape.projections.timeline import BLOCK_VERBS
from memtape.reducers import evolve, fold


@attrs.frozen
class TurnTarget:
    """A turn, by its 1-based number (``turn:5``)."""

    turn: int


@attrs.frozen
class FactTarget:
    """One fact, by its id (``3``)."""

    id: int


@attrs.frozen
class KeyTarget:
    """Every fact that ever had a key (``chitchat``), in id order."""

    key: str


@attrs.frozen
class BlockTarget:
    """A memory block, by its label (``block:human``)."""

    label: str


Target = TurnTarget | FactTarget | KeyTarget | BlockTarget
"""What ``memtape why`` asks about."""

_TURN = re.compile(r"turn:(.*)", re.DOTALL)
_NUMBER = re.compile(r"[0-9]+")


_FACT_KEY = "fact:"
"""The prefix that names a fact by its key whatever it looks like (``fact:session.topic``,
``fact:42`` for the key "42"); a key that itself begins so is ``fact:fact:...``."""


_BLOCK = "block:"
"""The prefix that names a memory block by its label (``block:human``)."""


def parse_target(text: str) -> Target:
    """``turn:N`` is a turn, ``fact:KEY`` a fact key, ``block:LABEL`` a memory block, a
    bare integer a fact id, anything else a fact key."""
    if text.startswith(_BLOCK) and text[len(_BLOCK) :].strip():
        return BlockTarget(text[len(_BLOCK) :])
    if text.startswith(_FACT_KEY) and text[len(_FACT_KEY) :].strip():
        return KeyTarget(text[len(_FACT_KEY) :])
    if not text.strip():
        raise BadInput("a target is turn:N, a fact id or a fact key, got an empty string")
    turn = _TURN.fullmatch(text)
    if turn is not None:
        number = turn.group(1)
        position = bounded(number, "turn:N: the turn number") if _NUMBER.fullmatch(number) else 0
        if position < 1:
            raise BadInput(f"a turn target is turn:N with N a whole number >= 1, got {text!r}")
        return TurnTarget(position)
    if _NUMBER.fullmatch(text):
        fact = bounded(text, "the fact id")
        if fact < 1:
            raise BadInput(f"a fact id is a whole number >= 1, got {text!r}")
        return FactTarget(fact)
    return KeyTarget(text)


@attrs.frozen
class Step:
    """One event in a life: where it sits, what it did, and the numbers that decided it."""

    at: int
    step: int
    type: str
    clock: float
    what: str
    numbers: Mapping[str, Any]


@attrs.frozen
class Standing:
    """Where a turn or fact stands at the end of the run."""

    status: str
    what: str
    numbers: Mapping[str, Any]


@attrs.frozen
class Subject:
    """The life of one turn, fact or memory block (``id``: its place among the blocks,
    1 for the first created): its steps, oldest first, and where it ends."""

    kind: Literal["turn", "fact", "block"]
    id: int
    label: str
    steps: tuple[Step, ...]
    now: Standing


@attrs.frozen
class Life:
    """What ``audit`` found for a target: one subject (several for a key, in id order)."""

    target: Target
    subjects: tuple[Subject, ...]


@attrs.frozen
class _Moment:
    """An event that touches the target: its position, its step, the states around it."""

    at: int
    step: int
    before: State
    after: State


class _Seeker:
    """The states around the touching events, in order, folding forward when that is cheaper.

    The first touch seeks with ``run.state_at`` (at most a snapshot interval
    of folds); a later one folds on from the previous touch when that is no
    more than a default interval away, so a target touched on every event
    still costs one pass over the log.
    """

    def __init__(self, run: Run) -> None:
        self._run = run
        self._events = run.events
        self._last: tuple[int, State] | None = None

    def around(self, at: int) -> _Moment:
        """The event at 1-based position ``at``, with the states before and after it."""
        last = self._last
        if last is not None and 0 <= at - 1 - last[0] <= DEFAULT_SNAPSHOT_EVERY:
            before = fold(self._events[last[0] : at - 1], last[1])
        else:
            before = self._run.state_at(at - 1)
        after = evolve(before, self._events[at - 1])
        self._last = (at, after)
        return _Moment(at, self._run.step_of(at), before, after)


def audit(run: Run, policies: Policies | Callable[[int], Policies], target: Target) -> Life:
    """The life of ``target`` in ``run``, or ``BadInput`` if it never existed.

    ``policies`` may be a function of the position (``Session.policies_at``):
    each step is then measured against the policies that decided it (a fork).
    """
    policies_at = policies if callable(policies) else lambda _: policies
    if isinstance(target, TurnTarget):
        return Life(target, (_turn_life(run, policies_at, target.turn),))
    if isinstance(target, BlockTarget):
        return Life(target, (_block_life(run, target.label),))
    store = run.state.store
    if isinstance(target, FactTarget):
        if target.id not in store.facts:
            known = f"facts 1..{len(store.facts)}" if store.facts else "no facts"
            raise BadInput(f"no fact has id {target.id}: the run has {known}")
        ids = [target.id]
    else:
        ids = sorted(f.id for f in store.facts.values() if f.key == target.key)
        if not ids:
            raise BadInput(f"no fact has key {target.key!r}")
    if policies_at(len(run)).forgetting is None:
        raise BadInput("auditing a fact needs a [forgetting] policy to score it")
    return Life(target, _fact_lives(run, policies_at, ids))


def _forgetting(policies_at: Callable[[int], Policies], at: int) -> ForgettingPolicy:
    forgetting = policies_at(at).forgetting
    if forgetting is None:
        raise BadInput(f"event {at}: auditing a fact needs a [forgetting] policy to score it")
    return forgetting


def _turn_life(run: Run, policies_at: Callable[[int], Policies], turn: int) -> Subject:
    final = run.state.window
    if not 1 <= turn <= final.turns:
        known = f"turns 1..{final.turns}" if final.turns else "no turns"
        raise BadInput(f"no turn {turn}: the run has {known}")
    seeker = _Seeker(run)
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


def _recall_step(moment: _Moment, event: Recalled, turn: int) -> Step:
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


def _block_life(run: Run, label: str) -> Subject:
    """Every version of memory block ``label``: what each edit made it, at what cost to the
    window (a refused edit left no event, so it has no step)."""
    final = run.state.window
    block = final.block(label)
    if block is None:
        known = ", ".join(repr(b.label) for b in final.blocks) or "none"
        raise BadInput(f"no memory block is labelled {label!r} (blocks: {known})")
    seeker = _Seeker(run)
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


def _arrival(moment: _Moment, event: TurnAdded, budget: int | None) -> Step:
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
    moment: _Moment,
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


def _fact_lives(
    run: Run, policies_at: Callable[[int], Policies], ids: list[int]
) -> tuple[Subject, ...]:
    wanted = set(ids)
    seeker = _Seeker(run)
    steps: dict[int, list[Step]] = {i: [] for i in ids}
    episodes: dict[int, str] = {}
    consolidation: tuple[int, int, Consolidated] | None = None
    judged: tuple[int, Judged] | None = None
    for at, event in enumerate(run.events, start=1):
        if isinstance(event, EpisodeRecorded):
            episodes[event.id] = event.text
        elif isinstance(event, Consolidated):
            consolidation = (at, seeker.around(at).step, event)
        if (
            isinstance(
                event, FactWritten | FactRead | Superseded | Evicted | Expired | ValidityClosed
            )
            and event.id in wanted
        ):
            forgetting = _forgetting(policies_at, at)
            if (
                isinstance(event, FactWritten)
                and judged is not None
                and run.step_of(judged[0]) == run.step_of(at)
            ):
                # The write a judgement let in: the judgement comes first in its batch.
                steps[event.id].append(_judged_step(seeker.around(judged[0]), judged[1], None))
            step = _fact_step(seeker.around(at), forgetting, event)
            if isinstance(event, FactWritten) and consolidation is not None:
                step = _distilled(step, event, consolidation, episodes)
            steps[event.id].append(step)
        elif isinstance(event, Judged):
            judged = (at, event)
            for fact_id in sorted(wanted.intersection(event.candidates)):
                steps[fact_id].append(_judged_step(seeker.around(at), event, fact_id))
        elif isinstance(event, Queried) and wanted.intersection(event.results):
            moment = seeker.around(at)
            for fact_id in sorted(wanted.intersection(event.results)):
                steps[fact_id].append(_query_step(moment, event, fact_id))
    forgetting = _forgetting(policies_at, len(run))
    final = run.state
    subjects = []
    for fact_id in ids:
        fact = final.store.facts[fact_id]
        label = f"fact {fact_id} {quoted(fact.key)}: {visible(fact.text)}"
        now = _fact_now(forgetting, final, fact)
        subjects.append(Subject("fact", fact_id, label, tuple(steps[fact_id]), now))
    return tuple(subjects)


def _distilled(
    step: Step,
    event: FactWritten,
    consolidation: tuple[int, int, Consolidated],
    episodes: Mapping[int, str],
) -> Step:
    """A write's step, naming the episode and the consolidation it was distilled by when the
    write is a semantic fact of that consolidation (which writes it in the same step)."""
    at, command, consolidated = consolidation
    fact = next(
        (f for f in consolidated.semantic if (f.key, f.text) == (event.key, event.text)), None
    )
    if fact is None or command != step.step:
        return step
    episode = episodes.get(fact.episode)
    said = "" if episode is None else f" ({quoted(episode)})"
    what = (
        f"{step.what}; distilled from episode {fact.episode}{said} by the consolidation "
        f"at event {at}"
    )
    numbers = {**step.numbers, "episode": fact.episode, "consolidated_at": at}
    return Step(step.at, step.step, step.type, step.clock, what, numbers)


def _fact_step(
    moment: _Moment,
    forgetting: ForgettingPolicy,
    event: FactWritten | FactRead | Superseded | Evicted | Expired | ValidityClosed,
) -> Step:
    after = moment.after
    clock = after.clock
    numbers: dict[str, Any]
    match event:
        case FactWritten(importance=importance, expires_at=expires_at):
            numbers = {"importance": importance, "clock": clock}
            what = f"written at t={clock:g}, importance {importance:g}"
            if expires_at is not None:
                numbers["expires_at"] = expires_at
                rule = f"by ttl {quoted(event.ttl)}" if event.ttl else "as the write asked"
                what += f", to expire at t={expires_at:g} ({rule})"
            if event.valid_from is not None or event.valid_to is not None:
                start = clock if event.valid_from is None else event.valid_from
                end = " on" if event.valid_to is None else f" to t={event.valid_to:g}"
                numbers.update(valid_from=event.valid_from, valid_to=event.valid_to)
                what += f", true from t={start:g}{end}"
        case FactRead(id=fact_id):
            scored = next(s for s in forgetting.rank(after.store, clock) if s.fact.id == fact_id)
            reads = scored.fact.reads
            numbers = {"reads": reads, "score": scored.score, "factors": scored.factors}
            what = f"read at t={clock:g}, {counted(reads, 'read')} now, score {scored.score:.4f}"
        case Superseded(by=by):
            key = after.store.facts[by].key
            numbers = {"by": by}
            what = (
                f"superseded at t={clock:g} by fact {by} ({quoted(key)}): "
                "retired, kept, never ranked"
            )
        case Evicted():
            numbers, what = _eviction(forgetting, event, moment.before)
        case ValidityClosed(to=to, by=by):
            numbers = {"to": to, "by": by}
            what = (
                f"closed at t={clock:g} by fact {by}: true until t={to:g}, "
                "kept for queries as of before"
            )
        case Expired(reason=reason):
            numbers = {"reason": reason}
            what = f"expired at t={clock:g}: {visible(reason)}; kept, never ranked again"
    return Step(moment.at, moment.step, type(event).__name__, clock, what, numbers)


def _judged_step(moment: _Moment, event: Judged, fact_id: int | None) -> Step:
    """A model's judgement of a write, as it touched a fact: the write it let in
    (``fact_id`` None), the candidate it retired, or a candidate it left as it was."""
    clock = moment.after.clock
    among = ", ".join(str(i) for i in event.candidates) or "no candidate"
    calls = event.asked
    model = f"model {visible(calls[-1].model)}" if calls else "no model"
    numbers: dict[str, Any] = {
        "key": event.key,
        "decision": event.decision,
        "candidates": list(event.candidates),
        "target": event.target or None,
        "asked": len(calls),
        "answer": calls[-1].output if calls else None,
    }
    write = f"the write on {quoted(event.key)}"
    if fact_id is None and not calls:
        what = f"{write} added unasked: no active fact shares a word with it"
    elif fact_id is None:
        what = f"{write} judged {event.decision} by {model}, candidates {among}"
    elif fact_id == event.target and event.decision == "DELETE":
        what = (
            f"deleted at t={clock:g}: {model} judged {write} a DELETE of it "
            f"(candidates {among}): retired, kept, never ranked"
        )
    elif fact_id == event.target:
        what = f"{model} judged {write} an UPDATE of it (candidates {among})"
    else:
        what = f"a candidate of {write}, judged {event.decision} by {model}: left as it was"
    return Step(moment.at, moment.step, "Judged", clock, what, numbers)


def _query_step(moment: _Moment, event: Queried, fact_id: int) -> Step:
    """A query that returned the fact: its place among the results, its score, its reads."""
    clock = moment.after.clock
    place = event.results.index(fact_id)
    score = event.scores[place]
    reads = moment.after.store.facts[fact_id].reads
    asked = f"query {quoted(event.text)}" if event.text else "a query"
    if event.as_of is not None:
        asked += f" as of t={event.as_of:g}"
    if event.known_at is not None:
        asked += f" as known at t={event.known_at:g}"
    what = (
        f"returned by {asked} at t={clock:g}, rank {place + 1} of {len(event.results)} "
        f"(top {event.k}), score {score:.4f}, {counted(reads, 'read')} now"
    )
    numbers = {"rank": place + 1, "score": score, "reads": reads, "k": event.k}
    return Step(moment.at, moment.step, type(event).__name__, clock, what, numbers)


def _eviction(
    forgetting: ForgettingPolicy, event: Evicted, before: State
) -> tuple[dict[str, Any], str]:
    clock = before.clock
    # The ranking, not each fact's score alone: a policy may normalize over the actives.
    actives = forgetting.rank(before.store, clock)
    evicted = next(s for s in actives if s.fact.id == event.id)
    others = [s for s in actives if s.fact.id != event.id]
    lowest = all(evicted.score <= s.score for s in others)
    place = "the lowest" if lowest else f"ranked {actives.index(evicted) + 1}"
    listed = ", ".join(f"{visible(s.fact.key)} {s.score:.4f}" for s in others)
    what = f"evicted at t={clock:g}, score {evicted.score:.4f}, {place} of {len(actives)} actives"
    if listed:
        what += f": {listed}"
    if evicted.score != event.score:
        what += f" (the log recorded {event.score:.4f})"
    numbers = {
        "score": evicted.score,
        "factors": evicted.factors,
        "recorded_score": event.score,
        "lowest": lowest,
        "capacity": forgetting.capacity,
        "actives": [_scored_data(s) for s in actives],
    }
    return numbers, what


def _scored_data(scored: Scored) -> dict[str, Any]:
    return {"id": scored.fact.id, "key": scored.fact.key, "score": scored.score}


def _fact_now(forgetting: ForgettingPolicy, state: State, fact: Fact) -> Standing:
    numbers: dict[str, Any] = {"status": fact.status}
    if fact.status == "active":
        ranking = forgetting.rank(state.store, state.clock)
        rank = next(n for n, s in enumerate(ranking, start=1) if s.fact.id == fact.id)
        scored = ranking[rank - 1]
        numbers.update(score=scored.score, factors=scored.factors, rank=rank, of=len(ranking))
        what = (
            f"now active at t={state.clock:g}, score {scored.score:.4f}, "
            f"rank {rank} of {len(ranking)}"
        )
    elif fact.status == "retired":
        numbers.update(ended_at=fact.ended_at, superseded_by=fact.superseded_by)
        by = fact.superseded_by
        why = "deleted by a judged write" if by is None else f"superseded by fact {by}"
        what = f"now retired (since t={fact.ended_at:g}, {why})"
        if fact.closed_to is not None:
            numbers.update(valid_to=fact.closed_to)
            what += f"; true until t={fact.closed_to:g}"
    elif fact.status == "expired":
        numbers.update(ended_at=fact.ended_at, reason=fact.expired_reason)
        what = f"now expired (since t={fact.ended_at:g}: {visible(fact.expired_reason or '')})"
    else:
        numbers.update(ended_at=fact.ended_at, score=fact.evicted_score)
        what = f"now evicted (since t={fact.ended_at:g}, with score {fact.evicted_score:.4f})"
    return Standing(fact.status, what, numbers)


def life_data(life: Life) -> dict[str, Any]:
    """The life as JSON-ready data (the ``why --json`` contract); numbers are exact."""
    return {
        "target": _target_data(life.target),
        "subjects": [
            {
                "kind": subject.kind,
                "id": subject.id,
                "label": subject.label,
                "steps": [
                    {
                        "at": s.at,
                        "step": s.step,
                        "type": s.type,
                        "clock": s.clock,
                        "what": s.what,
                        "numbers": dict(s.numbers),
                    }
                    for s in subject.steps
                ],
                "now": {
                    "status": subject.now.status,
                    "what": subject.now.what,
                    "numbers": dict(subject.now.numbers),
                },
            }
            for subject in life.subjects
        ],
    }


def _target_data(target: Target) -> dict[str, Any]:
    match target:
        case TurnTarget(turn=turn):
            return {"kind": "turn", "turn": turn}
        case FactTarget(id=fact_id):
            return {"kind": "fact", "id": fact_id}
        case KeyTarget(key=key):
            return {"kind": "key", "key": key}
        case BlockTarget(label=label):
            return {"kind": "block", "label": label}


def render_life(life: Life) -> Iterator[str]:
    """The lines of ``memtape why``: per subject, a heading, one line per step, where it ends."""
    for subject in life_data(life)["subjects"]:
        yield subject["label"]
        for step in subject["steps"]:
            yield f"{step['at']:>5}  step {step['step']:>4}  {step['type']:<19} {step['what']}"
            factors = step["numbers"].get("factors")
            if factors is not None:
                yield f"{'':<37} = {_product(factors)}"
        now = subject["now"]
        yield f"{'':<5}  {now['what']}"
        if "factors" in now["numbers"]:
            yield f"{'':<37} = {_product(now['numbers']['factors'])}"


def _product(factors: Mapping[str, float]) -> str:
    return " × ".join(f"{name} {value:.4f}" for name, value in factors.items())
