"""memtape.policies.session: policies by axis, command routing, the session and its log."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import logging
from collections.abc import Iterator
from typing import Any

import pytest
from structlog.testing import capture_logs

from memtape.core.commands import (
    AddTurn,
    AdvanceClock,
    Command,
    Consolidate,
    Query,
    ReadFact,
    RecordEpisode,
    WriteFact,
)
from memtape.core.errors import BadInput, Rejected
from memtape.core.events import (
    ClockAdvanced,
    CompactionTriggered,
    Consolidated,
    EpisodeRecorded,
    Evicted,
    FactWritten,
    Superseded,
    TurnAdded,
)
from memtape.core.state import INITIAL_STATE
from memtape.policies.consolidation.rules import RuleConsolidation
from memtape.policies.session import Epoch, Policies, Session
from memtape.policies.store.forgetting import ImportanceRecencyAccess
from memtape.policies.text.tokenizers import Cl100kBase
from memtape.policies.window.rolling_summary import RollingSummary
from memtape.policies.window.tiered import TieredCompaction
from memtape.policies.window.tool_clearing import ClearToolResults
from memtape.reducers import fold
from memtape.scenarios import SHIPPED, load_scenario

COMPACTION = TieredCompaction(budget=10, hot_n=1)
FORGETTING = ImportanceRecencyAccess(capacity=2, half_life=4.0, access_boost=0.1)
NAME_RULE: dict[str, Any] = {
    "pattern": "name is (?P<name>\\w+)",
    "semantic": {"key": "user.name", "text": "user.name = {name}", "importance": 0.9},
}
CONSOLIDATION = RuleConsolidation.from_params({"rule": [NAME_RULE]}, "here")
ALL = Policies(COMPACTION, FORGETTING, CONSOLIDATION)

TABLES: dict[str, Any] = {
    "compaction": {"policy": "tiered", "budget": 10, "hot_n": 1},
    "forgetting": {"policy": "importance-recency-access", "capacity": 2},
    "consolidation": {"policy": "rules", "rule": [NAME_RULE]},
}


def _refused(tables: dict[str, Any]) -> str:
    with pytest.raises(BadInput) as caught:
        Policies.from_params(tables, "f.toml")
    return str(caught.value)


def _session(*commands: Command, policies: Policies = ALL) -> Session:
    session = Session(policies)
    session.execute_all(commands)
    return session


@pytest.fixture
def debug() -> Iterator[None]:
    """The ``memtape`` logger at DEBUG for one test, then back as it was."""
    logger = logging.getLogger("memtape")
    level = logger.level
    logger.setLevel(logging.DEBUG)
    yield
    logger.setLevel(level)


@pytest.fixture
def default_level() -> Iterator[None]:
    """The ``memtape`` logger at its default level (unset) for one test."""
    logger = logging.getLogger("memtape")
    level = logger.level
    logger.setLevel(logging.NOTSET)
    yield
    logger.setLevel(level)


class TestPoliciesFromParams:
    def test_every_axis_is_built_from_its_table(self) -> None:
        assert ALL == Policies.from_params(TABLES)

    def test_an_absent_axis_has_no_policy(self) -> None:
        policies = Policies.from_params({"compaction": TABLES["compaction"]})

        assert (COMPACTION, None, None) == (
            policies.compaction,
            policies.forgetting,
            policies.consolidation,
        )

    def test_no_tables_means_no_policies(self) -> None:
        assert Policies() == Policies.from_params({})

    def test_params_read_back_to_the_same_policies(self) -> None:
        assert ALL == Policies.from_params(ALL.params())

    @pytest.mark.parametrize("name", SHIPPED)
    def test_shipped_policies_read_back_from_their_params(self, name: str) -> None:
        policies = load_scenario(name).policies

        assert policies == Policies.from_params(policies.params())

    def test_params_list_only_the_present_axes(self) -> None:
        assert ["forgetting"] == list(Policies(forgetting=FORGETTING).params())

    def test_an_unknown_section_is_named(self) -> None:
        assert "f.toml: unknown sections colours, memory" == _refused(
            {**TABLES, "memory": {}, "colours": {}}
        )

    def test_an_unknown_policy_name_is_named_with_the_known_ones(self) -> None:
        tables = {"compaction": {"policy": "sliding", "budget": 10}}

        assert (
            "f.toml: [compaction] policy must be one of anthropic-clear-thinking, "
            "anthropic-clear-tool-uses, anthropic-compaction, claude-code, clear-tool-results, "
            "codex, langchain-summarization, masking-then-summary, none, observation-masking, "
            "recorded, rolling-summary, sliding-window, tiered, got 'sliding': "
            "did you mean 'sliding-window'?"
        ) == _refused(tables)

    def test_a_table_without_a_policy_name_is_refused(self) -> None:
        assert _refused({"compaction": {"budget": 10}}).startswith(
            "f.toml: [compaction] policy must be one of anthropic-clear-thinking"
        )

    @pytest.mark.parametrize("name", [["tiered"], {"name": "tiered"}], ids=repr)
    def test_a_policy_name_that_is_not_a_string_is_refused(self, name: Any) -> None:
        tables = {"compaction": {"policy": name, "budget": 10}}

        assert _refused(tables).startswith(
            "f.toml: [compaction] policy must be one of anthropic-clear-thinking"
        )

    def test_a_section_that_is_not_a_table_is_refused(self) -> None:
        assert "f.toml: [forgetting] must be a table" == _refused({"forgetting": 4})

    def test_a_policy_parameter_error_names_the_section(self) -> None:
        tables = {"compaction": {"policy": "tiered", "budget": 0}}

        assert _refused(tables).startswith("f.toml: [compaction]: budget must be an integer")

    def test_rules_that_write_facts_need_a_forgetting_policy(self) -> None:
        tables = {"consolidation": TABLES["consolidation"]}

        assert "f.toml: consolidation rules write facts, which needs a [forgetting] policy" == (
            _refused(tables)
        )

    def test_procedural_rules_alone_need_no_forgetting_policy(self) -> None:
        rule = {"pattern": "fee", "procedural": "charge it"}
        policies = Policies.from_params({"consolidation": {"policy": "rules", "rule": [rule]}})

        assert None is policies.forgetting


class TestPoliciesRouting:
    def test_a_turn_goes_to_compaction(self) -> None:
        assert [TurnAdded] == [type(e) for e in ALL.decide(INITIAL_STATE, AddTurn("user", "hi"))]

    def test_a_write_goes_to_forgetting(self) -> None:
        events = ALL.decide(INITIAL_STATE, WriteFact("a", "x", 0.5))

        assert (FactWritten(1, "a", "x", 0.5),) == events

    def test_an_episode_goes_to_consolidation(self) -> None:
        assert (EpisodeRecorded(1, "x"),) == ALL.decide(INITIAL_STATE, RecordEpisode("x"))

    @pytest.mark.parametrize(
        ("command", "axis"),
        [
            (AddTurn("user", "hi"), "compaction"),
            (WriteFact("a", "x", 0.5), "forgetting"),
            (ReadFact(key="a"), "forgetting"),
            (Query("who"), "forgetting"),
            (RecordEpisode("x"), "consolidation"),
            (Consolidate(), "consolidation"),
        ],
        ids=repr,
    )
    def test_a_command_without_its_policy_is_rejected(self, command: Command, axis: str) -> None:
        with pytest.raises(
            Rejected, match=rf"needs a \[{axis}\] policy, and this session has none"
        ):
            Policies().decide(INITIAL_STATE, command)

    def test_the_clock_needs_no_policy(self) -> None:
        assert (ClockAdvanced(6.0),) == Policies().decide(INITIAL_STATE, AdvanceClock(6))

    def test_the_clock_is_recorded_as_a_float(self) -> None:
        (event,) = Policies().decide(INITIAL_STATE, AdvanceClock(6))
        assert isinstance(event, ClockAdvanced)

        assert float is type(event.to)

    def test_the_clock_may_stay_where_it_is(self) -> None:
        state = fold([ClockAdvanced(6.0)])

        assert (ClockAdvanced(6.0),) == Policies().decide(state, AdvanceClock(6.0))

    def test_the_clock_moving_backwards_is_rejected(self) -> None:
        state = fold([ClockAdvanced(6.0)])

        with pytest.raises(Rejected, match="the clock cannot move backwards, from t=6 to t=3"):
            Policies().decide(state, AdvanceClock(3.0))

    @pytest.mark.parametrize("to", [float("nan"), float("inf"), True])
    def test_the_clock_moves_only_to_a_finite_number(self, to: Any) -> None:
        with pytest.raises(Rejected, match="the clock moves to a finite number"):
            Policies().decide(INITIAL_STATE, AdvanceClock(to))

    def test_an_unknown_command_is_rejected(self) -> None:
        command: Any = object()

        with pytest.raises(Rejected, match="unknown command"):
            ALL.decide(INITIAL_STATE, command)

    def test_a_pass_writes_its_distilled_facts_to_the_store(self) -> None:
        state = _session(RecordEpisode("name is Dana")).state

        events = ALL.decide(state, Consolidate())

        assert [Consolidated, FactWritten] == [type(e) for e in events]

    def test_a_distilled_fact_supersedes_the_active_fact_on_its_key(self) -> None:
        session = _session(
            WriteFact("user.name", "user.name = Dan", 0.5), RecordEpisode("name is Dana")
        )

        assert [Consolidated, FactWritten, Superseded] == [
            type(e) for e in ALL.decide(session.state, Consolidate())
        ]

    def test_a_distilled_fact_can_evict_over_capacity(self) -> None:
        session = _session(
            WriteFact("a", "x", 0.1),
            WriteFact("b", "x", 0.5),
            RecordEpisode("name is Dana"),
        )

        events = ALL.decide(session.state, Consolidate())

        assert Evicted(1, 0.1) == events[-1]

    def test_distilled_facts_are_written_one_after_another(self) -> None:
        session = _session(RecordEpisode("name is Dana"), RecordEpisode("name is Dee"))

        events = ALL.decide(session.state, Consolidate())

        assert [Consolidated, FactWritten, FactWritten, Superseded] == [type(e) for e in events]


class TestSessionExecute:
    def test_execute_returns_the_events_it_appended(self) -> None:
        session = Session(ALL)

        events = session.execute(AddTurn("user", "hi"))

        assert list(events) == list(session.run.events)

    def test_the_state_is_the_fold_of_the_run(self) -> None:
        session = _session(AddTurn("user", "one two three four five"), AddTurn("tool", "six"))

        assert fold(session.run.events) == session.state

    def test_each_command_is_remembered_with_its_batch(self) -> None:
        commands: list[Command] = [AddTurn("user", "hi"), WriteFact("a", "x", 0.5), AdvanceClock(2)]

        assert commands == list(_session(*commands).run.commands)

    def test_a_compaction_is_in_the_batch_of_its_turn(self) -> None:
        session = _session(AddTurn("user", "a b c d"), AddTurn("user", "e f g h i"))

        assert [TurnAdded, CompactionTriggered] == [
            type(e) for e in session.run.events[slice(*session.run.batch(2))]
        ]

    def test_a_rejected_command_changes_nothing(self) -> None:
        session = _session(AddTurn("user", "hi"), AdvanceClock(5))
        state, events = session.state, list(session.run.events)

        with pytest.raises(Rejected):
            session.execute(AdvanceClock(1))

        assert (state, events, 2) == (
            session.state,
            list(session.run.events),
            len(session.run.commands),
        )

    def test_a_rejected_write_changes_nothing(self) -> None:
        session = _session(WriteFact("a", "x", 0.5))
        state = session.state

        with pytest.raises(Rejected):
            session.execute(WriteFact("b", "x", 1.5))

        assert (True, 1) == (session.state is state, len(session.run))

    def test_a_session_runs_on_with_snapshots_at_any_interval(self) -> None:
        commands = [AddTurn("user", f"turn {n} words") for n in range(6)]
        session = Session(ALL, snapshot_every=2)
        session.execute_all(commands)
        events = session.run.events

        assert [fold(events[:i]) for i in range(len(events) + 1)] == [
            session.run.state_at(i) for i in range(len(events) + 1)
        ]


class TestSessionLogging:
    def test_nothing_is_logged_at_the_default_level(self, default_level: None) -> None:
        with capture_logs() as logs:
            _session(AddTurn("user", "hi"), WriteFact("a", "x", 0.5))

        assert [] == logs

    def test_one_entry_per_event_at_debug(self, debug: None) -> None:
        with capture_logs() as logs:
            session = _session(AddTurn("user", "a b c d"), AddTurn("user", "e f g h i"))

        assert [type(e).__name__ for e in session.run.events] == [entry["event"] for entry in logs]

    def test_entries_are_at_debug_level(self, debug: None) -> None:
        with capture_logs() as logs:
            _session(WriteFact("a", "x", 0.5))

        assert ["debug"] == [entry["log_level"] for entry in logs]

    def test_entries_carry_the_1_based_position_and_the_step(self, debug: None) -> None:
        with capture_logs() as logs:
            _session(
                WriteFact("a", "x", 0.5), AddTurn("user", "a b c d"), AddTurn("user", "e f g h i")
            )

        assert [(1, 1), (2, 2), (3, 3), (4, 3)] == [(e["at"], e["step"]) for e in logs]

    def test_a_turn_entry_carries_its_tokens(self, debug: None) -> None:
        with capture_logs() as logs:
            _session(AddTurn("user", "one two three"))

        assert (1, 4) == (logs[0]["turn"], logs[0]["tokens"])

    def test_window_entries_carry_the_window_and_the_budget(self, debug: None) -> None:
        with capture_logs() as logs:
            _session(AddTurn("user", "a b c d"), AddTurn("user", "e f g h i"))

        assert [(0, 5, 10), (5, 11, 10), (11, 6, 10)] == [
            (e["window_before"], e["window_after"], e["budget"]) for e in logs
        ]

    def test_an_eviction_entry_carries_the_score(self, debug: None) -> None:
        with capture_logs() as logs:
            _session(WriteFact("a", "x", 0.5), WriteFact("b", "x", 0.5), WriteFact("c", "x", 0.1))

        assert ("Evicted", 3, 0.1) == (logs[-1]["event"], logs[-1]["id"], logs[-1]["score"])

    def test_a_write_entry_carries_the_importance_and_the_clock(self, debug: None) -> None:
        with capture_logs() as logs:
            _session(AdvanceClock(2.5), WriteFact("a", "x", 0.5))

        assert (0.5, 2.5) == (logs[-1]["importance"], logs[-1]["clock"])

    def test_positions_continue_across_commands(self, debug: None) -> None:
        session = _session(WriteFact("a", "x", 0.5), WriteFact("b", "x", 0.5))

        with capture_logs() as logs:
            session.execute(WriteFact("c", "x", 0.1))

        assert [3, 4] == [e["at"] for e in logs]

    def test_a_rejected_command_logs_nothing(self, debug: None) -> None:
        session = _session(AdvanceClock(5))

        with capture_logs() as logs, pytest.raises(Rejected):
            session.execute(AdvanceClock(1))

        assert [] == logs


class TestCommandsOfTheWrongType:
    @pytest.mark.parametrize(
        "command",
        [
            ReadFact(id=True),
            ReadFact(id="1"),  # type: ignore[arg-type]
            RecordEpisode(5),  # type: ignore[arg-type]
            AddTurn("user", 5),  # type: ignore[arg-type]
        ],
    )
    def test_are_rejected_and_leave_no_trace(self, command: Command) -> None:
        session = _session(WriteFact("k", "v", 0.5))
        before = (len(session.run), session.state)

        with pytest.raises(Rejected):
            session.execute(command)
        assert before == (len(session.run), session.state)


class TestSteps:
    def test_steps_count_the_commands(self) -> None:
        session = _session(WriteFact("k", "v", 0.5), AdvanceClock(1.0))

        assert 2 == session.run.steps


class TestWithSettings:
    def test_values_are_read_as_toml(self) -> None:
        changed = ALL.with_settings(["compaction.budget=60", "forgetting.half_life=2.5"])

        assert (60, 2.5) == (
            changed.params()["compaction"]["budget"],
            changed.params()["forgetting"]["half_life"],
        )

    def test_the_original_policies_do_not_change(self) -> None:
        ALL.with_settings(["compaction.budget=60"])

        assert COMPACTION == ALL.compaction

    def test_no_settings_gives_equal_policies(self) -> None:
        assert ALL.params() == ALL.with_settings([]).params()

    @pytest.mark.parametrize(
        ("setting", "fragment"),
        [
            ("compaction", "AXIS.PARAM=VALUE"),
            ("compaction.=1", "AXIS.PARAM=VALUE"),
            ("store.capacity=3", "no axis 'store'"),
            ("compaction.policy=nope", "policy must be one of"),
        ],
    )
    def test_a_bad_setting_says_what_is_wrong(self, setting: str, fragment: str) -> None:
        with pytest.raises(BadInput, match=fragment):
            ALL.with_settings([setting])

    def test_another_policy_keeps_the_shared_parameters_and_defaults_the_rest(self) -> None:
        tiered = Policies(TieredCompaction(40, 2, Cl100kBase()))

        changed = tiered.with_settings(["compaction.policy=rolling-summary"])

        assert RollingSummary(40, tokenizer=Cl100kBase()) == changed.compaction

    def test_settings_after_the_policy_apply_to_the_new_one(self) -> None:
        changed = ALL.with_settings(["compaction.policy=clear-tool-results", "compaction.keep=1"])

        assert ClearToolResults(10, 1) == changed.compaction

    def test_naming_the_same_policy_keeps_its_parameters(self) -> None:
        changed = ALL.with_settings(["compaction.policy=tiered"])

        assert ALL.params() == changed.params()

    def test_a_parameter_the_new_policy_lacks_is_refused(self) -> None:
        with pytest.raises(BadInput, match=r"unknown parameter hot_n"):
            ALL.with_settings(["compaction.policy=none", "compaction.hot_n=2"])


def _refund() -> Session:
    scenario = load_scenario("refund-desk")
    session = Session(scenario.policies)
    session.execute_all(scenario.steps)
    return session


class TestFork:
    def test_keeps_the_events_before_the_point_verbatim(self) -> None:
        original = _refund()
        forked = original.fork(5, ["compaction.budget=60"])

        assert original.run.events[:5] == forked.run.events[:5]

    def test_re_decides_the_rest_under_the_changed_policy(self) -> None:
        forked = _refund().fork(5, ["compaction.budget=60"])
        budgets = [e.budget for e in forked.run.events[5:] if isinstance(e, CompactionTriggered)]

        assert [60] == budgets

    def test_records_the_same_commands(self) -> None:
        original = _refund()

        assert original.run.commands == original.fork(5, ["compaction.budget=60"]).run.commands

    def test_without_settings_reproduces_the_run(self) -> None:
        original = _refund()

        assert original.run.events == original.fork(5, []).run.events

    def test_leaves_the_original_unchanged(self) -> None:
        original = _refund()
        events = original.run.events
        original.fork(5, ["compaction.budget=60"])

        assert (events, 40) == (original.run.events, original.policies.compaction.budget)  # type: ignore[union-attr]

    def test_the_policies_in_force_change_at_the_fork(self) -> None:
        forked = _refund().fork(5, ["compaction.budget=60"])
        budgets = [forked.policies_at(p).compaction.budget for p in (0, 5, 6, 12)]  # type: ignore[union-attr]

        assert [40, 40, 60, 60] == budgets

    @pytest.mark.parametrize("at", [4, 7])
    def test_a_point_inside_a_command_is_refused(self, at: int) -> None:
        with pytest.raises(BadInput, match=f"event {at} falls inside a command"):
            _refund().fork(at, [])

    def test_a_fork_at_the_start_re_decides_everything(self) -> None:
        forked = _refund().fork(0, ["compaction.hot_n=1"])

        assert [Epoch(0, forked.policies)] == list(forked.epochs[-1:])
        assert 1 == forked.policies_at(1).compaction.hot_n  # type: ignore[union-attr]


class TestForkOfAFork:
    def test_a_second_fork_at_the_same_point_keeps_the_first_forks_settings(self) -> None:
        first = _refund().fork(5, ["compaction.budget=60"])
        second = first.fork(5, ["compaction.hot_n=3"])
        compaction = second.policies.compaction

        assert (60, 3) == (compaction.budget, compaction.hot_n)  # type: ignore[union-attr]
