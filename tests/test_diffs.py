"""memtape.projections.diffs: the diff of two points as JSON-ready data and as text."""

import json
from typing import Any

import attrs
import pytest

from memtape.core.commands import AddTurn, AdvanceClock, Query, WriteFact
from memtape.core.diff import FactChange, StateDiff, diff_states
from memtape.core.errors import BadInput
from memtape.core.events import EpisodeRecorded, ProceduralRule, SemanticFact
from memtape.core.state import Fact
from memtape.policies.session import Policies, Session
from memtape.policies.store.forgetting import ImportanceRecencyAccess
from memtape.policies.window.tiered import TieredCompaction
from memtape.projections.diffs import (
    StepDiff,
    diff_data,
    fact_change_data,
    render_diff,
    step_diff,
    step_diff_data,
)
from memtape.scenarios import load_scenario
from tests.blocked import blocked_session

ESC = "\033["
RED = "\033[31m"
GREEN = "\033[32m"
RESET = "\033[0m"
NO_CHANGE = StateDiff((0.0, 0.0), (0, 0), (), (), (), (), (), ())
RULE = "returns after the 30-day window: apply a 10% restocking fee"
FACT_FIELDS = [
    "id",
    "key",
    "text",
    "importance",
    "reads",
    "written_at",
    "last_read_at",
    "status",
    "ended_at",
    "superseded_by",
    "evicted_score",
]


def _session(name: str) -> Session:
    scenario = load_scenario(name)
    session = Session(scenario.policies)
    session.execute_all(scenario.steps)
    return session


@pytest.fixture(scope="module")
def refund() -> Session:
    return _session("refund-desk")


@pytest.fixture(scope="module")
def refund_60() -> Session:
    """Refund-desk's inputs under a budget of 60 instead of 40."""
    session = Session(Policies(compaction=TieredCompaction(budget=60, hot_n=2)))
    session.execute_all(load_scenario("refund-desk").steps)
    return session


@pytest.fixture(scope="module")
def dana() -> Session:
    return _session("dana-facts")


@pytest.fixture(scope="module")
def sleep() -> Session:
    return _session("sleep-pass")


def _budget(session: Session) -> int | None:
    compaction = session.policies.compaction
    return None if compaction is None else compaction.budget


def _data(session: Session, before: int, after: int) -> dict[str, Any]:
    budget = _budget(session)
    return diff_data(
        session.run.diff(before, after), before=before, after=after, budgets=(budget, budget)
    )


def _lines(session: Session, before: int, after: int, color: bool = False) -> list[str]:
    return list(render_diff(_data(session, before, after), color))


def _step_data(a: Session, b: Session, step: int) -> dict[str, Any]:
    return step_diff_data(step_diff(a.run, b.run, step), (_budget(a), _budget(b)))


class TestDiffDataFields:
    def test_top_level_field_names(self, refund: Session) -> None:
        expected = [
            "step",
            "from",
            "to",
            "clock",
            "meter",
            "turns",
            "facts",
            "episodes",
            "semantic",
            "procedural",
        ]

        assert expected == list(_data(refund, 3, 5))

    def test_clock_meter_and_episodes_field_names(self, refund: Session) -> None:
        data = _data(refund, 3, 5)

        assert (
            ["before", "after"],
            ["before", "after"],
            ["tokens", "budget", "over"],
            ["recorded", "consumed"],
        ) == (
            list(data["clock"]),
            list(data["meter"]),
            list(data["meter"]["before"]),
            list(data["episodes"]),
        )

    def test_turn_field_names(self, refund: Session) -> None:
        assert ["turn", "before", "after"] == list(_data(refund, 3, 5)["turns"][0])

    def test_fact_field_names(self, dana: Session) -> None:
        change = _data(dana, 7, 11)["facts"][0]

        assert (["id", "key", "change", "before", "after"], FACT_FIELDS, FACT_FIELDS) == (
            list(change),
            list(change["before"]),
            list(change["after"]),
        )

    @pytest.mark.parametrize(
        ("name", "before", "after"),
        [
            ("refund-desk", 3, 5),
            ("refund-desk", 15, 0),
            ("dana-facts", 0, 11),
            ("sleep-pass", 4, 6),
        ],
    )
    def test_is_json_ready(self, name: str, before: int, after: int) -> None:
        data = _data(_session(name), before, after)

        assert data == json.loads(json.dumps(data))

    def test_from_and_to_are_the_positions_given(self, refund: Session) -> None:
        data = _data(refund, 13, 15)

        assert (None, 13, 15) == (data["step"], data["from"], data["to"])


