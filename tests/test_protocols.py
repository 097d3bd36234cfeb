"""memtape.policies.plumbing.protocols: what a compaction policy's promises ask of its type."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

from typing import Any, ClassVar

import pytest

from examples.keep_last import KeepLast
from memtape.core.commands import AddTurn
from memtape.core.events import Event
from memtape.core.state import EMPTY_WINDOW, State
from memtape.policies.plumbing.params import MAX_INT
from memtape.policies.plumbing.promises import BUDGET, RECENT_VERBATIM
from memtape.policies.plumbing.protocols import (
    BudgetedCompaction,
    CompactionPolicy,
    VerbatimCompaction,
    is_budgeted,
    is_verbatim,
)
from memtape.policies.window.no_compaction import NoCompaction
from memtape.policies.window.sliding_window import SlidingWindow
from memtape.policies.window.tiered import TieredCompaction
from memtape.policies.zoo import COMPACTION
from tests.playing import OWN_PARAMS


class _Bare:
    """A compaction policy with neither ``floor`` nor ``verbatim``."""

    name: ClassVar[str] = "bare"
    budget = 10
    promises = frozenset({BUDGET, RECENT_VERBATIM})
    verbatim = "all"

    def decide(self, state: State, command: AddTurn) -> tuple[Event, ...]:
        return ()

    def params(self) -> dict[str, Any]:
        return {}


# Written for mypy: each shipped policy is structurally the protocols its promises need.
BUDGETED: list[BudgetedCompaction] = [TieredCompaction(100, 2), SlidingWindow(100), KeepLast(9)]
VERBATIM: list[VerbatimCompaction] = [TieredCompaction(100, 2), NoCompaction(100), KeepLast(9)]


class TestNarrowing:
    @pytest.mark.parametrize("name", sorted(COMPACTION))
    def test_every_registered_policy_has_the_members_its_promises_need(self, name: str) -> None:
        table = {"budget": 50, **OWN_PARAMS.get(name, {})}
        policy: CompactionPolicy = COMPACTION[name].from_params(table, "t.toml")
        assert is_budgeted(policy) or BUDGET not in policy.promises
        assert is_verbatim(policy) or RECENT_VERBATIM not in policy.promises

    def test_a_narrowed_policy_gives_its_floor_and_verbatim(self) -> None:
        policy: CompactionPolicy = TieredCompaction(100, 2)
        assert is_budgeted(policy)
        assert 0 == policy.floor(EMPTY_WINDOW)
        assert is_verbatim(policy)
        assert 2 == policy.verbatim

    def test_the_baseline_keeps_everything_verbatim(self) -> None:
        policy: CompactionPolicy = NoCompaction(100)
        assert not is_budgeted(policy)
        assert is_verbatim(policy)
        assert MAX_INT == policy.verbatim

    def test_a_policy_without_the_members_is_neither(self) -> None:
        """No ``floor``, and a ``verbatim`` that is no count: the checks report the promise."""
        assert (False, False) == (is_budgeted(_Bare()), is_verbatim(_Bare()))
