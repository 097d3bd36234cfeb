"""Golden tests: every figure of REFERENCE.md, through the shipped scenarios and the API."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import pytest

from memtape.core.commands import AddTurn
from memtape.core.events import (
    CompactionTriggered,
    Consolidated,
    EpisodeRecorded,
    Evicted,
    FactWritten,
    ProceduralRule,
    SemanticFact,
    Superseded,
    WarmItem,
)
from memtape.core.state import State
from memtape.policies.plumbing.protocols import Scored
from memtape.policies.session import Session
from memtape.policies.store.forgetting import ImportanceRecencyAccess
from memtape.policies.window.tiered import TieredCompaction, gist_for
from memtape.scenarios import load_scenario

DECAY_AT_6 = 0.5**1.5
"""The recency factor of a fact written at t=0, seen at t=6 with half_life 4."""

# turn: (role, salient, tokens)
REFUND_TURNS = {
    1: ("user", False, 11),
    2: ("tool", True, 9),
    3: ("user", False, 9),
    4: ("user", False, 12),
    5: ("tool", True, 11),
    6: ("user", False, 9),
    7: ("user", False, 11),
    8: ("tool", True, 10),
    9: ("user", False, 9),
    10: ("tool", True, 10),
}

# turn: the window's tokens as the turn arrives, before any compaction
REFUND_WINDOW_ON_ARRIVAL = {1: 11, 2: 20, 3: 29, 4: 41, 5: 40, 6: 49, 7: 39, 8: 49, 9: 48, 10: 47}

# turn: (after, dropped, pushed cold, HOT, WARM, COLD turns)
REFUND_COMPACTIONS = {
    4: (29, (1,), 0, (3, 4), (2,), ()),
    6: (28, (3, 4), 0, (5, 6), (2,), ()),
    8: (39, (6,), 0, (7, 8), (2, 5), ()),
    9: (37, (7,), 0, (8, 9), (2, 5), ()),
    10: (32, (), 2, (9, 10), (8,), (2, 5)),
}


def _run(name: str) -> Session:
    scenario = load_scenario(name)
    session = Session(scenario.policies)
    for command in scenario.steps:
        session.execute(command)
    return session


def _forgetting(session: Session) -> ImportanceRecencyAccess:
    policy = session.policies.forgetting
    assert isinstance(policy, ImportanceRecencyAccess)
    return policy


def _ranking(session: Session, state: State) -> list[Scored]:
    return _forgetting(session).rank(state.store, state.clock)


@pytest.fixture(scope="module")
def refund() -> Session:
    return _run("refund-desk")


@pytest.fixture(scope="module")
def dana() -> Session:
    return _run("dana-facts")


@pytest.fixture(scope="module")
def sleep() -> Session:
    return _run("sleep-pass")


class TestRefundDeskScenario:
    def test_policy_is_tiered_compaction_budget_40_hot_2_word_count(self) -> None:
        scenario = load_scenario("refund-desk")

        assert TieredCompaction(budget=40, hot_n=2) == scenario.policies.compaction

    def test_ten_turns_with_the_reference_roles(self) -> None:
        steps = load_scenario("refund-desk").steps

        assert [role for role, _, _ in REFUND_TURNS.values()] == [
            step.role for step in steps if isinstance(step, AddTurn)
        ]

    def test_every_step_is_a_turn(self) -> None:
        steps = load_scenario("refund-desk").steps

        assert [AddTurn] * 10 == [type(step) for step in steps]

    @pytest.mark.parametrize(("turn", "expected"), sorted(REFUND_TURNS.items()))
    def test_shipped_text_has_the_reference_word_count(
        self, turn: int, expected: tuple[str, bool, int]
    ) -> None:
        command = load_scenario("refund-desk").steps[turn - 1]
        assert isinstance(command, AddTurn)

        assert expected[2] == len(f"{command.role}: {command.text}".split())

    @pytest.mark.parametrize(("turn", "expected"), sorted(REFUND_TURNS.items()))
    def test_recorded_turn_has_the_reference_tokens_and_salience(
        self, refund: Session, turn: int, expected: tuple[str, bool, int]
    ) -> None:
        start, _ = refund.run.batch(turn)
        added = refund.run.state_at(start + 1).window.hot[-1]

        assert (turn, *expected) == (added.turn, added.role, added.salient, added.tokens)


class TestRefundDeskWindow:
    @pytest.mark.parametrize(("turn", "expected"), sorted(REFUND_WINDOW_ON_ARRIVAL.items()))
    def test_window_as_the_turn_arrives(self, refund: Session, turn: int, expected: int) -> None:
        start, _ = refund.run.batch(turn)

        assert expected == refund.run.state_at(start + 1).window.tokens

    def test_compaction_triggers_on_turns_4_6_8_9_10(self, refund: Session) -> None:
        triggered = [
            turn
            for turn in REFUND_TURNS
            if any(
                isinstance(event, CompactionTriggered)
                for event in refund.run.events[slice(*refund.run.batch(turn))]
            )
        ]

        assert [4, 6, 8, 9, 10] == triggered

    def test_the_window_crosses_the_budget_exactly_on_the_compaction_turns(
        self, refund: Session
    ) -> None:
        policy = refund.policies.compaction
        assert policy is not None
        over = [
            turn
            for turn in REFUND_TURNS
            if refund.run.state_at(refund.run.batch(turn)[0] + 1).window.tokens > policy.budget
        ]

        assert [4, 6, 8, 9, 10] == over

    @pytest.mark.parametrize(("turn", "expected"), sorted(REFUND_COMPACTIONS.items()))
    def test_window_after_each_compaction(
        self, refund: Session, turn: int, expected: tuple[int, ...]
    ) -> None:
        _, end = refund.run.batch(turn)

        assert expected[0] == refund.run.state_at(end).window.tokens

    @pytest.mark.parametrize(("turn", "expected"), sorted(REFUND_COMPACTIONS.items()))
    def test_each_compaction_drops_pushes_cold_and_leaves_the_reference_tiers(
        self,
        refund: Session,
        turn: int,
        expected: tuple[
            int, tuple[int, ...], int, tuple[int, ...], tuple[int, ...], tuple[int, ...]
        ],
    ) -> None:
        _, end = refund.run.batch(turn)
        compaction = refund.run.events[end - 1]
        assert isinstance(compaction, CompactionTriggered)
        window = refund.run.state_at(end).window

        assert expected[1:] == (
            compaction.dropped,
            compaction.cold,
            tuple(t.turn for t in window.hot),
            tuple(w.turn for w in window.warm),
            tuple(window.cold),
        )

    @pytest.mark.parametrize("turn", [1, 2, 3, 5, 7])
    def test_turns_within_budget_add_only_the_turn(self, refund: Session, turn: int) -> None:
        start, end = refund.run.batch(turn)

        assert 1 == end - start

    def test_each_compaction_brings_the_window_back_within_budget(self, refund: Session) -> None:
        after = [refund.run.state_at(refund.run.batch(t)[1]).window.tokens for t in REFUND_TURNS]

        assert all(tokens <= 40 for tokens in after)


class TestRefundDeskFinalWindow:
    def test_cold_gist_summarizes_turns_2_and_5(self, refund: Session) -> None:
        assert (2, 5) == tuple(refund.state.window.cold)

    def test_cold_gist_is_one_line_of_four_words_naming_two_turns(self, refund: Session) -> None:
        window = refund.state.window

        assert (gist_for(2), 4, 4, 1) == (
            window.gist,
            window.gist_tokens,
            len(window.gist.split()),
            len(window.gist.splitlines()),
        )

    def test_gist_says_how_many_turns_it_summarizes(self, refund: Session) -> None:
        assert "2" in refund.state.window.gist.split()[0]

    def test_warm_is_turn_8_bare_text_at_9_tokens(self, refund: Session) -> None:
        turn_8 = load_scenario("refund-desk").steps[7]
        assert isinstance(turn_8, AddTurn)

        assert [WarmItem(8, turn_8.text, 9)] == list(refund.state.window.warm)

    def test_bare_text_counts_one_word_less_than_the_turn(self, refund: Session) -> None:
        item = refund.state.window.warm[0]

        assert REFUND_TURNS[8][2] - 1 == len(item.text.split())

    def test_hot_is_turns_9_and_10_verbatim_at_19_tokens(self, refund: Session) -> None:
        steps = load_scenario("refund-desk").steps
        hot = refund.state.window.hot

        assert ([9, 10], [steps[8], steps[9]], 19) == (
            [t.turn for t in hot],
            [AddTurn(t.role, t.text) for t in hot],
            sum(t.tokens for t in hot),
        )

    def test_window_totals_32_tokens(self, refund: Session) -> None:
        assert 32 == refund.state.window.tokens

    def test_total_is_gist_plus_warm_plus_hot(self, refund: Session) -> None:
        window = refund.state.window

        assert 4 + 9 + 19 == window.gist_tokens + sum(w.tokens for w in window.warm) + sum(
            t.tokens for t in window.hot
        )

    def test_dropped_turns_are_the_chatter(self, refund: Session) -> None:
        assert [1, 3, 4, 6, 7] == sorted(refund.state.window.dropped)


class TestDanaFactsScenario:
    def test_policy_is_capacity_4_half_life_4_boost_0_1(self) -> None:
        scenario = load_scenario("dana-facts")

        assert ImportanceRecencyAccess(4, 4.0, 0.1) == scenario.policies.forgetting

    def test_four_facts_written_at_t0_in_the_reference_order(self, dana: Session) -> None:
        written = [e for e in dana.run.events[:4] if isinstance(e, FactWritten)]

        assert [(1, "name", 0.9), (2, "contact", 0.6), (3, "order", 0.7), (4, "chitchat", 0.2)] == [
            (e.id, e.key, e.importance) for e in written
        ]

    def test_the_first_contact_is_email_the_second_phone(self, dana: Session) -> None:
        facts = dana.state.store.facts

        assert (True, True) == ("email" in facts[2].text, "phone" in facts[5].text)


class TestDanaFactsRankingAtT0:
    def test_ranking_keys_and_exact_scores(self, dana: Session) -> None:
        ranking = _ranking(dana, dana.run.state_at(4))

        assert [("name", 0.9), ("order", 0.7), ("contact", 0.6), ("chitchat", 0.2)] == [
            (s.fact.key, s.score) for s in ranking
        ]

    def test_recency_and_access_are_1_at_t0(self, dana: Session) -> None:
        ranking = _ranking(dana, dana.run.state_at(4))

        assert [(1.0, 1.0)] * 4 == [(s.factors["recency"], s.factors["access"]) for s in ranking]

    def test_clock_is_0(self, dana: Session) -> None:
        assert 0.0 == dana.run.state_at(4).clock


class TestDanaFactsRankingAtT6:
    def test_clock_is_6(self, dana: Session) -> None:
        assert 6.0 == dana.run.state_at(7).clock

    def test_name_was_read_twice(self, dana: Session) -> None:
        assert 2 == dana.run.state_at(7).store.facts[1].reads

    def test_ranking_order(self, dana: Session) -> None:
        ranking = _ranking(dana, dana.run.state_at(7))

        assert ["name", "order", "contact", "chitchat"] == [s.fact.key for s in ranking]

    def test_scores_follow_the_formula(self, dana: Session) -> None:
        ranking = _ranking(dana, dana.run.state_at(7))

        assert [
            pytest.approx(0.9 * DECAY_AT_6 * 1.2),
            pytest.approx(0.7 * DECAY_AT_6),
            pytest.approx(0.6 * DECAY_AT_6),
            pytest.approx(0.2 * DECAY_AT_6),
        ] == [s.score for s in ranking]

    def test_scores_to_four_decimals(self, dana: Session) -> None:
        ranking = _ranking(dana, dana.run.state_at(7))

        assert [0.3818, 0.2475, 0.2121, 0.0707] == [round(s.score, 4) for s in ranking]

    def test_name_factors(self, dana: Session) -> None:
        name = _ranking(dana, dana.run.state_at(7))[0]

        assert {
            "importance": 0.9,
            "recency": pytest.approx(DECAY_AT_6),
            "access": pytest.approx(1.2),
        } == name.factors


class TestDanaFactsSupersession:
    def test_the_phone_write_supersedes_the_email_fact(self, dana: Session) -> None:
        start, end = dana.run.batch(8)

        assert [
            FactWritten(5, "contact", dana.state.store.facts[5].text, 0.6),
            Superseded(2, 5),
        ] == list(dana.run.events[start:end])

    def test_the_email_fact_is_retired_kept_and_points_to_the_phone_fact(
        self, dana: Session
    ) -> None:
        email = dana.state.store.facts[2]

        assert ("contact", "retired", 5, 6.0) == (
            email.key,
            email.status,
            email.superseded_by,
            email.ended_at,
        )

    def test_four_facts_stay_active_after_the_supersession(self, dana: Session) -> None:
        _, end = dana.run.batch(8)

        assert {1, 3, 4, 5} == set(dana.run.state_at(end).store.active)

    def test_contact_now_answers_with_the_phone_fact(self, dana: Session) -> None:
        assert 5 == dana.state.store.by_key["contact"]


class TestDanaFactsEviction:
    def test_the_promo_write_evicts_chitchat(self, dana: Session) -> None:
        start, end = dana.run.batch(9)
        written, evicted = dana.run.events[start:end]
        assert isinstance(written, FactWritten)
        assert isinstance(evicted, Evicted)

        assert (6, "promo", 0.15, 4) == (written.id, written.key, written.importance, evicted.id)

    def test_the_eviction_records_the_score_that_condemned_chitchat(self, dana: Session) -> None:
        evicted = dana.run.events[-1]
        assert isinstance(evicted, Evicted)

        assert pytest.approx(0.2 * DECAY_AT_6) == evicted.score

    def test_eviction_score_rounds_to_0_0707(self, dana: Session) -> None:
        assert 0.0707 == round(dana.state.store.facts[4].evicted_score or 0.0, 4)

    def test_chitchat_is_marked_evicted_and_kept(self, dana: Session) -> None:
        chitchat = dana.state.store.facts[4]

        assert ("chitchat", "evicted") == (chitchat.key, chitchat.status)


class TestDanaFactsFinal:
    def test_final_ranking_keys_and_exact_scores_where_not_computed(self, dana: Session) -> None:
        ranking = _ranking(dana, dana.state)

        assert [
            (5, "contact", 0.6),
            (1, "name", pytest.approx(0.9 * DECAY_AT_6 * 1.2)),
            (3, "order", pytest.approx(0.7 * DECAY_AT_6)),
            (6, "promo", 0.15),
        ] == [(s.fact.id, s.fact.key, s.score) for s in ranking]

    def test_final_scores_to_four_decimals(self, dana: Session) -> None:
        assert [0.6, 0.3818, 0.2475, 0.15] == [
            round(s.score, 4) for s in _ranking(dana, dana.state)
        ]

    def test_four_active_facts(self, dana: Session) -> None:
        assert 4 == len(dana.state.store.active)

    def test_retired_is_the_email_contact(self, dana: Session) -> None:
        assert [(2, "contact")] == [(f.id, f.key) for f in dana.state.store.with_status("retired")]

    def test_evicted_is_chitchat(self, dana: Session) -> None:
        assert [(4, "chitchat")] == [(f.id, f.key) for f in dana.state.store.with_status("evicted")]

    def test_every_fact_ever_written_is_kept(self, dana: Session) -> None:
        assert [1, 2, 3, 4, 5, 6] == sorted(dana.state.store.facts)


class TestSleepPass:
    def test_four_episodes_recorded(self, sleep: Session) -> None:
        recorded = [e for e in sleep.run.events if isinstance(e, EpisodeRecorded)]

        assert [1, 2, 3, 4] == [e.id for e in recorded]

    def test_the_pass_consumes_all_four_episodes(self, sleep: Session) -> None:
        (consolidated,) = [e for e in sleep.run.events if isinstance(e, Consolidated)]

        assert (1, 2, 3, 4) == consolidated.episodes

    def test_all_episodes_are_pruned(self, sleep: Session) -> None:
        assert ([], 4) == (list(sleep.state.memory.episodes), sleep.state.memory.recorded)

    def test_one_semantic_fact_user_name_is_dana(self, sleep: Session) -> None:
        assert [SemanticFact("user.name", "user.name = Dana", 0.9, 4)] == list(
            sleep.state.memory.semantic
        )

    def test_one_procedural_rule_about_the_restocking_fee(self, sleep: Session) -> None:
        assert [
            ProceduralRule("returns after the 30-day window: apply a 10% restocking fee", 2)
        ] == list(sleep.state.memory.procedural)

    def test_the_semantic_fact_is_written_to_the_store_with_the_rule_importance(
        self, sleep: Session
    ) -> None:
        assert [("user.name", "user.name = Dana", 0.9, "active")] == [
            (f.key, f.text, f.importance, f.status) for f in sleep.state.store.facts.values()
        ]

    def test_the_store_write_is_part_of_the_consolidation_step(self, sleep: Session) -> None:
        start, end = sleep.run.batch(5)

        assert [Consolidated, FactWritten] == [type(e) for e in sleep.run.events[start:end]]

    def test_the_store_uses_the_dana_facts_forgetting_policy(self) -> None:
        assert (
            load_scenario("dana-facts").policies.forgetting
            == load_scenario("sleep-pass").policies.forgetting
        )
