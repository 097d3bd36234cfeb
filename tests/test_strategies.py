"""memtape.testing.strategies: what the kit's and the suite's sessions are drawn from
reaches the commands and probes the loader takes (a strategy that never drew one would
leave it untested everywhere)."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

from collections.abc import Callable
from typing import TypeVar

from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

from memtape.core.commands import AddTurn
from memtape.core.state import EMPTY_WINDOW
from memtape.core.values import MAX_TOKENS
from memtape.scenarios import Scenario
from memtape.testing.strategies import (
    add_turns,
    command_sequences,
    scenarios,
    turn_sequences,
    turns_for,
)
from tests.suite_profile import examples

T = TypeVar("T")

SEARCH = settings(
    max_examples=2_000,
    database=None,
    deadline=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)
"""How hard ``drawn`` looks for an example: far more often than the strategies draw one,
and the same examples on every run (an example of a kind drawn one time in 64 is found
in every run, not in most)."""


def drawn(strategy: st.SearchStrategy[T], condition: Callable[[T], bool]) -> T:
    """The simplest example of ``strategy`` that meets ``condition`` (an error if none)."""
    return find(strategy, condition, settings=SEARCH)


def _counted(turn: object) -> bool:
    return isinstance(turn, AddTurn) and turn.tokens is not None


class TestRecordedCounts:
    # Each asks for an example of a kind (``find`` fails when there is none), not for the
    # simplest one: how far a flatmapped choice shrinks is the search's, not the strategy's.
    def test_a_turn_may_say_what_it_costs(self) -> None:
        assert 0 == drawn(add_turns(valid_only=True), lambda turn: turn.tokens == 0).tokens

    def test_a_count_drawn_against_a_budget_may_exceed_it(self) -> None:
        turn = drawn(add_turns(budget=20), lambda t: 3 * 20 < (t.tokens or 0) < MAX_TOKENS)
        assert 3 * 20 < (turn.tokens or 0) < MAX_TOKENS

    def test_a_count_may_be_the_most_one_text_may_count(self) -> None:
        assert MAX_TOKENS == drawn(add_turns(), lambda turn: (turn.tokens or 0) > 10**6).tokens

    def test_the_kit_draws_counted_turns(self) -> None:
        """``turns_for`` is what the kit's machine draws its turns from."""
        assert _counted(drawn(turns_for(EMPTY_WINDOW, 30), _counted))

    def test_sessions_hold_counted_turns(self) -> None:
        turns = drawn(turn_sequences(30), lambda turns: any(map(_counted, turns)))
        steps = drawn(command_sequences(), lambda steps: any(map(_counted, steps)))
        assert (True, True) == (any(map(_counted, turns)), any(map(_counted, steps)))


class TestProbes:
    def test_a_scenario_may_carry_a_question_with_evidence(self) -> None:
        scenario = drawn(
            scenarios(max_size=6),
            lambda s: any(p.question is not None and p.evidence for p in s.probes),
        )
        (probe,) = scenario.probes
        assert (probe.answer is not None, 1) == (True, len(probe.evidence))

    def test_a_scenario_may_carry_a_plain_probe(self) -> None:
        scenario = drawn(scenarios(max_size=6), lambda s: any(p.question is None for p in s.probes))
        assert all(probe.text for probe in scenario.probes)

    @settings(max_examples=examples(100), deadline=None)
    @given(scenarios(max_size=6))
    def test_evidence_names_turns_of_the_scenario(self, scenario: Scenario) -> None:
        """Never a turn past the last, which the loader refuses."""
        turns = sum(isinstance(step, AddTurn) for step in scenario.steps)
        assert [] == [t for probe in scenario.probes for t in probe.evidence if not 1 <= t <= turns]
