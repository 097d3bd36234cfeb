"""memtape.policies.store.forgetting: importance x recency x access, supersession, eviction."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import math
from typing import Any

import pytest
from immutables import Map

from memtape.core.commands import AdvanceClock, ReadFact, WriteFact
from memtape.core.errors import BadInput, Rejected
from memtape.core.events import ClockAdvanced, Event, Evicted, FactRead, FactWritten, Superseded
from memtape.core.state import INITIAL_STATE, Fact, Facts, State, Store
from memtape.policies.store.forgetting import ImportanceRecencyAccess
from memtape.reducers import evolve

POLICY = ImportanceRecencyAccess(capacity=4, half_life=4.0, access_boost=0.1)


def _play(
    *commands: WriteFact | ReadFact | AdvanceClock, policy: ImportanceRecencyAccess = POLICY
) -> State:
    state = INITIAL_STATE
    for command in commands:
        events: tuple[Event, ...]
        if isinstance(command, AdvanceClock):
            events = (ClockAdvanced(command.to),)
        else:
            events = policy.decide(state, command)
        for event in events:
            state = evolve(state, event)
    return state


def _hand_built(*facts: Fact, clock: float) -> State:
    """A state whose store holds ``facts`` (all active), for cases no policy run reaches."""
    store = Store(
        Facts(sorted(facts, key=lambda f: f.id)),
        Map(dict.fromkeys(f.id for f in facts)),
        Map({f.key: f.id for f in facts}),
    )
    return State(clock, INITIAL_STATE.window, store, INITIAL_STATE.memory)


W = WriteFact


class TestScore:
    def test_at_the_write_the_score_is_the_importance(self) -> None:
        state = _play(W("a", "x", 0.7))

        assert 0.7 == POLICY.score(state.store.facts[1], 0.0).score

    def test_the_score_halves_every_half_life(self) -> None:
        state = _play(W("a", "x", 0.8))

        assert 0.2 == POLICY.score(state.store.facts[1], 8.0).score

    def test_the_score_is_the_product_of_its_three_factors(self) -> None:
        state = _play(W("a", "x", 0.9), ReadFact(key="a"), ReadFact(key="a"))

        scored = POLICY.score(state.store.facts[1], 6.0)

        assert pytest.approx(0.9 * 0.5 ** (6.0 / 4.0) * (1 + 0.1 * 2)) == scored.score

    def test_the_factors_are_importance_recency_and_access(self) -> None:
        state = _play(W("a", "x", 0.9), ReadFact(key="a"), ReadFact(key="a"))

        factors = POLICY.score(state.store.facts[1], 6.0).factors

        assert {
            "importance": 0.9,
            "recency": pytest.approx(0.5**1.5),
            "access": pytest.approx(1.2),
        } == factors

    def test_a_read_does_not_touch_the_recency(self) -> None:
        state = _play(W("a", "x", 0.9), AdvanceClock(4.0), ReadFact(key="a"))

        assert 0.5 == POLICY.score(state.store.facts[1], 4.0).factors["recency"]

    def test_the_access_boost_scales_each_read(self) -> None:
        policy = ImportanceRecencyAccess(4, 4.0, 0.5)
        state = _play(W("a", "x", 0.4), ReadFact(key="a"), policy=policy)

        assert 0.4 * 1.5 == policy.score(state.store.facts[1], 0.0).score

    def test_the_scored_fact_is_the_fact(self) -> None:
        state = _play(W("a", "x", 0.4))

        assert state.store.facts[1] == POLICY.score(state.store.facts[1], 3.0).fact


class TestRank:
    def test_the_ranking_is_highest_score_first(self) -> None:
        state = _play(W("a", "x", 0.2), W("b", "x", 0.9), W("c", "x", 0.5))

        assert ["b", "c", "a"] == [s.fact.key for s in POLICY.rank(state.store, 0.0)]

    def test_only_active_facts_are_ranked(self) -> None:
        state = _play(W("a", "x", 0.2), W("a", "y", 0.3), W("b", "x", 0.1))

        assert [2, 3] == [s.fact.id for s in POLICY.rank(state.store, 0.0)]

    def test_equal_scores_rank_the_oldest_write_first(self) -> None:
        # At t=4, 0.5 written at t=0 and 0.25 written at t=4 both score 0.25.
        state = _hand_built(
            Fact(1, "new", "x", 0.25, written_at=4.0),
            Fact(2, "old", "x", 0.5, written_at=0.0),
            clock=4.0,
        )

        assert ["old", "new"] == [s.fact.key for s in POLICY.rank(state.store, 4.0)]

    def test_equal_scores_and_writes_rank_the_lowest_id_first(self) -> None:
        state = _play(W("c", "x", 0.5), W("a", "x", 0.5), W("b", "x", 0.5))

        assert [1, 2, 3] == [s.fact.id for s in POLICY.rank(state.store, 0.0)]


class TestWrite:
    def test_a_write_gets_the_next_id(self) -> None:
        state = _play(W("a", "x", 0.5))

        assert (FactWritten(2, "b", "y", 0.6),) == POLICY.decide(state, W("b", "y", 0.6))

    def test_a_write_to_a_key_with_an_active_fact_supersedes_it(self) -> None:
        state = _play(W("a", "x", 0.5))

        assert (FactWritten(2, "a", "y", 0.6), Superseded(1, 2)) == POLICY.decide(
            state, W("a", "y", 0.6)
        )

    def test_naming_the_own_key_supersedes_it_once(self) -> None:
        state = _play(W("a", "x", 0.5))

        assert (FactWritten(2, "a", "y", 0.6), Superseded(1, 2)) == POLICY.decide(
            state, W("a", "y", 0.6, supersedes="a")
        )

    def test_naming_another_key_supersedes_its_fact(self) -> None:
        state = _play(W("email", "x", 0.5))

        assert (FactWritten(2, "phone", "y", 0.6), Superseded(1, 2)) == POLICY.decide(
            state, W("phone", "y", 0.6, supersedes="email")
        )

    def test_naming_another_key_also_supersedes_the_own_key(self) -> None:
        state = _play(W("email", "x", 0.5), W("phone", "old", 0.5))

        assert (FactWritten(3, "phone", "y", 0.6), Superseded(1, 3), Superseded(2, 3)) == (
            POLICY.decide(state, W("phone", "y", 0.6, supersedes="email"))
        )

    def test_superseding_a_key_with_no_active_fact_is_rejected(self) -> None:
        state = _play(W("a", "x", 0.5))

        with pytest.raises(Rejected, match="cannot supersede 'b': no active fact has that key"):
            POLICY.decide(state, W("c", "y", 0.6, supersedes="b"))

    def test_superseding_a_retired_key_is_rejected(self) -> None:
        state = _play(W("a", "x", 0.5), W("b", "y", 0.5, supersedes="a"))

        with pytest.raises(Rejected, match="cannot supersede 'a'"):
            POLICY.decide(state, W("c", "z", 0.6, supersedes="a"))

    @pytest.mark.parametrize("importance", [-0.1, 1.01, 2.0, math.nan, math.inf])
    def test_importance_outside_0_1_is_rejected(self, importance: float) -> None:
        with pytest.raises(Rejected, match="importance must be within"):
            POLICY.decide(INITIAL_STATE, W("a", "x", importance))

    @pytest.mark.parametrize("importance", [0.0, 1.0, 0, 1])
    def test_importance_at_the_bounds_is_accepted(self, importance: float) -> None:
        assert 1 == len(POLICY.decide(INITIAL_STATE, W("a", "x", importance)))

    def test_importance_must_be_a_number(self) -> None:
        command: Any = W("a", "x", True)

        with pytest.raises(Rejected, match="importance must be within"):
            POLICY.decide(INITIAL_STATE, command)

    @pytest.mark.parametrize("key", ["", "  "])
    def test_a_key_must_not_be_blank(self, key: str) -> None:
        with pytest.raises(Rejected, match="a fact's key must be a non-empty string"):
            POLICY.decide(INITIAL_STATE, W(key, "x", 0.5))


class TestEviction:
    def test_a_write_within_capacity_evicts_nothing(self) -> None:
        state = _play(W("a", "x", 0.5), W("b", "x", 0.5), W("c", "x", 0.5))

        assert [FactWritten] == [type(e) for e in POLICY.decide(state, W("d", "x", 0.1))]

    def test_a_write_over_capacity_evicts_the_lowest_score_with_it(self) -> None:
        state = _play(W("a", "x", 0.5), W("b", "x", 0.2), W("c", "x", 0.6), W("d", "x", 0.9))

        assert Evicted(2, 0.2) == POLICY.decide(state, W("e", "x", 0.3))[-1]

    def test_the_score_is_taken_at_the_current_clock(self) -> None:
        state = _play(W("a", "x", 0.8), W("b", "x", 0.5), AdvanceClock(4.0))
        policy = ImportanceRecencyAccess(2, 4.0, 0.1)

        assert Evicted(2, 0.25) == policy.decide(state, W("c", "x", 0.3))[-1]

    def test_the_new_fact_is_evicted_when_it_is_the_weakest(self) -> None:
        state = _play(W("a", "x", 0.5), W("b", "x", 0.5), W("c", "x", 0.5), W("d", "x", 0.5))

        assert (FactWritten(5, "e", "x", 0.1), Evicted(5, 0.1)) == POLICY.decide(
            state, W("e", "x", 0.1)
        )

    def test_evicting_the_new_fact_leaves_the_store_at_capacity(self) -> None:
        state = _play(*(W(k, "x", 0.5) for k in "abcd"), W("e", "x", 0.1))

        assert ({1, 2, 3, 4}, "evicted") == (
            set(state.store.active),
            state.store.facts[5].status,
        )

    def test_reads_can_save_a_fact_from_eviction(self) -> None:
        commands = [W(k, "x", 0.5) for k in "abcd"]
        state = _play(*commands, ReadFact(key="a"))

        assert Evicted(2, 0.5) == POLICY.decide(state, W("e", "x", 0.5))[-1]

    def test_a_supersession_makes_room_so_nothing_is_evicted(self) -> None:
        state = _play(*(W(k, "x", 0.5) for k in "abcd"))

        assert [FactWritten, Superseded] == [
            type(e) for e in POLICY.decide(state, W("a", "y", 0.1))
        ]

    def test_equal_scores_evict_the_oldest_write(self) -> None:
        # At t=4, fact 2 (0.5 at t=0) and fact 1 (0.25 at t=4) both score 0.25.
        state = _hand_built(
            Fact(1, "new", "x", 0.25, written_at=4.0),
            Fact(2, "old", "x", 0.5, written_at=0.0),
            clock=4.0,
        )
        policy = ImportanceRecencyAccess(2, 4.0, 0.1)

        assert Evicted(2, 0.25) == policy.decide(state, W("c", "x", 0.9))[-1]

    def test_equal_scores_and_writes_evict_the_lowest_id(self) -> None:
        state = _play(W("a", "x", 0.9), W("b", "x", 0.3), W("c", "x", 0.3), W("d", "x", 0.9))

        assert Evicted(2, 0.3) == POLICY.decide(state, W("e", "x", 0.3))[-1]


class TestRead:
    def test_a_read_by_key_reads_its_active_fact(self) -> None:
        state = _play(W("a", "x", 0.5), W("a", "y", 0.5))

        assert (FactRead(2),) == POLICY.decide(state, ReadFact(key="a"))

    def test_a_read_by_id_reads_that_fact(self) -> None:
        state = _play(W("a", "x", 0.5), W("b", "y", 0.5))

        assert (FactRead(1),) == POLICY.decide(state, ReadFact(id=1))

    def test_a_read_of_a_key_with_no_active_fact_is_rejected(self) -> None:
        with pytest.raises(Rejected, match="cannot read 'a': no active fact has that key"):
            POLICY.decide(INITIAL_STATE, ReadFact(key="a"))

    def test_a_read_of_an_unknown_id_is_rejected(self) -> None:
        state = _play(W("a", "x", 0.5))

        with pytest.raises(Rejected, match="cannot read fact 7: no fact has that id"):
            POLICY.decide(state, ReadFact(id=7))

    def test_a_read_of_a_retired_fact_is_rejected(self) -> None:
        state = _play(W("a", "x", 0.5), W("a", "y", 0.5))

        with pytest.raises(Rejected, match=r"cannot read fact 1 \('a'\): it was retired"):
            POLICY.decide(state, ReadFact(id=1))

    def test_a_read_of_an_evicted_fact_is_rejected(self) -> None:
        state = _play(*(W(k, "x", 0.5) for k in "abcd"), W("e", "x", 0.1))

        with pytest.raises(Rejected, match=r"cannot read fact 5 \('e'\): it was evicted"):
            POLICY.decide(state, ReadFact(id=5))

    @pytest.mark.parametrize("read", [ReadFact(), ReadFact(key="a", id=1)], ids=["none", "both"])
    def test_a_read_names_exactly_one_of_key_and_id(self, read: ReadFact) -> None:
        state = _play(W("a", "x", 0.5))

        with pytest.raises(Rejected, match="by key or by id"):
            POLICY.decide(state, read)


class TestParameters:
    @pytest.mark.parametrize("capacity", [0, -1])
    def test_capacity_must_be_at_least_1(self, capacity: int) -> None:
        with pytest.raises(BadInput, match="capacity must be an integer >= 1"):
            ImportanceRecencyAccess(capacity, 4.0, 0.1)

    @pytest.mark.parametrize("half_life", [0.0, -1.0, math.inf, math.nan])
    def test_half_life_must_be_positive_and_finite(self, half_life: float) -> None:
        with pytest.raises(BadInput, match="half_life must be a positive number"):
            ImportanceRecencyAccess(4, half_life, 0.1)

    @pytest.mark.parametrize("boost", [-0.1, math.inf])
    def test_access_boost_must_be_finite_and_not_negative(self, boost: float) -> None:
        with pytest.raises(BadInput, match="access_boost must be a number >= 0"):
            ImportanceRecencyAccess(4, 4.0, boost)

    def test_from_params_defaults_half_life_and_boost(self) -> None:
        assert ImportanceRecencyAccess(4, 4.0, 0.1) == ImportanceRecencyAccess.from_params(
            {"capacity": 4}, "here"
        )

    def test_from_params_makes_numbers_floats(self) -> None:
        policy = ImportanceRecencyAccess.from_params(
            {"capacity": 3, "half_life": 2, "access_boost": 0}, "here"
        )

        assert (float, float) == (type(policy.half_life), type(policy.access_boost))

    def test_params_read_back_to_the_same_policy(self) -> None:
        policy = ImportanceRecencyAccess(3, 2.5, 0.25)
        data = policy.params()
        del data["policy"]

        assert policy == ImportanceRecencyAccess.from_params(data, "here")

    def test_params_name_the_policy(self) -> None:
        assert {
            "policy": "importance-recency-access",
            "capacity": 4,
            "half_life": 4.0,
            "access_boost": 0.1,
            "supersession": "key",
        } == POLICY.params()

    def test_a_missing_capacity_is_named_with_its_place(self) -> None:
        with pytest.raises(BadInput, match=r"^f.toml: \[forgetting\]: missing parameter capacity$"):
            ImportanceRecencyAccess.from_params({}, "f.toml: [forgetting]")

    def test_a_zero_half_life_is_named_with_its_place(self) -> None:
        with pytest.raises(BadInput, match=r"^here: half_life must be a number in \(0, inf\)"):
            ImportanceRecencyAccess.from_params({"capacity": 4, "half_life": 0}, "here")

    def test_an_unknown_parameter_is_refused(self) -> None:
        with pytest.raises(
            BadInput, match=r"^here: unknown parameter halflife: did you mean half_life\?$"
        ):
            ImportanceRecencyAccess.from_params({"capacity": 4, "halflife": 2}, "here")