class TestDiffDataMeter:
    def test_no_budget_on_either_side_means_no_meter(self, dana: Session) -> None:
        assert None is _data(dana, 4, 5)["meter"]

    def test_a_side_without_a_budget_has_no_meter(self) -> None:
        diff = attrs.evolve(NO_CHANGE, tokens=(12, 30))

        expected = {"before": None, "after": {"tokens": 30, "budget": 40, "over": False}}

        assert expected == diff_data(diff, before=0, after=1, budgets=(None, 40))["meter"]

    def test_first_compaction_keeps_29_tokens(self, refund: Session) -> None:
        meter = {"tokens": 29, "budget": 40, "over": False}

        assert {"before": meter, "after": meter} == _data(refund, 3, 5)["meter"]

    def test_over_budget_before_the_compaction(self, refund: Session) -> None:
        expected = {
            "before": {"tokens": 41, "budget": 40, "over": True},
            "after": {"tokens": 29, "budget": 40, "over": False},
        }

        assert expected == _data(refund, 4, 5)["meter"]

    def test_last_compaction_brings_37_to_32(self, refund: Session) -> None:
        meter = _data(refund, 13, 15)["meter"]

        assert (37, 32) == (meter["before"]["tokens"], meter["after"]["tokens"])


class TestDiffDataTurns:
    def test_first_compaction_drops_1_folds_2_and_turn_4_arrives(self, refund: Session) -> None:
        expected = [
            {"turn": 1, "before": "hot", "after": "dropped"},
            {"turn": 2, "before": "hot", "after": "warm"},
            {"turn": 4, "before": None, "after": "hot"},
        ]

        assert expected == _data(refund, 3, 5)["turns"]

    def test_last_compaction_pushes_2_and_5_cold_and_folds_8(self, refund: Session) -> None:
        expected = [
            {"turn": 2, "before": "warm", "after": "cold"},
            {"turn": 5, "before": "warm", "after": "cold"},
            {"turn": 8, "before": "hot", "after": "warm"},
            {"turn": 10, "before": None, "after": "hot"},
        ]

        assert expected == _data(refund, 13, 15)["turns"]

    def test_backwards_a_turn_not_arrived_yet_is_null(self, refund: Session) -> None:
        assert {"turn": 10, "before": "hot", "after": None} == _data(refund, 15, 13)["turns"][-1]


