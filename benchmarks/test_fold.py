"""Fold throughput: replaying a recorded log with ``memtape.reducers.fold``.

The log is recorded once per setting from a generated support session under
tiered compaction (turns and the compactions they trigger), cut to
``EVENTS`` events. The replay must rebuild exactly the state the run reached
at that point.
"""

from collections.abc import Callable
from functools import cache

import pytest

from benchmarks.conftest import Bench
from benchmarks.sessions import run_tiered, support_session
from memtape.core.events import Event
from memtape.core.state import State
from memtape.reducers import fold

EVENTS = 100_000
"""Events replayed per round."""

ROUNDS = 5
"""Timed rounds per setting."""


Recording = tuple[tuple[Event, ...], State]
"""A log, and the state the run reached at its end."""


def record_log(budget: int, hot_n: int, events: int) -> Recording:
    """The first ``events`` events of a long session's run, and the state after them."""
    turns = events  # every turn is at least one event
    run = run_tiered(support_session(turns), budget, hot_n).run
    return tuple(run.events[:events]), run.state_at(events)


@pytest.fixture(scope="module")
def recorded() -> Callable[[int, int, int], Recording]:
    """``record_log``, once per setting while this module runs (then freed)."""
    return cache(record_log)


@pytest.mark.parametrize(
    "setting", [pytest.param((2000, 8), id="2000-8"), pytest.param((40, 2), id="40-2")]
)
def test_fold(
    bench: Bench, recorded: Callable[[int, int, int], Recording], setting: tuple[int, int]
) -> None:
    budget, hot_n = setting
    events, expected = recorded(budget, hot_n, bench.size(EVENTS))
    bench.benchmark.group = "fold"
    state = bench.measure(f"fold-{budget}-{hot_n}", fold, events, rounds=ROUNDS)
    assert state == expected
    bench.benchmark.extra_info.update(events=len(events))
    if bench.median is not None:
        rate = len(events) / bench.median
        bench.benchmark.extra_info["events_per_second"] = round(rate)
        bench.note(f"fold, budget {budget} / hot_n {hot_n}: {rate:,.0f} events/s")
