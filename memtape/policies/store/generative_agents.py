"""Generative Agents' retrieval score (Park et al., 2023) as a forgetting policy.

``score = w_recency x recency' + w_importance x importance' + w_relevance x
relevance'``, where each primed factor is min-max normalized over the active
facts being ranked (all equal: 0.5 each). ``recency = decay ** (now -
last_access)``: the last access is the latest read (reads and queries touch),
or the write. Relevance takes part only when a query carries text.
"""

import math
from collections.abc import Mapping, Sequence
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
from memtape.policies.store.relevance import RELEVANCE

MAX_WEIGHT = 1e6
"""The largest weight: the weighted sum of three factors in [0, 1] stays finite."""


def min_max(values: Sequence[float]) -> list[float]:
    """``values`` scaled onto [0, 1] by their minimum and maximum; all 0.5 when they are equal."""
    low, high = min(values, default=0.0), max(values, default=0.0)
    if high == low:
        return [0.5] * len(values)
    return [(value - low) / (high - low) for value in values]


@attrs.frozen
class GenerativeAgents:
    """Recency, importance and (for a query) relevance, each normalized over the actives.

    The ranking is the authority: a fact's score depends on the other active
    facts, so evictions and queries go by ``rank``; ``score`` alone gives the
    weighted sum of the raw factors, before normalization.
    """

    name: ClassVar[str] = "generative-agents"
    capacity: int
    """The most active facts the store holds: a write past it evicts the lowest-ranked."""
    decay: float = 0.995
    """Recency's base: ``decay ** (now - last_access)``."""
    recency_weight: float = 1.0
    """The weight of normalized recency in the score."""
    importance_weight: float = 1.0
    """The weight of normalized importance in the score."""
    relevance_weight: float = 1.0
    """The weight of normalized relevance in the score, for a query that carries text."""
    relevance: str = "overlap"
    """How relevance to a query's text is measured: ``overlap`` or ``jaccard`` of words."""
    supersession: str = "key"
    """``key``: a write to a key with an active fact supersedes it; ``add-only``: never."""
    ttl: Ttl = NO_TTL
    judge: Judge | None = None

    def __attrs_post_init__(self) -> None:
        store_rules.check_capacity(self.capacity)
        if not (math.isfinite(self.decay) and 0 < self.decay <= 1):
            raise BadInput(f"decay must be a number in (0, 1], got {self.decay!r}")
        for name in ("recency_weight", "importance_weight", "relevance_weight"):
            weight = getattr(self, name)
            if not (math.isfinite(weight) and 0 <= weight <= MAX_WEIGHT):
                raise BadInput(f"{name} must be a number in [0, {MAX_WEIGHT:g}], got {weight!r}")
        if self.relevance not in RELEVANCE:
            names = ", ".join(RELEVANCE)
            raise BadInput(f"relevance must be one of {names}, got {self.relevance!r}")
        store_rules.check_supersession(self.supersession, self.judge)

    @classmethod
    def from_params(cls, data: Mapping[str, Any], where: str) -> "GenerativeAgents":
        """Build the policy from a scenario's ``[forgetting]`` table."""
        params = Params(data, where)
        capacity = params.integer("capacity", minimum=1)
        decay = params.number("decay", 0.995, minimum=0.0, maximum=1.0, exclusive_minimum=True)
        recency_weight = params.number("recency_weight", 1.0, minimum=0.0, maximum=MAX_WEIGHT)
        importance_weight = params.number("importance_weight", 1.0, minimum=0.0, maximum=MAX_WEIGHT)
        relevance_weight = params.number("relevance_weight", 1.0, minimum=0.0, maximum=MAX_WEIGHT)
        relevance = params.text("relevance", "overlap")
        if relevance not in RELEVANCE:
            names = ", ".join(RELEVANCE)
            raise params.error("relevance", f"must be one of {names}, got {relevance!r}")
        supersession = store_rules.read_supersession(params)
        judge = read_judge(params, supersession, where)
        ttl = read_ttl(params)
        params.done()
        return cls(
            capacity,
            decay,
            recency_weight,
            importance_weight,
            relevance_weight,
            relevance,
            supersession,
            ttl,
            judge,
        )

    @property
    def promises(self) -> frozenset[str]:
        """Capacity, eviction of the weakest (by the ranking), supersession unless add-only."""
        return store_rules.promises_of(self.supersession)

    def params(self) -> dict[str, Any]:
        """The parameters, as a scenario table would write them."""
        table = {
            "policy": self.name,
            "capacity": self.capacity,
            "decay": self.decay,
            "recency_weight": self.recency_weight,
            "importance_weight": self.importance_weight,
            "relevance_weight": self.relevance_weight,
            "relevance": self.relevance,
            "supersession": self.supersession,
        }
        return with_judge(with_ttl(table, self.ttl), self.judge)

    def recency(self, fact: Fact, now: float) -> float:
        """``decay ** (now - last_access)``, before normalization."""
        return float(self.decay ** (now - store_rules.last_touch(fact)))

    def score(self, fact: Fact, now: float) -> Scored:
        """The weighted sum of the raw recency and importance (no query, no normalization)."""
        recency = self.recency(fact, now)
        factors = {"recency": recency, "importance": fact.importance}
        total = self.recency_weight * recency + self.importance_weight * fact.importance
        return Scored(fact, factors, total)

    def rank(self, store: Store, now: float, query: str = "") -> list[Scored]:
        """The active facts by the normalized weighted sum, highest first; ties to the
        oldest write, then the lowest id. With query text, relevance joins the sum."""
        facts = [store.facts[i] for i in store.active]
        columns = {
            "recency": min_max([self.recency(f, now) for f in facts]),
            "importance": min_max([f.importance for f in facts]),
        }
        weights = {"recency": self.recency_weight, "importance": self.importance_weight}
        if query:
            measure = RELEVANCE[self.relevance]
            columns["relevance"] = min_max([measure(query, f) for f in facts])
            weights["relevance"] = self.relevance_weight
        scored = []
        for n, fact in enumerate(facts):
            factors = {name: column[n] for name, column in columns.items()}
            total = sum(weights[name] * value for name, value in factors.items())
            scored.append(Scored(fact, factors, total))
        return store_rules.by_rank(scored)

    def decide(self, state: State, command: WriteFact | ReadFact | Query) -> tuple[Event, ...]:
        """The events that honour a write, a read or a query, or ``Rejected`` saying why not."""
        return store_rules.decide(self, state, command)
