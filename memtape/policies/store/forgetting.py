"""Forgetting by importance x recency x access: decay, supersede, evict."""

import math
from collections.abc import Mapping
from typing import Any, ClassVar

import attrs

from memtape.core.commands import Query, ReadFact, WriteFact
from memtape.core.errors import BadInput
from memtape.core.events import Event
from memtape.core.state import Fact, State, Store
from memtape.policies.plumbing.params import Params
from memtape.policies.plumbing.protocols import Scored
from memtape.policies.store import rules as store_rules
from memtape.policies.store.expiry import NO_TTL, Ttl, read_ttl, with_ttl
from memtape.policies.store.judged import Judge, read_judge, with_judge


@attrs.frozen
class ImportanceRecencyAccess:
    """The seed's forgetting policy.

    ``score = importance x 0.5 ** ((now - last_touch) / half_life) x (1 +
    access_boost x reads)``, where the last touch is the write (a read counts
    but does not touch). A write to a key with an active fact supersedes it
    (unless ``supersession`` is ``add-only``, or ``llm``: a model judges each write,
    ``memtape.policies.store.judged``); a write that takes the store
    over ``capacity`` active facts evicts the lowest score (the new fact
    included), ties to the oldest write, then the lowest id.
    """

    name: ClassVar[str] = "importance-recency-access"
    capacity: int
    """The most active facts the store holds: a write past it evicts the lowest-ranked."""
    half_life: float
    """The clock time over which a fact's recency halves."""
    access_boost: float
    """What each read adds to the score's access factor (``1 + access_boost x reads``)."""
    supersession: str = "key"
    """``key``: a write to a key with an active fact supersedes it; ``add-only``: never."""
    ttl: Ttl = NO_TTL
    judge: Judge | None = None

    def __attrs_post_init__(self) -> None:
        store_rules.check_capacity(self.capacity)
        if not (math.isfinite(self.half_life) and self.half_life > 0):
            raise BadInput(f"half_life must be a positive number, got {self.half_life!r}")
        if not (math.isfinite(self.access_boost) and self.access_boost >= 0):
            raise BadInput(f"access_boost must be a number >= 0, got {self.access_boost!r}")
        store_rules.check_supersession(self.supersession, self.judge)

    @classmethod
    def from_params(cls, data: Mapping[str, Any], where: str) -> "ImportanceRecencyAccess":
        """Build the policy from a scenario's ``[forgetting]`` table."""
        params = Params(data, where)
        capacity = params.integer("capacity", minimum=1)
        half_life = params.number("half_life", 4.0, minimum=0.0, exclusive_minimum=True)
        access_boost = params.number("access_boost", 0.1, minimum=0.0)
        supersession = store_rules.read_supersession(params)
        judge = read_judge(params, supersession, where)
        ttl = read_ttl(params)
        params.done()
        return cls(capacity, half_life, access_boost, supersession, ttl, judge)

    @property
    def promises(self) -> frozenset[str]:
        """Capacity, eviction of the weakest, and supersession by key (unless add-only)."""
        return store_rules.promises_of(self.supersession)

    def params(self) -> dict[str, Any]:
        """The parameters, as a scenario table would write them."""
        table = {
            "policy": self.name,
            "capacity": self.capacity,
            "half_life": self.half_life,
            "access_boost": self.access_boost,
            "supersession": self.supersession,
        }
        return with_judge(with_ttl(table, self.ttl), self.judge)

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
        return store_rules.by_rank(self.score(store.facts[i], now) for i in store.active)

    def decide(self, state: State, command: WriteFact | ReadFact | Query) -> tuple[Event, ...]:
        """The events that honour a write, a read or a query, or ``Rejected`` saying why not."""
        return store_rules.decide(self, state, command)
