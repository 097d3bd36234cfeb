"""memtape.reducers.root: each event to the part it changes; the clock; the fold."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

from typing import cast

import attrs
import pytest

from memtape.core.errors import CorruptLog
from memtape.core.events import (
    ClockAdvanced,
    CompactionTriggered,
    Consolidated,
    EpisodeRecorded,
    Event,
    Evicted,
    FactRead,
    FactWritten,
    Superseded,
    TurnAdded,
)
from memtape.core.state import INITIAL_STATE, State
from memtape.reducers import evolve, fold

EVENTS: list[Event] = [
    TurnAdded(1, "user", "hello there", 3, salient=False),
    FactWritten(1, "name", "Dana", 0.9),
    EpisodeRecorded(1, "the user said hello"),
    ClockAdvanced(2.0),
    FactRead(1),
    FactWritten(2, "name", "Dana S.", 0.9),
    Superseded(1, 2),
    TurnAdded(2, "user", "and more", 3, salient=False),
    CompactionTriggered(4, (), (1,), 0, "", 0),
    FactWritten(3, "chitchat", "rain", 0.2),
    Evicted(3, 0.2),
    Consolidated((1,), (), ()),
]
"""One of each event, in an order that fits."""


@attrs.frozen
class FactForgotten:
    """An event no reducer knows."""

    id: int


class TestRouting:
    def test_a_turn_changes_only_the_window(self) -> None:
        after = evolve(INITIAL_STATE, EVENTS[0])

        assert (INITIAL_STATE.clock, INITIAL_STATE.store, INITIAL_STATE.memory, 3) == (
            after.clock,
            after.store,
            after.memory,
            after.window.tokens,
        )

    def test_a_compaction_changes_only_the_window(self) -> None:
        before = fold(EVENTS[:8])
        after = evolve(before, EVENTS[8])

        assert (before.clock, before.store, before.memory, [1]) == (
            after.clock,
            after.store,
            after.memory,
            list(after.window.dropped),
        )

    @pytest.mark.parametrize("index", [1, 4, 6, 9, 10])
    def test_a_store_event_changes_only_the_store(self, index: int) -> None:
        before = fold(EVENTS[:index])
        after = evolve(before, EVENTS[index])

        assert (before.clock, before.window, before.memory) == (
            after.clock,
            after.window,
            after.memory,
        )

    @pytest.mark.parametrize("index", [2, 11])
    def test_a_memory_event_changes_only_the_memory(self, index: int) -> None:
        before = fold(EVENTS[:index])
        after = evolve(before, EVENTS[index])

        assert (before.clock, before.window, before.store) == (
            after.clock,
            after.window,
            after.store,
        )

    def test_the_clock_event_changes_only_the_clock(self) -> None:
        before = fold(EVENTS[:3])
        after = evolve(before, ClockAdvanced(2.0))

        assert (2.0, before.window, before.store, before.memory) == (
            after.clock,
            after.window,
            after.store,
            after.memory,
        )

    def test_store_events_happen_at_the_current_clock(self) -> None:
        store = fold(EVENTS).store

        assert (0.0, 2.0, 2.0, 2.0) == (
            store.facts[1].written_at,
            store.facts[1].last_read_at,
            store.facts[2].written_at,
            store.facts[3].ended_at,
        )

    def test_an_unknown_event_type_is_corrupt_and_named(self) -> None:
        with pytest.raises(CorruptLog, match="unknown event type FactForgotten"):
            evolve(INITIAL_STATE, cast(Event, FactForgotten(1)))

    def test_an_error_from_a_part_reaches_the_caller_as_corrupt_log(self) -> None:
        with pytest.raises(CorruptLog, match="turn 2 cannot follow turn 0"):
            evolve(INITIAL_STATE, TurnAdded(2, "user", "x", 2, salient=False))


class TestClock:
    def test_the_clock_moves_forward(self) -> None:
        assert 6.0 == evolve(INITIAL_STATE, ClockAdvanced(6.0)).clock

    def test_the_clock_may_stay_where_it_is(self) -> None:
        state = evolve(INITIAL_STATE, ClockAdvanced(6.0))

        assert 6.0 == evolve(state, ClockAdvanced(6.0)).clock

    def test_the_clock_moving_back_is_corrupt(self) -> None:
        state = evolve(INITIAL_STATE, ClockAdvanced(6.0))

        with pytest.raises(CorruptLog, match="the clock cannot move back from 6 to 3"):
            evolve(state, ClockAdvanced(3.0))


class TestFold:
    def test_folding_nothing_gives_the_initial_state(self) -> None:
        assert INITIAL_STATE == fold([])

    def test_fold_is_evolve_applied_in_order(self) -> None:
        state = INITIAL_STATE
        for event in EVENTS:
            state = evolve(state, event)

        assert state == fold(EVENTS)

    def test_fold_continues_from_a_given_state(self) -> None:
        assert fold(EVENTS) == fold(EVENTS[5:], fold(EVENTS[:5]))

    def test_folding_twice_gives_equal_states(self) -> None:
        assert fold(EVENTS) == fold(list(EVENTS))

    def test_evolve_leaves_the_state_before_unchanged(self) -> None:
        before = fold(EVENTS[:5])
        copy = fold(EVENTS[:5])

        evolve(before, EVENTS[5])

        assert copy == before

    def test_fold_accepts_any_iterable(self) -> None:
        assert fold(EVENTS) == fold(iter(EVENTS))


class TestStatesBuiltInC:
    def test_a_turn_and_its_compaction_give_a_state_with_every_field(self) -> None:
        # The fold builds it by tuple.__new__, which checks no arity.
        turn = TurnAdded(1, "user", "one two three", 4, salient=False)
        state = fold([turn, CompactionTriggered(1, (), (1,), 0, "", 0)])

        assert (State, len(State._fields)) == (type(state), len(state))
