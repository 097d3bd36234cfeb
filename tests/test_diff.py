"""memtape.core.diff and Run.diff: what changed between two points of a run."""

from typing import Any

import attrs
import pytest

from memtape.core.diff import FactChange, StateDiff, TurnMove, diff_states
from memtape.core.errors import BadInput
from memtape.core.events import EpisodeRecorded, ProceduralRule, SemanticFact
from memtape.core.run import Run
from memtape.core.state import INITIAL_STATE, Tier
from memtape.policies.session import Session
from memtape.scenarios import load_scenario

NO_CHANGE = StateDiff((0.0, 0.0), (0, 0), (), (), (), (), (), ())
ONE_CHANGE: dict[str, Any] = {
    "turns": (TurnMove(1, None, "hot"),),
    "facts": (FactChange(1, "added", None, None),),
    "episodes_recorded": (EpisodeRecorded(1, "an episode"),),
    "episodes_consumed": (EpisodeRecorded(1, "an episode"),),
    "semantic": (SemanticFact("k", "k = v", 0.5, 1),),
    "procedural": (ProceduralRule("a rule", 1),),
}
RULE = "returns after the 30-day window: apply a 10% restocking fee"


def _run(name: str) -> Run:
    scenario = load_scenario(name)
    session = Session(scenario.policies)
    session.execute_all(scenario.steps)
    return session.run


@pytest.fixture(scope="module")
def refund() -> Run:
    return _run("refund-desk")


@pytest.fixture(scope="module")
def dana() -> Run:
    return _run("dana-facts")


@pytest.fixture(scope="module")
def sleep() -> Run:
    return _run("sleep-pass")


def _kinds(changes: tuple[FactChange, ...]) -> dict[int, str]:
    return {change.id: change.kind for change in changes}


class TestIsEmpty:
    @pytest.mark.parametrize("at", [0, 5, 15])
    def test_a_point_against_itself_is_empty(self, refund: Run, at: int) -> None:
        assert True is refund.diff(at, at).is_empty()

    def test_two_initial_states_are_empty(self) -> None:
        assert True is diff_states(INITIAL_STATE, INITIAL_STATE).is_empty()

    def test_a_compaction_is_not_empty(self, refund: Run) -> None:
        assert False is refund.diff(4, 5).is_empty()

    def test_a_compaction_that_keeps_the_tokens_is_still_not_empty(self, refund: Run) -> None:
        assert False is refund.diff(3, 5).is_empty()

    def test_the_clock_alone_is_not_empty(self, dana: Run) -> None:
        assert False is dana.diff(4, 5).is_empty()

    def test_a_read_alone_is_not_empty(self, dana: Run) -> None:
        assert False is dana.diff(5, 6).is_empty()

    def test_an_episode_alone_is_not_empty(self, sleep: Run) -> None:
        assert False is sleep.diff(0, 1).is_empty()

    def test_a_consolidation_is_not_empty(self, sleep: Run) -> None:
        assert False is sleep.diff(4, 5).is_empty()

    def test_a_consolidation_undone_is_not_empty(self, sleep: Run) -> None:
        # States 4 (four episodes pending, nothing distilled) and 5 (no episode
        # pending, one semantic fact and one rule) differ, in either order.
        assert False is sleep.diff(5, 4).is_empty()

    @pytest.mark.parametrize("field", sorted(ONE_CHANGE))
    def test_any_reported_change_makes_it_not_empty(self, field: str) -> None:
        diff = attrs.evolve(NO_CHANGE, **{field: ONE_CHANGE[field]})

        assert False is diff.is_empty()

    def test_nothing_reported_is_empty(self) -> None:
        assert True is NO_CHANGE.is_empty()

    def test_tokens_alone_make_it_not_empty(self) -> None:
        diff = attrs.evolve(NO_CHANGE, tokens=(3, 4))

        assert False is diff.is_empty()


class TestRunDiff:
    @pytest.mark.parametrize(("before", "after"), [(0, 15), (3, 5), (15, 0), (7, 7), (9, 2)])
    def test_is_diff_states_of_the_two_points(self, refund: Run, before: int, after: int) -> None:
        expected = diff_states(refund.state_at(before), refund.state_at(after))

        assert expected == refund.diff(before, after)

    def test_a_point_out_of_range_is_an_error(self, refund: Run) -> None:
        with pytest.raises(BadInput, match="16"):
            refund.diff(0, 16)


