"""The root fold: route each event to the reducer of the part it changes."""

from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

from memtape.core.errors import CorruptLog
from memtape.core.events import (
    Answered,
    BlockEdited,
    ClockAdvanced,
    CompactionTriggered,
    Consolidated,
    EpisodeRecorded,
    Event,
    Evicted,
    Expired,
    FactRead,
    FactWritten,
    Judged,
    Queried,
    Recalled,
    Superseded,
    TurnAdded,
    ValidityClosed,
)
from memtape.core.state import INITIAL_STATE, State
from memtape.reducers import blocks, memory, store, window

_STATE: Callable[[tuple[Any, ...]], State] = partial(tuple.__new__, State)
"""``State(*fields)`` in C (see ``window._WINDOW``)."""


def _turn_added(state: State, event: TurnAdded) -> State:
    return State(state.clock, window.turn_added(state.window, event), state.store, state.memory)


def _compaction(state: State, event: CompactionTriggered) -> State:
    return State(
        state.clock,
        window.compaction_triggered(state.window, event),
        state.store,
        state.memory,
    )


def _clock_advanced(state: State, event: ClockAdvanced) -> State:
    if event.to < state.clock:
        raise CorruptLog(f"the clock cannot move back from {state.clock:g} to {event.to:g}")
    return State(event.to, state.window, state.store, state.memory)


def _fact_written(state: State, event: FactWritten) -> State:
    return State(
        state.clock, state.window, store.fact_written(state.store, event, state.clock), state.memory
    )


def _fact_read(state: State, event: FactRead) -> State:
    return State(
        state.clock, state.window, store.fact_read(state.store, event, state.clock), state.memory
    )


def _queried(state: State, event: Queried) -> State:
    return State(
        state.clock, state.window, store.queried(state.store, event, state.clock), state.memory
    )


def _superseded(state: State, event: Superseded) -> State:
    return State(
        state.clock, state.window, store.superseded(state.store, event, state.clock), state.memory
    )


def _evicted(state: State, event: Evicted) -> State:
    return State(
        state.clock, state.window, store.evicted(state.store, event, state.clock), state.memory
    )


def _expired(state: State, event: Expired) -> State:
    return State(
        state.clock, state.window, store.expired(state.store, event, state.clock), state.memory
    )


def _validity_closed(state: State, event: ValidityClosed) -> State:
    return State(
        state.clock,
        state.window,
        store.validity_closed(state.store, event, state.clock),
        state.memory,
    )


def _recalled(state: State, event: Recalled) -> State:
    return State(state.clock, window.recalled(state.window, event), state.store, state.memory)


def _block_edited(state: State, event: BlockEdited) -> State:
    return State(state.clock, blocks.block_edited(state.window, event), state.store, state.memory)


def _judged(state: State, event: Judged) -> State:
    return State(
        state.clock, state.window, store.judged(state.store, event, state.clock), state.memory
    )


def _answered(state: State, event: Answered) -> State:
    # A question asked of the window is a measurement of it: no memory changes.
    return state


def _episode_recorded(state: State, event: EpisodeRecorded) -> State:
    return State(
        state.clock, state.window, state.store, memory.episode_recorded(state.memory, event)
    )


def _consolidated(state: State, event: Consolidated) -> State:
    return State(state.clock, state.window, state.store, memory.consolidated(state.memory, event))


_REDUCERS: dict[type, Callable[[State, Any], State]] = {
    TurnAdded: _turn_added,
    CompactionTriggered: _compaction,
    ClockAdvanced: _clock_advanced,
    FactWritten: _fact_written,
    FactRead: _fact_read,
    Queried: _queried,
    Superseded: _superseded,
    Evicted: _evicted,
    Expired: _expired,
    ValidityClosed: _validity_closed,
    Judged: _judged,
    EpisodeRecorded: _episode_recorded,
    Consolidated: _consolidated,
    Recalled: _recalled,
    BlockEdited: _block_edited,
    Answered: _answered,
}


def evolve(state: State, event: Event) -> State:
    """The state after ``event``: pure, no I/O, no clock, no policy knowledge.

    Raises ``CorruptLog`` for an unknown event or one that does not fit the
    state it follows.
    """
    try:
        reducer = _REDUCERS[type(event)]
    except KeyError:
        raise CorruptLog(f"unknown event type {type(event).__name__}") from None
    return reducer(state, event)


def fold(events: Iterable[Event], state: State = INITIAL_STATE) -> State:
    """Fold ``events`` into ``state`` (the initial state by default).

    Equal to applying ``evolve`` event by event; a turn followed by the
    compaction it triggered is applied in one step, since nothing reads the
    state between them.
    """
    turn: TurnAdded | None = None
    for event in events:
        if turn is not None:
            if type(event) is CompactionTriggered:
                compacted = window.turn_then_compaction(state.window, turn, event)
                state = _STATE((state.clock, compacted, state.store, state.memory))
                turn = None
                continue
            state = _turn_added(state, turn)
            turn = None
        if type(event) is TurnAdded:
            turn = event
        else:
            state = evolve(state, event)
    if turn is not None:
        state = _turn_added(state, turn)
    return state
