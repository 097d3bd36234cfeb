"""The store's invariants: capacity, ranking, each fact's status, supersession, and
the eviction and query a forgetting policy decides."""

from collections.abc import Sequence

from memtape.checking.invariants.violation import Violation
from memtape.core.events import (
    Event,
    Evicted,
    Judged,
    Queried,
    Superseded,
)
from memtape.core.state import State, Store
from memtape.policies.plumbing.promises import JUDGED, VALID_AS_OF
from memtape.policies.plumbing.protocols import (
    ForgettingPolicy,
)
from memtape.policies.store import temporal
from memtape.reducers import evolve


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


def check_judged(judged: Judged | None, event: Judged | Superseded, *, at: int) -> list[Violation]:
    """JUDGED: a judgement names a target among its candidates, and a supersession after it
    in the same batch (``judged``) retires only one of them."""
    if isinstance(event, Judged):
        judged, retired = event, event.target
        if not retired:
            return []
    else:
        retired = event.id
    if judged is None or retired in judged.candidates:
        return []
    among = ", ".join(str(i) for i in judged.candidates) or "none"
    message = (
        f"a judged write on {judged.key!r} retires fact {retired}, which is not among its "
        f"candidates ({among})"
    )
    return [Violation(at, JUDGED, message)]
