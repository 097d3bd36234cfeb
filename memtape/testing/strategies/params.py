"""The policies' parameters: the seed policies under one draw, budgets, triggers and
capacities."""

import attrs
from hypothesis import strategies as st

from memtape.policies.consolidation.rules import RuleConsolidation
from memtape.policies.session import Policies, Session
from memtape.policies.store.forgetting import ImportanceRecencyAccess
from memtape.policies.window.tiered import TieredCompaction

RULES: tuple[dict[str, object], ...] = (
    {
        "pattern": "name is (?P<name>[A-Z][a-z]+)",
        "semantic": {"key": "user.name", "text": "user.name = {name}", "importance": 0.9},
    },
    {
        "pattern": "restocking fee",
        "procedural": "returns after the 30-day window: apply a 10% restocking fee",
    },
    {
        "pattern": "^(?P<key>[a-z]+) = (?P<value>\\w+)$",
        "semantic": {"key": "{key}", "text": "{key} is {value}", "importance": 0.4},
    },
)
"""Consolidation rules: two write facts (one to a key of KEYS), one makes a procedure."""


@attrs.frozen
class PolicyParams:
    """One draw of every policy parameter, and how often the run snapshots."""

    budget: int
    hot_n: int
    capacity: int
    half_life: float
    access_boost: float
    snapshot_every: int

    def compaction(self) -> TieredCompaction:
        """The tiered compaction policy with these parameters."""
        return TieredCompaction(self.budget, self.hot_n)

    def forgetting(self) -> ImportanceRecencyAccess:
        """The importance x recency x access policy with these parameters."""
        return ImportanceRecencyAccess(self.capacity, self.half_life, self.access_boost)

    def policies(self) -> Policies:
        """All three policies, the consolidation one with ``RULES``."""
        consolidation = RuleConsolidation.from_params({"rule": [dict(r) for r in RULES]}, "test")
        return Policies(
            compaction=self.compaction(),
            forgetting=self.forgetting(),
            consolidation=consolidation,
        )

    def session(self) -> Session:
        """A fresh session under these parameters."""
        return Session(self.policies(), snapshot_every=self.snapshot_every)


def policy_params(
    access_boosts: st.SearchStrategy[float] | None = None,
) -> st.SearchStrategy[PolicyParams]:
    """Parameters within the policies' documented domains (small budgets more often)."""
    return st.builds(
        PolicyParams,
        budget=budgets(),
        hot_n=st.integers(0, 6),
        capacity=st.integers(1, 8),
        half_life=st.one_of(
            st.floats(0.5, 20.0),
            st.floats(0.0, 1e6, exclude_min=True, allow_nan=False),
        ),
        access_boost=access_boosts if access_boosts is not None else st.floats(0.0, 10.0),
        snapshot_every=st.sampled_from((1, 2, 3, 7)),
    )


def budgets() -> st.SearchStrategy[int]:
    """Token budgets for a compaction policy: small ones often, where compactions happen."""
    return st.one_of(st.integers(1, 40), st.integers(1, 200))


@st.composite
def triggers(draw: st.DrawFn, budget: int) -> dict[str, object]:
    """A compaction table's trigger and target parameters against ``budget``
    (``memtape.policies.window.trigger``): none of them half the time (the budget triggers
    and is the target), else a token, percentage or message trigger or a list of them, and
    perhaps a target, an interval and a least to free."""
    if draw(st.booleans()):
        return {}
    window = 4 * budget
    one = st.one_of(
        st.integers(max(budget // 2, 1), 2 * budget),
        st.integers(25, 100).map(lambda percent: f"{percent}%"),
        st.integers(2, 8).map(lambda count: {"messages": count}),
    )
    spec = draw(st.one_of(one, st.lists(one, min_size=1, max_size=3)))
    table: dict[str, object] = {"trigger": spec, "context_window": window}
    if draw(st.booleans()):
        table["target"] = draw(st.integers(1, budget))
    if draw(st.booleans()):
        table["every"] = draw(st.integers(1, 5))
    if draw(st.booleans()):
        table["clear_at_least"] = draw(st.integers(1, budget))
    return table


def capacities() -> st.SearchStrategy[int]:
    """Capacities for a forgetting policy: small, so that writes evict."""
    return st.integers(1, 6)
