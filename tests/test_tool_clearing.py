"""memtape.policies.window.tool_clearing: older tool results become a placeholder over budget."""

import math
from collections.abc import Sequence
from typing import cast, overload

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memtape.core.commands import AddTurn
from memtape.core.errors import BadInput
from memtape.core.events import CompactionTriggered, TurnAdded, WarmItem
from memtape.core.state import Hot, State, Window
from memtape.policies.plumbing.promises import BUDGET, PINNED, RECENT_VERBATIM, WELL_FORMED
from memtape.policies.session import Policies
from memtape.policies.text.tokenizers import WordCount
from memtape.policies.window.sliding_window import SlidingWindow
from memtape.policies.window.tool_clearing import PLACEHOLDER, ClearToolResults
from memtape.policies.window.units import newest, newest_with
from memtape.testing.strategies import turn_sequences
from tests.playing import answering, calling, compaction, play, staying, tool, user, words
from tests.suite_profile import examples

CLEARED = WarmItem(1, PLACEHOLDER, 3)
"""Turn 1 cleared: the default placeholder is three words."""


class TestDecide:
    def test_within_budget_nothing_is_cleared(self) -> None:
        _, decided = play(ClearToolResults(20, 1), tool(10), user(2), tool(5))

        assert [1, 1, 1] == [len(events) for events in decided]

    def test_over_budget_tool_results_older_than_the_last_keep_are_cleared(self) -> None:
        # 11 + 3 + 6 = 20; a turn of 2 makes 22 > 20. Tool results: 1 and 3; keep 1,
        # so turn 1 (11 tokens) becomes the 3-token placeholder: 22 - 11 + 3 = 14.
        state, decided = play(ClearToolResults(20, 1), tool(10), user(2), tool(5), user(1))

        assert CompactionTriggered(20, (CLEARED,), (), 0, "", 0) == compaction(decided[3])
        assert ((CLEARED,), [2, 3, 4], 14) == (
            state.window.warm,
            [t.turn for t in state.window.hot],
            state.window.tokens,
        )

    def test_the_cleared_result_reads_as_its_placeholder_under_its_own_turn(self) -> None:
        state, _ = play(ClearToolResults(20, 1), tool(10), user(2), tool(5), user(1))

        assert ("warm", PLACEHOLDER) == (state.window.tier_of(1), state.window.warm[0].text)

    def test_conversation_turns_are_never_touched_so_the_window_may_stay_over(self) -> None:
        state, decided = play(ClearToolResults(10, 1), user(10), user(10))

        assert ([1, 2], 22, [TurnAdded]) == (
            [t.turn for t in state.window.hot],
            state.window.tokens,
            [type(e) for e in decided[1]],
        )

    def test_a_result_no_longer_than_the_placeholder_stays(self) -> None:
        # "tool: ok" is 2 tokens, the placeholder 3: clearing it would save nothing.
        state, decided = play(ClearToolResults(5, 0), AddTurn("tool", "ok"), user(5))

        assert ([1, 2], 1) == ([t.turn for t in state.window.hot], len(decided[1]))

    def test_keep_zero_clears_the_newest_result_too(self) -> None:
        state, decided = play(ClearToolResults(5, 0), tool(10))

        assert ((CLEARED,), (), (CLEARED,)) == (
            compaction(decided[0]).warm,
            staying(state),
            state.window.warm,
        )

    def test_fewer_results_than_keep_clears_nothing(self) -> None:
        _, decided = play(ClearToolResults(10, 3), tool(10), tool(10))

        assert [1, 1] == [len(events) for events in decided]

    def test_every_older_result_goes_at_once_whatever_the_budget_needs(self) -> None:
        # 11 + 11 + 11 = 33 > 30: with keep 1, turns 1 and 2 both go (Anthropic clears
        # every result but the kept ones), though clearing turn 1 alone would do.
        state, decided = play(ClearToolResults(30, 1), tool(10), tool(10), tool(10))

        assert (1, 2) == tuple(item.turn for item in compaction(decided[2]).warm)
        assert 3 + 3 + 11 == state.window.tokens

    def test_a_later_compaction_appends_after_the_earlier_placeholders(self) -> None:
        turns = (tool(10), tool(10), user(10), tool(10))
        state, _ = play(ClearToolResults(25, 1), *turns)

        assert [1, 2] == [item.turn for item in state.window.warm]

    def test_the_placeholder_is_a_parameter(self) -> None:
        state, _ = play(ClearToolResults(5, 0, "[gone]"), tool(10))

        assert (WarmItem(1, "[gone]", 1),) == state.window.warm


