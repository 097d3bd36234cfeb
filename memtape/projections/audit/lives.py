"""A life as the audit tells it (its steps and where it ends), and the states around the
events that touch it, sought once over the log."""

from collections.abc import Mapping
from typing import Any, Literal

import attrs

from memtape.core.run import DEFAULT_SNAPSHOT_EVERY, Run
from memtape.core.state import State
from memtape.projections.audit.targets import Target
from memtape.reducers import evolve, fold


@attrs.frozen
class Step:
    """One event in a life: where it sits, what it did, and the numbers that decided it."""

    at: int
    step: int
    type: str
    clock: float
    what: str
    numbers: Mapping[str, Any]


@attrs.frozen
class Standing:
    """Where a turn or fact stands at the end of the run."""

    status: str
    what: str
    numbers: Mapping[str, Any]


@attrs.frozen
class Subject:
    """The life of one turn, fact or memory block (``id``: its place among the blocks,
    1 for the first created): its steps, oldest first, and where it ends."""

    kind: Literal["turn", "fact", "block"]
    id: int
    label: str
    steps: tuple[Step, ...]
    now: Standing


@attrs.frozen
class Life:
    """What ``audit`` found for a target: one subject (several for a key, in id order)."""

    target: Target
    subjects: tuple[Subject, ...]


@attrs.frozen
class Moment:
    """An event that touches the target: its position, its step, the states around it."""

    at: int
    step: int
    before: State
    after: State


class Seeker:
    """The states around the touching events, in order, folding forward when that is cheaper.

    The first touch seeks with ``run.state_at`` (at most a snapshot interval
    of folds); a later one folds on from the previous touch when that is no
    more than a default interval away, so a target touched on every event
    still costs one pass over the log.
    """

    def __init__(self, run: Run) -> None:
        self._run = run
        self._events = run.events
        self._last: tuple[int, State] | None = None

    def around(self, at: int) -> Moment:
        """The event at 1-based position ``at``, with the states before and after it."""
        last = self._last
        if last is not None and 0 <= at - 1 - last[0] <= DEFAULT_SNAPSHOT_EVERY:
            before = fold(self._events[last[0] : at - 1], last[1])
        else:
            before = self._run.state_at(at - 1)
        after = evolve(before, self._events[at - 1])
        self._last = (at, after)
        return Moment(at, self._run.step_of(at), before, after)
