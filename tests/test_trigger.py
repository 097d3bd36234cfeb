"""Trigger and target: read from a table, when they fire, how far a compaction goes, what
each compacting policy does with them, and what the budget promise holds them to."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

from pathlib import Path
from typing import Any

import pytest

from memtape.checking.invariants import budget_bound
from memtape.cli import main
from memtape.core.errors import BadInput
from memtape.core.events import TurnAdded
from memtape.policies.plumbing.params import Params
from memtape.policies.session import Policies
from memtape.policies.window.rolling_summary import RollingSummary
from memtape.policies.window.sliding_window import SlidingWindow
from memtape.policies.window.tiered import TieredCompaction
from memtape.policies.window.tool_clearing import ClearToolResults
from memtape.policies.window.trigger import Trigger, calls_for_compaction, trigger_from
from tests.playing import play, tool, user

FIXTURES = Path(__file__).parent / "fixtures"

COMPACTING = ["tiered", "sliding-window", "rolling-summary", "clear-tool-results"]


def read(**table: Any) -> Trigger | None:
    """The trigger a ``[compaction]`` table holding ``table`` gives."""
    params = Params(table, "s.toml: [compaction]")
    trigger = trigger_from(params)
    params.done()
    return trigger


def built(**table: Any) -> Any:
    """The compaction policy a table builds."""
    return Policies.from_params({"compaction": table}, "s.toml").compaction


class TestReading:
    def test_a_table_setting_none_of_them_has_no_trigger(self) -> None:
        assert read() is None

    @pytest.mark.parametrize("name", COMPACTING)
    def test_a_policy_without_them_writes_the_table_it_always_wrote(self, name: str) -> None:
        policy = built(policy=name, budget=50)
        assert policy.trigger is None
        assert not {"trigger", "every", "target", "clear_at_least"} & set(policy.params())

    def test_each_form_is_read(self) -> None:
        trigger = read(trigger=[500, "85%", {"messages": 40}], context_window=1000)
        expected = Trigger((500,), ("85%",), 40, context_window=1000)
        assert expected == trigger

    def test_a_percentage_is_of_the_context_window_rounded_down(self) -> None:
        trigger = read(trigger="85%", context_window=999)
        assert trigger is not None
        assert (849,) == trigger.bounds(10)

    @pytest.mark.parametrize(
        "table",
        [
            {"trigger": 300},
            {"trigger": "85%", "context_window": 200},
            {"trigger": [300, {"messages": 4}], "every": 3, "target": 20},
            {"clear_at_least": 30},
        ],
    )
    @pytest.mark.parametrize("name", COMPACTING)
    def test_the_table_is_written_back_as_read(self, name: str, table: dict[str, Any]) -> None:
        policy = built(policy=name, budget=50, **table)
        assert table == {k: v for k, v in policy.params().items() if k in table}
        assert policy == built(**policy.params())

    def test_a_percentage_without_a_context_window_is_one_line(self) -> None:
        with pytest.raises(BadInput) as raised:
            built(policy="tiered", budget=50, trigger="85%")
        message = str(raised.value)
        assert message.startswith("s.toml: [compaction]: trigger '85%'")
        assert "context_window" in message
        assert "\n" not in message

    @pytest.mark.parametrize(
        ("trigger", "seen"),
        [
            ("85", "must be a token count"),
            ("0%", "must be a token count"),
            ("101%", "must be a token count"),
            # float() reads other scripts' digits, underscores and blanks: a percentage is
            # written in ASCII digits (the numbers-are-numbers guarantee).
            ("\u0668\u0665%", "must be a token count"),
            ("8_5%", "must be a token count"),
            (" 85%", "must be a token count"),
            ("1e1%", "must be a token count"),
            ({"tokens": 3}, "must be a token count"),
            ({"messages": 0}, "messages must be an integer >= 1"),
            (0, "must be a token count"),
            (True, "must be a token count"),
            ([], "at least one"),
        ],
    )
    def test_a_trigger_of_no_known_form_is_refused(self, trigger: Any, seen: str) -> None:
        with pytest.raises(BadInput, match=seen):
            read(trigger=trigger, context_window=100)

    @pytest.mark.parametrize("name", ["every", "target", "context_window"])
    def test_a_count_under_one_is_refused(self, name: str) -> None:
        with pytest.raises(BadInput, match=f"{name} must be an integer >= 1"):
            read(**{name: 0})

    def test_a_percentage_under_one_token_is_refused(self) -> None:
        with pytest.raises(BadInput, match="under one token"):
            read(trigger="1%", context_window=50)


class TestFiring:
    def test_with_none_given_the_budget_triggers_and_is_the_target(self) -> None:
        trigger = Trigger(every=5)
        assert ((40,), 40) == (trigger.bounds(40), trigger.goal(40))

    def test_the_target_defaults_to_the_lowest_trigger_under_the_budget(self) -> None:
        assert 30 == Trigger((30, 60)).goal(40)
        assert 40 == Trigger((60,)).goal(40)

    def test_a_target_given_is_the_target(self) -> None:
        assert 10 == Trigger((30,), target=10).goal(40)

    def test_turns_alone_bound_no_tokens(self) -> None:
        assert Trigger(messages=3).bound(40) is None

    def test_tokens_fire_over_the_bound_not_at_it(self) -> None:
        state, _ = play(TieredCompaction(100, 2), user(9))  # 10 tokens
        trigger = Trigger((15,))
        at = TurnAdded(2, "user", "five", 5, False)
        over = TurnAdded(2, "user", "six", 6, False)
        assert [False, True] == [trigger.fires(state.window, t, 100) for t in (at, over)]

    def test_with_no_trigger_the_budget_calls_for_compaction_past_it(self) -> None:
        state, _ = play(TieredCompaction(100, 2), user(9))  # 10 tokens
        at = TurnAdded(2, "user", "five", 5, False)
        over = TurnAdded(2, "user", "six", 6, False)
        assert [False, True] == [
            calls_for_compaction(None, state.window, t, 15) for t in (at, over)
        ]

    def test_a_trigger_set_calls_for_compaction_when_it_fires_whatever_the_budget(self) -> None:
        state, _ = play(TieredCompaction(100, 2), user(9))
        turn = TurnAdded(2, "user", "two", 2, False)
        assert [True, False] == [
            calls_for_compaction(trigger, state.window, turn, 1000)
            for trigger in (Trigger(every=2), Trigger(every=3))
        ]

    def test_messages_fire_once_hot_holds_that_many(self) -> None:
        policy = TieredCompaction(1000, 1, trigger=Trigger(messages=3))
        _, decided = play(policy, user(1), user(1), user(1))
        assert [1, 1, 2] == [len(events) for events in decided]

    def test_every_fires_at_each_nth_turn(self) -> None:
        policy = RollingSummary(1000, keep=1, trigger=Trigger(every=2))
        _, decided = play(policy, tool(1), tool(1), tool(1), tool(1))
        assert [1, 2, 1, 2] == [len(events) for events in decided]


class TestPolicies:
    def test_tiered_compacts_at_the_trigger_down_to_the_target(self) -> None:
        policy = TieredCompaction(100, 1, trigger=Trigger((30,), target=12))
        state, decided = play(policy, tool(9), tool(9), tool(9), tool(9))  # 10 tokens each
        assert [1, 1, 1, 2] == [len(events) for events in decided]
        assert state.window.tokens <= 12 or state.window.tokens == policy.floor(state.window)

    def test_tiered_without_a_trigger_decides_as_before(self) -> None:
        old = play(TieredCompaction(25, 1), tool(9), user(9), tool(9))
        assert old == play(TieredCompaction(25, 1, trigger=None), tool(9), user(9), tool(9))

    def test_sliding_window_drops_down_to_the_target(self) -> None:
        policy = SlidingWindow(40, trigger=Trigger((40,), target=15))
        state, _ = play(policy, user(9), user(9), user(9), user(9), user(9))
        assert 10 == state.window.tokens

    def test_rolling_summary_folds_at_its_interval_under_the_budget(self) -> None:
        policy = RollingSummary(1000, keep=1, trigger=Trigger(every=3))
        state, _ = play(policy, tool(2), tool(2), tool(2))
        assert 1 == len(state.window.hot)

    def test_clear_at_least_holds_a_small_clearing_back(self) -> None:
        small = ClearToolResults(20, keep=1, trigger=Trigger(clear_at_least=50))
        state, decided = play(small, tool(9), tool(9), tool(9))
        assert [1, 1, 1] == [len(events) for events in decided]
        assert 30 == state.window.tokens

    def test_clear_at_least_lets_a_large_clearing_through(self) -> None:
        large = ClearToolResults(20, keep=1, trigger=Trigger(clear_at_least=5))
        _, decided = play(large, tool(9), tool(9), tool(9))
        assert 2 == len(decided[2])

    def test_a_trigger_that_moves_nothing_writes_no_compaction(self) -> None:
        policy = TieredCompaction(1000, 3, trigger=Trigger(every=1))
        _, decided = play(policy, user(1), user(1))
        assert [1, 1] == [len(events) for events in decided]


class TestBudgetPromise:
    def test_a_policy_without_a_trigger_is_held_to_its_budget(self) -> None:
        assert 40 == budget_bound(TieredCompaction(40, 2), compacted=False)

    def test_after_a_compaction_the_target_holds(self) -> None:
        policy = TieredCompaction(40, 2, trigger=Trigger((30,), target=10))
        assert 10 == budget_bound(policy, compacted=True)

    def test_between_compactions_the_lowest_token_trigger_holds(self) -> None:
        policy = TieredCompaction(40, 2, trigger=Trigger((30, 60), target=10))
        assert 30 == budget_bound(policy, compacted=False)

    @pytest.mark.parametrize("trigger", [Trigger(messages=4), Trigger((30,), clear_at_least=5)])
    def test_nothing_bounds_the_window_between_compactions_otherwise(
        self, trigger: Trigger
    ) -> None:
        policy = TieredCompaction(40, 2, trigger=trigger)
        assert budget_bound(policy, compacted=False) is None


class TestBenchGrid:
    def test_a_grid_of_trigger_percentages_runs_on_an_imported_session(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        scenario = tmp_path / "support.toml"
        chat = str(FIXTURES / "support-chat.jsonl")
        assert 0 == main(["import", chat, "--out", str(scenario), "-q"])
        capsys.readouterr()
        out = tmp_path / "grid.json"
        argv = ["bench", str(scenario), "--policy", "tiered", "--jobs", "1", "-q"]
        argv += ["--set", "compaction.context_window=400", "--json", str(out)]
        assert 0 == main([*argv, "--grid", "compaction.trigger=50%,70%,85%"])
        table = capsys.readouterr().out
        assert all(f"trigger={p}" in table for p in ("50%", "70%", "85%"))

    def test_a_percentage_grid_without_a_context_window_is_one_line(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        scenario = tmp_path / "support.toml"
        assert 0 == main(["import", str(FIXTURES / "support-chat.jsonl"), "--out", str(scenario)])
        capsys.readouterr()
        argv = ["bench", str(scenario), "--policy", "tiered", "--jobs", "1", "-q"]
        assert 0 != main([*argv, "--grid", "compaction.trigger=50%"])
        err = capsys.readouterr().err
        assert 1 == len(err.strip().splitlines())
        assert "context_window" in err
