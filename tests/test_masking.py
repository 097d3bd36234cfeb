"""The clearing replicas: observation masking and Anthropic's clear_tool_uses, their
documented defaults and their own knobs."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memtape.core.commands import AddTurn
from memtape.core.errors import BadInput
from memtape.core.state import State
from memtape.policies.session import Policies
from memtape.policies.window.replicas.masking import (
    MASK,
    AnthropicClearToolUses,
    ObservationMasking,
)
from memtape.policies.window.trigger import Trigger
from memtape.testing.checked import CheckedSession
from tests.playing import play, tool, words


def built(**table: Any) -> Any:
    """The compaction policy a scenario table builds."""
    return Policies.from_params({"compaction": table}, "s.toml").compaction


def texts(state: State) -> dict[int, str]:
    """Each HOT turn's text by number."""
    return {turn.turn: turn.text for turn in state.window.hot}


def calling(number: int, name: str) -> AddTurn:
    """An assistant turn calling ``name`` with a long input, as an importer writes it."""
    return AddTurn("assistant", f"call {name}({words(8, 'a')})", calls=(f"c{number}",))


def answering(number: int) -> AddTurn:
    """The result of call ``c{number}``: ten words."""
    return AddTurn("tool", words(10, f"r{number}-"), answers=(f"c{number}",))


class TestObservationMaskingDefaults:
    def test_it_keeps_ten_and_masks_at_every_turn(self) -> None:
        policy = built(policy="observation-masking", budget=50)
        expected = {
            "policy": "observation-masking",
            "budget": 50,
            "keep": 10,
            "placeholder": MASK,
            "tokenizer": "words",
            "every": 1,
        }
        assert expected == policy.params()

    def test_built_in_python_it_masks_at_every_turn_too(self) -> None:
        assert Trigger(every=1) == ObservationMasking(50).trigger

    def test_a_least_to_clear_keeps_the_interval(self) -> None:
        policy = built(policy="observation-masking", budget=50, clear_at_least=5)
        assert Trigger(every=1, clear_at_least=5) == policy.trigger


class TestObservationMasking:
    def test_an_observation_older_than_the_last_keep_is_masked_under_budget(self) -> None:
        policy = ObservationMasking(10_000, keep=2)
        state, _ = play(policy, tool(9, "a"), tool(9, "b"), tool(9, "c"))
        assert MASK == state.window.warm[0].text
        assert [2, 3] == [turn.turn for turn in state.window.hot]


class TestAnthropicClearToolUsesDefaults:
    def test_the_documented_defaults(self) -> None:
        policy = built(policy="anthropic-clear-tool-uses", budget=50)
        expected = {
            "policy": "anthropic-clear-tool-uses",
            "budget": 50,
            "keep": 3,
            "placeholder": "[cleared]",
            "tokenizer": "words",
            "trigger": 100_000,
            "exclude_tools": [],
            "clear_tool_inputs": False,
        }
        assert expected == policy.params()
        assert 0 == policy.trigger.clear_at_least

    def test_the_table_it_writes_builds_it_again(self) -> None:
        policy = built(
            policy="anthropic-clear-tool-uses",
            budget=50,
            exclude_tools=["fetch"],
            clear_tool_inputs=True,
            clear_at_least=20,
        )
        assert policy == built(**policy.params())

    @pytest.mark.parametrize("excluded", ["fetch", [""], [3]])
    def test_exclude_tools_must_be_a_list_of_names(self, excluded: object) -> None:
        with pytest.raises(BadInput, match="exclude_tools must be a list of tool names"):
            built(policy="anthropic-clear-tool-uses", budget=50, exclude_tools=excluded)


class TestAnthropicClearToolUses:
    def session(self) -> list[AddTurn]:
        """Four calls, alternately to ``search`` and ``fetch``, each answered at once."""
        turns = []
        for number, name in enumerate(["search", "fetch", "search", "fetch"], start=1):
            turns += [calling(number, name), answering(number)]
        return turns

    def test_below_the_trigger_nothing_is_cleared(self) -> None:
        state, _ = play(AnthropicClearToolUses(10, keep=1), *self.session())
        assert [] == list(state.window.cleared)

    def test_over_the_trigger_all_results_but_the_last_keep_are_cleared(self) -> None:
        policy = AnthropicClearToolUses(10, keep=1, trigger=Trigger((30,)))
        state, _ = play(policy, *self.session())
        assert [2, 4, 6] == list(state.window.cleared)

    def test_an_excluded_tool_keeps_its_results(self) -> None:
        policy = AnthropicClearToolUses(
            10, keep=1, trigger=Trigger((30,)), exclude_tools=("fetch",)
        )
        state, _ = play(policy, *self.session())
        assert [2, 6] == list(state.window.cleared)
        assert words(10, "r2-") == texts(state)[4]

    def test_clearing_inputs_leaves_the_calls_names(self) -> None:
        policy = AnthropicClearToolUses(10, keep=1, trigger=Trigger((30,)), clear_tool_inputs=True)
        state, _ = play(policy, *self.session())
        assert "call search()" == texts(state)[1]
        assert f"call fetch({words(8, 'a')})" == texts(state)[7]

    def test_the_floor_keeps_the_excluded_results(self) -> None:
        policy = AnthropicClearToolUses(10, keep=1, exclude_tools=("fetch",))
        state, _ = play(policy, *self.session())
        plain = AnthropicClearToolUses(10, keep=1)
        assert 10 == policy.floor(state.window) - plain.floor(state.window)


@st.composite
def tool_sessions(draw: st.DrawFn) -> list[AddTurn]:
    """Calls to ``search`` or ``fetch`` with inputs and results of drawn sizes, each answered
    at once or after a user turn, as an importer writes them."""
    turns: list[AddTurn] = []
    for number in range(1, draw(st.integers(1, 8)) + 1):
        name = draw(st.sampled_from(["search", "fetch"]))
        size = draw(st.integers(0, 12))
        turns.append(AddTurn("assistant", f"call {name}({words(size)})", calls=(f"c{number}",)))
        if draw(st.booleans()):
            turns.append(AddTurn("user", words(draw(st.integers(0, 5)), "u")))
        turns.append(AddTurn("tool", words(draw(st.integers(0, 12)), "r"), answers=(f"c{number}",)))
    return turns


class TestAnthropicClearToolUsesKeepsItsPromises:
    @settings(max_examples=60, deadline=None)
    @given(
        turns=tool_sessions(),
        drawn=st.fixed_dictionaries(
            {
                "keep": st.integers(0, 3),
                "trigger": st.integers(1, 60),
                "exclude_tools": st.sampled_from([[], ["fetch"], ["search", "fetch"]]),
                "clear_tool_inputs": st.booleans(),
                "clear_at_least": st.integers(0, 10),
            }
        ),
    )
    def test_every_turn_is_checked_as_the_kit_checks(
        self, turns: list[AddTurn], drawn: dict[str, Any]
    ) -> None:
        table = {"policy": "anthropic-clear-tool-uses", "budget": 10, **drawn}
        checked = CheckedSession(Policies.from_params({"compaction": table}, "s.toml"))
        assert [] == [v for turn in turns for v in checked.execute(turn)]
