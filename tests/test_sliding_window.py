"""memtape.policies.sliding_window: drop the oldest turns until within budget."""

import pytest

from memtape.core.commands import AddTurn
from memtape.core.errors import BadInput
from memtape.core.events import CompactionTriggered, TurnAdded, WarmItem
from memtape.policies.compaction import TieredCompaction
from memtape.policies.promises import BUDGET, PINNED, RECENT_VERBATIM, WELL_FORMED
from memtape.policies.session import Policies
from memtape.policies.sliding_window import SlidingWindow
from memtape.policies.tokenizers import Cl100kBase, WordCount
from tests.playing import compaction, play, tool, user


class TestDecide:
    def test_within_budget_a_turn_is_one_event(self) -> None:
        _, decided = play(SlidingWindow(20), user(5), user(5), user(5))

        assert [1, 1, 1] == [len(events) for events in decided]

    def test_over_budget_the_oldest_turn_is_dropped(self) -> None:
        # 6 + 6 + 6 + 6 = 24 > 20; without turn 1, 18.
        state, decided = play(SlidingWindow(20), user(5), user(5), user(5), user(5))

        assert CompactionTriggered(20, (2, 3, 4), (), (1,), 0, "", 0) == compaction(decided[3])
        assert (18, [1]) == (state.window.tokens, list(state.window.dropped))

    def test_as_many_turns_go_as_it_takes(self) -> None:
        # 6 + 6 + 6 + 16 = 34: dropping 1 and 2 leaves 22, dropping 3 too leaves 16.
        state, decided = play(SlidingWindow(20), user(5), user(5), user(5), user(15))

        assert ((4,), (1, 2, 3)) == (compaction(decided[3]).hot, compaction(decided[3]).dropped)
        assert 16 == state.window.tokens

    def test_salient_turns_are_dropped_like_chatter(self) -> None:
        state, decided = play(SlidingWindow(10), tool(5), user(5))

        assert ((1,), (), 0) == (
            compaction(decided[1]).dropped,
            compaction(decided[1]).warm,
            len(state.window.warm),
        )

    def test_the_newest_turn_stays_even_alone_over_budget(self) -> None:
        # 6 + 21 = 27: turn 1 goes; turn 2 alone is 21, over 10, and stays.
        state, decided = play(SlidingWindow(10), user(5), user(20))

        assert ([2], 21) == ([t.turn for t in state.window.hot], state.window.tokens)
        assert (1,) == compaction(decided[1]).dropped

    def test_a_lone_turn_over_budget_triggers_no_compaction(self) -> None:
        _, decided = play(SlidingWindow(10), user(20))

        assert [TurnAdded] == [type(event) for event in decided[0]]

    def test_inherited_warm_items_go_cold_before_any_turn_is_dropped(self) -> None:
        # Under tiered(20, 1): turn 1 (tool, 6) goes WARM as 5 tokens, turns 2 and 3
        # are dropped: 5 + 6 = 11. Then a turn of 10: 21 > 20, and WARM going cold
        # (5 tokens) is enough.
        inherited, _ = play(TieredCompaction(20, 1), tool(5), user(5), user(5), user(5))
        state, decided = play(SlidingWindow(20), user(9), state=inherited)

        assert CompactionTriggered(20, (4, 5), (), (), 1, "", 0) == compaction(decided[0])
        assert (16, [1], ()) == (state.window.tokens, list(state.window.cold), state.window.warm)

    def test_turns_are_measured_by_the_tokenizer(self) -> None:
        state, _ = play(SlidingWindow(100))
        (turn,) = SlidingWindow(100, Cl100kBase()).decide(state, AddTurn("user", "hello world"))
        assert isinstance(turn, TurnAdded)

        assert 4 == turn.tokens  # "user", ":", " hello", " world"


class TestPromises:
    def test_the_budget_bound_and_the_newest_turn_verbatim(self) -> None:
        assert (frozenset({BUDGET, RECENT_VERBATIM, WELL_FORMED, PINNED}), 1) == (
            SlidingWindow(20).promises,
            SlidingWindow(20).verbatim,
        )

    def test_the_floor_is_the_newest_turn(self) -> None:
        state, _ = play(SlidingWindow(10), user(5), user(20))

        assert 21 == SlidingWindow(10).floor(state.window)

    def test_the_floor_counts_an_inherited_gist(self) -> None:
        # tiered(20, 1): turns of 10, 6 and 10 tokens; turns 1 and 2 fold WARM (9 and
        # 5), 24 > 20, so turn 1 goes cold behind a 4-word gist: 4 + 5 + 10 = 19.
        inherited, _ = play(TieredCompaction(20, 1), tool(9), tool(5), user(9))

        assert 4 + 10 == SlidingWindow(20).floor(inherited.window)

    def test_the_floor_of_an_empty_window_is_nothing(self) -> None:
        assert 0 == SlidingWindow(20).floor(play(SlidingWindow(20))[0].window)


class TestParams:
    def test_a_budget_alone_builds_it_with_the_word_count(self) -> None:
        policies = Policies.from_params({"compaction": {"policy": "sliding-window", "budget": 7}})

        assert SlidingWindow(7, WordCount()) == policies.compaction

    def test_params_read_back(self) -> None:
        policy = SlidingWindow(30, Cl100kBase())

        assert {"policy": "sliding-window", "budget": 30, "tokenizer": "cl100k_base"} == (
            policy.params()
        )
        data = {k: v for k, v in policy.params().items() if k != "policy"}
        assert policy == SlidingWindow.from_params(data, "here")

    def test_a_parameter_of_another_policy_is_refused(self) -> None:
        with pytest.raises(BadInput, match=r"^here: unknown parameter\(s\) hot_n$"):
            SlidingWindow.from_params({"budget": 10, "hot_n": 2}, "here")

    @pytest.mark.parametrize("budget", [0, -3, True, 2.5, "10"])
    def test_an_impossible_budget_is_refused(self, budget: object) -> None:
        with pytest.raises(BadInput, match="budget must be a positive integer"):
            SlidingWindow(budget)  # type: ignore[arg-type]


def test_warm_items_are_never_made() -> None:
    """Whatever leaves the window leaves it whole: no WARM item, no gist."""
    state, _ = play(SlidingWindow(12), tool(5), tool(5), tool(5), user(5))

    assert ((), "", [1, 2]) == (state.window.warm, state.window.gist, list(state.window.dropped))
    assert WarmItem not in {type(item) for item in state.window.warm}
