"""memtape.projections.timeline: one row per event, with the meter after it."""

import pytest

from memtape.core.codec import event_data
from memtape.core.commands import AddTurn, Query, WriteFact
from memtape.core.events import BlockEdited, CompactionTriggered, TurnAdded, WarmItem
from memtape.core.run import Run
from memtape.policies.session import Policies, Session
from memtape.policies.store.forgetting import ImportanceRecencyAccess
from memtape.policies.window.tool_clearing import ClearToolResults
from memtape.projections.meter import Meter
from memtape.projections.timeline import TimelineRow, summarize, timeline
from memtape.reducers import evolve, fold
from memtape.scenarios import SHIPPED, load_scenario
from tests.blocked import blocked_session


def _session(name: str) -> Session:
    scenario = load_scenario(name)
    session = Session(scenario.policies)
    session.execute_all(scenario.steps)
    return session


@pytest.fixture(scope="module")
def sessions() -> dict[str, Session]:
    return {name: _session(name) for name in SHIPPED}


def _rows(sessions: dict[str, Session], name: str) -> list[TimelineRow]:
    return list(timeline(sessions[name].run, sessions[name].policies))


def _summaries(sessions: dict[str, Session], name: str) -> list[str]:
    return [row.summary for row in _rows(sessions, name)]


class TestRows:
    @pytest.mark.parametrize("name", SHIPPED)
    def test_one_row_per_event_in_order(self, sessions: dict[str, Session], name: str) -> None:
        assert list(sessions[name].run.events) == [row.event for row in _rows(sessions, name)]

    @pytest.mark.parametrize("name", SHIPPED)
    def test_positions_are_1_based(self, sessions: dict[str, Session], name: str) -> None:
        run = sessions[name].run

        assert list(range(1, len(run) + 1)) == [row.at for row in _rows(sessions, name)]

    @pytest.mark.parametrize("name", SHIPPED)
    def test_each_row_names_the_step_of_its_event(
        self, sessions: dict[str, Session], name: str
    ) -> None:
        run = sessions[name].run

        assert [run.step_of(at) for at in range(1, len(run) + 1)] == [
            row.step for row in _rows(sessions, name)
        ]

    def test_the_meter_is_the_window_right_after_the_event(
        self, sessions: dict[str, Session]
    ) -> None:
        run = sessions["refund-desk"].run

        assert [Meter(run.state_at(at).window.tokens, 40) for at in range(1, 16)] == [
            row.meter for row in _rows(sessions, "refund-desk")
        ]

    def test_the_meter_is_over_as_turns_4_6_8_9_10_arrive(
        self, sessions: dict[str, Session]
    ) -> None:
        rows = _rows(sessions, "refund-desk")

        assert [4, 7, 10, 12, 14] == [row.at for row in rows if row.meter and row.meter.over]

    @pytest.mark.parametrize("name", ["dana-facts", "sleep-pass"])
    def test_no_meter_without_a_compaction_policy(
        self, sessions: dict[str, Session], name: str
    ) -> None:
        assert {None} == {row.meter for row in _rows(sessions, name)}

    def test_an_empty_run_has_no_rows(self) -> None:
        assert [] == list(timeline(Run(fold), Policies()))


class TestRowData:
    def test_a_turn_row(self, sessions: dict[str, Session]) -> None:
        row = _rows(sessions, "refund-desk")[3]

        assert {
            "at": 4,
            "step": 4,
            "type": "TurnAdded",
            "event": event_data(row.event),
            "meter": {"tokens": 41, "budget": 40, "over": True},
            "summary": "turn 4 (user, chatter) adds 12 tokens",
        } == row.data()

    def test_a_row_without_a_meter(self, sessions: dict[str, Session]) -> None:
        row = _rows(sessions, "dana-facts")[4]

        assert ("ClockAdvanced", {"to": 6.0}, None) == (
            row.data()["type"],
            row.data()["event"],
            row.data()["meter"],
        )


class TestQuerySummary:
    def test_a_query_names_its_text_expectation_and_results_best_first(self) -> None:
        session = Session(Policies(forgetting=ImportanceRecencyAccess(4, 4.0, 0.1)))
        session.execute_all([WriteFact("a", "x", 0.2), WriteFact("b", "y", 0.9)])
        session.execute(Query("who", "b", 2))

        row = list(timeline(session.run, session.policies))[-1]

        assert "query 'who' expecting 'b', top 2: 2 ('b', 0.9000), 1 ('a', 0.2000)" == row.summary

    def test_a_query_on_an_empty_store_says_so(self) -> None:
        session = Session(Policies(forgetting=ImportanceRecencyAccess(4, 4.0, 0.1)))
        session.execute(Query(k=1))

        assert (
            "query, top 1: nothing active"
            == next(iter(timeline(session.run, session.policies))).summary
        )