class TestPromises:
    def test_keeping_a_result_promises_the_newest_turn_verbatim(self) -> None:
        assert (frozenset({BUDGET, RECENT_VERBATIM, WELL_FORMED, PINNED}), 1) == (
            ClearToolResults(20, 2).promises,
            ClearToolResults(20, 2).verbatim,
        )

    def test_keeping_none_promises_no_turn_verbatim(self) -> None:
        assert (frozenset({BUDGET, WELL_FORMED, PINNED}), 0) == (
            ClearToolResults(20, 0).promises,
            ClearToolResults(20, 0).verbatim,
        )

    def test_the_floor_is_the_window_with_every_clearable_result_cleared(self) -> None:
        # Tool results of 11 and 6 tokens and a chat turn of 3, all HOT (20 tokens).
        state, _ = play(ClearToolResults(100, 1), tool(10), user(2), tool(5))

        assert 20 == state.window.tokens
        assert 20 - 11 + 3 == ClearToolResults(100, 1).floor(state.window)
        assert 20 - 11 + 3 - 6 + 3 == ClearToolResults(100, 0).floor(state.window)
        assert 20 == ClearToolResults(100, 2).floor(state.window)

    def test_after_a_compaction_the_window_is_its_floor(self) -> None:
        policy = ClearToolResults(10, 1)
        state, _ = play(policy, tool(10), user(2), tool(5), user(1))

        assert state.window.tokens == policy.floor(state.window)


class TestParams:
    def test_a_budget_alone_builds_it_with_the_defaults(self) -> None:
        policies = Policies.from_params(
            {"compaction": {"policy": "clear-tool-results", "budget": 50}}
        )

        assert ClearToolResults(50, 3, PLACEHOLDER, WordCount()) == policies.compaction

    def test_params_read_back(self) -> None:
        policy = ClearToolResults(50, 1, "[x]")
        data = policy.params()

        assert {
            "policy": "clear-tool-results",
            "budget": 50,
            "keep": 1,
            "placeholder": "[x]",
            "tokenizer": "words",
        } == data
        del data["policy"]
        assert policy == ClearToolResults.from_params(data, "here")

    def test_the_default_placeholder_is_written_in_params(self) -> None:
        """Built from just a budget, the table it writes names the default placeholder."""
        params = ClearToolResults.from_params({"budget": 50}, "here").params()

        assert "[tool result cleared]" == params["placeholder"] == PLACEHOLDER

    def test_a_placeholder_must_be_text(self) -> None:
        with pytest.raises(BadInput, match=r"^here: placeholder must be a string, got 3$"):
            ClearToolResults.from_params({"budget": 50, "placeholder": 3}, "here")

    def test_a_negative_keep_is_refused(self) -> None:
        with pytest.raises(BadInput, match="keep must be an integer >= 0"):
            ClearToolResults(50, -1)

    def test_placeholder_tokens_say_what_the_placeholder_costs(self) -> None:
        """A redacted copy's stand-in placeholder costs what its source's did: two, here,
        where the stand-in is one word; decided and measured for the floor alike."""
        data = {"budget": 20, "keep": 1, "placeholder": "x", "placeholder_tokens": 2}
        policy = ClearToolResults.from_params(data, "here")
        state, decided = play(policy, tool(10), user(2), tool(5), user(1))
        (cleared,) = compaction(decided[3]).warm

        assert (2, 2, 2, {"policy": "clear-tool-results", **data, "tokenizer": "words"}) == (
            policy.cost,
            cleared.tokens,
            state.window.tokens - sum(t.tokens for t in state.window.hot),
            policy.params(),
        )
        before, _ = play(policy, tool(10), user(2), tool(5))
        # 20 tokens, turn 1 (11) clearable: to 2 tokens, not to the one "x" counts.
        assert (20, 11) == (before.window.tokens, policy.floor(before.window))

    def test_without_placeholder_tokens_the_placeholder_is_counted(self) -> None:
        policy = ClearToolResults.from_params({"budget": 20}, "here")

        assert (3, None, False) == (
            policy.cost,
            policy.placeholder_tokens,
            "placeholder_tokens" in policy.params(),
        )

    @pytest.mark.parametrize("cost", [-1, 1.5, True, "3"])
    def test_placeholder_tokens_must_be_a_count(self, cost: object) -> None:
        with pytest.raises(BadInput, match=r"^here: placeholder_tokens must be an integer >= 0"):
            ClearToolResults.from_params({"budget": 20, "placeholder_tokens": cost}, "here")


