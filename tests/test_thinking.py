"""Anthropic's clear_thinking: its defaults, and which turns' thinking goes."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memtape.core.commands import AddTurn
from memtape.core.errors import BadInput
from memtape.policies.session import Policies
from memtape.policies.window.replicas.thinking import AnthropicClearThinking, without_thinking
from memtape.policies.window.trigger import Trigger
from memtape.testing.checked import CheckedSession
from tests.playing import play, user


def built(**table: Any) -> Any:
    """The compaction policy a scenario table builds."""
    return Policies.from_params({"compaction": table}, "s.toml").compaction


def thought(number: int, pin: bool = False) -> AddTurn:
    """An assistant turn as an importer writes one that thought, then answered."""
    return AddTurn("assistant", f"[thinking] weigh option {number}\nAnswer {number}.", pin=pin)


def texts(*turns: AddTurn, **policy: Any) -> list[str]:
    """The texts HOT holds after ``turns`` under the policy."""
    state, _ = play(AnthropicClearThinking(1000, **policy), *turns)
    return [turn.text for turn in state.window.hot]


class TestDefaults:
    def test_it_keeps_one_thinking_turn_and_clears_at_every_turn(self) -> None:
        policy = built(policy="anthropic-clear-thinking", budget=50)
        expected = {
            "policy": "anthropic-clear-thinking",
            "budget": 50,
            "keep": 1,
            "tokenizer": "words",
            "every": 1,
        }
        assert expected == policy.params()
        assert policy == built(**policy.params())

    @pytest.mark.parametrize("keep", [-1, "some", True, 1.5])
    def test_keep_is_a_count_or_all(self, keep: object) -> None:
        with pytest.raises(BadInput, match='keep must be an integer >= 0 or "all"'):
            built(policy="anthropic-clear-thinking", budget=50, keep=keep)


class TestClearing:
    def test_thinking_lines_go_and_the_answer_stays(self) -> None:
        assert "Answer 1." == without_thinking("[thinking] weigh\nAnswer 1.")
        assert "call f(1)" == without_thinking("[redacted thinking]\ncall f(1)")

    def test_all_but_the_last_keep_lose_their_thinking(self) -> None:
        seen = texts(thought(1), user(1), thought(2), thought(3), keep=2)
        assert ["Answer 1.", "u0", thought(2).text, thought(3).text] == seen

    def test_keep_all_clears_nothing(self) -> None:
        seen = texts(thought(1), thought(2), keep="all")
        assert [thought(1).text, thought(2).text] == seen

    def test_a_pinned_turn_keeps_its_thinking(self) -> None:
        seen = texts(thought(1, pin=True), thought(2), keep=1)
        assert [thought(1).text, thought(2).text] == seen

    def test_a_token_trigger_waits_for_the_window_to_pass_it(self) -> None:
        turns = (thought(1), thought(2))
        assert [thought(1).text, thought(2).text] == texts(*turns, trigger=Trigger((100,)))


class TestPromises:
    @settings(max_examples=60, deadline=None)
    @given(
        turns=st.lists(
            st.one_of(
                st.builds(thought, st.integers(1, 9), st.booleans()),
                st.builds(user, st.integers(0, 6)),
            ),
            max_size=12,
        ),
        keep=st.one_of(st.integers(0, 3), st.just("all")),
    )
    def test_every_turn_is_checked_as_the_kit_checks(
        self, turns: list[AddTurn], keep: int | str
    ) -> None:
        table = {"policy": "anthropic-clear-thinking", "budget": 10, "keep": keep}
        checked = CheckedSession(Policies.from_params({"compaction": table}, "s.toml"))
        assert [] == [v for turn in turns for v in checked.execute(turn)]

    @settings(max_examples=80, deadline=None)
    @given(
        turns=st.lists(
            st.one_of(
                st.builds(thought, st.integers(1, 9), st.booleans()),
                st.builds(user, st.integers(0, 6)),
                st.just(AddTurn("assistant", "call f()", calls=("c",))),
                st.just(AddTurn("tool", "done", answers=("c",))),
            ),
            max_size=14,
        ),
        keep=st.integers(0, 3),
    )
    def test_the_short_look_back_clears_what_the_long_one_does(
        self, turns: list[AddTurn], keep: int
    ) -> None:
        """At every turn it looks back only over what can have changed; looking back to the
        last clearing (as under any other trigger) clears the same turns."""
        kept: list[AddTurn] = []
        for turn in turns:
            if _allowed(kept, turn):
                kept.append(turn)
        short = AnthropicClearThinking(1000, keep)
        long = AnthropicClearThinking(1000, keep, trigger=Trigger(every=1, context_window=9))
        assert play(long, *kept)[0] == play(short, *kept)[0]


def _allowed(before: list[AddTurn], turn: AddTurn) -> bool:
    """Whether ``turn`` may follow ``before``: the call ``c`` answered only while it waits,
    made only while it does not."""
    waiting = False
    for earlier in before:
        waiting = bool(earlier.calls) or (waiting and not earlier.answers)
    return (not turn.answers or waiting) and (not turn.calls or not waiting)
