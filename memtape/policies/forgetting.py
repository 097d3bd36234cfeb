"""Forgetting by importance x recency x access: decay, supersede, evict."""

import math
from collections.abc import Mapping
from typing import Any, ClassVar

import attrs

from memtape.core.commands import Query, ReadFact, WriteFact
from memtape.core.errors import BadInput, Rejected
from memtape.core.events import Event, Evicted, FactRead, FactWritten, Superseded
from memtape.core.state import Fact, State, Store
from memtape.policies.params import Params
from memtape.policies.promises import CAPACITY, EVICTS_WEAKEST, SUPERSEDES
from memtape.policies.protocols import Scored
from memtape.policies.querying import answer_query


@attrs.frozen
class ImportanceRecencyAccess:
    """The seed's forgetting policy.

    ``score = importance x 0.5 ** ((now - last_touch) / half_life) x (1 +
    access_boost x reads)``, where the last touch is the write (a read counts
    but does not touch). A write to a key with an active fact supersedes it;
    a write that takes the store over ``capacity`` active facts evicts the
    lowest score (the new fact included), ties to the oldest write, then the
    lowest id.
    """

    name: ClassVar[str] = "importance-recency-access"
    capacity: int
    half_life: float
    access_boost: float

    def __attrs_post_init__(self) -> None:
        capacity = self.capacity
        if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1:
            raise BadInput(f"capacity must be an integer >= 1, got {capacity!r}")
        if not (math.isfinite(self.half_life) and self.half_life > 0):
            raise BadInput(f"half_life must be a positive number, got {self.half_life!r}")
        if not (math.isfinite(self.access_boost) and self.access_boost >= 0):
            raise BadInput(f"access_boost must be a number >= 0, got {self.access_boost!r}")

    @classmethod
    def from_params(cls, data: Mapping[str, Any], where: str) -> "ImportanceRecencyAccess":
        """Build the policy from a scenario's ``[forgetting]`` table."""
        params = Params(data, where)
        capacity = params.integer("capacity", minimum=1)
        half_life = params.number("half_life", 4.0, minimum=0.0, exclusive_minimum=True)
        access_boost = params.number("access_boost", 0.1, minimum=0.0)
        params.done()
        return cls(capacity, half_life, access_boost)

    @property
    def promises(self) -> frozenset[str]:
        """Capacity, eviction of the weakest, and supersession by key."""
        return frozenset({CAPACITY, EVICTS_WEAKEST, SUPERSEDES})

    def params(self) -> dict[str, Any]:
        """The parameters, as a scenario table would write them."""
        return {
            "policy": self.name,
            "capacity": self.capacity,
            "half_life": self.half_life,
            "access_boost": self.access_boost,
        }

    def score(self, fact: Fact, now: float) -> Scored:
        """The fact's score at time ``now``, with its three factors."""
        recency = 0.5 ** ((now - fact.written_at) / self.half_life)
        access = 1 + self.access_boost * fact.reads
        factors = {"importance": fact.importance, "recency": recency, "access": access}
        decayed = fact.importance * recency
        # A fact decayed to nothing stays at nothing, however large its access
        # factor grows (0 x inf would be NaN, and NaN ranks nowhere).
        return Scored(fact, factors, decayed * access if decayed else 0.0)

    def rank(self, store: Store, now: float, query: str = "") -> list[Scored]:
        """The active facts by score, highest first; ties to the oldest write, then lowest id.

        The query text plays no part: this policy has no relevance factor.
        """
        scored = [self.score(store.facts[i], now) for i in store.active]
        scored.sort(key=lambda s: (-s.score, s.fact.written_at, s.fact.id))
        return scored

    def decide(self, state: State, command: WriteFact | ReadFact | Query) -> tuple[Event, ...]:
        """The events that honour a write, a read or a query, or ``Rejected`` saying why not."""
        if isinstance(command, ReadFact):
            return (FactRead(find_active(state.store, command)),)
        if isinstance(command, Query):
            return (answer_query(self, state, command),)
        return self._write(state, command)

    def _write(self, state: State, command: WriteFact) -> tuple[Event, ...]:
        check_write(command)
        store = state.store
        retire: list[int] = []
        if command.supersedes is not None:
            named = store.by_key.get(command.supersedes)
            if named is None:
                raise Rejected(
                    f"cannot supersede {command.supersedes!r}: no active fact has that key"
                )
            retire.append(named)
        same_key = store.by_key.get(command.key)
        if same_key is not None and same_key not in retire:
            retire.append(same_key)
        new = Fact(len(store.facts) + 1, command.key, command.text, command.importance, state.clock)
        events: list[Event] = [FactWritten(new.id, new.key, new.text, new.importance)]
        events.extend(Superseded(old, new.id) for old in retire)
        if len(store.active) - len(retire) + 1 > self.capacity:
            candidates = [store.facts[i] for i in store.active if i not in retire]
            candidates.append(new)
            scored = [self.score(fact, state.clock) for fact in candidates]
            scored.sort(key=lambda s: (s.score, s.fact.written_at, s.fact.id))
            events.extend(
                Evicted(s.fact.id, s.score) for s in scored[: len(candidates) - self.capacity]
            )
        return tuple(events)


def check_write(command: WriteFact) -> None:
    """Reject a write whose key, text or importance is impossible."""
    if not isinstance(command.key, str) or not command.key.strip():
        raise Rejected(f"a fact's key must be a non-empty string, got {command.key!r}")
    if not isinstance(command.text, str):
        raise Rejected(f"a fact's text must be a string, got {command.text!r}")
    importance = command.importance
    if (
        isinstance(importance, bool)
        or not isinstance(importance, int | float)
        or not 0 <= importance <= 1
    ):
        raise Rejected(f"importance must be within [0, 1], got {importance!r}")


def find_active(store: Store, command: ReadFact) -> int:
    """The id of the active fact a read names, or ``Rejected`` saying why there is none."""
    if (command.key is None) == (command.id is None):
        raise Rejected("a read names a fact by key or by id (exactly one of them)")
    if command.id is not None and (isinstance(command.id, bool) or not isinstance(command.id, int)):
        raise Rejected(f"a fact's id is an integer, got {command.id!r}")
    if command.key is not None:
        found = store.by_key.get(command.key)
        if found is None:
            raise Rejected(f"cannot read {command.key!r}: no active fact has that key")
        return found
    fact = store.facts.get(command.id) if command.id is not None else None
    if fact is None:
        raise Rejected(f"cannot read fact {command.id}: no fact has that id")
    if fact.status != "active":
        raise Rejected(f"cannot read fact {command.id} ({fact.key!r}): it was {fact.status}")
    return fact.id
