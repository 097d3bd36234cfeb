"""Deciding a command in a made-up world: the wall clock and global randomness set on purpose.

A policy must decide from its state and command alone. To show that one
does, ``decide_in_world`` decides with ``time.time``, ``time.monotonic``,
``time.perf_counter`` (and their ``_ns`` twins), ``datetime.now`` (and
``utcnow``, ``today``) and the global ``random`` generator all set to values
that depend on ``world``: a policy that reads any of them decides differently
in world 0 and world 1. Names a policy's module imported directly (``from
time import time``, ``from datetime import datetime``) are set too.

Deciding many commands (``memtape check`` re-decides a whole run in two
worlds), ``made_up_worlds`` swaps the clocks once for the whole pass: within
it, each clock is a stand-in that reads the world a decision is in, and the
real clock between decisions, so a decision costs a seed of the generator
rather than a walk of every module's globals.
"""

import datetime as _datetime
import random
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from memtape.core.commands import Command
from memtape.core.errors import Rejected
from memtape.core.events import Event
from memtape.core.state import State

_CLOCKS = ("time", "monotonic", "perf_counter")
_REAL_DATETIME = _datetime.datetime


def decide_in_world(
    policies: Any, state: State, command: Command, world: int
) -> tuple[Event, ...] | Rejected:
    """The events ``policies`` decide for ``command`` on ``state`` in world ``world``, or the
    rejection they raise instead."""
    with made_up_worlds():
        _SWAP.cover(_modules_of(policies))
        _SWAP.world = world
        random.seed(world)
        try:
            return tuple(policies.decide(state, command))
        except Rejected as error:
            return error
        finally:
            _SWAP.world = None


@contextmanager
def made_up_worlds() -> Iterator[None]:
    """Within: the clocks (in ``time``, ``datetime`` and each policy module a decision
    uses) are stand-ins, so ``decide_in_world`` only names its world; everything is put
    back afterwards, the global generator's state too. Outside any decision the
    stand-ins read the real clocks. Nested uses share the outermost swap."""
    if _SWAP.depth:
        _SWAP.depth += 1
        try:
            yield
        finally:
            _SWAP.depth -= 1
        return
    randomness = random.getstate()
    _SWAP.depth = 1
    try:
        _SWAP.cover(["time", "datetime"])
        yield
    finally:
        _SWAP.depth = 0
        _SWAP.world = None
        _SWAP.restore()
        random.setstate(randomness)


class _Swap:
    """The clocks swapped for stand-ins: which modules, what was there, the world in force."""

    def __init__(self) -> None:
        self.depth = 0
        self.world: int | None = None
        self.covered: set[str] = set()
        self.saved: list[tuple[Any, str, Any]] = []
        self.stand_ins = _stand_ins(self)

    def cover(self, modules: list[str]) -> None:
        """Swap the clocks in each of ``modules`` not swapped yet (a policy's module may
        be seen first at any step of a forked run)."""
        for name in modules:
            if name in self.covered:
                continue
            self.covered.add(name)
            target = sys.modules.get(name)
            if target is None:
                continue
            for attribute, value in list(vars(target).items()):
                # By identity: hashing every global of a module would cost more than deciding.
                stand_in = self.stand_ins.get(id(value))
                if stand_in is not None and stand_in[0] is value:
                    self.saved.append((target, attribute, value))
                    setattr(target, attribute, stand_in[1])

    def restore(self) -> None:
        """Put back every clock swapped."""
        for target, attribute, value in reversed(self.saved):
            setattr(target, attribute, value)
        self.saved.clear()
        self.covered.clear()


def _modules_of(policies: Any) -> list[str]:
    """The modules of the policy classes behind ``policies`` (one policy or a bundle)."""
    axes = ("compaction", "forgetting", "consolidation")
    parts = [getattr(policies, axis, None) for axis in axes]
    return sorted({type(p).__module__ for p in [policies, *parts] if p is not None})


def _seconds(world: int) -> float:
    """The wall clock of world ``world``."""
    return 1_700_000_000.0 + 86_400.0 * 365 * (world + 1) + 0.123 * world


def _stand_ins(swap: _Swap) -> dict[int, tuple[Any, Any]]:
    """Each clock's stand-in by the id of the real one: ``(real, stand-in)``."""

    class FrozenDatetime(_REAL_DATETIME):
        @classmethod
        def now(cls, tz: _datetime.tzinfo | None = None) -> "FrozenDatetime":
            if swap.world is None:
                return cls._real(_REAL_DATETIME.now(tz))
            fixed = _REAL_DATETIME.fromtimestamp(_seconds(swap.world))
            moment = fixed.astimezone(tz) if tz is not None else fixed
            return cls.fromtimestamp(moment.timestamp(), tz)

        @classmethod
        def utcnow(cls) -> "FrozenDatetime":
            if swap.world is None:
                return cls._real(_REAL_DATETIME.now(_datetime.UTC).replace(tzinfo=None))
            return cls.fromtimestamp(_seconds(swap.world), _datetime.UTC).replace(tzinfo=None)

        @classmethod
        def today(cls) -> "FrozenDatetime":
            if swap.world is None:
                return cls._real(_REAL_DATETIME.today())
            return cls.fromtimestamp(_seconds(swap.world))

        @classmethod
        def _real(cls, moment: _datetime.datetime) -> "FrozenDatetime":
            """The real ``moment``, between decisions."""
            return cls.combine(moment.date(), moment.timetz())

    pairs: list[tuple[Any, Any]] = [(_REAL_DATETIME, FrozenDatetime)]
    for name in _CLOCKS:
        real, real_ns = getattr(time, name), getattr(time, f"{name}_ns")
        made_up = _seconds if name == "time" else _uptime
        pairs.append((real, _stand_in(swap, real, made_up)))
        pairs.append((real_ns, _stand_in(swap, real_ns, _nanoseconds(made_up))))
    return {id(real): (real, stand_in) for real, stand_in in pairs}


def _uptime(world: int) -> float:
    """The monotonic and performance counters of world ``world``."""
    return 1000.0 * (world + 1)


def _nanoseconds(clock: Callable[[int], float]) -> Callable[[int], int]:
    return lambda world: int(clock(world) * 1e9)


def _stand_in(swap: _Swap, real: Callable[[], Any], made_up: Callable[[int], Any]) -> Any:
    """A clock that reads ``made_up(world)`` within a world, ``real()`` outside one."""

    def clock() -> Any:
        world = swap.world
        return real() if world is None else made_up(world)

    return clock


_SWAP = _Swap()
