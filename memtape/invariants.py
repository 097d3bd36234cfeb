"""The kernel's invariants as plain functions, and the checks of a whole run.

Each ``check_*`` function states one invariant of the state a run reaches
(or of one event and the state before it) and returns the ``Violation``\\ s
it finds, empty when it holds. The property tests assert that the lists are
empty; ``check_run`` applies them all to a recorded run in one pass, folding
as it goes; ``redecide`` asks the policies to decide every recorded command
again and reports the first event the log does not agree with.

A violation's ``position`` counts events: the state after the first
``position`` events (what ``memtape show RUN --at POSITION`` shows) is the
first that breaks the invariant; 0 stands for the initial state or the
run's header.
"""

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from memtape.core.commands import Command
from memtape.core.errors import BadInput, CorruptLog, Rejected
from memtape.core.events import (
    CompactionTriggered,
    Event,
    Evicted,
    FactRead,
    FactWritten,
    Queried,
    Superseded,
    TurnAdded,
)
from memtape.core.run import DEFAULT_SNAPSHOT_EVERY, Run
from memtape.core.state import State, Store, Window
from memtape.policies.compaction import TieredCompaction, gist_for
from memtape.policies.protocols import ForgettingPolicy
from memtape.policies.session import Policies
from memtape.reducers import evolve, fold

_STORE_EVENTS = (FactWritten, FactRead, Queried, Superseded, Evicted)


@attrs.frozen
class Violation:
    """An invariant a run breaks: where (an event position), which, and why."""

    position: int
    invariant: str
    message: str

    def __str__(self) -> str:
        if not self.position:
            return f"header: {self.message}"
        return f"event {self.position}: {self.invariant}: {self.message}"


# -- the window ------------------------------------------------------------------------------


def check_token_total(window: Window, *, at: int) -> list[Violation]:
    """The running token total equals the HOT, WARM and gist tokens counted from scratch."""
    hot = sum(t.tokens for t in window.hot)
    warm = sum(w.tokens for w in window.warm)
    if hot + warm + window.gist_tokens == window.tokens:
        return []
    message = (
        f"the running total is {window.tokens} tokens, but HOT {hot} + WARM {warm} "
        f"+ gist {window.gist_tokens} make {hot + warm + window.gist_tokens}"
    )
    return [Violation(at, "token-total", message)]


def check_tiers(window: Window, *, at: int) -> list[Violation]:
    """Every turn so far sits in exactly one of HOT, WARM, COLD and dropped, and no other does.

    Its cost grows with the number of turns: ``check_run`` applies it at a few
    checkpoints, not after every event.
    """
    holders: dict[int, list[str]] = {}
    tiers: tuple[tuple[str, Sequence[int]], ...] = (
        ("HOT", [t.turn for t in window.hot]),
        ("WARM", [w.turn for w in window.warm]),
        ("COLD", window.cold),
        ("dropped", window.dropped),
    )
    for name, turns in tiers:
        for turn in turns:
            holders.setdefault(turn, []).append(name)
    violations: list[Violation] = []
    for turn in range(1, window.turns + 1):
        held = holders.pop(turn, [])
        if len(held) != 1:
            where = " and ".join(held) if held else "no tier"
            violations.append(Violation(at, "tiers", f"turn {turn} is in {where}"))
    for turn, held in sorted(holders.items()):
        message = f"turn {turn} is in {' and '.join(held)}, but {window.turns} turns arrived"
        violations.append(Violation(at, "tiers", message))
    return violations


def check_gist(window: Window, compaction: TieredCompaction, *, at: int) -> list[Violation]:
    """The COLD gist says how many turns are cold and costs its tokens (nothing while empty)."""
    expected = gist_for(len(window.cold))
    if expected != window.gist:
        message = f"{len(window.cold)} turns are cold, but the gist reads {window.gist!r}"
        return [Violation(at, "gist", message)]
    tokens = compaction.tokenizer.count(window.gist)
    if tokens != window.gist_tokens:
        message = f"the gist {window.gist!r} costs {tokens} tokens, not {window.gist_tokens}"
        return [Violation(at, "gist", message)]
    return []


def check_budget(window: Window, budget: int, *, at: int) -> list[Violation]:
    """Between commands the window is over budget only when WARM has nothing left to push cold.

    Equivalently (with the token total right): whenever HOT and the gist fit
    the budget, the whole window does.
    """
    if window.tokens <= budget or not window.warm:
        return []
    message = (
        f"the window holds {window.tokens} tokens, over the budget of {budget}, "
        f"while WARM still holds {len(window.warm)} item(s) to push cold"
    )
    return [Violation(at, "budget", message)]