class TestRefundDeskTurns:
    def test_first_compaction_drops_1_folds_2_and_turn_4_arrives(self, refund: Run) -> None:
        expected = (
            TurnMove(1, "hot", "dropped"),
            TurnMove(2, "hot", "warm"),
            TurnMove(4, None, "hot"),
        )

        assert expected == refund.diff(3, 5).turns

    def test_first_compaction_leaves_the_tokens_at_29(self, refund: Run) -> None:
        assert (29, 29) == refund.diff(3, 5).tokens

    def test_the_compaction_alone_moves_only_the_older_turns(self, refund: Run) -> None:
        expected = (TurnMove(1, "hot", "dropped"), TurnMove(2, "hot", "warm"))

        assert expected == refund.diff(4, 5).turns

    def test_the_compaction_alone_brings_41_down_to_29(self, refund: Run) -> None:
        assert (41, 29) == refund.diff(4, 5).tokens

    def test_last_compaction_pushes_2_and_5_cold_and_folds_8(self, refund: Run) -> None:
        expected = (
            TurnMove(2, "warm", "cold"),
            TurnMove(5, "warm", "cold"),
            TurnMove(8, "hot", "warm"),
        )

        assert expected == refund.diff(14, 15).turns

    def test_from_the_start_every_turn_arrives_in_its_final_tier(self, refund: Run) -> None:
        final: dict[int, Tier] = {1: "dropped", 2: "cold", 3: "dropped", 4: "dropped"}
        final |= {5: "cold", 6: "dropped", 7: "dropped", 8: "warm", 9: "hot", 10: "hot"}

        assert tuple(TurnMove(t, None, tier) for t, tier in final.items()) == (
            refund.diff(0, 15).turns
        )

    def test_from_the_start_tokens_go_from_0_to_32(self, refund: Run) -> None:
        assert (0, 32) == refund.diff(0, 15).tokens

    def test_reverse_sends_every_turn_back_to_not_arrived(self, refund: Run) -> None:
        forward = refund.diff(0, 15).turns

        assert tuple(TurnMove(m.turn, m.after, None) for m in forward) == refund.diff(15, 0).turns

    def test_reverse_tokens_go_from_32_to_0(self, refund: Run) -> None:
        assert (32, 0) == refund.diff(15, 0).tokens

    def test_reverse_of_a_compaction_swaps_before_and_after(self, refund: Run) -> None:
        forward = refund.diff(3, 5).turns

        assert (
            tuple(TurnMove(m.turn, m.after, m.before) for m in forward) == refund.diff(5, 3).turns
        )

    def test_turns_report_no_fact_or_memory_change(self, refund: Run) -> None:
        diff = refund.diff(0, 15)

        assert ((), (), (), (), ()) == (
            diff.facts,
            diff.episodes_recorded,
            diff.episodes_consumed,
            diff.semantic,
            diff.procedural,
        )

    def test_the_clock_does_not_move(self, refund: Run) -> None:
        assert (0.0, 0.0) == refund.diff(0, 15).clock


