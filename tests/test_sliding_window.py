"""memtape.policies.window.sliding_window: drop the oldest turns until within budget."""

from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memtape.core.commands import ROLES, AddTurn
from memtape.core.errors import BadInput
from memtape.core.events import CompactionTriggered, TurnAdded, WarmItem
from memtape.core.state import INITIAL_STATE
from memtape.policies.plumbing.promises import BUDGET, PINNED, RECENT_VERBATIM, WELL_FORMED
from memtape.policies.session import Policies
from memtape.policies.text.tokenizers import Cl100kBase, WordCount
from memtape.policies.window.sliding_window import SlidingWindow
from memtape.policies.window.tiered import TieredCompaction
from tests.playing import answering, calling, compaction, pinned, play, staying, tool, user, words


class TestDecide:
    def test_within_budget_a_turn_is_one_event(self) -> None:
        _, decided = play(SlidingWindow(20), user(5), user(5), user(5))

        assert [1, 1, 1] == [len(events) for events in decided]

    def test_over_budget_the_oldest_turn_is_dropped(self) -> None:
        # 6 + 6 + 6 + 6 = 24 > 20; without turn 1, 18.
        state, decided = play(SlidingWindow(20), user(5), user(5), user(5), user(5))

        assert CompactionTriggered(20, (), (1,), 0, "", 0) == compaction(decided[3])
        assert (18, [1]) == (state.window.tokens, list(state.window.dropped))

    def test_as_many_turns_go_as_it_takes(self) -> None:
        # 6 + 6 + 6 + 16 = 34: dropping 1 and 2 leaves 22, dropping 3 too leaves 16.
        state, decided = play(SlidingWindow(20), user(5), user(5), user(5), user(15))

        assert ((4,), (1, 2, 3)) == (staying(state), compaction(decided[3]).dropped)
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

        assert CompactionTriggered(20, (), (), 1, "", 0) == compaction(decided[0])
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
        with pytest.raises(BadInput, match=r"^here: unknown parameter hot_n$"):
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


def trimmed(
    turns: Sequence[TurnAdded], budget: int, start_on: str | None, include_system: bool
) -> list[int]:
    """What LangChain's ``trim_messages(strategy="last", max_tokens=budget, start_on=...,
    include_system=...)`` keeps of the whole history, as its documentation says, with
    each turn's tokens memtape's: a leading system message is kept (its tokens counted)
    when ``include_system``; then the longest run of the newest messages within what is
    left of the budget; then, with ``start_on``, every message before the first of that
    type is dropped. One departure, memtape's: the newest turn stays if nothing else does.
    """
    system = turns[0] if include_system and turns and turns[0].role == "system" else None
    rest = list(turns[1:] if system is not None else turns)
    room = budget - (system.tokens if system is not None else 0)
    kept: list[TurnAdded] = []
    total = 0
    for turn in reversed(rest):
        if total + turn.tokens > room:
            break
        kept.insert(0, turn)
        total += turn.tokens
    if start_on is not None:
        while kept and kept[0].role != start_on:
            kept.pop(0)
    if not kept and rest:
        kept = [rest[-1]]
    return [t.turn for t in ([system] if system is not None else []) + kept]


plain_turns = st.builds(
    AddTurn,
    role=st.sampled_from(ROLES),
    text=st.integers(0, 12).map(lambda n: words(n, "m")),
)


class TestAgainstTrimMessages:
    @settings(max_examples=200, deadline=None)
    @given(
        turns=st.lists(plain_turns, max_size=30),
        budget=st.integers(1, 40),
        start_on=st.sampled_from([None, "user", "assistant"]),
        include_system=st.booleans(),
    )
    def test_on_plain_turns_it_keeps_what_trim_messages_keeps(
        self, turns: list[AddTurn], budget: int, start_on: str | None, include_system: bool
    ) -> None:
        policy = SlidingWindow(budget, WordCount(), start_on, include_system)
        state = INITIAL_STATE
        arrived: list[TurnAdded] = []
        for command in turns:
            state, (events,) = play(policy, command, state=state)
            assert isinstance(events[0], TurnAdded)
            arrived.append(events[0])
            kept = trimmed(arrived, budget, start_on, include_system)
            assert kept == [t.turn for t in state.window.hot]


