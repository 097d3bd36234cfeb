"""memtape.core.state: immutable values, the initial state, tiers and fact standing."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import enum
from collections.abc import Mapping

import pytest
from hypothesis import given
from hypothesis import strategies as st
from immutables import Map

from memtape.core.events import (
    ClockAdvanced,
    CompactionTriggered,
    Event,
    Evicted,
    FactRead,
    FactWritten,
    Superseded,
    TurnAdded,
    WarmItem,
)
from memtape.core.state import (
    EMPTY_MEMORY,
    EMPTY_STORE,
    EMPTY_WINDOW,
    INITIAL_STATE,
    Fact,
    Facts,
    FactStatus,
    State,
    Store,
    Tier,
)
from memtape.reducers import fold

TIERED: list[Event] = [
    TurnAdded(1, "user", "a b", 3, salient=False),
    TurnAdded(2, "tool", "c d", 3, salient=True),
    TurnAdded(3, "tool", "e f", 3, salient=True),
    TurnAdded(4, "user", "g h", 3, salient=False),
    CompactionTriggered(6, (WarmItem(2, "c d", 2), WarmItem(3, "e f", 2)), (1,), 1, "[1 gist]", 2),
]
"""Turn 1 dropped, turn 2 cold, turn 3 warm, turn 4 hot."""

FACTS: list[Event] = [
    FactWritten(1, "name", "Dana", 0.9),
    FactWritten(2, "contact", "email", 0.6),
    FactWritten(3, "order", "ORD-3300", 0.7),
    ClockAdvanced(2.0),
    FactWritten(4, "contact", "phone", 0.6),
    Superseded(2, 4),
    Evicted(3, 0.35),
    FactRead(1),
]


class TestInitialState:
    def test_the_clock_starts_at_zero(self) -> None:
        assert 0.0 == INITIAL_STATE.clock

    def test_the_window_starts_empty(self) -> None:
        window = INITIAL_STATE.window

        assert ([], [], [], [], "", 0, 0, 0) == (
            list(window.hot),
            list(window.warm),
            list(window.cold),
            list(window.dropped),
            window.gist,
            window.gist_tokens,
            window.tokens,
            window.turns,
        )

    def test_the_store_starts_empty(self) -> None:
        assert (EMPTY_STORE, {}, set(), {}) == (
            INITIAL_STATE.store,
            dict(EMPTY_STORE.facts),
            set(EMPTY_STORE.active),
            dict(EMPTY_STORE.by_key),
        )

    def test_the_memory_starts_empty(self) -> None:
        memory = INITIAL_STATE.memory

        assert (EMPTY_MEMORY, [], 0, [], []) == (
            memory,
            list(memory.episodes),
            memory.recorded,
            list(memory.semantic),
            list(memory.procedural),
        )

    def test_the_initial_state_is_built_from_the_empty_parts(self) -> None:
        assert State(0.0, EMPTY_WINDOW, EMPTY_STORE, EMPTY_MEMORY) == INITIAL_STATE


class TestStatesAreValues:
    def test_two_folds_of_the_same_events_are_equal(self) -> None:
        assert fold(TIERED + FACTS) == fold(TIERED + FACTS)

    def test_states_after_different_events_differ(self) -> None:
        assert fold(TIERED) != fold(TIERED[:-1])

    def test_a_state_cannot_be_changed(self) -> None:
        with pytest.raises(AttributeError):
            INITIAL_STATE.clock = 1.0  # type: ignore[misc]

    def test_a_window_cannot_be_changed(self) -> None:
        with pytest.raises(AttributeError):
            EMPTY_WINDOW.tokens = 1  # type: ignore[misc]

    def test_a_new_state_shares_the_parts_it_did_not_change(self) -> None:
        before = fold(TIERED)
        after = fold([FactWritten(1, "k", "v", 0.5)], before)

        assert (True, True) == (after.window is before.window, after.memory is before.memory)


class TestWindowTierOf:
    @pytest.mark.parametrize(
        ("turn", "tier"), [(1, "dropped"), (2, "cold"), (3, "warm"), (4, "hot")]
    )
    def test_each_turn_is_found_in_its_tier(self, turn: int, tier: Tier) -> None:
        assert tier == fold(TIERED).window.tier_of(turn)

    @pytest.mark.parametrize("turn", [0, -1, 5])
    def test_a_turn_that_has_not_arrived_has_no_tier(self, turn: int) -> None:
        assert None is fold(TIERED).window.tier_of(turn)

    def test_before_any_compaction_every_turn_is_hot(self) -> None:
        window = fold(TIERED[:4]).window

        assert ["hot"] * 4 == [window.tier_of(t) for t in range(1, 5)]


class TestFact:
    def test_a_new_fact_is_active_and_unread(self) -> None:
        fact = Fact(1, "k", "v", 0.5, 0.0)

        assert (0, None, "active", None, None, None) == (
            fact.reads,
            fact.last_read_at,
            fact.status,
            fact.ended_at,
            fact.superseded_by,
            fact.evicted_score,
        )


class TestStore:
    def test_active_facts_are_listed_oldest_write_first(self) -> None:
        assert [1, 4] == [f.id for f in fold(FACTS).store.active_facts()]

    @pytest.mark.parametrize(
        ("status", "ids"), [("active", [1, 4]), ("retired", [2]), ("evicted", [3])]
    )
    def test_facts_are_listed_by_status(self, status: FactStatus, ids: list[int]) -> None:
        store = fold(FACTS).store

        assert ids == [f.id for f in store.with_status(status)]

    def test_active_facts_sort_by_id_whatever_the_set_order(self) -> None:
        facts = {i: Fact(i, f"k{i}", "v", 0.5, 0.0) for i in (5, 1, 3, 2, 4)}
        store = Store(
            Facts(facts[i] for i in sorted(facts)),
            Map(dict.fromkeys(facts)),
            Map({f.key: f.id for f in facts.values()}),
        )

        assert [1, 2, 3, 4, 5] == [f.id for f in store.active_facts()]

    def test_the_newest_active_fact_answers_for_its_key(self) -> None:
        assert {"name": 1, "contact": 4} == dict(fold(FACTS).store.by_key)


def _facts(count: int) -> list[Fact]:
    return [Fact(i, f"k{i}", f"fact {i}", 0.5, 0.0) for i in range(1, count + 1)]


class TestFacts:
    @given(st.integers(0, 100), st.lists(st.integers(1, 120), max_size=30))
    def test_facts_behave_as_a_dict_of_them(self, count: int, changes: list[int]) -> None:
        """Appends and changes, looked up, iterated and compared as a dict would be."""
        facts = Facts(_facts(count))
        model = {fact.id: fact for fact in _facts(count)}
        for key in changes:
            if key > len(model) + 1:
                continue
            fact = Fact(key, "changed", f"fact {key}", 0.25, 1.0)
            facts, model[key] = facts.set(key, fact), fact

        assert (model, list(model), list(model.values())) == (
            dict(facts.items()),
            list(facts),
            list(facts.values()),
        )
        assert len(model) == len(facts)
        assert [model.get(key) for key in range(-1, 125)] == [
            facts.get(key) for key in range(-1, 125)
        ]
        assert Facts(model.values()) == facts
        assert Map(model) != facts
        assert hash(Facts(model.values())) == hash(facts)

    def test_an_earlier_version_does_not_change(self) -> None:
        facts = Facts(_facts(3))
        facts.set(2, Fact(2, "changed", "x", 0.1, 1.0))
        facts.set(4, Fact(4, "new", "x", 0.1, 1.0))

        assert _facts(3) == list(facts.values())

    def test_a_fact_past_the_next_is_refused(self) -> None:
        with pytest.raises(KeyError, match=r"fact 5 is neither written nor the next \(4\)"):
            Facts(_facts(3)).set(5, Fact(5, "k", "x", 0.1, 1.0))

    def test_facts_out_of_their_order_are_refused(self) -> None:
        with pytest.raises(ValueError, match="fact 2 cannot be fact 1"):
            Facts(_facts(2)[::-1])

    def test_a_key_equal_to_an_id_finds_it_as_in_a_dict(self) -> None:
        class Id(enum.IntEnum):
            ONE = 1

        facts: Mapping[object, Fact] = Facts(_facts(2))  # type: ignore[assignment]
        model: Mapping[object, Fact] = dict(enumerate(_facts(2), start=1))
        keys = [Id.ONE, True, 2.0, 1.5, "1", None, 0, 3]

        assert [key in model for key in keys] == [key in facts for key in keys]
        assert [model.get(key) for key in keys] == [facts.get(key) for key in keys]
        with pytest.raises(KeyError):
            facts["1"]
        assert Facts(_facts(2)).set(Id.ONE, _facts(1)[0]) == Facts(_facts(2))