class TestSummaries:
    def test_turns_say_their_role_salience_and_tokens(self, sessions: dict[str, Session]) -> None:
        summaries = _summaries(sessions, "refund-desk")

        assert (
            "turn 1 (user, chatter) adds 11 tokens",
            "turn 2 (tool, salient) adds 9 tokens",
        ) == (summaries[0], summaries[1])

    def test_the_first_compaction(self, sessions: dict[str, Session]) -> None:
        assert (
            "compaction over budget 40: hot keeps 3, 4; warm gets 2; dropped 1; pushed cold none"
            == _summaries(sessions, "refund-desk")[4]
        )

    def test_a_compaction_that_folds_nothing(self, sessions: dict[str, Session]) -> None:
        assert (
            "compaction over budget 40: hot keeps 5, 6; warm gets none; dropped 3, 4; "
            "pushed cold none"
        ) == _summaries(sessions, "refund-desk")[7]

    def test_the_compaction_that_pushes_cold(self, sessions: dict[str, Session]) -> None:
        assert (
            "compaction over budget 40: hot keeps 9, 10; warm gets 8; dropped none; "
            "pushed cold 2, 5"
        ) == _summaries(sessions, "refund-desk")[14]

    def test_a_compaction_that_clears_in_place_says_which_turns(self) -> None:
        """A tool result answering a call is cleared in place: it stays HOT, reading the
        placeholder, and the row names it."""
        session = Session(Policies(compaction=ClearToolResults(12, keep=0)))
        session.execute(AddTurn("assistant", "look it up", calls=("c1",)))
        session.execute(AddTurn("tool", "a long result of many many words", answers=("c1",)))
        session.execute(AddTurn("user", "and so on and on"))
        rows = [row.summary for row in timeline(session.run, session.policies)]
        compaction = next(row for row in rows if row.startswith("compaction"))
        assert compaction.endswith("; cleared in place 2")
        assert "warm gets none" in compaction

    def test_a_write(self, sessions: dict[str, Session]) -> None:
        assert "fact 1 written on 'name', importance 0.9" == _summaries(sessions, "dana-facts")[0]

    def test_the_clock(self, sessions: dict[str, Session]) -> None:
        assert "clock moves from t=0 to t=6" == _summaries(sessions, "dana-facts")[4]

    def test_reads_count_up(self, sessions: dict[str, Session]) -> None:
        summaries = _summaries(sessions, "dana-facts")

        assert (
            "fact 1 ('name') read, 1 read so far",
            "fact 1 ('name') read, 2 reads so far",
        ) == (summaries[5], summaries[6])

    def test_the_supersession(self, sessions: dict[str, Session]) -> None:
        assert (
            "fact 2 ('contact') retired: superseded by 5" == _summaries(sessions, "dana-facts")[8]
        )

    def test_the_eviction(self, sessions: dict[str, Session]) -> None:
        assert (
            "fact 4 ('chitchat') evicted over capacity, score 0.0707"
            == _summaries(sessions, "dana-facts")[10]
        )

    def test_an_episode(self, sessions: dict[str, Session]) -> None:
        assert (
            "episode 3 recorded: The user accepted the $180.00 refund on the $200 order."
            == _summaries(sessions, "sleep-pass")[2]
        )

    def test_the_consolidation(self, sessions: dict[str, Session]) -> None:
        assert (
            "consolidation consumed 4 episodes: 1 semantic fact, 1 procedural rule"
            == _summaries(sessions, "sleep-pass")[4]
        )

    def test_the_distilled_write(self, sessions: dict[str, Session]) -> None:
        assert (
            "fact 1 written on 'user.name', importance 0.9" == _summaries(sessions, "sleep-pass")[5]
        )

    def test_summarize_reads_the_states_around_the_event(
        self, sessions: dict[str, Session]
    ) -> None:
        run = sessions["dana-facts"].run

        assert "clock moves from t=0 to t=6" == summarize(
            run.events[4], run.state_at(4), run.state_at(5)
        )


def test_a_compaction_that_clears_in_place_says_which_turns() -> None:
    before = fold(
        [
            TurnAdded(1, "assistant", "x", 2, False, ("a",)),
            TurnAdded(2, "tool", "y y y y", 5, True, (), ("a",)),
        ]
    )
    event = CompactionTriggered(9, (), (), 0, "", 0, cleared=(WarmItem(2, "[x]", 1),))
    assert (
        "compaction over budget 9: hot keeps 1, 2; warm gets none; dropped none; "
        "pushed cold none; cleared in place 2"
    ) == summarize(event, before, evolve(before, event))


def test_a_turn_of_one_token_says_token() -> None:
    event = TurnAdded(1, "user", "hi", 1, False)
    before = fold([])

    assert "turn 1 (user, chatter) adds 1 token" == summarize(event, before, evolve(before, event))


class TestBlocks:
    def test_each_block_edit_says_what_it_did_its_size_and_tokens(self) -> None:
        session = blocked_session()
        rows = list(timeline(session.run, session.policies_at))
        expected = [
            "block 'human' created, version 1: 11/60 characters, 2 tokens",
            "block 'human' appended to, version 2: 28/60 characters, 5 tokens",
            "block 'human' found and replaced in, version 3: 27/60 characters, 5 tokens",
        ]
        assert expected == [row.summary for row in rows if isinstance(row.event, BlockEdited)]
