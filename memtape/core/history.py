"""A run's history: every step's command and the events that honoured it, oldest first.

The history grows by whole steps and is never changed, so all but its newest
events can be held packed: each block of ``block`` events (no longer than
the run's snapshot interval, so a seek unpacks at most the blocks that hold
the events it folds), with the commands of the steps that start in it, is
one bytes object of pickled rows (``memtape.core.packing``). A packed event
costs its fields' bytes rather than an object, an int or a float object for
each field and a pointer in a list, and a text that a command and its event
share is written once.
The bytes never leave the process and never come from a file (run files are
JSON lines or SQLite): a history unpickles only what it pickled itself. A
packed block is also nothing for the cyclic garbage collector to walk, where
each full collection of a long run walked a history of records whole. The
newest events, fewer than a block, are kept as they came.

Records come back equal (``==``) to those appended, built again on each read:
reading a block costs about a third of what folding it does.
"""

from array import array
from bisect import bisect_left
from collections.abc import Sequence

from memtape.core.commands import Command
from memtape.core.events import Event
from memtape.core.packing import Row, build, pack_all

_PROTOCOL = 5
"""The pickle protocol of a packed block (out-of-band buffers unused: one bytes object)."""

Block = bytes | tuple[tuple[Event, ...], tuple[Command, ...]]
"""A block of the history: its events' and commands' rows, packed; or, where a record
would not pack (a type of a user's own, or a value pickle cannot write), the records."""


class History:
    """Every step's command and events, the older ones packed a block at a time."""

    __slots__ = (
        "_block",
        "_blocks",
        "_commands",
        "_ends",
        "_events",
        "_first_step",
        "_read",
        "length",
    )

    def __init__(self, block: int) -> None:
        self._block = block
        self._blocks: list[Block] = []
        self._events: list[Event] = []
        self._commands: list[Command] = []
        self._first_step = 0
        # Machine integers, 8 bytes a step, not an int object each.
        self._ends = array("q")
        self.length = 0
        """How many events it holds (an attribute, not a call: every append reads it)."""
        self._read: tuple[int, tuple[list[Row], list[Row]]] | None = None

    def __len__(self) -> int:
        return self.length

    @property
    def ends(self) -> Sequence[int]:
        """After how many events each step ends: step ``s`` (1-based) ends at ``ends[s - 1]``."""
        return self._ends

    def append(self, command: Command, events: Sequence[Event]) -> None:
        """Add a step; pack each block it completes."""
        self._events.extend(events)
        self._commands.append(command)
        self.length += len(events)
        self._ends.append(self.length)
        while len(self._events) >= self._block:
            self._pack()

    def _pack(self) -> None:
        """Pack the oldest unpacked block, with the commands of the steps that start in it."""
        end = (len(self._blocks) + 1) * self._block
        # Step s + 1 starts after ends[s - 1] events: those before `end` start in this block.
        steps = 1 + bisect_left(self._ends, end) - self._first_step
        events = self._events[: self._block]
        commands = self._commands[:steps]
        import pickle  # noqa: PLC0415 (a run shorter than a block, as show's often is, packs none)

        block: Block
        try:
            block = pickle.dumps((pack_all(events), pack_all(commands)), _PROTOCOL)
        except Exception:
            # Packing saves memory; a block that will not pack must not fail the append.
            block = (tuple(events), tuple(commands))
        self._blocks.append(block)
        del self._events[: self._block]
        del self._commands[:steps]
        self._first_step += steps

    def _rows(self, index: int, block: bytes) -> tuple[list[Row], list[Row]]:
        """The rows of block ``index``, packed as ``block`` (the last block read is kept)."""
        read = self._read
        if read is None or read[0] != index:
            import pickle  # noqa: PLC0415 (as in _pack)

            # Bytes this history packed itself, never anything read from a file.
            read = self._read = (index, pickle.loads(block))
        return read[1]

    def events(self, start: int, end: int) -> list[Event]:
        """The events at positions ``start`` up to ``end`` (0-based, ``end`` excluded)."""
        found: list[Event] = []
        opened = len(self._blocks) * self._block
        while start < min(end, opened):
            index = start // self._block
            first = index * self._block
            stop = min(end, first + self._block)
            found += self._block_events(index, start - first, stop - first)
            start = stop
        if start < end:
            found += self._events[start - opened : end - opened]
        return found

    def _block_events(self, index: int, start: int, end: int) -> Sequence[Event]:
        """The events of block ``index`` at offsets ``start`` up to ``end``."""
        block = self._blocks[index]
        if not isinstance(block, bytes):
            return block[0][start:end]
        return [build(row) for row in self._rows(index, block)[0][start:end]]

    def commands(self) -> list[Command]:
        """Every step's command, in order."""
        found: list[Command] = []
        for index, block in enumerate(self._blocks):
            if isinstance(block, bytes):
                found += [build(row) for row in self._rows(index, block)[1]]
            else:
                found += block[1]
        return found + self._commands