class TestDiffDataFacts:
    def test_the_supersession_retires_contact_with_its_fields(self, dana: Session) -> None:
        contact = {
            "id": 2,
            "key": "contact",
            "text": "Dana prefers to be contacted by email.",
            "importance": 0.6,
            "reads": 0,
            "written_at": 0.0,
            "last_read_at": None,
            "status": "active",
            "ended_at": None,
            "superseded_by": None,
            "evicted_score": None,
        }
        expected = {
            "id": 2,
            "key": "contact",
            "change": "retired",
            "before": contact,
            "after": {**contact, "status": "retired", "ended_at": 6.0, "superseded_by": 5},
        }

        assert expected == _data(dana, 7, 9)["facts"][0]

    def test_the_supersession_adds_the_new_contact(self, dana: Session) -> None:
        change = _data(dana, 7, 9)["facts"][1]

        assert (5, "contact", "added", None, "Dana prefers to be contacted by phone.", 6.0) == (
            change["id"],
            change["key"],
            change["change"],
            change["before"],
            change["after"]["text"],
            change["after"]["written_at"],
        )

    def test_the_eviction_keeps_the_exact_score(self, dana: Session) -> None:
        change = _data(dana, 9, 11)["facts"][0]

        assert (4, "chitchat", "evicted", "active", "evicted", 0.2 * 0.5 ** (6 / 4)) == (
            change["id"],
            change["key"],
            change["change"],
            change["before"]["status"],
            change["after"]["status"],
            change["after"]["evicted_score"],
        )

    def test_the_eviction_score_has_full_precision(self, dana: Session) -> None:
        assert 0.07071067811865477 == _data(dana, 9, 11)["facts"][0]["after"]["evicted_score"]

    def test_reads_show_the_count_and_the_last_read(self, dana: Session) -> None:
        change = _data(dana, 5, 7)["facts"][0]

        assert ("read", 0, 2, None, 6.0) == (
            change["change"],
            change["before"]["reads"],
            change["after"]["reads"],
            change["before"]["last_read_at"],
            change["after"]["last_read_at"],
        )

    def test_every_change_from_the_start(self, dana: Session) -> None:
        kinds = [(c["id"], c["change"]) for c in _data(dana, 0, 11)["facts"]]

        expected = [
            (1, "added"),
            (2, "retired"),
            (3, "added"),
            (4, "evicted"),
            (5, "added"),
            (6, "added"),
        ]

        assert expected == kinds

    def test_a_removed_fact_takes_its_key_from_before(self) -> None:
        fact = Fact(7, "promo", "a promo", 0.15, 6.0)

        assert "promo" == fact_change_data(FactChange(7, "removed", fact, None))["key"]


class TestDiffDataMemory:
    def test_consolidation_consumes_every_episode(self, sleep: Session) -> None:
        assert [1, 2, 3, 4] == [e["id"] for e in _data(sleep, 4, 6)["episodes"]["consumed"]]

    def test_consolidation_records_none(self, sleep: Session) -> None:
        assert [] == _data(sleep, 4, 6)["episodes"]["recorded"]

    def test_an_episode_recorded(self, sleep: Session) -> None:
        expected = [
            {"id": 4, "text": "The user confirmed their name is Dana."},
        ]

        assert expected == _data(sleep, 3, 4)["episodes"]["recorded"]

    def test_consolidation_distills_a_fact_and_a_rule(self, sleep: Session) -> None:
        data = _data(sleep, 4, 6)

        assert (
            [{"key": "user.name", "text": "user.name = Dana", "importance": 0.9, "episode": 4}],
            [{"text": RULE, "episode": 2}],
        ) == (data["semantic"], data["procedural"])

    def test_the_distilled_fact_enters_the_store(self, sleep: Session) -> None:
        change = _data(sleep, 4, 6)["facts"][0]

        assert (1, "user.name", "added") == (change["id"], change["key"], change["change"])


