"""The benchmark suite's targets, checked after a measured run.

Each benchmark records its median time under a name (``measure``). When
the benchmarks are enabled (``make bench``), the end of the session prints
the targets of issue 2 as a table of measured ratios and fails the run if
any is missed. With ``--benchmark-disable`` (the smoke run of ``make test``)
nothing is timed, so nothing is recorded and no target is checked.
"""

from collections.abc import Callable
from typing import Any, Protocol, TypeVar

import attrs
import pytest
from pytest_benchmark.fixture import BenchmarkFixture

SMOKE_SHRINK = 50
"""How much smaller every size is when the benchmarks are disabled (a smoke run)."""

Scale = Callable[[int], int]
"""The size to run for a benchmark's full size: smaller in a smoke run."""

T = TypeVar("T")


class Measure(Protocol):
    """Times a target with ``benchmark.pedantic`` and records its median under a name."""

    def __call__(self, name: str, target: Callable[..., T], *args: Any, rounds: int) -> T:
        """The target's result (from its last round)."""
        ...


MEDIANS = pytest.StashKey[dict[str, float]]()
"""Where the session keeps each recorded median, by name."""

REPORT = pytest.StashKey[list[str]]()
"""The targets' table, once the session has checked them."""


@attrs.frozen
class Target:
    """A bound on the ratio of two recorded medians: ``slower / faster``."""

    label: str
    slower: str
    faster: str
    least: float | None = None
    most: float | None = None

    def met(self, ratio: float) -> bool:
        """Whether ``ratio`` lies within the bound."""
        if self.least is not None and ratio < self.least:
            return False
        return self.most is None or ratio <= self.most

    def bound(self) -> str:
        """The bound as a reader would say it."""
        return f">= {self.least:g}x" if self.least is not None else f"<= {self.most:g}x"


TARGETS = (
    Target(
        "budget 2000 / hot_n 8, 100k turns: yardstick / memtape",
        slower="yardstick-2000-8-100k",
        faster="memtape-2000-8-100k",
        least=10,
    ),
    Target(
        "budget 40 / hot_n 2, 100k turns: memtape / yardstick",
        slower="memtape-40-2-100k",
        faster="yardstick-40-2-100k",
        most=1.5,
    ),
    Target(
        "budget 2000 / hot_n 8, memtape: 100k turns / 10k turns",
        slower="memtape-2000-8-100k",
        faster="memtape-2000-8-10k",
        most=11,
    ),
    Target(
        "budget 40 / hot_n 2, memtape: 100k turns / 10k turns",
        slower="memtape-40-2-100k",
        faster="memtape-40-2-10k",
        most=11,
    ),
)
"""The targets of issue 2, over the names the compaction benchmarks record."""


def pytest_configure(config: pytest.Config) -> None:
    config.stash[MEDIANS] = {}


@pytest.fixture
def scale(benchmark: BenchmarkFixture) -> Scale:
    """Full sizes when timing, sizes ``SMOKE_SHRINK`` times smaller in a smoke run."""
    return lambda size: size if benchmark.enabled else size // SMOKE_SHRINK


@pytest.fixture
def measure(request: pytest.FixtureRequest, benchmark: BenchmarkFixture) -> Measure:
    """Time ``target(*args)`` over ``rounds`` rounds and keep the median under ``name``.

    With the benchmarks disabled, the target runs once, untimed, and nothing is kept.
    """
    medians = request.config.stash[MEDIANS]

    def run(name: str, target: Callable[..., T], *args: Any, rounds: int) -> T:
        result: T = benchmark.pedantic(  # type: ignore[no-untyped-call]
            target, args=args, rounds=rounds, iterations=1
        )
        if benchmark.enabled and benchmark.stats is not None:
            medians[name] = benchmark.stats.stats.median
        return result

    return run


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Check the targets against the recorded medians; a missed target fails the run."""
    medians = session.config.stash.get(MEDIANS, {})
    if not medians:
        return
    lines = ["issue 2 targets, as ratios of median times:"]
    missed = False
    for target in TARGETS:
        slower, faster = medians.get(target.slower), medians.get(target.faster)
        if slower is None or faster is None:
            lines.append(f"  {target.label:<62} not measured")
            continue
        ratio = slower / faster
        met = target.met(ratio)
        missed = missed or not met
        lines.append(
            f"  {target.label:<62} {slower:7.3f} s / {faster:6.3f} s = {ratio:6.2f}x"
            f"  (target {target.bound()})  {'met' if met else 'MISSED'}"
        )
    if missed:
        lines.append("a target was missed: the run fails")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    session.config.stash[REPORT] = lines


@pytest.hookimpl(trylast=True)
def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    """Print the targets' table after pytest-benchmark's own tables."""
    lines = config.stash.get(REPORT, [])
    if lines:
        terminalreporter.section("targets")
        for line in lines:
            terminalreporter.write_line(line)