def check_hot(
    window: Window,
    hot_n: int,
    turns: Mapping[int, TurnAdded],
    *,
    compacted: bool,
    at: int,
) -> list[Violation]:
    """HOT holds the newest turns verbatim: at least the last ``hot_n``, only those if compacted.

    ``turns`` maps (at least) the turns in HOT to the ``TurnAdded`` events
    that brought them.
    """
    numbers = [t.turn for t in window.hot]
    least = min(hot_n, window.turns)
    newest = list(range(window.turns - len(numbers) + 1, window.turns + 1))
    violations: list[Violation] = []
    if compacted:
        if numbers != list(range(window.turns - least + 1, window.turns + 1)):
            message = f"after a compaction HOT holds turns {numbers}, not the last {least}"
            violations.append(Violation(at, "hot", message))
    elif numbers != newest or len(numbers) < least:
        message = (
            f"HOT holds turns {numbers}, not the newest {max(least, len(numbers))} "
            f"of {window.turns} in order"
        )
        violations.append(Violation(at, "hot", message))
    for turn in window.hot:
        if turns.get(turn.turn) != turn:
            message = f"turn {turn.turn} in HOT is not verbatim the turn that arrived"
            violations.append(Violation(at, "hot", message))
    return violations


# -- the store -------------------------------------------------------------------------------


def check_capacity(store: Store, capacity: int, *, at: int) -> list[Violation]:
    """After a whole command, the store holds at most ``capacity`` active facts."""
    if len(store.active) <= capacity:
        return []
    message = f"{len(store.active)} facts are active, over the capacity of {capacity}"
    return [Violation(at, "capacity", message)]


def check_ranking(
    forgetting: ForgettingPolicy, store: Store, now: float, *, at: int
) -> list[Violation]:
    """The ranking holds exactly the active facts as the store has them, no retired or evicted."""
    ranked = [s.fact for s in forgetting.rank(store, now)]
    violations: list[Violation] = []
    ids = sorted(f.id for f in ranked)
    if ids != sorted(store.active):
        message = f"the ranking holds facts {ids}, the active ones are {sorted(store.active)}"
        violations.append(Violation(at, "ranking", message))
    for fact in ranked:
        if fact.status != "active":
            message = f"fact {fact.id} ({fact.key!r}) is {fact.status}, yet ranked"
            violations.append(Violation(at, "ranking", message))
        elif (held := store.facts.get(fact.id)) is not fact and held != fact:
            message = f"fact {fact.id} ({fact.key!r}) is ranked as the store does not hold it"
            violations.append(Violation(at, "ranking", message))
    return violations


def check_status(store: Store, *, at: int) -> list[Violation]:
    """``active`` names exactly the facts whose status is active; ``by_key`` points into it.

    Its cost grows with the number of facts: ``check_run`` applies it at a
    few checkpoints, not after every event.
    """
    violations: list[Violation] = []
    active = {f.id for f in store.facts.values() if f.status == "active"}
    if active != set(store.active):
        message = (
            f"the active facts are {sorted(store.active)}, "
            f"but the facts with status active are {sorted(active)}"
        )
        violations.append(Violation(at, "status", message))
    for key, fact_id in store.by_key.items():
        fact = store.facts.get(fact_id)
        if fact_id not in store.active or fact is None or fact.key != key:
            message = f"key {key!r} points to fact {fact_id}, which is not its active fact"
            violations.append(Violation(at, "status", message))
    return violations


def check_eviction(
    forgetting: ForgettingPolicy, before: State, event: Evicted, *, at: int
) -> list[Violation]:
    """The evicted fact scored lowest among the actives just before its eviction (the new
    fact included), ties to the oldest write, then the lowest id; and only over capacity.

    ``before`` is the state just before ``event``, which sits at position ``at``.
    """
    store = before.store
    if event.id not in store.active:
        return [Violation(at, "eviction", f"fact {event.id} is evicted but is not active")]
    scored = [forgetting.score(store.facts[i], before.clock) for i in store.active]
    weakest = min(scored, key=lambda s: (s.score, s.fact.written_at, s.fact.id))
    violations: list[Violation] = []
    if len(store.active) <= forgetting.capacity:
        message = (
            f"fact {event.id} is evicted with {len(store.active)} facts active, "
            f"within the capacity of {forgetting.capacity}"
        )
        violations.append(Violation(at, "eviction", message))
    if weakest.fact.id != event.id:
        condemned = store.facts[event.id]
        mine = forgetting.score(condemned, before.clock).score
        message = (
            f"fact {event.id} ({condemned.key!r}, score {mine!r}) is evicted, but fact "
            f"{weakest.fact.id} ({weakest.fact.key!r}) scored lowest, {weakest.score!r}"
        )
        violations.append(Violation(at, "eviction", message))
    elif weakest.score != event.score:
        message = (
            f"fact {event.id} is evicted with score {event.score!r}, "
            f"but it scored {weakest.score!r} at t={before.clock:g}"
        )
        violations.append(Violation(at, "eviction", message))
    return violations