class TestRenderDiff:
    def test_first_compaction(self, refund: Session) -> None:
        expected = [
            "diff event 3 → event 5",
            "window 29/40 → 29/40",
            "turn 1: HOT → dropped",
            "turn 2: HOT → WARM",
            "turn 4: new → HOT",
        ]

        assert expected == _lines(refund, 3, 5)

    def test_last_compaction(self, refund: Session) -> None:
        expected = [
            "diff event 13 → event 15",
            "window 37/40 → 32/40",
            "turn 2: WARM → COLD",
            "turn 5: WARM → COLD",
            "turn 8: HOT → WARM",
            "turn 10: new → HOT",
        ]

        assert expected == _lines(refund, 13, 15)

    def test_over_budget_is_marked(self, refund: Session) -> None:
        assert "window 41/40 OVER → 29/40" == _lines(refund, 4, 5)[1]

    def test_backwards_a_turn_not_arrived_yet(self, refund: Session) -> None:
        assert "turn 10: HOT → not arrived" == _lines(refund, 15, 13)[-1]

    def test_a_query_shows_as_a_read_of_each_fact_it_returned(self) -> None:
        session = Session(Policies(forgetting=ImportanceRecencyAccess(4, 4.0, 0.1)))
        session.execute_all(
            [WriteFact("a", "x", 0.2), WriteFact("b", "y", 0.9), AdvanceClock(2.0), Query(k=1)]
        )

        assert [
            "diff event 3 → event 4",
            "fact 2 'b' read: reads 0 → 1, last_read_at none → 2",
        ] == _lines(session, 3, 4)

    def test_dana_from_the_clock_to_the_end(self, dana: Session) -> None:
        expected = [
            "diff event 4 → event 11",
            "clock t=0 → t=6",
            "fact 1 'name' read: reads 0 → 2, last_read_at none → 6",
            "fact 2 'contact' retired: superseded by 5 at t=6",
            "fact 4 'chitchat' evicted (score 0.0707) at t=6",
            "fact 5 'contact' added: Dana prefers to be contacted by phone.  (importance 0.6)",
            "fact 6 'promo' added: Dana once clicked a promotional email.  (importance 0.15)",
        ]

        assert expected == _lines(dana, 4, 11)

    def test_dana_backwards_restores_and_removes(self, dana: Session) -> None:
        expected = [
            "fact 2 'contact' restored: active again at event 7",
            "fact 5 'contact' removed: not in the store at event 7",
        ]

        assert expected == _lines(dana, 9, 7)[1:]

    def test_the_consolidation(self, sleep: Session) -> None:
        expected = [
            "diff event 4 → event 6",
            "fact 1 'user.name' added: user.name = Dana  (importance 0.9)",
            "episode 1 consumed: The user asked whether a return after the window is allowed.",
            "episode 2 consumed: The tool said that after the window a 10% restocking fee applies.",
            "episode 3 consumed: The user accepted the $180.00 refund on the $200 order.",
            "episode 4 consumed: The user confirmed their name is Dana.",
            "semantic distilled: user.name = Dana  (key user.name, importance 0.9, from episode 4)",
            f"procedural distilled: {RULE}  (from episode 2)",
        ]

        assert expected == _lines(sleep, 4, 6)

    def test_the_consolidation_backwards_is_undone(self, sleep: Session) -> None:
        expected = [
            "semantic undone: user.name = Dana  (key user.name, importance 0.9, from episode 4)",
            f"procedural undone: {RULE}  (from episode 2)",
        ]

        assert expected == _lines(sleep, 6, 4)[-2:]

    def test_an_episode_recorded(self, sleep: Session) -> None:
        expected = (
            "episode 1 recorded: The user asked whether a return after the window is allowed."
        )

        assert ["diff event 0 → event 1", expected] == _lines(sleep, 0, 1)

    @pytest.mark.parametrize("at", [0, 7, 15])
    def test_a_point_against_itself_is_no_change(self, refund: Session, at: int) -> None:
        assert [f"diff event {at} → event {at}", "no change"] == _lines(refund, at, at)

    def test_no_change_without_a_meter(self) -> None:
        data = diff_data(NO_CHANGE, before=2, after=2)

        assert ["diff event 2 → event 2", "no change"] == list(render_diff(data))

    def test_unknown_positions_are_named_as_points(self) -> None:
        data = diff_data(NO_CHANGE, before=None, after=None)

        assert "diff the first point → the second point" == next(render_diff(data))

    def test_over_budget_is_red_and_under_green_with_color(self, refund: Session) -> None:
        expected = f"window {RED}41/40 OVER{RESET} → {GREEN}29/40{RESET}"

        assert expected == _lines(refund, 4, 5, color=True)[1]

    def test_without_color_there_is_no_escape(self, refund: Session) -> None:
        assert [] == [line for line in _lines(refund, 3, 15) if ESC in line]

    def test_the_clock_alone_is_a_change(self, dana: Session) -> None:
        assert ["diff event 4 → event 5", "clock t=0 → t=6"] == _lines(dana, 4, 5)

    @pytest.mark.parametrize(
        ("field", "value", "line"),
        [
            ("episodes_recorded", (EpisodeRecorded(3, "new"),), "episode 3 recorded: new"),
            ("episodes_consumed", (EpisodeRecorded(3, "gone"),), "episode 3 consumed: gone"),
            (
                "semantic",
                (SemanticFact("k", "k = v", 0.5, 3),),
                "semantic distilled: k = v  (key k, importance 0.5, from episode 3)",
            ),
            (
                "procedural",
                (ProceduralRule("a rule", 3),),
                "procedural distilled: a rule  (from episode 3)",
            ),
        ],
    )
    def test_memory_alone_is_a_change(self, field: str, value: Any, line: str) -> None:
        diff = attrs.evolve(NO_CHANGE, **{field: value})

        expected = ["diff event 5 → event 6", line]

        assert expected == list(render_diff(diff_data(diff, before=5, after=6)))