class TestInPlace:
    """A result that answers a call stays HOT beside its call, reading the placeholder."""

    def test_an_answered_result_is_cleared_in_place(self) -> None:
        # 3 + 11 + 3 + 6 = 23 > 20: results 2 and 4, keep 1: turn 2 reads the placeholder.
        turns = (calling("c1"), answering("c1", n=10), calling("c2"), answering("c2", n=5))
        state, decided = play(ClearToolResults(20, 1), *turns)
        window = state.window
        assert CompactionTriggered(
            20, (), (), 0, "", 0, cleared=(WarmItem(2, PLACEHOLDER, 3),)
        ) == compaction(decided[3])
        assert ([1, 2, 3, 4], (), [2], 23 - 11 + 3) == (
            [t.turn for t in window.hot],
            window.warm,
            list(window.cleared),
            window.tokens,
        )
        held = window.hot[1]
        assert (PLACEHOLDER, 3, ("c1",)) == (held.text, held.tokens, held.answers)

    def test_a_cleared_result_is_not_cleared_again_and_the_next_one_is(self) -> None:
        turns = (
            calling("c1"),
            answering("c1", n=10),
            calling("c2"),
            answering("c2", n=10),
            calling("c3"),
            answering("c3", n=10),
        )
        state, decided = play(ClearToolResults(25, 1), *turns)
        assert ([2], [4]) == (
            [item.turn for item in compaction(decided[3]).cleared],
            [item.turn for item in compaction(decided[5]).cleared],
        )
        assert [2, 4] == list(state.window.cleared)

    def test_a_result_in_the_newest_unit_waits_until_its_unit_closes(self) -> None:
        turns = (calling("a", "b"), answering("a", n=10), answering("b", n=10))
        policy = ClearToolResults(20, 1)
        state, decided = play(policy, *turns)
        assert 1 == len(decided[2])
        state, (later,) = play(policy, user(1), state=state)
        assert [2] == [item.turn for item in compaction(later).cleared]

    def test_a_pinned_result_is_never_cleared(self) -> None:
        pinned_result = AddTurn("tool", words(10), answers=("c1",), pin=True)
        turns = (calling("c1"), pinned_result, calling("c2"), answering("c2", n=5))
        policy = ClearToolResults(20, 1)
        state, decided = play(policy, *turns)
        assert (1, state.window.tokens) == (len(decided[3]), policy.floor(state.window))

    def test_a_plain_tool_turn_between_a_call_and_its_result_is_cleared_in_place(self) -> None:
        turns = (calling("c1"), tool(10), answering("c1", n=5), user(1), tool(8))
        _, decided = play(ClearToolResults(25, 1), *turns)
        event = compaction(decided[4])
        assert ((), [2, 3]) == (event.warm, [item.turn for item in event.cleared])

    def test_the_floor_counts_the_in_place_clearing(self) -> None:
        turns = (calling("c1"), answering("c1", n=10), calling("c2"), answering("c2", n=5))
        state, _ = play(ClearToolResults(100, 1), *turns)
        assert 23 - 11 + 3 == ClearToolResults(100, 1).floor(state.window)