def check_query(
    forgetting: ForgettingPolicy, before: State, event: Queried, *, at: int
) -> list[Violation]:
    """A query returns the first ``min(k, actives)`` facts of the policy's ranking for its
    text, best first, each with the score it ranked by: so at most ``k``, all active.

    ``before`` is the state just before ``event``, which sits at position ``at``.
    """
    ranked = forgetting.rank(before.store, before.clock, event.text)[: event.k]
    expected = tuple(s.fact.id for s in ranked)
    if event.results != expected:
        message = (
            f"the query {event.text!r} returned facts {list(event.results)}, but the top "
            f"{event.k} of the ranking at t={before.clock:g} are {list(expected)}"
        )
        return [Violation(at, "query", message)]
    scores = tuple(s.score for s in ranked)
    if event.scores != scores:
        message = (
            f"the query returned scores {list(event.scores)}, the ranking gives {list(scores)}"
        )
        return [Violation(at, "query", message)]
    return []


def check_evictions(
    forgetting: ForgettingPolicy, before: State, events: Sequence[Event], *, start: int
) -> list[Violation]:
    """``check_eviction`` for each eviction among ``events``, which follow position ``start``."""
    violations: list[Violation] = []
    state = before
    for position, event in enumerate(events, start=start + 1):
        if isinstance(event, Evicted):
            violations.extend(check_eviction(forgetting, state, event, at=position))
        state = evolve(state, event)
    return violations


# -- the run ---------------------------------------------------------------------------------


def check_replay(folded: State, recorded: State, *, at: int) -> list[Violation]:
    """The state folded from scratch equals the state the run holds for the same position."""
    if folded == recorded:
        return []
    parts = [
        name
        for name in ("clock", "window", "store", "memory")
        if getattr(folded, name) != getattr(recorded, name)
    ]
    message = f"folding the log from scratch gives another {' and '.join(parts)} than the run"
    return [Violation(at, "replay", message)]


def check_run(
    run: Run,
    policies: Policies | Callable[[int], Policies],
    *,
    checkpoint: int = DEFAULT_SNAPSHOT_EVERY,
) -> list[Violation]:
    """Every invariant over a whole run, in one pass that folds the log event by event.

    After each event: the fold accepts it (``integrity``; the check stops at
    the first event that does not fold), the token total, for an
    eviction, that the weakest fact went, and for a query, that it returned
    the top of the ranking. After each command that touched the window under
    the tiered compaction: the budget, HOT and the gist;
    after each command that touched the store: capacity and the ranking. At
    positions ``checkpoint``, twice that, four times, ... and at the end,
    whose checks cost the size of the state: replay equality with
    ``run.state_at``, the tiers and the statuses (so those report the
    checkpoint where they first show, and the whole check stays linear in the
    length of the run). Checks that need a policy the run lacks are skipped.
    Each invariant reports its first violation only. ``policies`` may be a
    function of the position (``Session.policies_at``), for a forked run.
    """
    policies_at = _policies_at(policies)
    if checkpoint < 1:
        raise BadInput(f"checkpoint must be at least 1, got {checkpoint}")
    found: dict[str, Violation] = {}

    def note(violations: list[Violation]) -> None:
        for violation in violations:
            found.setdefault(violation.invariant, violation)

    events = run.events
    state = run.state_at(0)
    hot: dict[int, TurnAdded] = {}
    next_checkpoint, checked = checkpoint, -1
    for step in range(1, run.steps + 1):
        start, end = run.batch(step)
        in_force = policies_at(end)
        compaction, forgetting = in_force.compaction, in_force.forgetting
        tiered = compaction if isinstance(compaction, TieredCompaction) else None
        touched_window = touched_store = compacted = False
        for position in range(start + 1, end + 1):
            event = events[position - 1]
            try:
                after = evolve(state, event)
            except CorruptLog as error:
                note([Violation(position, "integrity", f"{type(event).__name__}: {error}")])
                return sorted(found.values(), key=lambda v: v.position)
            if isinstance(event, TurnAdded):
                touched_window = True
                hot[event.turn] = event
            elif isinstance(event, CompactionTriggered):
                compacted = True
            elif isinstance(event, _STORE_EVENTS):
                touched_store = True
                if forgetting is not None:
                    note(_check_decision(forgetting, state, event, at=position))
            state = after
            note(check_token_total(state.window, at=position))
            if position == next_checkpoint:
                note(_checkpoint(run, state, position))
                next_checkpoint, checked = 2 * position, position
        window = state.window
        if touched_window and tiered is not None:
            # The WARM-based budget rule is the tiered policy's: a running summary or a
            # cleared tool result stays WARM however far over budget the window is.
            note(check_budget(window, tiered.budget, at=end))
            note(check_hot(window, tiered.hot_n, hot, compacted=compacted, at=end))
            if compacted:
                note(check_gist(window, tiered, at=end))
        if compacted:
            hot = {t.turn: hot[t.turn] for t in window.hot if t.turn in hot}
        if touched_store and forgetting is not None:
            note(check_capacity(state.store, forgetting.capacity, at=end))
            note(check_ranking(forgetting, state.store, state.clock, at=end))
    if checked != len(run):
        note(_checkpoint(run, state, len(run)))
    note(check_replay(state, run.state, at=len(run)))
    return sorted(found.values(), key=lambda v: v.position)