class TestStepDiffBounds:
    @pytest.mark.parametrize("step", [0, -1, 11])
    def test_a_step_out_of_range_is_an_error(
        self, refund: Session, refund_60: Session, step: int
    ) -> None:
        message = rf"step {step} is out of range 1\.\.10 \(run A has 10 steps, run B has 10\)"

        with pytest.raises(BadInput, match=message):
            step_diff(refund.run, refund_60.run, step)

    def test_the_range_ends_at_the_shorter_run(self, refund: Session) -> None:
        short = Session(refund.policies)
        short.execute_all(load_scenario("refund-desk").steps[:3])

        with pytest.raises(BadInput, match=r"1\.\.3 \(run A has 10 steps, run B has 3\)"):
            step_diff(refund.run, short.run, 4)

    @pytest.mark.parametrize("step", [1, 10])
    def test_the_first_and_last_steps_are_in_range(
        self, refund: Session, refund_60: Session, step: int
    ) -> None:
        assert step == step_diff(refund.run, refund_60.run, step).step


class TestStepDiffDivergence:
    @staticmethod
    def _diverging(at: int) -> Session:
        steps = list(load_scenario("refund-desk").steps)
        steps[at - 1] = AddTurn("user", "Something else entirely.")
        session = Session(Policies(compaction=TieredCompaction(budget=60, hot_n=2)))
        session.execute_all(steps)
        return session

    def test_commands_that_differ_are_an_error_naming_the_step(self, refund: Session) -> None:
        with pytest.raises(BadInput, match="the runs diverge at step 3: A recorded AddTurn"):
            step_diff(refund.run, self._diverging(3).run, 4)

    def test_the_error_names_the_first_step_that_differs(self, refund: Session) -> None:
        steps = list(load_scenario("refund-desk").steps)
        steps[1] = steps[4] = AddTurn("user", "Something else entirely.")
        other = Session(refund.policies)
        other.execute_all(steps)

        with pytest.raises(BadInput, match="diverge at step 2:"):
            step_diff(refund.run, other.run, 6)

    def test_the_diverging_step_itself_is_an_error(self, refund: Session) -> None:
        with pytest.raises(BadInput, match="diverge at step 3"):
            step_diff(refund.run, self._diverging(3).run, 3)

    def test_commands_that_differ_after_the_step_do_not_matter(self, refund: Session) -> None:
        assert 2 == step_diff(refund.run, self._diverging(3).run, 2).step


