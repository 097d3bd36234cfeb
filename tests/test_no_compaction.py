"""memtape.policies.window.no_compaction: the baseline that never compacts."""

import pytest

from memtape.core.commands import AddTurn
from memtape.core.errors import BadInput
from memtape.core.events import TurnAdded
from memtape.core.state import SHORT_HOT
from memtape.policies.plumbing.params import MAX_INT
from memtape.policies.plumbing.promises import PINNED, RECENT_VERBATIM, WELL_FORMED
from memtape.policies.session import Policies, Session
from memtape.policies.text.tokenizers import O200kBase, WordCount
from memtape.policies.window.no_compaction import NoCompaction
from memtape.reducers import fold
from tests.playing import play, tool, user


def test_every_turn_stays_hot_however_far_over_budget() -> None:
    state, decided = play(NoCompaction(5), user(10), tool(10), user(3))

    assert [[TurnAdded]] * 3 == [[type(e) for e in events] for events in decided]
    assert ([1, 2, 3], 11 + 11 + 4) == ([t.turn for t in state.window.hot], state.window.tokens)


def test_a_run_longer_than_a_short_hot_folds_and_seeks_to_the_live_state() -> None:
    """Past ``SHORT_HOT`` turns HOT is a ``Seq``: replays and seeks from snapshots agree."""
    session = Session(Policies(compaction=NoCompaction(40)), snapshot_every=100)
    session.execute_all(AddTurn("user", f"turn {n}") for n in range(1, 2 * SHORT_HOT + 1))
    run = session.run

    assert session.state == fold(run.events)
    for at in (SHORT_HOT, SHORT_HOT + 1, 2 * SHORT_HOT - 7):
        assert fold(run.events[:at]) == run.state_at(at)
        assert list(range(1, at + 1)) == [t.turn for t in run.state_at(at).window.hot]


def test_it_promises_every_turn_verbatim_and_no_budget_bound() -> None:
    assert (frozenset({RECENT_VERBATIM, WELL_FORMED, PINNED}), MAX_INT) == (
        NoCompaction(5).promises,
        NoCompaction(5).verbatim,
    )


def test_a_budget_alone_builds_it() -> None:
    policies = Policies.from_params({"compaction": {"policy": "none", "budget": 9}})

    assert NoCompaction(9, WordCount()) == policies.compaction


def test_params_read_back() -> None:
    policy = NoCompaction(9, O200kBase())

    assert {"policy": "none", "budget": 9, "tokenizer": "o200k_base"} == policy.params()
    assert policy == NoCompaction.from_params({"budget": 9, "tokenizer": "o200k_base"}, "here")


def test_a_parameter_of_another_policy_is_refused() -> None:
    with pytest.raises(BadInput, match=r"^here: unknown parameter keep$"):
        NoCompaction.from_params({"budget": 9, "keep": 2}, "here")