class TestUnits:
    def test_a_call_leaves_with_its_results(self) -> None:
        # 3 + 3 + 4 = 10 > 8: dropping turn 1 alone would leave its result an orphan.
        state, decided = play(SlidingWindow(8), calling("c1"), answering("c1"), user(3))
        assert ((3,), (1, 2)) == (staying(state), compaction(decided[2]).dropped)
        assert [3] == [t.turn for t in state.window.hot]

    def test_a_result_that_is_the_newest_turn_keeps_its_call_and_the_floor_grows(
        self,
    ) -> None:
        policy = SlidingWindow(7)
        state, decided = play(policy, user(3), calling("c1"), answering("c1", n=4))
        assert ((2, 3), (1,), 8) == (
            staying(state),
            compaction(decided[2]).dropped,
            policy.floor(state.window),
        )

    def test_parallel_calls_answered_out_of_order_leave_together(self) -> None:
        turns = (calling("a", "b"), answering("b"), answering("a"), user(2), user(5))
        state, _ = play(SlidingWindow(10), *turns)
        assert ([4, 5], [1, 2, 3]) == (
            [t.turn for t in state.window.hot],
            list(state.window.dropped),
        )

    def test_a_pinned_turn_stays_with_its_unit(self) -> None:
        state, decided = play(SlidingWindow(10), pinned("user", 3), user(3), user(3))
        assert ((1, 3), (2,)) == (staying(state), compaction(decided[2]).dropped)


class TestOptions:
    def test_include_system_keeps_the_leading_system_turn(self) -> None:
        turns = (AddTurn("system", words(3)), user(3), user(3))
        kept, _ = play(SlidingWindow(10, include_system=True), *turns)
        plain, _ = play(SlidingWindow(10), *turns)
        assert ([1, 3], [2, 3]) == (
            [t.turn for t in kept.window.hot],
            [t.turn for t in plain.window.hot],
        )

    def test_a_later_system_turn_is_not_the_leading_one(self) -> None:
        turns = (user(3), AddTurn("system", words(3)), user(3), user(3))
        state, _ = play(SlidingWindow(10, include_system=True), *turns)
        assert [3, 4] == [t.turn for t in state.window.hot]

    def test_start_on_user_drops_on_to_a_user_turn(self) -> None:
        turns = (user(2), AddTurn("assistant", words(2)), AddTurn("assistant", words(2)), user(2))
        state, decided = play(SlidingWindow(10, start_on="user"), *turns)
        assert ((4,), (1, 2, 3)) == (staying(state), compaction(decided[3]).dropped)
        assert [4] == [t.turn for t in state.window.hot]

    def test_start_on_drops_a_leading_turn_even_within_budget(self) -> None:
        """As trim_messages does: the kept turns start on a user turn, whatever the budget."""
        turns = (AddTurn("assistant", "hello, how can I help?"), user(2))
        state, decided = play(SlidingWindow(100, start_on="user"), *turns)
        assert ([2], (1,)) == ([t.turn for t in state.window.hot], compaction(decided[1]).dropped)

    def test_start_on_with_no_user_turn_keeps_the_newest_alone(self) -> None:
        turns = (AddTurn("assistant", words(4)), AddTurn("assistant", words(4)))
        state, _ = play(SlidingWindow(8, start_on="user"), *turns)
        assert [2] == [t.turn for t in state.window.hot]

    def test_start_on_does_not_drop_the_leading_system_turn(self) -> None:
        turns = (AddTurn("system", words(2)), AddTurn("assistant", words(2)), user(2))
        state, _ = play(SlidingWindow(100, start_on="user", include_system=True), *turns)
        assert [1, 3] == [t.turn for t in state.window.hot]

    def test_the_defaults_write_the_table_they_always_wrote(self) -> None:
        assert {"policy": "sliding-window", "budget": 30, "tokenizer": "words"} == (
            SlidingWindow(30).params()
        )

    def test_the_options_read_back(self) -> None:
        policy = SlidingWindow(30, WordCount(), "user", True)
        data = {k: v for k, v in policy.params().items() if k != "policy"}
        assert ({"start_on": "user", "include_system": True}, policy) == (
            {k: data[k] for k in ("start_on", "include_system")},
            SlidingWindow.from_params(data, "here"),
        )

    def test_the_options_are_settings(self) -> None:
        policies = Policies.from_params(
            {"compaction": {"policy": "sliding-window", "budget": 9}}
        ).with_settings(["compaction.start_on=user", "compaction.include_system=true"])
        assert SlidingWindow(9, WordCount(), "user", True) == policies.compaction

    @pytest.mark.parametrize(
        ("data", "problem"),
        [
            (
                {"start_on": "human"},
                "here: start_on must be one of system, user, assistant, tool, got 'human'",
            ),
            ({"include_system": "yes"}, "here: include_system must be true or false, got 'yes'"),
        ],
    )
    def test_an_impossible_option_is_one_line_naming_it(
        self, data: dict[str, object], problem: str
    ) -> None:
        with pytest.raises(BadInput) as raised:
            SlidingWindow.from_params({"budget": 10, **data}, "here")
        assert problem == str(raised.value)
