"""Deciding in a made-up world: the clocks and global randomness differ between worlds, and
everything is put back afterwards."""

import datetime as _datetime
import random
import time
from datetime import datetime
from time import perf_counter
from typing import Any

from memtape.checking.determinism import decide_in_world, made_up_worlds
from memtape.core.commands import AddTurn
from memtape.core.errors import Rejected
from memtape.core.events import Event
from memtape.core.state import INITIAL_STATE, State


class Reads:
    """A decider that reports what it saw of the world, as the text of an error."""

    def __init__(self, look: Any) -> None:
        self.look = look

    def decide(self, state: State, command: AddTurn) -> tuple[Event, ...]:
        """Reject, saying what ``look()`` returned."""
        raise Rejected(repr(self.look()))


def seen(look: Any, world: int) -> str:
    """What ``look`` returns when a policy calls it in ``world``."""
    outcome = decide_in_world(Reads(look), INITIAL_STATE, AddTurn("user", "x"), world)
    assert isinstance(outcome, Rejected)
    return str(outcome)


# Each looks its clock up when called, as a policy does, so it sees the world's.
def wall() -> float:
    """time.time()."""
    return time.time()


def monotonic_ns() -> int:
    """time.monotonic_ns()."""
    return time.monotonic_ns()


def counter() -> float:
    """perf_counter(), imported by name."""
    return perf_counter()


def now() -> datetime:
    """datetime.now(), the class imported by name."""
    return datetime.now()


def draw() -> float:
    """The global generator's next number."""
    return random.random()


class TestWorlds:
    def test_each_clock_reads_differently_in_two_worlds(self) -> None:
        """time, monotonic, perf_counter, datetime.now and random each differ."""
        for look in (wall, monotonic_ns, counter, now, draw):
            assert seen(look, 0) != seen(look, 1)

    def test_a_world_reads_the_same_every_time(self) -> None:
        """World 0 is world 0 again: the comparison means something."""
        for look in (wall, now, draw):
            assert seen(look, 0) == seen(look, 0)

    def test_everything_is_put_back(self) -> None:
        """After deciding, the real clocks, datetime and the random state are back."""
        state = random.getstate()
        before = (time.time, time.perf_counter, datetime, perf_counter, _datetime.datetime)
        seen(now, 1)
        after = (time.time, time.perf_counter, datetime, perf_counter, _datetime.datetime)
        assert before == after
        assert state == random.getstate()


class TestAPass:
    def test_within_a_pass_a_decision_sees_its_world_and_the_rest_the_real_clock(self) -> None:
        """made_up_worlds swaps the clocks once; between decisions they read the real time."""
        state = random.getstate()
        earliest = _REAL_TIME()
        with made_up_worlds():
            first, second = seen(wall, 0), seen(wall, 1)
            between = time.time()
            again = seen(wall, 0)
            real_now = datetime.now()
        latest = _REAL_TIME()
        assert first == again != second
        # Read between two readings of the real clock (datetime keeps whole microseconds).
        assert earliest <= between <= latest
        assert earliest - 1e-6 <= real_now.timestamp() <= latest + 1e-6
        assert state == random.getstate()
        assert (time.time, datetime, perf_counter) == _REAL_CLOCKS

    def test_a_pass_gives_what_single_decisions_give(self) -> None:
        """The same world reads the same inside a pass as alone."""
        alone = [seen(look, world) for look in (wall, counter, now, draw) for world in (0, 1)]
        with made_up_worlds():
            within = [seen(look, world) for look in (wall, counter, now, draw) for world in (0, 1)]
        assert alone == within


_REAL_TIME = time.time
_REAL_CLOCKS = (time.time, datetime, perf_counter)
