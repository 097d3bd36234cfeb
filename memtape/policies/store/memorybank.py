"""MemoryBank's forgetting curve (Zhong et al., 2023) as a forgetting policy.

Ebbinghaus retention ``R = exp(-dt / S)``: ``dt`` is the time since the
fact was last recalled (or written), and the strength ``S`` starts at 1 and
grows by 1 at each recall (a read, or a query that returns the fact), which
also resets ``dt``. So ``S = 1 + reads``. The weakest fact is the one with
the lowest retention.
"""

import math
from collections.abc import Mapping
from typing import Any, ClassVar

import attrs

from memtape.core.commands import Query, ReadFact, WriteFact
from memtape.core.events import Event
from memtape.core.state import Fact, State, Store
from memtape.policies.plumbing.protocols import Scored
from memtape.policies.store import rules as store_rules
from memtape.policies.store.expiry import NO_TTL, Ttl
from memtape.policies.store.judged import Judge


@attrs.frozen
class MemoryBank:
    """Retention ``exp(-dt / S)``, with ``S = 1 + reads`` and ``dt`` since the last recall."""

    name: ClassVar[str] = "memorybank"
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
    def from_params(cls, data: Mapping[str, Any], where: str) -> "MemoryBank":
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

    def score(self, fact: Fact, now: float) -> Scored:
        """The fact's retention at ``now``, with its strength and the time since its last recall."""
        elapsed = now - store_rules.last_touch(fact)
        strength = 1.0 + fact.reads
        retention = math.exp(-elapsed / strength)
        return Scored(fact, {"strength": strength, "elapsed": elapsed}, retention)

    def rank(self, store: Store, now: float, query: str = "") -> list[Scored]:
        """The active facts by retention, highest first; ties to the oldest write, then lowest id.

        The query text plays no part: retention has no relevance factor.
        """
        return store_rules.by_rank(self.score(store.facts[i], now) for i in store.active)

    def decide(self, state: State, command: WriteFact | ReadFact | Query) -> tuple[Event, ...]:
        """The events that honour a write, a read or a query, or ``Rejected`` saying why not."""
        return store_rules.decide(self, state, command)
