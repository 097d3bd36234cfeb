"""Deciding a command in a made-up world: the wall clock and global randomness set on purpose.

A policy must decide from its state and command alone. To show that one
does, ``decide_in_world`` decides with ``time.time``, ``time.monotonic``,
``time.perf_counter`` (and their ``_ns`` twins), ``datetime.now`` (and
``utcnow``, ``today``) and the global ``random`` generator all set to values
that depend on ``world``: a policy that reads any of them decides differently
in world 0 and world 1. Names a policy's module imported directly (``from
time import time``, ``from datetime import datetime``) are set too.
"""

import datetime as _datetime
import random
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

from memtape.core.commands import Command
from memtape.core.errors import Rejected
from memtape.core.events import Event
from memtape.core.state import State

_CLOCKS = ("time", "monotonic", "perf_counter")


def decide_in_world(
    policies: Any, state: State, command: Command, world: int
) -> tuple[Event, ...] | Rejected:
    """The events ``policies`` decide for ``command`` on ``state`` in world ``world``, or the
    rejection they raise instead."""
    with _world(world, _modules_of(policies)):
        try:
            return tuple(policies.decide(state, command))
        except Rejected as error:
            return error


def _modules_of(policies: Any) -> list[str]:
    """The modules of the policy classes behind ``policies`` (one policy or a bundle)."""
    axes = ("compaction", "forgetting", "consolidation")
    parts = [getattr(policies, axis, None) for axis in axes]
    return sorted({type(p).__module__ for p in [policies, *parts] if p is not None})


@contextmanager
def _world(world: int, modules: list[str]) -> Iterator[None]:
    """Within: the clocks read ``world``-dependent times and the global generator is seeded
    with ``world``; everything is put back afterwards."""
    replacements = _replacements(world)
    saved: list[tuple[Any, str, Any]] = []
    targets = [time, _datetime, *(sys.modules[m] for m in modules if m in sys.modules)]
    for target in targets:
        for name, value in list(vars(target).items()):
            # By identity: hashing every global of a module would cost more than deciding.
            replacement = replacements.get(id(value))
            if replacement is not None and replacement[0] is value:
                saved.append((target, name, value))
                setattr(target, name, replacement[1])
    randomness = random.getstate()
    random.seed(world)
    try:
        yield
    finally:
        random.setstate(randomness)
        for target, name, value in reversed(saved):
            setattr(target, name, value)


@cache
def _replacements(world: int) -> dict[int, tuple[Any, Any]]:
    """Each clock of world ``world`` by the id of the real one: ``(real, made up)``."""
    seconds = 1_700_000_000.0 + 86_400.0 * 365 * (world + 1) + 0.123 * world
    fixed = _datetime.datetime.fromtimestamp(seconds)

    class FrozenDatetime(_datetime.datetime):
        @classmethod
        def now(cls, tz: _datetime.tzinfo | None = None) -> "FrozenDatetime":
            moment = fixed.astimezone(tz) if tz is not None else fixed
            return cls.fromtimestamp(moment.timestamp(), tz)

        @classmethod
        def utcnow(cls) -> "FrozenDatetime":
            return cls.fromtimestamp(seconds, _datetime.UTC).replace(tzinfo=None)

        @classmethod
        def today(cls) -> "FrozenDatetime":
            return cls.fromtimestamp(seconds)

    pairs: list[tuple[Any, Any]] = [(_datetime.datetime, FrozenDatetime)]
    for name in _CLOCKS:
        value = seconds if name == "time" else 1000.0 * (world + 1)
        pairs.append((getattr(time, name), _constant(value)))
        pairs.append((getattr(time, f"{name}_ns"), _constant(int(value * 1e9))))
    return {id(real): (real, made_up) for real, made_up in pairs}


def _constant(value: float) -> Callable[[], Any]:
    return lambda: value
