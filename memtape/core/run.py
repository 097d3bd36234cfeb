"""The run: an append-only log of events, the state after it, and fast seeks.

A run knows which command caused each batch of events, keeps a snapshot of
the state every ``snapshot_every`` events, and so rebuilds the state at any
position with at most ``snapshot_every`` folds. Its history is held packed a
block at a time (``memtape.core.history``); a seek unpacks the blocks it
folds. It does not know policies: the fold it uses is handed to it.
"""

from bisect import bisect_left
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from memtape.core.commands import Command
from memtape.core.errors import BadInput, CorruptLog
from memtape.core.events import Event
from memtape.core.history import History
from memtape.core.state import INITIAL_STATE, State

if TYPE_CHECKING:
    from memtape.core.diff import StateDiff

Fold = Callable[[Sequence[Event], State], State]
"""A pure fold: the state after a sequence of events, from a given state."""

DEFAULT_SNAPSHOT_EVERY = 1024
"""Events between two snapshots unless a run says otherwise."""

HISTORY_BLOCK = 256
"""Events the history packs together, at most (``memtape.core.history``)."""


class Run:
    """An append-only event log with the current state and seeks to any position."""

    __slots__ = (
        "_commands",
        "_events",
        "_fold",
        "_history",
        "_snapshot_every",
        "_snapshots",
        "_state",
    )

    def __init__(
        self,
        fold: Fold,
        initial: State = INITIAL_STATE,
        snapshot_every: int = DEFAULT_SNAPSHOT_EVERY,
    ) -> None:
        if snapshot_every < 1:
            raise BadInput(f"snapshot_every must be at least 1, got {snapshot_every}")
        self._fold = fold
        self._snapshot_every = snapshot_every
        # Blocks no longer than the snapshot interval: a seek unpacks only the blocks
        # that hold the events it folds.
        self._history = History(min(snapshot_every, HISTORY_BLOCK))
        # Built on a read and kept until the next append, which lets them go: a run
        # that goes on does not hold its history twice.
        self._events: tuple[Event, ...] | None = None
        self._commands: tuple[Command, ...] | None = None
        self._snapshots: list[State] = [initial]
        self._state = initial

    @property
    def state(self) -> State:
        """The state after the last event."""
        return self._state

    @property
    def events(self) -> tuple[Event, ...]:
        """Every event so far, oldest first."""
        if self._events is None:
            self._events = tuple(self._history.events(0, len(self._history)))
        return self._events

    @property
    def commands(self) -> tuple[Command, ...]:
        """The command behind each batch, in order: ``commands[s - 1]`` is step ``s``."""
        if self._commands is None:
            self._commands = tuple(self._history.commands())
        return self._commands

    def __len__(self) -> int:
        return len(self._history)

    @property
    def steps(self) -> int:
        """How many commands the run has recorded."""
        return len(self._history.ends)

    def append(self, command: Command, events: Sequence[Event]) -> State:
        """Append the batch of events that honours ``command``, all or nothing.

        The batch is folded before anything is stored, so an event that does
        not fit leaves the run exactly as it was.
        """
        if not events:
            raise BadInput(f"a command must be honoured by at least one event: {command!r}")
        start = self._history.length
        end = start + len(events)
        every = self._snapshot_every
        try:
            if end < (start // every + 1) * every:
                # Most batches cross no snapshot boundary.
                state = self._fold(events, self._state)
            else:
                state = self._fold_with_snapshots(start, events)
        except CorruptLog:
            raise self._locate(events) from None
        self._history.append(command, events)
        self._events = self._commands = None
        self._state = state
        return state

    def _fold_with_snapshots(self, start: int, events: Sequence[Event]) -> State:
        """Fold a batch that crosses snapshot boundaries, keeping the state at each.

        The snapshots are kept only once the whole batch has folded, so a
        batch that does not fit leaves none behind.
        """
        every = self._snapshot_every
        end = start + len(events)
        state = self._state
        snapshots: list[State] = []
        done = start
        for boundary in range((start // every + 1) * every, end + 1, every):
            state = self._fold(events[done - start : boundary - start], state)
            snapshots.append(state)
            done = boundary
        if done < end:
            state = self._fold(events[done - start :], state)
        self._snapshots.extend(snapshots)
        return state

    def _locate(self, events: Sequence[Event]) -> CorruptLog:
        """The error of the first event of ``events`` that does not fit, with its position."""
        state = self._state
        for position, event in enumerate(events, start=len(self._history) + 1):
            try:
                state = self._fold((event,), state)
            except CorruptLog as error:
                return CorruptLog(f"event {position} ({type(event).__name__}): {error}")
        return CorruptLog("a batch failed to fold, then folded")  # pragma: no cover

    def state_at(self, position: int) -> State:
        """The state after the first ``position`` events (0: the initial state)."""
        if not 0 <= position <= len(self._history):
            raise BadInput(f"position {position} is out of range 0..{len(self._history)}")
        base = position // self._snapshot_every
        return self._fold(
            self._history.events(base * self._snapshot_every, position), self._snapshots[base]
        )

    def step_of(self, position: int) -> int:
        """The step (1-based command number) of the event at 1-based ``position``."""
        if not 1 <= position <= len(self._history):
            raise BadInput(f"event {position} is out of range 1..{len(self._history)}")
        return bisect_left(self._history.ends, position) + 1

    def batch(self, step: int) -> tuple[int, int]:
        """The positions ``(start, end)`` of step ``step``'s events: ``events[start:end]``."""
        ends = self._history.ends
        if not 1 <= step <= len(ends):
            raise BadInput(f"step {step} is out of range 1..{len(ends)}")
        start = ends[step - 2] if step > 1 else 0
        return start, ends[step - 1]

    def diff(self, before: int, after: int) -> "StateDiff":
        """What changed between positions ``before`` and ``after``."""
        from memtape.core.diff import diff_states  # noqa: PLC0415 (show reads no diff)

        return diff_states(self.state_at(before), self.state_at(after))
