"""Bi-temporal facts: when a fact was true (valid time) apart from when the store knew it
(record time, the clock).

A fact is true from its ``valid_from`` (its write, when it names none) until
its ``valid_to`` (open when it names none), or until a later write that names
its own ``valid_from`` closes it there (``ValidityClosed``: the world changed;
the old fact is retired as current, and kept as true before). The store knew
a fact from its write; it stopped knowing it when it was evicted or expired,
or when it was superseded by a write that named no valid time (a correction:
what was believed was wrong, not outdated).

A bi-temporal query asks ``as_of`` a valid time and ``known_at`` a record
time: the facts the store knew at ``known_at`` that were, as it knew then,
true at ``as_of``. Eviction and expiry go by record time (the clock);
supersession by key goes by record time too, and, when the write names a
valid time, closes the old fact's validity there.
"""

import math

from immutables import Map

from memtape.core.commands import Query, WriteFact
from memtape.core.errors import Rejected
from memtape.core.events import ValidityClosed
from memtape.core.state import Fact, State, Store


def check_validity(command: WriteFact, clock: float) -> None:
    """Reject a write whose ``valid_from`` or ``valid_to`` is not a finite number, or whose
    interval ends before it starts."""
    for name in ("valid_from", "valid_to"):
        value = getattr(command, name)
        if value is not None and (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            raise Rejected(f"a fact's {name} must be a finite number, got {value!r}")
    start = clock if command.valid_from is None else command.valid_from
    if command.valid_to is not None and command.valid_to <= start:
        raise Rejected(
            f"a fact valid from t={start:g} cannot be valid to t={command.valid_to:g}: "
            "it would end before it starts"
        )


def closes(store: Store, retired: list[int], command: WriteFact, by: int) -> list[ValidityClosed]:
    """The validity closes a write naming ``valid_from`` makes of the facts it retires: each
    open past that time is closed there (at its own start, if that is later: it was never
    true)."""
    if command.valid_from is None:
        return []
    closed = []
    for fact_id in retired:
        fact = store.facts[fact_id]
        end = valid_end(fact, math.inf)
        if end > command.valid_from:
            start = valid_start(fact)
            closed.append(ValidityClosed(fact_id, float(max(command.valid_from, start)), by))
    return closed


def valid_start(fact: Fact) -> float:
    """When the fact became true: its ``valid_from``, or its write."""
    return fact.written_at if fact.valid_from is None else fact.valid_from


def valid_end(fact: Fact, known_at: float) -> float:
    """When the fact stopped being true, as the store knew at ``known_at`` (inf: open)."""
    if fact.closed_to is not None and fact.closed_at is not None and fact.closed_at <= known_at:
        return fact.closed_to
    return math.inf if fact.valid_to is None else fact.valid_to


def known(fact: Fact, known_at: float) -> bool:
    """Whether the store knew the fact at record time ``known_at``."""
    if fact.written_at > known_at:
        return False
    if fact.status == "active" or (fact.status == "retired" and fact.closed_at is not None):
        return True
    return fact.ended_at is None or fact.ended_at > known_at


def valid(fact: Fact, as_of: float, known_at: float) -> bool:
    """Whether the fact was true at ``as_of``, as the store knew at ``known_at``."""
    return valid_start(fact) <= as_of < valid_end(fact, known_at)


def times(command: Query, clock: float) -> tuple[float, float]:
    """The ``(as_of, known_at)`` a bi-temporal query asks (each defaulting to the other, then
    to the clock), or ``Rejected`` when one is not a finite number or ``known_at`` is after
    the clock (the store cannot know the future)."""
    for name in ("as_of", "known_at"):
        value = getattr(command, name)
        if value is not None and (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            raise Rejected(f"a query's {name} must be a finite number, got {value!r}")
    known_at = command.known_at if command.known_at is not None else clock
    if known_at > clock:
        raise Rejected(
            f"a query cannot ask as known at t={known_at:g}: the clock is at t={clock:g}"
        )
    as_of = command.as_of if command.as_of is not None else known_at
    return float(as_of), float(known_at)


def store_as_of(state: State, as_of: float, known_at: float) -> Store:
    """The store with the facts valid at ``as_of`` as known at ``known_at`` as its actives,
    for a policy to rank (every shipped policy ranks ``store.active``)."""
    store = state.store
    chosen = [
        f.id for f in store.facts.values() if known(f, known_at) and valid(f, as_of, known_at)
    ]
    return Store(store.facts, Map(dict.fromkeys(chosen)), store.by_key, store.shared)