class TestDanaFactsFacts:
    def test_advancing_the_clock(self, dana: Run) -> None:
        assert (0.0, 6.0) == dana.diff(4, 5).clock

    def test_advancing_the_clock_changes_no_fact(self, dana: Run) -> None:
        assert () == dana.diff(4, 5).facts

    def test_the_two_reads_are_one_read_change(self, dana: Run) -> None:
        assert {1: "read"} == _kinds(dana.diff(5, 7).facts)

    def test_a_read_change_carries_the_reads_before_and_after(self, dana: Run) -> None:
        change = dana.diff(5, 7).facts[0]
        assert change.before is not None
        assert change.after is not None

        assert (0, 2) == (change.before.reads, change.after.reads)

    def test_supersession_retires_the_email_fact_and_adds_the_phone_fact(self, dana: Run) -> None:
        assert {2: "retired", 5: "added"} == _kinds(dana.diff(7, 9).facts)

    def test_the_retired_fact_was_active_before_and_names_its_successor_after(
        self, dana: Run
    ) -> None:
        retired = dana.diff(7, 9).facts[0]
        assert retired.before is not None
        assert retired.after is not None

        assert ("active", "retired", 5) == (
            retired.before.status,
            retired.after.status,
            retired.after.superseded_by,
        )

    def test_an_added_fact_has_no_before(self, dana: Run) -> None:
        added = dana.diff(7, 9).facts[1]
        assert added.after is not None

        assert (None, "contact", "Dana prefers to be contacted by phone.") == (
            added.before,
            added.after.key,
            added.after.text,
        )

    def test_the_promo_write_evicts_chitchat_and_adds_promo(self, dana: Run) -> None:
        assert {4: "evicted", 6: "added"} == _kinds(dana.diff(9, 11).facts)

    def test_the_evicted_fact_carries_its_score(self, dana: Run) -> None:
        evicted = dana.diff(9, 11).facts[0]
        assert evicted.after is not None

        assert 0.2 * 0.5**1.5 == evicted.after.evicted_score

    def test_across_both_writes(self, dana: Run) -> None:
        expected = {2: "retired", 4: "evicted", 5: "added", 6: "added"}

        assert expected == _kinds(dana.diff(7, 11).facts)

    def test_from_the_start_the_most_telling_change_wins(self, dana: Run) -> None:
        expected = {1: "added", 2: "retired", 3: "added", 4: "evicted", 5: "added", 6: "added"}

        assert expected == _kinds(dana.diff(0, 11).facts)

    def test_from_the_start_a_retired_fact_has_no_before(self, dana: Run) -> None:
        retired = dana.diff(0, 11).facts[1]

        assert (2, "retired", None) == (retired.id, retired.kind, retired.before)

    def test_reverse_restores_the_retired_and_evicted_and_removes_the_new(self, dana: Run) -> None:
        expected = {2: "restored", 4: "restored", 5: "removed", 6: "removed"}

        assert expected == _kinds(dana.diff(11, 7).facts)

    def test_a_removed_fact_has_no_after(self, dana: Run) -> None:
        removed = dana.diff(11, 7).facts[2]

        assert (5, None) == (removed.id, removed.after)

    def test_reverse_clock(self, dana: Run) -> None:
        assert (6.0, 0.0) == dana.diff(11, 0).clock

    def test_facts_report_no_turn(self, dana: Run) -> None:
        assert ((), (0, 0)) == (dana.diff(0, 11).turns, dana.diff(0, 11).tokens)


class TestSleepPassMemory:
    def test_episodes_recorded_before_the_pass(self, sleep: Run) -> None:
        assert [1, 2, 3, 4] == [e.id for e in sleep.diff(0, 4).episodes_recorded]

    def test_recorded_episodes_carry_their_text(self, sleep: Run) -> None:
        recorded = sleep.diff(3, 4).episodes_recorded

        assert (EpisodeRecorded(4, "The user confirmed their name is Dana."),) == recorded

    def test_the_pass_consumes_every_episode(self, sleep: Run) -> None:
        assert [1, 2, 3, 4] == [e.id for e in sleep.diff(4, 5).episodes_consumed]

    def test_the_pass_adds_the_semantic_fact(self, sleep: Run) -> None:
        expected = (SemanticFact("user.name", "user.name = Dana", 0.9, 4),)

        assert expected == sleep.diff(4, 5).semantic

    def test_the_pass_adds_the_procedural_rule(self, sleep: Run) -> None:
        assert (ProceduralRule(RULE, 2),) == sleep.diff(4, 5).procedural

    def test_the_distilled_fact_is_added_to_the_store_after_the_pass(self, sleep: Run) -> None:
        assert {1: "added"} == _kinds(sleep.diff(5, 6).facts)

    def test_the_pass_records_no_episode(self, sleep: Run) -> None:
        assert () == sleep.diff(4, 6).episodes_recorded

    def test_before_the_pass_nothing_is_consumed_or_distilled(self, sleep: Run) -> None:
        diff = sleep.diff(0, 4)

        assert ((), (), ()) == (diff.episodes_consumed, diff.semantic, diff.procedural)
