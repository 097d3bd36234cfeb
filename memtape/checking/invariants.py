"""The kernel's invariants as plain functions, and the checks of a whole run.

Each ``check_*`` function states one invariant of the state a run reaches
(or of one event and the state before it) and returns the ``Violation``\\ s
it finds, empty when it holds. The property tests assert that the lists are
empty; ``StepChecker`` applies the per-command ones to one command's batch
at a time (the kit's state machine feeds it as it goes); ``check_run``
drives it over a recorded run in one pass, adding checkpoints; ``redecide``
asks the policies to decide every recorded command again and reports the
first event the log does not agree with, and ``redecide_in_worlds`` the
first command they decide differently under another wall clock and random
state.

A violation's ``position`` counts events: the state after the first
``position`` events (what ``memtape show RUN --at POSITION`` shows) is the
first that breaks the invariant; 0 stands for the initial state or the
run's header.
"""

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import nullcontext
from typing import Any

import attrs
import orjson

from memtape.checking.determinism import decide_in_world, made_up_worlds
from memtape.core.codec import event_data, event_from_data
from memtape.core.commands import Command
from memtape.core.errors import BadInput, CorruptLog, Rejected
from memtape.core.events import (
    ClockAdvanced,
    CompactionTriggered,
    Event,
    Evicted,
    Expired,
    FactRead,
    FactWritten,
    Queried,
    Recalled,
    Superseded,
    TurnAdded,
)
from memtape.core.plural import counted
from memtape.core.run import DEFAULT_SNAPSHOT_EVERY, Run
from memtape.core.seq import bisect_left
from memtape.core.state import SHORT_HOT, State, Store, Window
from memtape.llm.answers import Answers, Reask, Replay, answering, recorded_calls
from memtape.llm.client import ModelUnavailable
from memtape.policies.plumbing.promises import (
    BUDGET,
    CAPACITY,
    EVICTS_WEAKEST,
    EXPIRES,
    PINNED,
    RECALL_BUDGET,
    RECENT_VERBATIM,
    SUPERSEDES,
    VALID_AS_OF,
    WELL_FORMED,
)
from memtape.policies.plumbing.protocols import (
    CompactionPolicy,
    ForgettingPolicy,
    is_budgeted,
    is_verbatim,
)
from memtape.policies.session import Policies
from memtape.policies.store import temporal
from memtape.policies.window.recall import limit as recall_limit
from memtape.policies.window.tiered import TieredCompaction, gist_for
from memtape.policies.window.trigger import Trigger
from memtape.policies.window.turns import structure_error
from memtape.policies.window.units import newest, recent_start, units
from memtape.reducers import evolve, fold

