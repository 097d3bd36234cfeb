"""memtape.policies.window.tiered: the tiered compaction decider and its parameters."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

from typing import Any

import pytest

from memtape.core.commands import AddTurn
from memtape.core.errors import BadInput, Rejected
from memtape.core.events import CompactionTriggered, TurnAdded, WarmItem
from memtape.core.state import INITIAL_STATE
from memtape.policies.text.tokenizers import WordCount
from memtape.policies.window.tiered import TieredCompaction, gist_for
from tests.playing import answering, calling, compaction, pinned, play, staying, words


def _user(n: int) -> AddTurn:
    return AddTurn("user", words(n))


def _tool(n: int) -> AddTurn:
    return AddTurn("tool", words(n))


class TestGist:
    def test_no_cold_turns_means_no_gist(self) -> None:
        assert "" == gist_for(0)

    def test_one_turn_is_singular(self) -> None:
        assert "[1 earlier turn summarized]" == gist_for(1)

    @pytest.mark.parametrize("turns", [2, 5, 12])
    def test_several_turns_are_plural(self, turns: int) -> None:
        assert f"[{turns} earlier turns summarized]" == gist_for(turns)

    @pytest.mark.parametrize("turns", [1, 2, 99])
    def test_the_gist_is_four_words(self, turns: int) -> None:
        assert 4 == len(gist_for(turns).split())


class TestTurns:
    def test_a_turn_costs_the_words_of_role_colon_text(self) -> None:
        (turn,) = TieredCompaction(100, 2).decide(INITIAL_STATE, AddTurn("user", "one two three"))

        assert TurnAdded(1, "user", "one two three", 4, salient=False) == turn

    def test_turns_are_numbered_in_order(self) -> None:
        state, _ = play(TieredCompaction(100, 2), _user(1), _user(1))

        assert [1, 2] == [t.turn for t in state.window.hot]

    @pytest.mark.parametrize(
        ("role", "salient"),
        [("tool", True), ("user", False), ("system", False), ("assistant", False)],
    )
    def test_salience_defaults_to_whether_the_role_is_tool(self, role: str, salient: bool) -> None:
        (turn,) = TieredCompaction(100, 2).decide(INITIAL_STATE, AddTurn(role, "text"))
        assert isinstance(turn, TurnAdded)

        assert salient == turn.salient

    @pytest.mark.parametrize(("role", "salient"), [("tool", False), ("user", True)])
    def test_an_explicit_salient_flag_wins(self, role: str, salient: bool) -> None:
        (turn,) = TieredCompaction(100, 2).decide(INITIAL_STATE, AddTurn(role, "t", salient))
        assert isinstance(turn, TurnAdded)

        assert salient == turn.salient

    @pytest.mark.parametrize(
        "role", ["", " user", "user ", "   ", "User", "developer", "Dana Smith SSN 123-45-6789"]
    )
    def test_a_role_outside_the_closed_set_is_rejected(self, role: str) -> None:
        """A role is one of system, user, assistant, tool: never free text."""
        with pytest.raises(Rejected, match="a turn's role is one of system, user, assistant, tool"):
            TieredCompaction(100, 2).decide(INITIAL_STATE, AddTurn(role, "text"))


class TestBudget:
    def test_a_turn_within_budget_is_one_event(self) -> None:
        _, decided = play(TieredCompaction(40, 2), _user(10))

        assert 1 == len(decided[0])

    def test_exactly_reaching_the_budget_is_not_over(self) -> None:
        state, decided = play(TieredCompaction(40, 2), _user(19), _user(19))

        assert (40, [1, 1]) == (state.window.tokens, [len(d) for d in decided])

    def test_one_token_over_the_budget_compacts(self) -> None:
        _, decided = play(TieredCompaction(40, 1), _user(19), _user(20))

        assert [TurnAdded, CompactionTriggered] == [type(e) for e in decided[1]]

    def test_the_compaction_records_the_budget(self) -> None:
        _, decided = play(TieredCompaction(40, 1), _user(19), _user(20))

        assert 40 == compaction(decided[1]).budget


class TestCompaction:
    def test_the_last_hot_n_turns_stay_hot(self) -> None:
        state, _ = play(TieredCompaction(20, 2), _user(5), _user(5), _user(5), _user(5))

        assert [3, 4] == [t.turn for t in state.window.hot]

    def test_older_chatter_is_dropped(self) -> None:
        _, decided = play(TieredCompaction(20, 2), _user(5), _user(5), _user(5), _user(5))

        assert (1, 2) == compaction(decided[3]).dropped

    def test_older_salient_turns_go_warm_as_bare_text(self) -> None:
        _, decided = play(TieredCompaction(20, 2), _tool(5), _user(5), _user(5), _user(5))

        assert (WarmItem(1, words(5), 5),) == compaction(decided[3]).warm

    def test_a_user_turn_flagged_salient_goes_warm(self) -> None:
        turns = (AddTurn("user", words(5), salient=True), _user(5), _user(5), _user(5))
        _, decided = play(TieredCompaction(20, 2), *turns)

        assert ((1,), (2,)) == (
            tuple(w.turn for w in compaction(decided[3]).warm),
            compaction(decided[3]).dropped,
        )

    def test_a_warm_item_costs_one_token_less_than_its_turn(self) -> None:
        state, _ = play(TieredCompaction(20, 2), _tool(5), _user(5), _user(5), _user(5))

        assert 6 - 1 == state.window.warm[0].tokens

    def test_hot_n_zero_moves_every_turn_out_of_hot(self) -> None:
        state, _decided = play(TieredCompaction(10, 0), _tool(4), _user(5))

        assert ((), [], [1], [2], 4) == (
            staying(state),
            list(state.window.hot),
            [w.turn for w in state.window.warm],
            list(state.window.dropped),
            state.window.tokens,
        )

    def test_hot_n_larger_than_the_window_keeps_every_turn_hot(self) -> None:
        state, decided = play(TieredCompaction(10, 5), _user(5), _user(5))

        assert ((1, 2), (), (), 0, 12) == (
            staying(state),
            compaction(decided[1]).warm,
            compaction(decided[1]).dropped,
            compaction(decided[1]).cold,
            state.window.tokens,
        )

    def test_nothing_goes_cold_when_folding_is_enough(self) -> None:
        state, decided = play(TieredCompaction(20, 1), _tool(5), _user(5), _user(10))

        assert (0, "", 0, 5 + 11) == (
            compaction(decided[2]).cold,
            state.window.gist,
            state.window.gist_tokens,
            state.window.tokens,
        )

    def test_the_oldest_warm_item_goes_cold_while_over_budget(self) -> None:
        # Folded: 9 + 5 warm + 10 hot = 24 > 20; turn 1 cold: 4 + 5 + 10 = 19.
        state, decided = play(TieredCompaction(20, 1), _tool(9), _tool(5), _user(9))

        assert (1, [1], [2], gist_for(1)) == (
            compaction(decided[2]).cold,
            list(state.window.cold),
            [w.turn for w in state.window.warm],
            state.window.gist,
        )

    def test_the_gist_counts_once_something_is_cold(self) -> None:
        state, _ = play(TieredCompaction(20, 1), _tool(9), _tool(5), _user(9))

        assert (4, 4 + 5 + 10) == (state.window.gist_tokens, state.window.tokens)

    def test_cooling_stops_once_within_budget(self) -> None:
        state, _ = play(TieredCompaction(20, 1), _tool(9), _tool(5), _user(9))

        assert [2] == [w.turn for w in state.window.warm]

    def test_when_hot_alone_is_over_every_warm_item_goes_cold(self) -> None:
        state, _ = play(TieredCompaction(10, 1), _tool(3), _tool(3), _user(20))

        assert ([1, 2], [], gist_for(2), 21 + 4) == (
            list(state.window.cold),
            list(state.window.warm),
            state.window.gist,
            state.window.tokens,
        )

    def test_the_gist_grows_with_later_cold_turns(self) -> None:
        state, _ = play(TieredCompaction(10, 1), _tool(3), _user(20), _tool(3), _user(20))

        assert ([1, 3], gist_for(2), 4) == (
            list(state.window.cold),
            state.window.gist,
            state.window.gist_tokens,
        )

    def test_the_window_total_after_compactions_equals_a_recount(self) -> None:
        policy = TieredCompaction(20, 2)
        turns = [_tool(5), _user(7), _tool(3), _user(9), _tool(4), _user(2), _tool(8)]
        state, _ = play(policy, *turns)

        assert (
            sum(t.tokens for t in state.window.hot)
            + sum(w.tokens for w in state.window.warm)
            + state.window.gist_tokens
            == state.window.tokens
        )


class TestUnits:
    """A call, its results and the turns between them fold or stay together."""

    def test_a_call_and_its_result_go_warm_together(self) -> None:
        # 3 + 3 + 3 + 4 = 13 > 10; hot_n 1 keeps turn 4; the unit [2, 3] holds a salient
        # result, so the call goes WARM with it; the chatter of turn 1 is dropped.
        state, decided = play(
            TieredCompaction(10, 1), _user(2), calling("c1"), answering("c1"), _user(3)
        )
        event = compaction(decided[3])
        assert ((4,), (2, 3), (1,)) == (
            staying(state),
            tuple(item.turn for item in event.warm),
            event.dropped,
        )

    def test_a_unit_with_nothing_salient_is_dropped_whole(self) -> None:
        state, decided = play(
            TieredCompaction(10, 1), calling("c1"), answering("c1", salient=False), _user(5)
        )
        assert ((3,), (), (1, 2)) == (
            staying(state),
            compaction(decided[2]).warm,
            compaction(decided[2]).dropped,
        )

    def test_a_result_among_the_last_turns_keeps_its_call_and_the_floor_grows(self) -> None:
        policy = TieredCompaction(12, 1)
        state, _decided = play(policy, _user(5), calling("c1", n=4), answering("c1", n=4))
        assert ((2, 3), 10) == (staying(state), policy.floor(state.window))

    def test_a_call_that_waits_holds_the_turns_after_it(self) -> None:
        state, _decided = play(TieredCompaction(5, 1), calling("c1"), _user(2), _user(2))
        assert ([1, 2, 3], (1, 2, 3)) == (
            [t.turn for t in state.window.hot],
            staying(state),
        )

    def test_once_answered_the_unit_folds_whole(self) -> None:
        turns = (calling("c1"), _user(2), answering("c1"), _user(4))
        state, decided = play(TieredCompaction(8, 1), *turns)
        assert ((4,), (1, 2, 3)) == (
            staying(state),
            tuple(item.turn for item in compaction(decided[3]).warm),
        )

    def test_without_tool_calls_nothing_changes(self) -> None:
        """Every turn is its own unit: the seed's split, turn for turn."""
        _, decided = play(TieredCompaction(20, 2), _user(5), _tool(5), _user(5), _user(5))
        assert CompactionTriggered(20, (WarmItem(2, words(5), 5),), (1,), 0, "", 0) == (
            compaction(decided[3])
        )


