"""The cache-replacement classics as forgetting policies: LRU, LFU and FIFO.

Each scores a fact by one number and evicts the lowest, ties to the oldest
write, then the lowest id: LRU by the time of the last touch (a read, a
query that returns the fact, or the write), LFU by the number of reads, FIFO
by the time of the write.
"""

from collections.abc import Mapping
from typing import Any, ClassVar, Self

import attrs

from memtape.core.commands import Query, ReadFact, WriteFact
from memtape.core.events import Event
from memtape.core.state import Fact, State, Store
from memtape.policies.plumbing.protocols import Scored
from memtape.policies.store import rules as store_rules
from memtape.policies.store.expiry import NO_TTL, Ttl
from memtape.policies.store.judged import Judge


@attrs.frozen
class _OneNumber:
    """A policy whose score is one number read off the fact; subclasses say which."""

    name: ClassVar[str]
    factor: ClassVar[str]
    capacity: int
    """The most active facts the store holds: a write past it evicts the lowest-ranked."""
    supersession: str = "key"
    """``key``: a write to a key with an active fact supersedes it; ``add-only``: never."""
    ttl: Ttl = NO_TTL
    judge: Judge | None = None

    def __attrs_post_init__(self) -> None:
        store_rules.check_capacity(self.capacity)
        store_rules.check_supersession(self.supersession, self.judge)

    @classmethod
    def from_params(cls, data: Mapping[str, Any], where: str) -> Self:
        """Build the policy from a scenario's ``[forgetting]`` table."""
        return cls(*store_rules.capacity_only(data, where))

    @property
    def promises(self) -> frozenset[str]:
        """Capacity, eviction of the weakest, and supersession by key (unless add-only)."""
        return store_rules.promises_of(self.supersession)

    def params(self) -> dict[str, Any]:
        """The parameters, as a scenario table would write them."""
        return store_rules.capacity_table(
            self.name, self.capacity, self.supersession, self.ttl, self.judge
        )

    def value(self, fact: Fact) -> float:
        """The one number this policy scores a fact by."""
        raise NotImplementedError

    def score(self, fact: Fact, now: float) -> Scored:
        """The fact's score: its one number, which ``now`` does not change."""
        value = self.value(fact)
        return Scored(fact, {self.factor: value}, value)

    def rank(self, store: Store, now: float, query: str = "") -> list[Scored]:
        """The active facts by score, highest first; ties to the oldest write, then lowest id.

        The query text plays no part: there is no relevance factor.
        """
        return store_rules.by_rank(self.score(store.facts[i], now) for i in store.active)

    def decide(self, state: State, command: WriteFact | ReadFact | Query) -> tuple[Event, ...]:
        """The events that honour a write, a read or a query, or ``Rejected`` saying why not."""
        return store_rules.decide(self, state, command)


@attrs.frozen
class LeastRecentlyUsed(_OneNumber):
    """LRU: evicts the fact touched longest ago; a read or a returned query touches."""

    name: ClassVar[str] = "lru"
    factor: ClassVar[str] = "last_touch"

    def value(self, fact: Fact) -> float:
        """The time of the last touch: the latest read, or the write."""
        return store_rules.last_touch(fact)


@attrs.frozen
class LeastFrequentlyUsed(_OneNumber):
    """LFU: evicts the fact read least often (reads and returned queries count)."""

    name: ClassVar[str] = "lfu"
    factor: ClassVar[str] = "reads"

    def value(self, fact: Fact) -> float:
        """The number of reads."""
        return float(fact.reads)


@attrs.frozen
class FirstInFirstOut(_OneNumber):
    """FIFO: evicts the fact written first, whatever reads it had."""

    name: ClassVar[str] = "fifo"
    factor: ClassVar[str] = "written_at"

    def value(self, fact: Fact) -> float:
        """The time of the write."""
        return fact.written_at
