"""policies.window.turns: the arriving turn and the parameters every compaction policy shares."""

from typing import Any, ClassVar

import pytest
from immutables import Map

from memtape.core.commands import AddTurn
from memtape.core.errors import BadInput, Rejected
from memtape.core.events import CompactionTriggered, TurnAdded
from memtape.core.state import EMPTY_WINDOW, Window
from memtape.policies.plumbing.params import Params
from memtape.policies.text.tokenizers import Cl100kBase, WordCount
from memtape.policies.window.no_compaction import NoCompaction
from memtape.policies.window.turns import (
    arriving,
    budget_only,
    budget_table,
    check_count,
    check_shared,
    shared_params,
    structure_error,
)
from memtape.reducers import evolve
from tests.playing import play


class _NeverCounts:
    name: ClassVar[str] = "never"

    def count(self, text: str) -> int:
        raise AssertionError(f"counted {text!r}")


def waiting_on(*calls: tuple[str, int]) -> Window:
    """The empty window with ``calls`` (id, calling turn) waiting, after as many turns."""
    turns = max((turn for _, turn in calls), default=0)
    return EMPTY_WINDOW._replace(turns=turns, waiting=Map(calls))


class TestArriving:
    def test_a_turn_keeps_its_calls_answers_and_pin(self) -> None:
        command = AddTurn("assistant", "get_order(42)", None, ("c1", "c2"), ("c0",), pin=True)
        turn = arriving(waiting_on(("c0", 1)), command, WordCount())
        assert (("c1", "c2"), ("c0",), True) == (turn.calls, turn.answers, turn.pinned)

    def test_a_turn_is_numbered_after_the_window_and_measured_with_its_role(self) -> None:
        window = EMPTY_WINDOW._replace(turns=7)

        assert TurnAdded(8, "user", "a b c", 4, False) == arriving(
            window, AddTurn("user", "a b c"), WordCount()
        )

    @pytest.mark.parametrize(("role", "salient"), [("tool", True), ("assistant", False)])
    def test_salience_defaults_to_being_a_tool_result(self, role: str, salient: bool) -> None:
        assert salient == arriving(EMPTY_WINDOW, AddTurn(role, "x"), WordCount()).salient

    def test_a_turn_measured_outside_memtape_costs_what_it_says(self) -> None:
        """The tokenizer does not count it: one that raises is never asked."""
        turn = arriving(EMPTY_WINDOW, AddTurn("user", "hello world", tokens=96), _NeverCounts())
        assert 96 == turn.tokens

    def test_the_tokenizer_measures_role_colon_text(self) -> None:
        assert 4 == arriving(EMPTY_WINDOW, AddTurn("user", "hello world"), Cl100kBase()).tokens

    @pytest.mark.parametrize(
        ("command", "problem"),
        [
            (AddTurn("", "x"), "role is one of system, user, assistant, tool, got ''"),
            (AddTurn("Dana Smith", "x"), "role is one of system, user, assistant, tool, got 'Dana"),
            (AddTurn("user", 3), "text must be a string"),  # type: ignore[arg-type]
            (AddTurn("tool", "x", None, ("a",), ("a",)), "cannot answer its own call, got 'a'"),
            (AddTurn("tool", "x", None, ("a", "a")), "calls name an id twice"),
            (AddTurn("tool", "x", None, (), ("",)), "answers must be a list of non-empty ids"),
            (AddTurn("tool", "x", None, ["a"]), "calls must be a list"),  # type: ignore[arg-type]
            (AddTurn("user", "x", pin="yes"), "pin flag must be true or false"),  # type: ignore[arg-type]
            (AddTurn("user", "x", "yes"), "salient flag"),  # type: ignore[arg-type]
            (AddTurn("user", "x", tokens=-1), "tokens must be an integer in 0..1099511627776"),
            (AddTurn("user", "x", tokens=True), "tokens must be an integer"),
            (AddTurn("user", "x", tokens=2**63), "tokens must be an integer"),
            # Past what a run's reader takes for one text (memtape.core.values): the run
            # would be written, then refused by every reader.
            (AddTurn("user", "x", tokens=2**40 + 1), "in 0..1099511627776, got 1099511627777"),
        ],
    )
    def test_a_malformed_turn_is_rejected(self, command: AddTurn, problem: str) -> None:
        with pytest.raises(Rejected, match=problem):
            arriving(EMPTY_WINDOW, command, WordCount())


