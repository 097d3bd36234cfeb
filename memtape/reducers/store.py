"""Folding store events: facts written, read (alone or by a query), superseded, evicted,
expired, judged."""

import attrs

from memtape.core.errors import CorruptLog
from memtape.core.events import (
    Evicted,
    Expired,
    FactRead,
    FactWritten,
    Judged,
    Queried,
    Superseded,
    ValidityClosed,
)
from memtape.core.plural import counted
from memtape.core.state import Fact, Store


def fact_written(store: Store, event: FactWritten, clock: float) -> Store:
    """Add the fact as active and make it the newest active fact on its key."""
    if event.id != len(store.facts) + 1:
        raise CorruptLog(f"fact {event.id} cannot follow fact {len(store.facts)}")
    if event.expires_at is not None and event.expires_at <= clock:
        raise CorruptLog(
            f"fact {event.id} is written at t={clock:g} to expire at t={event.expires_at:g}, "
            "which is not later"
        )
    fact = Fact(event.id, event.key, event.text, event.importance, clock)
    if event.expires_at is not None:
        fact = attrs.evolve(fact, expires_at=event.expires_at, ttl=event.ttl)
    if event.valid_from is not None or event.valid_to is not None:
        start = clock if event.valid_from is None else event.valid_from
        if event.valid_to is not None and event.valid_to <= start:
            raise CorruptLog(
                f"fact {event.id} is valid from t={start:g} to t={event.valid_to:g}, "
                "which ends before it starts"
            )
        fact = attrs.evolve(fact, valid_from=event.valid_from, valid_to=event.valid_to)
    shared = store.shared
    if event.key in store.by_key:
        shared = shared.set(event.key, shared.get(event.key, 1) + 1)
    return Store(
        store.facts.set(event.id, fact),
        store.active.set(event.id, None),
        store.by_key.set(event.key, event.id),
        shared,
    )


def fact_read(store: Store, event: FactRead, clock: float) -> Store:
    """Count one more read of an active fact, at the current clock."""
    read = _touched(_active(store, event.id), clock)
    return Store(store.facts.set(read.id, read), store.active, store.by_key, store.shared)


def queried(store: Store, event: Queried, clock: float) -> Store:
    """Count one more read of each fact a query returned, as ``fact_read`` does."""
    if len(event.results) != len(event.scores):
        raise CorruptLog(
            f"a query returned {counted(len(event.results), 'fact')} with "
            f"{counted(len(event.scores), 'score')}"
        )
    if len(event.results) > event.k:
        raise CorruptLog(f"a query for the top {event.k} returned {len(event.results)} facts")
    if len(set(event.results)) != len(event.results):
        raise CorruptLog(f"a query returned a fact twice: {list(event.results)}")
    facts = store.facts
    bitemporal = event.as_of is not None or event.known_at is not None
    for fact_id in event.results:
        if bitemporal and fact_id not in store.active:
            # A fact of the past, valid then: returned, but not read now.
            if fact_id not in store.facts:
                raise CorruptLog(f"a query returned fact {fact_id}, which does not exist")
            continue
        read = _touched(_active(store, fact_id), clock)
        facts = facts.set(fact_id, read)
    return Store(facts, store.active, store.by_key, store.shared)


def _touched(fact: Fact, clock: float) -> Fact:
    if fact.expires_at is not None or fact.valid_from is not None or fact.valid_to is not None:
        return attrs.evolve(fact, reads=fact.reads + 1, last_read_at=clock)
    return Fact(
        fact.id,
        fact.key,
        fact.text,
        fact.importance,
        fact.written_at,
        fact.reads + 1,
        clock,
    )


def superseded(store: Store, event: Superseded, clock: float) -> Store:
    """Retire an active fact in favour of a newer one; it stays in the store."""
    fact = _active(store, event.id)
    if event.by not in store.facts:
        raise CorruptLog(f"fact {event.id} is superseded by fact {event.by}, which does not exist")
    retired = attrs.evolve(fact, status="retired", ended_at=clock, superseded_by=event.by)
    return _deactivate(store, retired)


def evicted(store: Store, event: Evicted, clock: float) -> Store:
    """Mark an active fact evicted, keeping the score that condemned it."""
    fact = _active(store, event.id)
    gone = attrs.evolve(fact, status="evicted", ended_at=clock, evicted_score=event.score)
    return _deactivate(store, gone)


def expired(store: Store, event: Expired, clock: float) -> Store:
    """Mark an active fact expired, with the reason; only a fact whose time has come expires."""
    fact = _active(store, event.id)
    if fact.expires_at is None or fact.expires_at > clock:
        when = "never" if fact.expires_at is None else f"at t={fact.expires_at:g}"
        raise CorruptLog(f"fact {event.id} cannot expire at t={clock:g}: it expires {when}")
    gone = attrs.evolve(fact, status="expired", ended_at=clock, expired_reason=event.reason)
    return _deactivate(store, gone)


def validity_closed(store: Store, event: ValidityClosed, clock: float) -> Store:
    """Close a fact's validity at valid time ``to``, as a later fact says; its status stays."""
    fact = store.facts.get(event.id)
    if fact is None:
        raise CorruptLog(f"fact {event.id} cannot be closed: it does not exist")
    if event.by not in store.facts or event.by <= event.id:
        raise CorruptLog(f"fact {event.id} is closed by fact {event.by}, which is not a later one")
    closed = attrs.evolve(fact, closed_to=event.to, closed_at=clock, closed_by=event.by)
    return Store(store.facts.set(fact.id, closed), store.active, store.by_key, store.shared)


JUDGEMENTS = ("ADD", "UPDATE", "DELETE", "NOOP")
"""What a judged write may decide; ``UPDATE`` and ``DELETE`` name a target."""


def judged(store: Store, event: Judged, clock: float) -> Store:
    """Fold a model's judgement of a write: a ``DELETE`` retires its target (kept, with no
    successor); the others change nothing here (an ``UPDATE``'s write and supersession
    follow as their own events)."""
    if event.decision not in JUDGEMENTS:
        raise CorruptLog(f"a judged write decided {event.decision!r}, not one of {JUDGEMENTS}")
    named = event.decision in ("UPDATE", "DELETE")
    if named != bool(event.target):
        which = "names" if named else "cannot name"
        raise CorruptLog(f"a judged {event.decision} {which} a target fact, got {event.target}")
    if event.decision != "DELETE":
        if named:
            _active(store, event.target)
        return store
    fact = _active(store, event.target)
    return _deactivate(store, attrs.evolve(fact, status="retired", ended_at=clock))


def _active(store: Store, fact_id: int) -> Fact:
    if fact_id not in store.active:
        raise CorruptLog(f"fact {fact_id} is not active")
    return store.facts[fact_id]


def _deactivate(store: Store, fact: Fact) -> Store:
    active = store.active.delete(fact.id)
    by_key, shared = store.by_key, store.shared
    sharing = shared.get(fact.key, 1)
    if sharing > 1:
        shared = shared.set(fact.key, sharing - 1) if sharing > 2 else shared.delete(fact.key)
    if by_key.get(fact.key) == fact.id:
        if sharing > 1:
            # The newest of the others on the key now answers for it.
            others = [i for i in active if store.facts[i].key == fact.key]
            by_key = by_key.set(fact.key, max(others))
        else:
            by_key = by_key.delete(fact.key)
    return Store(store.facts.set(fact.id, fact), active, by_key, shared)
