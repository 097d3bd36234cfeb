"""memtape.policies.store.querying: a query returns the top k of the policy's ranking."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import pytest

from memtape.core.commands import AdvanceClock, Query, WriteFact
from memtape.core.errors import Rejected
from memtape.core.events import Queried
from memtape.core.state import State
from memtape.policies.session import Policies, Session
from memtape.policies.store.forgetting import ImportanceRecencyAccess
from memtape.policies.store.querying import answer_query, check_query

POLICY = ImportanceRecencyAccess(capacity=5, half_life=4.0, access_boost=0.1)


def _state(*commands: WriteFact | AdvanceClock) -> State:
    session = Session(Policies(forgetting=POLICY))
    session.execute_all(commands)
    return session.state


class TestAnswer:
    def test_the_top_k_come_back_best_first_with_their_scores(self) -> None:
        state = _state(WriteFact("a", "x", 0.2), WriteFact("b", "y", 0.9), WriteFact("c", "z", 0.5))

        # At t=0 recency is 1 and no fact was read: each score is its importance.
        assert Queried("", "b", 2, (2, 3), (0.9, 0.5)) == answer_query(
            POLICY, state, Query("", "b", 2)
        )

    def test_the_ranking_at_the_clock_decides(self) -> None:
        state = _state(WriteFact("a", "x", 0.9), AdvanceClock(8.0), WriteFact("b", "y", 0.3))

        # a: 0.9 x 0.5 ** (8 / 4) = 0.225 < b: 0.3 x 0.5 ** 0 = 0.3
        assert ((2, 1), (0.3, 0.225)) == (
            answer_query(POLICY, state, Query(k=3)).results,
            answer_query(POLICY, state, Query(k=3)).scores,
        )

    def test_fewer_active_facts_than_k_return_them_all(self) -> None:
        state = _state(WriteFact("a", "x", 0.5))

        assert (1,) == answer_query(POLICY, state, Query(k=3)).results

    def test_an_empty_store_returns_nothing(self) -> None:
        assert ((), ()) == (
            answer_query(POLICY, _state(), Query("who")).results,
            answer_query(POLICY, _state(), Query("who")).scores,
        )

    def test_the_expected_key_does_not_change_the_answer(self) -> None:
        state = _state(WriteFact("a", "x", 0.2), WriteFact("b", "y", 0.9))

        assert (
            answer_query(POLICY, state, Query("", "a", 1)).results
            == answer_query(POLICY, state, Query("", "b", 1)).results
        )

    def test_the_policy_decides_a_query_as_one_event(self) -> None:
        state = _state(WriteFact("a", "x", 0.2))

        assert (Queried("q", "a", 3, (1,), (0.2,)),) == POLICY.decide(state, Query("q", "a"))


class TestCheck:
    @pytest.mark.parametrize("k", [0, -1, True, 1.5, "2"], ids=repr)
    def test_k_must_be_an_integer_of_at_least_1(self, k: object) -> None:
        with pytest.raises(Rejected, match=r"a query's k must be an integer >= 1"):
            check_query(Query("x", "", k))  # type: ignore[arg-type]

    def test_the_text_must_be_a_string(self) -> None:
        with pytest.raises(Rejected, match="a query's text must be a string, got 3"):
            check_query(Query(3))  # type: ignore[arg-type]

    def test_the_expected_key_must_be_a_string(self) -> None:
        with pytest.raises(Rejected, match="a query's expected key must be a string, got None"):
            check_query(Query("x", None))  # type: ignore[arg-type]

    def test_a_rejected_query_leaves_the_run_unchanged(self) -> None:
        session = Session(Policies(forgetting=POLICY))
        session.execute(WriteFact("a", "x", 0.5))

        with pytest.raises(Rejected):
            session.execute(Query(k=0))

        assert (1, 0) == (len(session.run), session.state.store.facts[1].reads)