class TestStepDiff:
    def test_positions_are_after_the_step_in_each_run(
        self, refund: Session, refund_60: Session
    ) -> None:
        found = step_diff(refund.run, refund_60.run, 4)

        assert (4, 5, 4) == (found.step, found.before, found.after)

    def test_diff_is_of_the_states_at_those_positions(
        self, refund: Session, refund_60: Session
    ) -> None:
        expected = diff_states(refund.run.state_at(5), refund_60.run.state_at(4))

        assert expected == step_diff(refund.run, refund_60.run, 4).diff

    def test_turn_1_dropped_in_a_is_hot_in_b(self, refund: Session, refund_60: Session) -> None:
        expected = [
            {"turn": 1, "before": "dropped", "after": "hot"},
            {"turn": 2, "before": "warm", "after": "hot"},
        ]

        assert expected == _step_data(refund, refund_60, 4)["turns"]

    def test_meters_are_29_of_40_and_41_of_60(self, refund: Session, refund_60: Session) -> None:
        expected = {
            "before": {"tokens": 29, "budget": 40, "over": False},
            "after": {"tokens": 41, "budget": 60, "over": False},
        }

        assert expected == _step_data(refund, refund_60, 4)["meter"]

    def test_data_names_the_step_and_both_positions(
        self, refund: Session, refund_60: Session
    ) -> None:
        data = _step_data(refund, refund_60, 4)

        assert (4, 5, 4) == (data["step"], data["from"], data["to"])

    def test_text(self, refund: Session, refund_60: Session) -> None:
        expected = [
            "diff after step 4: A (event 5) → B (event 4)",
            "window 29/40 → 41/60",
            "turn 1: dropped → HOT",
            "turn 2: WARM → HOT",
        ]

        assert expected == list(render_diff(_step_data(refund, refund_60, 4)))

    def test_before_any_compaction_the_runs_agree(
        self, refund: Session, refund_60: Session
    ) -> None:
        data = _step_data(refund, refund_60, 3)

        assert ([], "window 29/40 → 29/60") == (data["turns"], list(render_diff(data))[1])

    def test_a_run_against_itself_is_no_change(self, refund: Session) -> None:
        data = _step_data(refund, refund, 6)

        assert ["diff after step 6: A (event 8) → B (event 8)", "no change"] == list(
            render_diff(data)
        )

    def test_is_json_ready(self, refund: Session, refund_60: Session) -> None:
        data = _step_data(refund, refund_60, 10)

        assert data == json.loads(json.dumps(data))

    def test_facts_distilled_on_one_side_only(self, sleep: Session) -> None:
        # A holds the distilled rule, B does not; the diff cannot say which.
        data = step_diff_data(StepDiff(5, 6, 4, sleep.run.diff(6, 4)))

        assert (
            f"procedural (one side only): {RULE}  (from episode 2)" == list(render_diff(data))[-1]
        )


class TestExpiredFact:
    def test_the_diff_names_the_expiry_and_its_reason(self) -> None:
        session = Session(Policies(forgetting=ImportanceRecencyAccess(4, 4.0, 0.1)))
        session.execute(WriteFact("promo", "sale", 0.3, expires_at=5))
        session.execute(AdvanceClock(7))
        lines = list(render_diff(diff_data(session.run.diff(1, 3), before=1, after=3)))
        assert "fact 1 'promo' expired at t=7: its own expires_at, due at t=5" in lines


class TestBlocks:
    def test_a_block_edited_between_the_points_is_listed_at_both(self) -> None:
        session = blocked_session()
        (change,) = _data(session, 2, 4)["blocks"]
        assert (1, 3, "Name: Dana.\nLives in Porto.") == (
            change["before"]["version"],
            change["after"]["version"],
            change["after"]["value"],
        )

    def test_a_block_not_created_yet_is_none_on_that_side(self) -> None:
        (change,) = _data(blocked_session(), 0, 1)["blocks"]
        assert (None, 1) == (change["before"], change["after"]["version"])

    def test_no_block_changed_means_no_blocks_key(self) -> None:
        assert "blocks" not in _data(blocked_session(), 4, 5)

    def test_the_text_says_the_versions_and_what_it_holds(self) -> None:
        expected = (
            "block 'human': version 1 → version 3: Name: Dana.\\nLives in Porto.  "
            "(27/60 characters, 5 tokens)"
        )
        assert expected in _lines(blocked_session(), 2, 4)

    def test_a_diff_of_only_a_block_edit_is_not_empty(self) -> None:
        session = blocked_session()
        assert not diff_states(session.run.state_at(3), session.run.state_at(4)).is_empty()
