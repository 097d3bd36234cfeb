"""memtape.core.history: what goes in comes out, packed a block at a time."""

import gc
import sys
import types
from collections.abc import Sequence

from hypothesis import given
from hypothesis import strategies as st

from memtape.core.commands import AddTurn, Command, WriteFact
from memtape.core.events import Event, FactWritten, TurnAdded
from memtape.core.history import History
from memtape.core.run import Run
from memtape.reducers import fold

steps = st.lists(st.integers(1, 7), max_size=30)
"""How many events each step has."""


def _step(number: int, size: int) -> tuple[Command, list[Event]]:
    """A step: a turn and ``size - 1`` writes after it, all numbered after ``number``."""
    text = f"turn {number}"
    command = AddTurn("user", text) if number % 2 else WriteFact(f"k{number}", text, 0.5)
    events: list[Event] = [TurnAdded(number, "user", text, 2, False)]
    events += [FactWritten(number * 10 + i, f"k{i}", f"fact {i}", 0.5) for i in range(size - 1)]
    return command, events


def _filled(sizes: Sequence[int], block: int) -> tuple[History, list[Command], list[Event]]:
    history = History(block)
    commands: list[Command] = []
    events: list[Event] = []
    for number, size in enumerate(sizes, start=1):
        command, batch = _step(number, size)
        history.append(command, batch)
        commands.append(command)
        events += batch
    return history, commands, events


class TestReadingBack:
    @given(steps, st.integers(1, 9), st.data())
    def test_every_range_of_events_and_every_command_comes_back(
        self, sizes: list[int], block: int, data: st.DataObject
    ) -> None:
        """Whatever the blocks and the steps, ranges across blocks and the open part included."""
        history, commands, events = _filled(sizes, block)
        length = len(events)
        start = data.draw(st.integers(0, length))
        end = data.draw(st.integers(start, length))

        assert length == len(history)
        assert commands == history.commands()
        assert events == history.events(0, length)
        assert events[start:end] == history.events(start, end)
        for position in range(length + 1):
            assert events[position:] == history.events(position, length)

    def test_each_step_ends_where_its_events_do(self) -> None:
        history, _, _ = _filled([1, 3, 2], block=2)

        assert [1, 4, 6] == list(history.ends)

    def test_whole_blocks_are_packed_and_the_rest_kept_as_it_came(self) -> None:
        history, _, events = _filled([3, 3, 3], block=4)

        # Two blocks of 4 events are packed; the ninth event waits as it came.
        assert [bytes, bytes] == [type(block) for block in history._blocks]
        assert history.events(8, 9)[0] is events[8]

    def test_a_step_longer_than_a_block_spans_blocks(self) -> None:
        history, commands, events = _filled([1, 7, 1], block=2)

        assert (commands, events) == (history.commands(), history.events(0, 9))


class TestWhatWillNotPack:
    def test_a_block_with_a_value_pickle_cannot_write_stays_as_it_came(self) -> None:
        class Text(str):
            """A text of a type defined in a function: pickle cannot name it."""

        history = History(2)
        odd = TurnAdded(1, "user", Text("mine"), 1, False)
        history.append(AddTurn("user", "mine"), [odd, TurnAdded(2, "user", "b", 1, False)])
        history.append(AddTurn("user", "c"), [TurnAdded(3, "user", "c", 1, False)])

        assert [tuple] == [type(block) for block in history._blocks]
        assert history.events(0, 1)[0] is odd
        assert [TurnAdded(2, "user", "b", 1, False)] == history.events(1, 2)

    def test_a_run_with_such_a_value_still_seeks_and_reads_back(self) -> None:
        class Text(str):
            """As above."""

        run = Run(fold, snapshot_every=2)
        odd = TurnAdded(1, "user", Text("mine"), 1, False)
        run.append(AddTurn("user", "mine"), [odd])
        for n in range(2, 6):
            run.append(AddTurn("user", f"t{n}"), [TurnAdded(n, "user", f"t{n}", 1, False)])

        assert (odd, 5) == (run.events[0], len(run.events))
        assert fold(run.events[:3]) == run.state_at(3)


class TestWhatItHolds:
    def test_a_packed_history_leaves_the_collector_next_to_nothing_to_walk(self) -> None:
        history, _, _ = _filled([2] * 5_120, block=1024)  # ten whole blocks

        tracked = [obj for obj in _reachable(history) if gc.is_tracked(obj)]

        # The history and its lists; 10,240 events and 5,120 commands before packing.
        assert len(tracked) < 10

    def test_a_text_a_command_shares_with_its_event_is_packed_once(self) -> None:
        text = "a long text that a turn's command and its event share " * 4
        shared = History(1)
        shared.append(AddTurn("user", text), [TurnAdded(1, "user", text, 9, False)])
        apart = History(1)
        copy = "".join(list(text))
        apart.append(AddTurn("user", text), [TurnAdded(1, "user", copy, 9, False)])

        assert _size(shared) + len(text) // 2 < _size(apart)


def _reachable(root: object) -> list[object]:
    """Every object ``root`` holds, itself included, each once (not classes or modules)."""
    seen = {id(root)}
    found = [root]
    level = [root]
    while level:
        below = []
        for obj in gc.get_referents(*level):
            if id(obj) not in seen and not isinstance(obj, type | types.ModuleType):
                seen.add(id(obj))
                below.append(obj)
        found += below
        level = below
    return found


def _size(history: History) -> int:
    """The bytes of everything ``history`` holds."""
    return sum(map(sys.getsizeof, _reachable(history)))