def _check_decision(
    forgetting: ForgettingPolicy, before: State, event: Event, *, at: int
) -> list[Violation]:
    """The checks of one store event against the ranking that decided it."""
    if isinstance(event, Evicted):
        return check_eviction(forgetting, before, event, at=at)
    if isinstance(event, Queried):
        return check_query(forgetting, before, event, at=at)
    return []


def _checkpoint(run: Run, state: State, position: int) -> list[Violation]:
    """The checks whose cost grows with the state, at one position."""
    return [
        *check_replay(state, run.state_at(position), at=position),
        *check_tiers(state.window, at=position),
        *check_status(state.store, at=position),
    ]


def redecide(run: Run, policies: Policies | Callable[[int], Policies]) -> Violation | None:
    """Decide every recorded command again, from the state before its batch, under
    ``policies`` (or, for a forked run, the policies in force at each step);
    the first event the log does not agree with, or None.

    A log edited by hand (a turn's tokens changed, and still folding) or a
    policy whose behaviour changed since the run was recorded shows here.
    """
    policies_at = _policies_at(policies)
    events = run.events
    state = run.state_at(0)
    for step, command in enumerate(run.commands, start=1):
        start, end = run.batch(step)
        recorded = events[start:end]
        try:
            expected = policies_at(end).decide(state, command)
        except Rejected as error:
            message = f"{_step(step, command)}: the policies reject the command: {error}"
            return Violation(start + 1, "re-decide", message)
        if expected != recorded:
            return _divergence(step, command, start, expected, recorded)
        try:
            state = fold(recorded, state)
        except CorruptLog as error:
            return Violation(start + 1, "integrity", f"{_step(step, command)}: {error}")
    return None


def _policies_at(policies: Policies | Callable[[int], Policies]) -> Callable[[int], Policies]:
    if isinstance(policies, Policies):
        return lambda _: policies
    return policies


def _step(step: int, command: Command) -> str:
    return f"step {step} ({type(command).__name__})"


def _divergence(
    step: int,
    command: Command,
    start: int,
    expected: Sequence[Event],
    recorded: Sequence[Event],
) -> Violation:
    """Where and how a recorded batch departs from the one the policies decide."""
    where = _step(step, command)
    for index, (mine, theirs) in enumerate(zip(expected, recorded, strict=False)):
        if mine == theirs:
            continue
        if type(mine) is type(theirs):
            fields = _fields(mine, theirs)
            message = f"{where}: the log's {type(theirs).__name__} has {fields}"
        else:
            message = f"{where}: the log has {theirs!r}, the policies decide {mine!r}"
        return Violation(start + index + 1, "re-decide", message)
    if len(recorded) > len(expected):
        extra = recorded[len(expected)]
        message = f"{where}: the log has {extra!r}, which the policies do not decide"
        return Violation(start + len(expected) + 1, "re-decide", message)
    missing = expected[len(recorded)]
    message = f"{where}: the policies also decide {missing!r}, which the log lacks"
    return Violation(start + len(recorded), "re-decide", message)


def _fields(expected: Event, recorded: Event) -> str:
    """Each field on which two events of one type differ: the log's value, then the policies'."""
    mine: dict[str, Any] = attrs.asdict(expected, recurse=False)
    theirs: dict[str, Any] = attrs.asdict(recorded, recurse=False)
    return ", ".join(
        f"{name} {theirs[name]!r} where the policies decide {value!r}"
        for name, value in mine.items()
        if theirs[name] != value
    )