@attrs.frozen
class WalkingBack(ClearToolResults):
    """The look back as it was before ``Window.tool_turns``: HOT walked back to the last
    cleared result, the reference the quick look back must agree with; and the floor
    as it was, with every HOT tool result looked at."""

    def floor(self, window: Window) -> int:
        cost = self.tokenizer.count(self.placeholder)
        clearable = self._clearable(window.hot, newest(window).start, cost)
        return window.tokens - sum(t.tokens - cost for t in clearable)

    def _since_last_clearing(
        self, window: Window, turn: TurnAdded, cost: int
    ) -> list[tuple[TurnAdded, bool]]:
        last = next(
            (item.turn for item in reversed(window.warm) if item.text == self.placeholder), 0
        )
        if window.cleared:
            last = max(last, window.cleared[-1])
        unit = newest_with(window, turn).start
        protected = unit if self.keep else math.inf
        need: set[str] = set()
        kept = 0
        found: list[tuple[TurnAdded, bool]] = []
        for candidate in (turn, *reversed(window.hot)):
            if candidate.turn <= last:
                break
            inside = bool(need) or candidate.turn > unit
            if candidate.calls and need:
                need.difference_update(candidate.calls)
            need.update(candidate.answers)
            if candidate.role != "tool":
                continue
            if kept < self.keep:
                kept += 1
            elif candidate.tokens > cost and not candidate.pinned and candidate.turn < protected:
                found.append(
                    (candidate, not inside and not candidate.calls and not candidate.answers)
                )
        found.reverse()
        return found


class TestLookBack:
    """The look back reads ``Window.tool_turns`` and decides exactly as walking HOT did."""

    @settings(
        max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow]
    )
    @given(
        turns=turn_sequences(30, max_size=60),
        budget=st.sampled_from([5, 12, 30, 80]),
        keep=st.integers(0, 3),
        inherited=st.integers(0, 20),
    )
    def test_it_decides_as_the_walk_back_did(
        self, turns: list[AddTurn], budget: int, keep: int, inherited: int
    ) -> None:
        # The first turns may come under another policy (a fork): tool turns it
        # dropped are listed but no longer HOT.
        start, _ = play(SlidingWindow(budget), *turns[:inherited])
        quick, quick_decided = play(ClearToolResults(budget, keep), *turns[inherited:], state=start)
        walked, walked_decided = play(WalkingBack(budget, keep), *turns[inherited:], state=start)
        assert (walked_decided, walked) == (quick_decided, quick)
        quick_floor = ClearToolResults(budget, keep).floor(quick.window)
        assert WalkingBack(budget, keep).floor(walked.window) == quick_floor

    def test_a_chat_without_tool_turns_reads_no_turn_of_hot(self) -> None:
        state, _ = play(ClearToolResults(5, 1), user(3), user(3))
        guarded = guard(state, readable=0)
        events = ClearToolResults(5, 1).decide(guarded, user(3))
        assert [TurnAdded] == [type(event) for event in events]

    def test_the_look_back_stops_at_the_oldest_tool_result_since_the_last_clearing(self) -> None:
        policy = ClearToolResults(20, 1)
        state, _ = play(policy, *(user(1) for _ in range(30)), tool(10), user(1))
        # Turns 32 and 31, then 30 to see that it is older: three of HOT's 32 turns.
        guarded = guard(state, readable=3)
        arriving = TurnAdded(33, "tool", words(10), 11, True)
        found = policy._since_last_clearing(guarded.window, arriving, 3)
        assert [(31, True)] == [(t.turn, alone) for t, alone in found]


def guard(state: State, readable: int) -> State:
    """``state`` with a HOT of which only the last ``readable`` turns may be read."""
    hot = cast(Hot, Guarded(state.window.hot, readable))
    return state._replace(window=state.window._replace(hot=hot))


class Guarded(Sequence[TurnAdded]):
    """``hot``, of which only the last ``readable`` turns may be read (a test fails if
    another is)."""

    def __init__(self, hot: Sequence[TurnAdded], readable: int) -> None:
        self.hot = hot
        self.readable = readable

    def __len__(self) -> int:
        return len(self.hot)

    @overload
    def __getitem__(self, index: int) -> TurnAdded: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[TurnAdded]: ...

    def __getitem__(self, index: int | slice) -> TurnAdded | Sequence[TurnAdded]:
        if isinstance(index, slice):
            raise AssertionError("HOT was sliced")
        position = index if index >= 0 else len(self.hot) + index
        if position < len(self.hot) - self.readable:
            raise AssertionError(f"turn {position + 1} of HOT was read")
        return self.hot[position]