_STORE_EVENTS = (FactWritten, FactRead, Queried, Superseded, Evicted, Expired, ClockAdvanced)
"""The events after which the store's promises are checked (the clock: a fact may be due)."""


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
    """The running token total equals the HOT, WARM, gist and recall-tier tokens counted
    from scratch."""
    hot = sum(t.tokens for t in window.hot)
    warm = sum(w.tokens for w in window.warm)
    recalled = sum(r.tokens for r in window.recalled)
    if hot + warm + window.gist_tokens + recalled == window.tokens:
        return []
    made = hot + warm + window.gist_tokens + recalled
    recall = f" + recalled {recalled}" if recalled else ""
    message = (
        f"the running total is {counted(window.tokens, 'token')}, but HOT {hot} + WARM {warm} "
        f"+ gist {window.gist_tokens}{recall} make {made}"
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
        message = (
            f"turn {turn} is in {' and '.join(held)}, but {counted(window.turns, 'turn')} arrived"
        )
        violations.append(Violation(at, "tiers", message))
    return violations


def check_gist(window: Window, compaction: TieredCompaction, *, at: int) -> list[Violation]:
    """The COLD gist costs its tokens, and says how many turns are cold (nothing while none is).

    Under ``gist = "llm"`` a model wrote it: any text within ``gist_tokens``
    will do (``memtape check`` re-decides it against the recorded answer),
    but still none while nothing is cold.
    """
    writer = compaction.gist
    if writer is None:
        expected = gist_for(len(window.cold))
        if expected != window.gist:
            cold = len(window.cold)
            are = "is" if cold == 1 else "are"
            message = f"{counted(cold, 'turn')} {are} cold, but the gist reads {window.gist!r}"
            return [Violation(at, "gist", message)]
    elif window.gist and not window.cold:
        return [Violation(at, "gist", f"no turn is cold, but the gist reads {window.gist!r}")]
    tokens = compaction.tokenizer.count(window.gist)
    if tokens != window.gist_tokens:
        message = (
            f"the gist {window.gist!r} costs {counted(tokens, 'token')}, not {window.gist_tokens}"
        )
        return [Violation(at, "gist", message)]
    if writer is not None and tokens > writer.tokens:
        costs = counted(tokens, "token")
        message = f"the gist {window.gist!r} costs {costs}, over gist_tokens {writer.tokens}"
        return [Violation(at, "gist", message)]
    return []


def check_budget(window: Window, budget: int, *, floor: int, at: int) -> list[Violation]:
    """Between commands the window holds at most ``max(budget, floor)`` tokens.

    ``floor`` is the least the policy's own rules let it keep in this window
    (``policy.floor(window)``): a window is over budget only when the policy
    could not have done better.
    """
    if window.tokens <= max(budget, floor):
        return []
    message = (
        f"the window holds {counted(window.tokens, 'token')}, over the budget of {budget}, "
        f"though the policy could keep as few as {floor}"
    )
    return [Violation(at, "budget", message)]


def check_recall(
    compaction: CompactionPolicy, before: State, after: State, event: Recalled, *, at: int
) -> list[Violation]:
    """RECALL_BUDGET: a recall that brought turns back left the window within its limit
    (``memtape.policies.window.recall.limit``), and brought back only turns that had left
    HOT, verbatim (at the tokens they arrived with)."""
    violations: list[Violation] = []
    left = {turn.turn: turn for turn in before.window.left}
    for item in event.brought:
        turn = left.get(item.turn)
        if turn is None:
            message = f"a recall brought back turn {item.turn}, which had not left HOT"
            violations.append(Violation(at, RECALL_BUDGET, message))
        elif (turn.text, turn.tokens) != (item.text, item.tokens):
            message = f"a recall brought back turn {item.turn}, but not as it arrived"
            violations.append(Violation(at, RECALL_BUDGET, message))
    bound = recall_limit(compaction)
    if event.brought and after.window.tokens > bound:
        message = (
            f"a recall took the window to {counted(after.window.tokens, 'token')}, "
            f"over its limit of {bound}"
        )
        violations.append(Violation(at, RECALL_BUDGET, message))
    return violations


def _each_event(
    policies: Policies, before: State, after: State, event: Event, *, at: int
) -> list[Violation]:
    """The checks of one event alone: its codec round trip, and ``check_recall`` of a
    recall when the session's recall promises RECALL_BUDGET."""
    violations = check_codec(event, at=at)
    recall, compaction = policies.recall, policies.compaction
    if not isinstance(event, Recalled) or recall is None or compaction is None:
        return violations
    if RECALL_BUDGET in recall.promises:
        violations.extend(check_recall(compaction, before, after, event, at=at))
    return violations


def budget_bound(compaction: object, *, compacted: bool) -> int | None:
    """The budget ``BUDGET`` holds a window to after a turn, under the policy's trigger and
    target (``memtape.policies.window.trigger``), or None when nothing bounds it.

    After a compaction, its target; otherwise the lowest token count its
    trigger fires over, or None when only turns trigger it (``messages``,
    ``every``) or when ``clear_at_least`` may have held a compaction back (one
    freeing less is not made, so the window may stay over the trigger until a
    later one frees enough). A policy without a trigger: its budget.
    """
    budget: int = getattr(compaction, "budget", 0)
    trigger = getattr(compaction, "trigger", None)
    if not isinstance(trigger, Trigger):
        return budget
    if compacted:
        return trigger.goal(budget)
    return None if trigger.clear_at_least else trigger.bound(budget)


def check_verbatim(
    window: Window,
    verbatim: int,
    turns: Mapping[int, TurnAdded],
    *,
    at: int,
    fresh: int | None = None,
) -> list[Violation]:
    """HOT ends with the last ``verbatim`` turns (all of them while fewer arrived) and the
    rest of their units (``memtape.policies.window.units``), exactly as they arrived; what HOT
    holds before those is the policy's business.

    ``turns`` maps (at least) those turns to the ``TurnAdded`` events that
    brought them. ``fresh``, when given, says that HOT only gained its newest
    ``fresh`` turns since this held: only they are compared with how they
    arrived (the unit they extend is still checked whole for its turns).
    """
    least = min(verbatim, window.turns)
    if not least:
        return []
    hot = window.hot
    expected = list(range(window.turns - least + 1, window.turns + 1))
    tail = hot[-least:]
    if [t.turn for t in tail] != expected:
        numbers = [t.turn for t in hot]
        message = f"HOT holds turns {numbers}, which do not end with the last {least} {expected}"
        return [Violation(at, "recent-verbatim", message)]
    start = recent_start(hot, newest(window), least)
    first = hot[start].turn
    if window.turns - first + 1 != len(hot) - start:
        numbers = [t.turn for t in hot[start:]]
        message = (
            f"HOT holds turns {numbers} of the unit(s) of the last {least}, "
            f"not every turn from {first} to {window.turns}"
        )
        return [Violation(at, "recent-verbatim", message)]
    compared = hot[start:] if fresh is None else hot[max(start, len(hot) - fresh) :]
    for turn in compared:
        if turns.get(turn.turn) != turn:
            message = f"turn {turn.turn} in HOT is not verbatim the turn that arrived"
            return [Violation(at, "recent-verbatim", message)]
    return []


def check_hot(
    window: Window,
    hot_n: int,
    turns: Mapping[int, TurnAdded],
    *,
    compacted: bool,
    at: int,
) -> list[Violation]:
    """HOT holds the newest turns verbatim: at least the last ``hot_n`` with the rest of their
    units, only those if compacted; besides them, only pinned turns with their units.

    ``turns`` maps (at least) the turns in HOT to the ``TurnAdded`` events
    that brought them.
    """
    hot = window.hot
    numbers = [t.turn for t in hot]
    least = min(hot_n, window.turns)
    last = newest(window)
    recent = recent_start(hot, last, least)
    held = [t.turn for unit in units(hot[:recent], last) if unit.pinned for t in unit.turns]
    violations: list[Violation] = []
    if compacted:
        first = hot[recent].turn if recent < len(hot) else window.turns + 1
        expected = [*held, *range(first, window.turns + 1)]
        if numbers != expected:
            tail = expected[len(held) :]
            kept = f"the last {least}"
            if len(tail) != least:
                kept += f" with the rest of their units, {tail}"
            message = f"after a compaction HOT holds turns {numbers}, not {kept}"
            if held:
                message += f" and the pinned {held}"
            violations.append(Violation(at, "hot", message))
    else:
        # The newest turns in order, and before them only pinned units.
        start = len(numbers)
        while start and numbers[start - 1] == window.turns - (len(numbers) - start):
            start -= 1
        in_order = len(numbers) - start
        holding = set(held)
        if any(n not in holding for n in numbers[:start]) or in_order < least:
            pinned_before = sum(n in holding for n in numbers[:start])
            message = (
                f"HOT holds turns {numbers}, not the newest "
                f"{max(least, len(numbers) - pinned_before)} of {window.turns} in order"
            )
            if held:
                message += f" beside the pinned {held}"
            violations.append(Violation(at, "hot", message))
    for turn in hot:
        if turns.get(turn.turn) != turn:
            message = f"turn {turn.turn} in HOT is not verbatim the turn that arrived"
            violations.append(Violation(at, "hot", message))
    return violations


def check_well_formed(window: Window, *, at: int) -> list[Violation]:
    """HOT is a request the major APIs accept: every id a HOT turn answers was called by an
    earlier HOT turn, and every HOT call that has been answered has its answer HOT.

    Whether a call has been answered is the window's to say (``waiting`` holds
    the calls still waiting); the first violation in HOT's order is reported.
    Its cost is the size of HOT: ``StepChecker`` checks the turns that moved at
    each step instead, and ``check_run`` this at its checkpoints.
    """
    calling: dict[str, int] = {}
    for turn in window.hot:
        for answered in turn.answers:
            if calling.pop(answered, None) is None:
                message = f"turn {turn.turn} answers {answered!r}, whose call is not HOT"
                return [Violation(at, "well-formed", message)]
        for called in turn.calls:
            calling[called] = turn.turn
    for called, caller in calling.items():
        if window.waiting.get(called) != caller:
            message = f"turn {caller} calls {called!r}, whose result has left HOT"
            return [Violation(at, "well-formed", message)]
    return []


def check_pinned(window: Window, pinned: Mapping[int, TurnAdded], *, at: int) -> list[Violation]:
    """Every pinned turn so far (``pinned``: their numbers to the ``TurnAdded`` events that
    brought them) is HOT, exactly as it arrived: never dropped, folded or cleared."""
    if not pinned:
        return []
    held = {turn.turn: turn for turn in window.hot}
    return _unpinned(window, pinned, held, at)


def _unpinned(
    window: Window,
    pinned: Mapping[int, TurnAdded],
    held: Mapping[int, TurnAdded],
    at: int,
) -> list[Violation]:
    for number, arrived in sorted(pinned.items()):
        now = held.get(number)
        if now == arrived:
            continue
        if now is None:
            tier = window.tier_of(number) or "gone"
            message = f"pinned turn {number} is {tier.upper()} now, no longer HOT"
        else:
            message = f"pinned turn {number} is HOT but reads {now.text!r}, not as it arrived"
        return [Violation(at, "pinned", message)]
    return []


# -- the store -------------------------------------------------------------------------------


def check_capacity(store: Store, capacity: int, *, at: int, before: int = 0) -> list[Violation]:
    """After a whole command, the store holds at most ``capacity`` active facts, or no more
    than the ``before`` it held: a capacity lowered by a fork binds the writes decided
    under it, and evicts nothing by itself."""
    if len(store.active) <= max(capacity, before):
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


def check_supersedes(store: Store, *, at: int) -> list[Violation]:
    """At most one active fact per key, so no read by key can return a stale one."""
    holders: dict[str, list[int]] = {}
    for fact_id in store.active:
        holders.setdefault(store.facts[fact_id].key, []).append(fact_id)
    for key, ids in holders.items():
        if len(ids) > 1:
            message = f"key {key!r} has {len(ids)} active facts, {sorted(ids)}"
            return [Violation(at, "supersedes", message)]
    return []


def check_expiry(store: Store, clock: float, *, at: int) -> list[Violation]:
    """No active fact's time is at or before the clock: a due fact left as ``Expired``, so
    nothing ranks, reads or returns it."""
    for fact_id in store.active:
        fact = store.facts[fact_id]
        if fact.expires_at is not None and fact.expires_at <= clock:
            message = (
                f"fact {fact_id} ({fact.key!r}) is still active at t={clock:g}, "
                f"though it expires at t={fact.expires_at:g}"
            )
            return [Violation(at, "expires", message)]
    return []


def check_eviction(
    forgetting: ForgettingPolicy, before: State, event: Evicted, *, at: int
) -> list[Violation]:
    """The evicted fact scored lowest among the actives just before its eviction (the new
    fact included), ties to the oldest write, then the lowest id; and only over capacity.

    The scores are those of the policy's own ranking (``rank``), so a policy
    whose score depends on the other facts (normalized, say) is judged as it
    ranks. ``before`` is the state just before ``event``, at position ``at``.
    """
    store = before.store
    if event.id not in store.active:
        return [Violation(at, "eviction", f"fact {event.id} is evicted but is not active")]
    ranked = forgetting.rank(store, before.clock)
    scores = {s.fact.id: s.score for s in ranked if s.fact.id in store.active}
    if event.id not in scores:
        message = f"fact {event.id} is evicted, but the policy's ranking does not hold it"
        return [Violation(at, "eviction", message)]
    weakest = min(scores, key=lambda i: (scores[i], store.facts[i].written_at, i))
    violations: list[Violation] = []
    if len(store.active) <= forgetting.capacity:
        message = (
            f"fact {event.id} is evicted with {len(store.active)} facts active, "
            f"within the capacity of {forgetting.capacity}"
        )
        violations.append(Violation(at, "eviction", message))
    if weakest != event.id:
        condemned, lowest = store.facts[event.id], store.facts[weakest]
        message = (
            f"fact {event.id} ({condemned.key!r}, score {scores[event.id]!r}) is evicted, but "
            f"fact {weakest} ({lowest.key!r}) scored lowest, {scores[weakest]!r}"
        )
        violations.append(Violation(at, "eviction", message))
    elif scores[weakest] != event.score:
        message = (
            f"fact {event.id} is evicted with score {event.score!r}, "
            f"but it scored {scores[weakest]!r} at t={before.clock:g}"
        )
        violations.append(Violation(at, "eviction", message))
    return violations


def check_query(
    forgetting: ForgettingPolicy, before: State, event: Queried, *, at: int
) -> list[Violation]:
    """A query returns the first ``min(k, actives)`` facts of the policy's ranking for its
    text, best first, each with the score it ranked by: so at most ``k``, all active.

    ``before`` is the state just before ``event``, which sits at position ``at``. A
    bi-temporal query ranks the facts valid at its ``as_of`` as known at its ``known_at``
    (``memtape.policies.store.temporal``), and under VALID_AS_OF returns no other.
    """
    store = before.store
    if event.as_of is not None or event.known_at is not None:
        known_at = event.known_at if event.known_at is not None else before.clock
        as_of = event.as_of if event.as_of is not None else known_at
        store = temporal.store_as_of(before, as_of, known_at)
        if VALID_AS_OF in forgetting.promises:
            outside = [i for i in event.results if i not in store.active]
            if outside:
                message = (
                    f"the query as of t={as_of:g}, as known at t={known_at:g}, returned "
                    f"facts {outside}, not valid then as known then"
                )
                return [Violation(at, "valid-as-of", message)]
    ranked = forgetting.rank(store, before.clock, event.text)[: event.k]
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


def check_codec(event: Event, *, at: int) -> list[Violation]:
    """The event written as a run file writes it, and read back, equals itself."""
    cls = type(event)
    try:
        data = orjson.loads(orjson.dumps(event_data(event)))
        back = event_from_data(cls.__name__, cls.VERSION, data)
    except (BadInput, TypeError, orjson.JSONEncodeError) as error:
        message = f"{cls.__name__} cannot be written and read back: {error}"
        return [Violation(at, "codec", message)]
    if back != event:
        message = f"{event!r} reads back from its run file as {back!r}"
        return [Violation(at, "codec", message)]
    return []


def check_determinism(
    policies: Policies,
    state: State,
    command: Command,
    *,
    at: int,
    answers: Callable[[], Answers] | None = None,
) -> list[Violation]:
    """Deciding ``command`` on ``state`` twice, with the wall clock and the global random
    generator set to different values each time, gives identical events (or the same
    rejection). ``at`` is the position its first event would take; ``answers``, when
    given, makes the answers to each decision's model questions (a fresh ``Replay``).
    Otherwise the first decision asks whatever it asks, and the second gets the answers
    the first recorded: a model's own variation is not the policy's."""
    if answers is None:
        first = decide_in_world(policies, state, command, 0)
        asked = recorded_calls(first) if isinstance(first, tuple) else ()
        with answering(Replay(asked)) if asked else nullcontext():
            second = decide_in_world(policies, state, command, 1)
    else:
        with answering(answers()):
            first = decide_in_world(policies, state, command, 0)
        with answering(answers()):
            second = decide_in_world(policies, state, command, 1)
    if _outcome(first) == _outcome(second):
        return []
    message = (
        f"{type(command).__name__} decided twice on the same state, under another wall clock "
        f"and random state: {_outcome(first)}, then {_outcome(second)}"
    )
    return [Violation(at, "determinism", message)]


def _outcome(outcome: tuple[Event, ...] | Rejected) -> str:
    if isinstance(outcome, Rejected):
        return f"rejected ({outcome})"
    return repr(list(outcome))


def check_compaction(
    compaction: CompactionPolicy,
    window: Window,
    turns: Mapping[int, TurnAdded],
    *,
    compacted: bool,
    at: int,
    arrived: int | None = None,
) -> list[Violation]:
    """What ``compaction`` promises of the window after a command that added a turn.

    BUDGET: within ``max(budget, floor(window))``; RECENT_VERBATIM: the last
    ``verbatim`` turns HOT as they arrived, with their units. The seed's
    tiered policy is also held to its own design: HOT exactly its last
    ``hot_n`` turns (with their units, and the pinned turns) after a
    compaction, and the gist. WELL_FORMED and PINNED, which follow each
    turn's moves, are ``StepChecker``'s.

    ``arrived``, when given, is how many turns the command added to a window
    checked after the command before: without a compaction HOT only grew by
    them, so only they need checking against RECENT_VERBATIM (under ``none``,
    which keeps every turn verbatim, the whole HOT would cost each command
    the length of the run).
    """
    promises = compaction.promises
    violations: list[Violation] = []
    if BUDGET in promises:
        if is_budgeted(compaction):
            floor = compaction.floor(window) + sum(item.tokens for item in window.recalled)
            bound = budget_bound(compaction, compacted=compacted)
            if bound is not None:
                violations.extend(check_budget(window, bound, floor=floor, at=at))
        else:
            violations.append(_unkept(compaction, BUDGET, "floor(window)", at))
    if RECENT_VERBATIM in promises:
        if is_verbatim(compaction):
            verbatim, fresh = compaction.verbatim, None
            if arrived is not None and not compacted:
                verbatim = fresh = min(verbatim, arrived)
            violations.extend(check_verbatim(window, verbatim, turns, at=at, fresh=fresh))
        else:
            violations.append(_unkept(compaction, RECENT_VERBATIM, "verbatim (an int)", at))
    if isinstance(compaction, TieredCompaction):
        violations.extend(check_hot(window, compaction.hot_n, turns, compacted=compacted, at=at))
        if compacted:
            violations.extend(check_gist(window, compaction, at=at))
    return violations


def check_forgetting(
    forgetting: ForgettingPolicy, state: State, *, at: int, before: int = 0
) -> list[Violation]:
    """What ``forgetting`` promises of the store after a command that touched it (CAPACITY,
    SUPERSEDES), and the ranking every forgetting policy owes; ``before`` is how many facts
    were active before the command."""
    promises = forgetting.promises
    store = state.store
    violations: list[Violation] = []
    if CAPACITY in promises:
        violations.extend(check_capacity(store, forgetting.capacity, at=at, before=before))
    if SUPERSEDES in promises:
        violations.extend(check_supersedes(store, at=at))
    if EXPIRES in promises:
        violations.extend(check_expiry(store, state.clock, at=at))
    violations.extend(check_ranking(forgetting, store, state.clock, at=at))
    return violations


def _unkept(policy: object, promise: str, member: str, at: int) -> Violation:
    message = f"{type(policy).__name__} promises {promise} but has no {member}"
    return Violation(at, "promise", message)


class _Links:
    """The call/answer pairs among the turns so far, for WELL_FORMED step by step.

    A turn's answer pairs with the latest call of the same id not answered
    yet; each HOT turn keeps its partners until it leaves HOT, so the memory
    is that of HOT.
    """

    def __init__(self) -> None:
        self.calling: dict[str, int] = {}
        self.partners: dict[int, list[tuple[int, str]]] = {}

    def arrive(self, turn: TurnAdded) -> None:
        """Pair ``turn``'s answers with their calls, and open its own calls."""
        for answered in turn.answers:
            caller = self.calling.pop(answered, None)
            if caller is not None:
                self.partners.setdefault(caller, []).append((turn.turn, answered))
                self.partners.setdefault(turn.turn, []).append((caller, answered))
        for called in turn.calls:
            self.calling[called] = turn.turn

    def arrived(self, turn: TurnAdded, hot: Mapping[int, object], *, at: int) -> list[Violation]:
        """``turn`` arrived and is HOT: the calls it answers must be HOT."""
        for caller, answered in self.partners.get(turn.turn, ()):
            if caller < turn.turn and caller not in hot:
                message = (
                    f"turn {turn.turn} answers {answered!r}, whose call is not HOT "
                    f"(turn {caller} made it)"
                )
                return [Violation(at, "well-formed", message)]
        return []

    def left(self, turn: int, hot: Mapping[int, object], *, at: int) -> list[Violation]:
        """``turn`` left HOT: its calls' results and its answers' calls must have left too."""
        for partner, id_ in self.partners.pop(turn, ()):
            if partner not in hot:
                continue
            if partner > turn:
                message = (
                    f"turn {partner} answers {id_!r}, whose call is not HOT "
                    f"(turn {turn} made it, and left)"
                )
            else:
                message = (
                    f"turn {partner} calls {id_!r}, whose result has left HOT "
                    f"(turn {turn} carried it)"
                )
            return [Violation(at, "well-formed", message)]
        return []


class HotByNumber(Mapping[int, TurnAdded]):
    """HOT's turns by number, looked up by bisection (HOT is in turn order), not copied."""

    def __init__(self, hot: Sequence[TurnAdded]) -> None:
        self._hot = hot

    def __getitem__(self, number: int) -> TurnAdded:
        hot = self._hot
        at = bisect_left(hot, number, key=_turn_number)
        if at == len(hot) or hot[at].turn != number:
            raise KeyError(number)
        return hot[at]

    def __iter__(self) -> Iterator[int]:
        return (turn.turn for turn in self._hot)

    def __len__(self) -> int:
        return len(self._hot)


def _turn_number(turn: TurnAdded) -> int:
    return turn.turn


class StepChecker:
    """The per-command checks of a run, fed one command's batch at a time.

    After each event: the fold accepts it (``integrity``: the checker stops
    at the first event that does not fold), the codec round trip, the token
    total, for an eviction under EVICTS_WEAKEST, that the weakest fact
    went, and for a query, that it returned the top of the ranking. After a
    command that added a turn: ``check_compaction``, and under WELL_FORMED
    that a recorded turn's structure was one the run allowed (``structure_error``)
    and that the turns that arrived or left HOT did so with their partners;
    under PINNED that a compaction moved no pinned turn. After one that
    touched the store: ``check_forgetting``. A batch costs what it changed,
    and the size of the window while the window is short: the token total is
    counted from the tiers after each event only while HOT and WARM hold at
    most ``SHORT_HOT`` items (a ``none`` window keeps every turn), and
    ``check_run`` counts it again at its checkpoints, with the checks that
    grow with the whole state.

    ``own_texts`` False says the run's texts are not the ones it was decided
    on (a redacted copy's placeholders): a query is then not ranked again,
    since its ranking may weigh its text (relevance); its results and scores
    are the recorded ones.
    """

    def __init__(self, initial: State, *, own_texts: bool = True) -> None:
        self.state = initial
        self.broken = False
        self._own_texts = own_texts
        self._hot: dict[int, TurnAdded] = {}
        self._links = _Links()
        self.pinned: dict[int, TurnAdded] = {}
        """The pinned turns so far, by number, as they arrived."""

    def check(
        self,
        policies: Policies,
        events: Sequence[Event],
        *,
        start: int,
        after_event: Callable[[int, State], list[Violation]] | None = None,
    ) -> list[Violation]:
        """Fold ``events`` (which follow position ``start``), checking them under ``policies``;
        ``after_event(position, state)`` adds checks after each event."""
        compaction, forgetting = policies.compaction, policies.forgetting
        weakest = forgetting is not None and EVICTS_WEAKEST in forgetting.promises
        promised = compaction.promises if compaction is not None else frozenset()
        violations: list[Violation] = []
        touched_window = touched_store = compacted = False
        arrivals: list[TurnAdded] = []
        leaving: list[int] = []
        state = initial = self.state
        for position, event in enumerate(events, start=start + 1):
            try:
                after = evolve(state, event)
            except CorruptLog as error:
                self.broken = True
                message = f"{type(event).__name__}: {error}"
                return [*violations, Violation(position, "integrity", message)]
            violations.extend(_each_event(policies, state, after, event, at=position))
            if isinstance(event, TurnAdded):
                touched_window = True
                arrivals.append(event)
                self._hot[event.turn] = event
                if WELL_FORMED in promised:
                    wrong = structure_error(state.window, event.calls, event.answers)
                    if wrong is not None:
                        violations.append(Violation(position, "well-formed", wrong))
                self._links.arrive(event)
                if event.pinned:
                    self.pinned[event.turn] = event
            elif isinstance(event, CompactionTriggered):
                compacted = True
                # The fold took out of HOT exactly what the event moves (it refuses
                # an event naming a turn HOT does not hold): what left, at its cost.
                leaving.extend(item.turn for item in event.warm)
                leaving.extend(event.dropped)
            elif isinstance(event, _STORE_EVENTS):
                touched_store = True
                if isinstance(event, Evicted) and weakest and forgetting is not None:
                    violations.extend(check_eviction(forgetting, state, event, at=position))
                elif isinstance(event, Queried) and forgetting is not None and self._own_texts:
                    violations.extend(check_query(forgetting, state, event, at=position))
            state = after
            window = state.window
            if len(window.hot) + len(window.warm) <= SHORT_HOT:
                violations.extend(check_token_total(window, at=position))
            if after_event is not None:
                violations.extend(after_event(position, state))
        self.state = state
        end = start + len(events)
        window = state.window
        if touched_window and compaction is not None:
            violations.extend(
                check_compaction(
                    compaction,
                    window,
                    self._hot,
                    compacted=compacted,
                    at=end,
                    arrived=len(arrivals),
                )
            )
        violations.extend(
            self._moves(window, arrivals, leaving, promised, compacted=compacted, at=end)
        )
        if touched_store and forgetting is not None:
            violations.extend(
                check_forgetting(forgetting, state, at=end, before=len(initial.store.active))
            )
        return violations

    def _moves(
        self,
        window: Window,
        arrivals: Sequence[TurnAdded],
        leaving: Sequence[int],
        promised: frozenset[str],
        *,
        compacted: bool,
        at: int,
    ) -> list[Violation]:
        """Follow HOT to ``window``, the compactions having moved the turns ``leaving`` out of
        it; what the turns that arrived in it or left it break of WELL_FORMED and PINNED,
        when promised. HOT is read by turn number, never walked."""
        if not compacted:
            if WELL_FORMED not in promised:
                return []
            return [
                found for turn in arrivals for found in self._links.arrived(turn, self._hot, at=at)
            ][:1]
        now = HotByNumber(window.hot)
        left = sorted(number for number in leaving if number in self._hot)
        for number in left:
            del self._hot[number]
        violations: list[Violation] = []
        if WELL_FORMED in promised:
            for turn in arrivals:
                if turn.turn in now:
                    violations.extend(self._links.arrived(turn, now, at=at))
            for number in left:
                violations.extend(self._links.left(number, now, at=at))
        else:
            for number in left:
                self._links.partners.pop(number, None)
        if PINNED in promised:
            violations.extend(_unpinned(window, self.pinned, now, at))
        return violations[:1]


def check_run(
    run: Run,
    policies: Policies | Callable[[int], Policies],
    *,
    checkpoint: int = DEFAULT_SNAPSHOT_EVERY,
    own_texts: bool = True,
    progress: Callable[[int], None] | None = None,
) -> list[Violation]:
    """Every invariant over a whole run, in one pass that folds the log event by event.

    Each command's batch goes through ``StepChecker``: what every policy
    owes (the fold, the codec, the token total, the ranking) and what each
    policy in force promises, no more (``own_texts``: see ``StepChecker``).
    At positions ``checkpoint``, twice that, four times, ... and at the end,
    the checks whose cost is the size of the state: replay equality with
    ``run.state_at``, the tiers and the statuses (so those report the
    checkpoint where they first show, and the whole check stays linear in
    the length of the run). Checks that need a
    policy the run lacks are skipped. Each invariant reports its first
    violation only. ``policies`` may be a function of the position
    (``Session.policies_at``), for a forked run. ``progress(steps)`` hears how
    many commands are checked, every ``PROGRESS_EVERY`` and at the end.
    """
    policies_at = _policies_at(policies)
    if checkpoint < 1:
        raise BadInput(f"checkpoint must be at least 1, got {checkpoint}")
    found: dict[str, Violation] = {}
    events = run.events
    checker = StepChecker(run.state_at(0), own_texts=own_texts)
    next_checkpoint, checked = checkpoint, -1

    def at_checkpoint(position: int, state: State) -> list[Violation]:
        nonlocal next_checkpoint, checked
        if position != next_checkpoint:
            return []
        next_checkpoint, checked = 2 * position, position
        return _checkpoint(run, state, position, policies_at(position), checker.pinned)

    for step in range(1, run.steps + 1):
        if progress is not None and step % PROGRESS_EVERY == 0:
            progress(step)
        start, end = run.batch(step)
        violations = checker.check(
            policies_at(end), events[start:end], start=start, after_event=at_checkpoint
        )
        for violation in violations:
            found.setdefault(violation.invariant, violation)
        if checker.broken:
            return sorted(found.values(), key=lambda v: v.position)
    if progress is not None:
        progress(run.steps)
    state = checker.state
    for violation in [
        *(
            _checkpoint(run, state, len(run), policies_at(len(run)), checker.pinned)
            if checked != len(run)
            else []
        ),
        *check_replay(state, run.state, at=len(run)),
    ]:
        found.setdefault(violation.invariant, violation)
    return sorted(found.values(), key=lambda v: v.position)


def _checkpoint(
    run: Run,
    state: State,
    position: int,
    policies: Policies,
    pinned: Mapping[int, TurnAdded],
) -> list[Violation]:
    """The checks whose cost grows with the state, at one position (the whole of HOT under
    WELL_FORMED and PINNED when the compaction in force there promises them)."""
    promised = policies.compaction.promises if policies.compaction is not None else frozenset()
    window = state.window
    return [
        *check_replay(state, run.state_at(position), at=position),
        *check_tiers(window, at=position),
        *check_token_total(window, at=position),
        *check_status(state.store, at=position),
        *(check_well_formed(window, at=position) if WELL_FORMED in promised else []),
        *(check_pinned(window, pinned, at=position) if PINNED in promised else []),
    ]


def redecide(run: Run, policies: Policies | Callable[[int], Policies]) -> Violation | None:
    """Decide every recorded command again, from the state before its batch, under
    ``policies`` (or, for a forked run, the policies in force at each step);
    the first event the log does not agree with, or None.

    A log edited by hand (a turn's tokens changed, and still folding) or a
    policy whose behaviour changed since the run was recorded shows here.
    Each command's questions to a model get the answers its batch recorded
    (``memtape.llm.answers.Replay``): what is checked is the policy's logic
    given the same model outputs, and nothing is asked.
    """
    return _each_decision(run, policies, [_agrees])[0]


def redecide_in_worlds(
    run: Run, policies: Policies | Callable[[int], Policies]
) -> Violation | None:
    """``check_determinism`` for every recorded command, from the state before its batch:
    the first command the policies decide differently under another wall clock and random
    state, or None. (A policy that reads the clock may still re-decide to its own log when
    the clock has not moved far enough; this check does not depend on luck.)"""
    with made_up_worlds():
        return _each_decision(run, policies, [_alike])[0]


def redecide_twice(
    run: Run,
    policies: Policies | Callable[[int], Policies],
    *,
    progress: Callable[[int], None] | None = None,
) -> tuple[Violation | None, Violation | None]:
    """``redecide`` and ``redecide_in_worlds`` in one pass, folding the run once: what
    each finds, the same as each alone would. ``progress(steps)`` hears how many
    commands are done, every ``PROGRESS_EVERY`` and at the end."""
    with made_up_worlds():
        plain, worlds = _each_decision(run, policies, [_agrees, _alike], progress=progress)
    return plain, worlds


PROGRESS_EVERY = 512
"""How many commands a pass decides between two calls of its ``progress``."""


@attrs.frozen
class _Decision:
    """A recorded command, its batch ``events[start:end]``, the policies in force and the state
    before the batch."""

    step: int
    command: Command
    start: int
    recorded: Sequence[Event]
    policies: Policies
    state: State


def _each_decision(
    run: Run,
    policies: Policies | Callable[[int], Policies],
    checks: Sequence[Callable[[_Decision], Violation | None]],
    *,
    progress: Callable[[int], None] | None = None,
) -> list[Violation | None]:
    """Each of ``checks`` on every recorded command in turn, until it finds something: the
    first violation each finds, or an integrity one where the log stops folding (for each
    that had found nothing before)."""
    policies_at = _policies_at(policies)
    events = run.events
    state = run.state_at(0)
    found: list[Violation | None] = [None] * len(checks)
    pending = list(range(len(checks)))
    for step, command in enumerate(run.commands, start=1):
        if progress is not None and step % PROGRESS_EVERY == 0:
            progress(step)
        start, end = run.batch(step)
        recorded = events[start:end]
        decision = _Decision(step, command, start, recorded, policies_at(end), state)
        for index in list(pending):
            violation = checks[index](decision)
            if violation is not None:
                found[index] = violation
                pending.remove(index)
        if not pending:
            break
        try:
            state = fold(recorded, state)
        except CorruptLog as error:
            broken = Violation(start + 1, "integrity", f"{_step(step, command)}: {error}")
            for index in pending:
                found[index] = broken
            break
    if progress is not None:
        progress(run.steps)
    return found


def reask(
    run: Run,
    policies: Policies | Callable[[int], Policies],
    *,
    progress: Callable[[int], None] | None = None,
) -> tuple[list[Violation], int]:
    """Ask the model again each question every recorded command asked (the cache bypassed):
    a finding for each answer that differs from the recorded one, and how many were asked.

    Each command is decided again with the recorded answers (``Reask``), so
    the run goes on as recorded whatever the model says now; a question the
    run did not record is ``redecide``'s to report. A model that cannot be
    asked raises ``ModelUnavailable``. ``progress``: as ``redecide_twice``'s.
    """
    findings: list[Violation] = []
    asked = 0

    def ask_again(decision: _Decision) -> None:
        nonlocal asked
        positions = [
            decision.start + index + 1
            for index, event in enumerate(decision.recorded)
            for _ in getattr(event, "asked", ())
        ]
        if not positions:
            return
        reasker = Reask(recorded_calls(decision.recorded))
        with answering(reasker):
            try:
                decision.policies.decide(decision.state, decision.command)
            except ModelUnavailable:
                raise
            except Rejected:
                pass  # the re-decision reports it
        asked += reasker.used
        where = _step(decision.step, decision.command)
        for differing in reasker.differing:
            was, now = differing.recorded, differing.now
            message = (
                f"{where}: model {now.model!r} now answers {_quoted(now.output)}, where the "
                f"run recorded {_quoted(was.output)}"
            )
            findings.append(Violation(positions[differing.index], "live", message))

    _each_decision(run, policies, [ask_again], progress=progress)
    return findings, asked


def _quoted(text: str) -> str:
    """``text`` quoted, cut short if long."""
    return repr(text) if len(text) <= _QUOTED else f"{text[: _QUOTED - 3]!r}..."


_QUOTED = 80


def _agrees(decision: _Decision) -> Violation | None:
    """The command decided again, with the answers its batch recorded, gives the recorded
    events."""
    step, command, start = decision.step, decision.command, decision.start
    try:
        with answering(Replay(recorded_calls(decision.recorded))):
            expected = decision.policies.decide(decision.state, command)
    except Rejected as error:
        message = f"{_step(step, command)}: the policies reject the command: {error}"
        return Violation(start + 1, "re-decide", message)
    if expected != decision.recorded:
        return _divergence(step, command, start, expected, decision.recorded)
    return None


def _alike(decision: _Decision) -> Violation | None:
    """The command decided in two made-up worlds gives the same outcome."""
    recorded = recorded_calls(decision.recorded)
    found = check_determinism(
        decision.policies,
        decision.state,
        decision.command,
        at=decision.start + 1,
        answers=lambda: Replay(recorded),
    )
    return found[0] if found else None


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
