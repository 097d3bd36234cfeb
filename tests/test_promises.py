"""The promises of the shipped policies, and what the tiered policy's promises measure."""

from memtape.core.events import TurnAdded
from memtape.core.state import EMPTY_WINDOW
from memtape.policies.consolidation.rules import RuleConsolidation
from memtape.policies.plumbing.promises import (
    BUDGET,
    CAPACITY,
    EVICTS_WEAKEST,
    EXPIRES,
    PINNED,
    PROMISES,
    RECENT_VERBATIM,
    SUPERSEDES,
    VALID_AS_OF,
    WELL_FORMED,
)
from memtape.policies.store.forgetting import ImportanceRecencyAccess
from memtape.policies.window.tiered import TieredCompaction


def test_the_shipped_policies_promise_known_invariants() -> None:
    """Each shipped policy promises what its design keeps, in the shared vocabulary."""
    assert TieredCompaction(40, 2).promises == {BUDGET, RECENT_VERBATIM, WELL_FORMED, PINNED}
    assert ImportanceRecencyAccess(4, 4.0, 0.1).promises == {
        CAPACITY,
        EVICTS_WEAKEST,
        EXPIRES,
        SUPERSEDES,
        VALID_AS_OF,
    }
    assert RuleConsolidation(()).promises == frozenset()
    assert TieredCompaction(40, 2).promises <= PROMISES


def test_the_tiered_floor_is_the_last_hot_n_turns_and_the_gist() -> None:
    """Three HOT turns of 5, 6 and 7 tokens and a gist of 4: the floor under hot_n=2 is 17."""
    hot = tuple(TurnAdded(n, "user", "x", tokens, True) for n, tokens in ((1, 5), (2, 6), (3, 7)))
    window = EMPTY_WINDOW._replace(hot=hot, tokens=22, gist="[g]", gist_tokens=4, turns=3)
    assert TieredCompaction(40, 2).floor(window) == 6 + 7 + 4
    assert TieredCompaction(40, 0).floor(window) == 4
    assert TieredCompaction(40, 2).verbatim == 2