class TestPinned:
    def test_a_pinned_turn_is_never_folded_and_counts_against_the_floor(self) -> None:
        policy = TieredCompaction(10, 1)
        state, decided = play(policy, pinned("system", 4), _user(3), _user(3))
        assert ((1, 3), (2,), 5 + 4) == (
            staying(state),
            compaction(decided[2]).dropped,
            policy.floor(state.window),
        )

    def test_a_pinned_call_keeps_its_result(self) -> None:
        pinned_call = AddTurn("assistant", "read the rules", calls=("rules",), pin=True)
        turns = (pinned_call, answering("rules", n=3), _user(3), _user(3))
        state, _ = play(TieredCompaction(8, 1), *turns)
        assert [1, 2, 4] == [t.turn for t in state.window.hot]


class TestParameters:
    @pytest.mark.parametrize("budget", [0, -1])
    def test_a_budget_of_zero_or_less_is_refused(self, budget: int) -> None:
        with pytest.raises(BadInput, match=f"budget must be a positive integer, got {budget}"):
            TieredCompaction(budget, 2)

    def test_a_negative_hot_n_is_refused(self) -> None:
        with pytest.raises(BadInput, match="hot_n must be an integer >= 0, got -1"):
            TieredCompaction(40, -1)

    @pytest.mark.parametrize("budget", [True, 40.0, "40"])
    def test_a_budget_must_be_an_integer(self, budget: Any) -> None:
        with pytest.raises(BadInput, match="budget must be a positive integer"):
            TieredCompaction(budget, 2)

    def test_the_tokenizer_defaults_to_word_count(self) -> None:
        assert WordCount() == TieredCompaction(40, 2).tokenizer

    def test_from_params_defaults_hot_n_and_tokenizer(self) -> None:
        assert TieredCompaction(40, 2, WordCount()) == TieredCompaction.from_params(
            {"budget": 40}, "here"
        )

    def test_from_params_reads_every_parameter(self) -> None:
        data = {"budget": 60, "hot_n": 0, "tokenizer": "words"}

        assert TieredCompaction(60, 0) == TieredCompaction.from_params(data, "here")

    def test_params_read_back_to_the_same_policy(self) -> None:
        policy = TieredCompaction(60, 3)
        data = policy.params()
        del data["policy"]

        assert policy == TieredCompaction.from_params(data, "here")

    def test_params_name_the_policy(self) -> None:
        assert {"policy": "tiered", "budget": 40, "hot_n": 2, "tokenizer": "words"} == (
            TieredCompaction(40, 2).params()
        )

    def test_a_missing_budget_is_named_with_its_place(self) -> None:
        with pytest.raises(BadInput, match=r"^f.toml: \[compaction\]: missing parameter budget$"):
            TieredCompaction.from_params({}, "f.toml: [compaction]")

    @pytest.mark.parametrize(("name", "value"), [("budget", 0), ("hot_n", -1), ("budget", "40")])
    def test_an_impossible_parameter_is_named_with_its_place(self, name: str, value: Any) -> None:
        data = {"budget": 40, name: value}

        with pytest.raises(BadInput, match=rf"^here: {name} must be an integer"):
            TieredCompaction.from_params(data, "here")

    def test_an_unknown_tokenizer_is_named_with_its_place(self) -> None:
        with pytest.raises(BadInput, match=r"^here: unknown tokenizer 'bpe' \(known: "):
            TieredCompaction.from_params({"budget": 40, "tokenizer": "bpe"}, "here")

    def test_an_unknown_parameter_is_refused(self) -> None:
        with pytest.raises(
            BadInput, match=r"^here: unknown parameter budjet: did you mean budget\?$"
        ):
            TieredCompaction.from_params({"budget": 40, "budjet": 41}, "here")


class TestCommandTypes:
    @pytest.mark.parametrize(
        ("command", "problem"),
        [
            (AddTurn(5, "x"), "role"),  # type: ignore[arg-type]
            (AddTurn("user", 5), "text"),  # type: ignore[arg-type]
            (AddTurn("user", "x", "no"), "salient"),  # type: ignore[arg-type]
        ],
    )
    def test_a_field_of_the_wrong_type_is_rejected(self, command: AddTurn, problem: str) -> None:
        with pytest.raises(Rejected, match=problem):
            TieredCompaction(40, 2).decide(INITIAL_STATE, command)

    def test_a_tokenizer_named_by_a_string_is_the_one_of_that_name(self) -> None:
        assert TieredCompaction(40, 2, WordCount()) == TieredCompaction(40, 2, "words")


class TestDefaultWriters:
    def test_the_defaults_are_the_writers_own(self) -> None:
        """The names tiered compaction treats as needing no writer are tier_writers' defaults."""
        from memtape.policies.text import tier_writers  # noqa: PLC0415
        from memtape.policies.window import tiered as compaction  # noqa: PLC0415

        expected = {"warm": tier_writers.VERBATIM, "gist": tier_writers.COUNT}
        assert expected == compaction.DEFAULT_WRITERS