class TestStructure:
    """A turn answers what waits, and calls nothing that still waits: the run's rule."""

    def test_a_turn_may_answer_a_call_that_waits_in_any_order(self) -> None:
        window = waiting_on(("c1", 3), ("c2", 3))
        assert None is structure_error(window, (), ("c2", "c1"))

    def test_an_answer_to_an_id_no_turn_called_is_refused(self) -> None:
        assert (
            "turn 1 answers 'c9', which no call is waiting on (no earlier turn called it, "
            "or its result already arrived)"
        ) == structure_error(EMPTY_WINDOW, (), ("c9",))

    def test_a_second_answer_to_one_call_is_refused(self) -> None:
        policy = NoCompaction(100)
        state, _ = play(policy, AddTurn("assistant", "x", calls=("c1",)))
        state, _ = play(policy, AddTurn("tool", "one", answers=("c1",)), state=state)
        with pytest.raises(Rejected, match=r"^turn 3 answers 'c1', which no call is waiting on"):
            policy.decide(state, AddTurn("tool", "two", answers=("c1",)))

    def test_calling_an_id_that_still_waits_is_refused(self) -> None:
        window = waiting_on(("c1", 2))
        assert "turn 3 calls 'c1', which turn 2 called and is still waiting on" == (
            structure_error(window._replace(turns=2), ("c1",), ())
        )

    def test_an_id_is_free_again_once_answered(self) -> None:
        policy = NoCompaction(100)
        turns = (
            AddTurn("assistant", "x", calls=("c1",)),
            AddTurn("tool", "one", answers=("c1",)),
            AddTurn("assistant", "again", calls=("c1",)),
            AddTurn("tool", "two", answers=("c1",)),
        )
        state, _ = play(policy, *turns)
        assert (4, Map()) == (state.window.turns, state.window.waiting)

    def test_a_call_another_policy_let_go_may_still_be_answered(self) -> None:
        """The rule is the run's, not HOT's: a call dropped while it waits still waits."""
        state, _ = play(NoCompaction(100), AddTurn("assistant", "x", calls=("c1",)))
        state = evolve(state, CompactionTriggered(100, (), (1,), 0, "", 0))
        assert ([], {"c1": 1}) == ([t.turn for t in state.window.hot], dict(state.window.waiting))
        assert None is structure_error(state.window, (), ("c1",))

    def test_arriving_refuses_what_structure_error_names(self) -> None:
        with pytest.raises(Rejected, match=r"^turn 1 answers 'c9'"):
            arriving(EMPTY_WINDOW, AddTurn("tool", "x", answers=("c9",)), WordCount())


class TestSharedParams:
    def test_the_budget_and_the_default_tokenizer(self) -> None:
        assert (30, WordCount()) == shared_params(Params({"budget": 30}, "here"))

    def test_a_named_tokenizer(self) -> None:
        data = {"budget": 30, "tokenizer": "cl100k_base"}

        assert (30, Cl100kBase()) == shared_params(Params(data, "here"))

    def test_an_unknown_tokenizer_names_its_place(self) -> None:
        with pytest.raises(BadInput) as refused:
            shared_params(Params({"budget": 30, "tokenizer": "x"}, "here"))

        assert "here: unknown tokenizer 'x' (known: cl100k_base, o200k_base, words)" == str(
            refused.value
        )

    def test_a_missing_budget_is_named(self) -> None:
        with pytest.raises(BadInput, match=r"^here: missing parameter budget$"):
            shared_params(Params({}, "here"))

    @pytest.mark.parametrize(
        ("budget", "tokenizer", "problem"),
        [(0, WordCount(), "budget"), (5, "words", "tokenizer must be a Tokenizer or one's name")],
    )
    def test_check_shared_refuses(self, budget: Any, tokenizer: Any, problem: str) -> None:
        with pytest.raises(BadInput, match=problem):
            check_shared(budget, tokenizer)

    @pytest.mark.parametrize("value", [-1, True, 1.5])
    def test_check_count_refuses_what_is_not_a_count(self, value: Any) -> None:
        with pytest.raises(BadInput, match=r"^keep must be an integer >= 0"):
            check_count("keep", value)


class TestBudgetOnly:
    def test_the_table_reads_back_as_the_budget_and_tokenizer(self) -> None:
        table = budget_table("none", 30, Cl100kBase())
        assert {"policy": "none", "budget": 30, "tokenizer": "cl100k_base"} == table
        rest = {key: value for key, value in table.items() if key != "policy"}
        budget, tokenizer = budget_only(rest, "f.toml")
        assert (30, "cl100k_base") == (budget, tokenizer.name)

    def test_another_parameter_is_refused(self) -> None:
        with pytest.raises(BadInput, match="hot_n"):
            budget_only({"budget": 30, "hot_n": 2}, "f.toml")
