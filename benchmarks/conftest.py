"""The benchmark suite's helper fixture, and the targets checked after a timed run.

Each benchmark times its target through ``bench.measure``, which records the
median under a name, or times the sides of a ratio in turn, round after round,
through ``bench.in_turn``, which records each side's median. When the
benchmarks are enabled (``make bench``), the end of the session prints the
noted figures and the targets as tables of measured ratios, and fails the run
if a target is missed. With ``--benchmark-disable`` (the smoke run of ``make
test``) every benchmark runs once at a small size, nothing is timed, and no
target is checked.
"""

import gc
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import attrs
import pytest
from pytest_benchmark.fixture import BenchmarkFixture

SMOKE_SHRINK = 50
"""How much smaller every size is when the benchmarks are disabled (a smoke run)."""

MEDIANS = pytest.StashKey[dict[str, float]]()
"""Where the session keeps each recorded median, in seconds, by name."""

NOTES = pytest.StashKey[list[str]]()
"""Lines of figures the benchmarks noted for the summary (throughputs), in order."""

REPORT = pytest.StashKey[list[str]]()
"""The targets' table, once the session has checked them."""

T = TypeVar("T")


@attrs.frozen
class Bench:
    """One benchmark's helpers around pytest-benchmark's ``benchmark`` fixture."""

    benchmark: BenchmarkFixture
    medians: dict[str, float]
    notes: list[str]

    @property
    def timed(self) -> bool:
        """Whether this run times the benchmarks (not a ``--benchmark-disable`` smoke run)."""
        return bool(self.benchmark.enabled)

    def size(self, full: int) -> int:
        """The size to run: ``full`` when timed, ``SMOKE_SHRINK`` times smaller otherwise."""
        return full if self.timed else full // SMOKE_SHRINK

    def measure(
        self,
        name: str,
        target: Callable[..., T],
        *args: Any,
        rounds: int,
        collector: bool = True,
    ) -> T:
        """Time ``target(*args)`` over ``rounds`` rounds and keep the median under ``name``.

        With ``collector=False`` every round starts after a full collection and
        runs with the cyclic garbage collector paused, as ``timeit`` times by
        default: the figure is the target's own work, without the collections
        that whatever else lives in the process happens to trigger.

        Returns the target's result (from its last round). With the benchmarks
        disabled, the target runs once, untimed, and nothing is kept.
        """
        setup = None
        if not collector:
            target, setup = _paused(target), _collect
        result: T = self.benchmark.pedantic(  # type: ignore[no-untyped-call]
            target, args=args, setup=setup, rounds=rounds, iterations=1
        )
        if self.median is not None:
            self.medians[name] = self.median
        return result

    def in_turn(self, name: str, sides: Sequence["Side"], *, rounds: int) -> None:
        """Time each of ``sides`` once a round, one after the other, for ``rounds`` rounds,
        and keep each side's median under its own name (the whole round's under ``name``).

        A ratio of two figures timed minutes apart swings with whatever else the
        machine does meanwhile (a third, here); timed in turn, what weighs on one
        side weighs on the others. Each side starts after a full collection; a sample is
        the mean of ``side.repeat`` runs.
        """
        times: dict[str, list[float]] = {side.name: [] for side in sides}

        def one_round() -> None:
            for side in sides:
                times[side.name].append(side.timed(side.repeat if self.timed else 1))

        self.measure(name, one_round, rounds=rounds if self.timed else 1)
        for side_name, kept in times.items():
            self.keep(side_name, kept)

    def keep(self, name: str, times: Sequence[float]) -> None:
        """Keep the median of ``times`` (seconds, timed by the benchmark itself: processes
        run in turn, say) under ``name``; nothing is kept when the benchmarks are disabled."""
        if self.timed and times:
            self.medians[name] = statistics.median(times)

    @property
    def median(self) -> float | None:
        """The median time of the measured target, in seconds (None if untimed)."""
        stats = self.benchmark.stats
        return None if stats is None else float(stats.stats.median)

    def record(self, name: str, value: float) -> None:
        """Keep a figure that is not a time (a file's bytes) under ``name``, in a timed run."""
        if self.timed:
            self.medians[name] = value

    def note(self, line: str) -> None:
        """Add a line of figures to the summary of a timed run."""
        if self.timed:
            self.notes.append(line)


@attrs.frozen
class Side:
    """One figure of a round that ``Bench.in_turn`` times: ``run()``, with the cyclic
    garbage collector running through it (as in any program) or paused (as ``timeit``
    times, the work of what runs alone)."""

    name: str
    run: Callable[[], object]
    collector: bool = False
    clock: Callable[[], float] = time.perf_counter
    """What times it: the wall clock, or ``time.process_time`` for the CPU time this
    process spent (a ratio of a run to itself at another length, which the machine's
    other work would otherwise swing by more than the bound)."""
    repeat: int = 1
    """How many runs one sample is the mean of: a short run (a tenth of the turns of the
    side it is compared with) is run ten times a sample, so both samples of a ratio last as
    long, and what the machine does meanwhile weighs on them alike (the median of samples a
    tenth as long would miss most of what the longer ones catch)."""

    def timed(self, repeat: int = 1) -> float:
        """Seconds one ``run()`` takes, from a full collection: the mean of ``repeat`` runs."""
        spent = 0.0
        for _ in range(repeat):
            gc.collect()
            was_enabled = gc.isenabled()
            if not self.collector:
                gc.disable()
            clock = self.clock
            try:
                started = clock()
                self.run()
                spent += clock() - started
            finally:
                if was_enabled:
                    gc.enable()
        return spent / repeat


def _collect() -> None:
    """A full collection before a round (returning nothing, so pedantic keeps its args)."""
    gc.collect()


def _paused(target: Callable[..., T]) -> Callable[..., T]:
    """``target`` run with the cyclic garbage collector paused."""

    def paused(*args: Any) -> T:
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            return target(*args)
        finally:
            if was_enabled:
                gc.enable()

    return paused


FROZEN_EVENTS_MOST = 1.9
"""The most a 40 / hot_n 2 turn may cost against the naive loop's, paused or with the
collector running: issue 14's 1.5x, restated by issue 27 for events that are frozen attrs
classes (a turn builds two of them, and each field is set through ``object.__setattr__``)."""


@attrs.frozen
class Target:
    """A bound on the ratio of two recorded medians: ``slower / faster``."""

    label: str
    slower: str
    faster: str
    least: float | None = None
    most: float | None = None
    issue: int = 2
    unit: str = "s"
    """What the two figures are: median times (``"s"``) or sizes (``"bytes"``)."""

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
        "viewer, a scrub step in the page: 100k-event run / 1k-event run",
        slower="viewer-scrub-100k",
        faster="viewer-scrub-1k",
        most=3,
        issue=29,
    ),
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
        most=FROZEN_EVENTS_MOST,
        issue=27,
    ),
    Target(
        "budget 2000 / hot_n 8, memtape: 100k turns / 10k turns",
        slower="tiered-2000-8-100k",
        faster="tiered-2000-8-10k",
        most=11,
    ),
    Target(
        "budget 40 / hot_n 2, memtape: 100k turns / 10k turns",
        slower="tiered-40-2-100k",
        faster="tiered-40-2-10k",
        most=11,
    ),
    Target(
        "none (HOT keeps every turn): 100k turns / 10k turns",
        slower="none-100k",
        faster="none-10k",
        most=11,
    ),
    Target(
        "1M-event JSONL run: read_run / orjson.loads on each line",
        slower="load-read_run",
        faster="load-orjson",
        most=5,
        issue=3,
    ),
    Target(
        "1M events, snapshots every 1024: full replay / median seek",
        slower="replay",
        faster="seek-1024",
        least=1000,
        issue=3,
    ),
    Target(
        "200k-event run: SqliteStore.read / orjson.loads on each line of its JSONL",
        slower="store-read",
        faster="store-orjson",
        most=5,
        issue=14,
    ),
    Target(
        "bench sweep, 6 cells on 2 CPUs: Ray tasks / the process pool",
        slower="sweep-ray",
        faster="sweep-process",
        most=1.5,
        issue=14,
    ),
    Target(
        "budget 40 / hot_n 2, 100k turns: memtape, collector running / yardstick",
        slower="memtape-40-2-100k-collector",
        faster="yardstick-40-2-100k",
        most=FROZEN_EVENTS_MOST,
        issue=27,
    ),
    Target(
        "budget 2000 / hot_n 8, 100k turns: yardstick / memtape, collector running",
        slower="yardstick-2000-8-100k",
        faster="memtape-2000-8-100k-collector",
        least=12,
        issue=14,
    ),
    Target(
        "memtape --help / python -c 'import json', whole process",
        slower="startup-help",
        faster="startup-python",
        most=3,
        issue=14,
    ),
    Target(
        "memtape show of a 15-event run / python -c 'import json', whole process",
        slower="startup-show",
        faster="startup-python",
        most=4.5,
        issue=27,
    ),
    Target(
        "clear-tool-results / none, 20k chat turns, no tool turn: per command",
        slower="chat-clear-20k",
        faster="chat-none-20k",
        most=2,
        issue=14,
    ),
    Target(
        "clear-tool-results / none, 20k generated support turns: run file",
        slower="bytes-clear-20k",
        faster="bytes-none-20k",
        most=2,
        issue=14,
        unit="bytes",
    ),
    Target(
        "rolling-summary, 10k-turn bench cell: llm summarizer, warm cache / salient",
        slower="llm-warm-10k",
        faster="salient-10k",
        most=1.5,
        issue=12,
    ),
    Target(
        "bench of clear-tool-results, a cell per turn: 20k turns / 5k turns",
        slower="bench-turn-20k",
        faster="bench-turn-5k",
        most=1.2,
        issue=27,
    ),
    Target(
        "bench of clear-tool-results, a cell per turn: 50k turns / 5k turns",
        slower="bench-turn-50k",
        faster="bench-turn-5k",
        most=1.2,
        issue=27,
    ),
    Target(
        "4 identical bench cells on 2 workers: slowest / fastest, per command",
        slower="cells-slowest",
        faster="cells-fastest",
        most=1.3,
        issue=29,
    ),
)
"""The targets of issue 2, over the names the compaction benchmarks record, of
issue 3, over the names the seek benchmarks record, of issue 12, over the names
the LLM summary benchmark records, of issue 14, and of issue 29 (a bench cell's
decision cost is its own, whichever worker ran it first; the viewer's scrub step,
``test_viewer.py``).

The compaction benchmarks behind issue 2's targets time memtape's own work:
each round starts after a full collection and runs with the collector paused
(``Bench.measure(collector=False)``). Issue 14's compare memtape's rounds with
the collector running, as in any program, to the yardstick's own work (it
keeps no history, so the collector has next to nothing to walk in its rounds).
``WITH_COLLECTOR`` shows what the collector adds."""

WITH_COLLECTOR = (
    Target(
        "budget 40 / hot_n 2, 100k turns: memtape, collector running / paused",
        slower="memtape-40-2-100k-collector",
        faster="memtape-40-2-100k",
    ),
    Target(
        "budget 2000 / hot_n 8, 100k turns: memtape, collector running / paused",
        slower="memtape-2000-8-100k-collector",
        faster="memtape-2000-8-100k",
    ),
)
"""Ratios shown beside the targets, not checked: what the cyclic garbage collector adds
to memtape's rounds."""


@attrs.frozen
class Limit:
    """A bound on one recorded figure: a median in seconds (a throughput's target), or
    a size in bytes an event."""

    label: str
    name: str
    most: float
    issue: int
    unit: str = "s"
    """What the figure is: a median time (``"s"``) or a size (``"bytes an event"``)."""

    def shown(self, value: float) -> str:
        """``value`` as the targets' table shows it."""
        return seconds(value, 7) if self.unit == "s" else f"{value:7.0f} {self.unit}"


LIMITS = (
    Limit(
        "SQLite store, live appends: 2,000 commands, one transaction each",
        name="store-append-2000",
        most=1.0,
        issue=14,
    ),
    Limit(
        "memtape check of the 20k-turn support run under clear-tool-results",
        name="check-clear-20k",
        most=10.0,
        issue=14,
    ),
    Limit(
        "an open 200k-event mixed run, decided live: bytes an event",
        name="memory-live",
        most=200,
        issue=14,
        unit="bytes an event",
    ),
    Limit(
        "the same run read back from its JSONL file: bytes an event",
        name="memory-loaded",
        most=200,
        issue=14,
        unit="bytes an event",
    ),
    Limit(
        "recall, BM25 over 100,000 dropped turns: one query",
        name="recall-query-100k",
        most=0.020,
        issue=30,
    ),
)
"""Targets on a figure of their own: at least 2,000 commands a second is 2,000 in a second;
the memory of an open run is its bytes an event."""


LENGTH_MOST = 1.2
"""The most a stretch of turns may cost after 100k or 1M turns against after 10k (issue 27)."""


def length_targets(medians: dict[str, float]) -> list[Target]:
    """A target for each policy and longer length ``test_length.py`` timed
    (``length-{policy}-{size}``): the stretch after it, against the one after 10k."""
    targets: list[Target] = []
    for name in medians:
        policy, _, size = name.removeprefix("length-").rpartition("-")
        if name.startswith("length-") and size in ("100k", "1M"):
            targets.append(
                Target(
                    f"{policy}, a turn after {size} turns / after 10k turns",
                    slower=name,
                    faster=f"length-{policy}-10k",
                    most=LENGTH_MOST,
                    issue=27,
                )
            )
    return targets


def seconds(value: float, width: int) -> str:
    """A median for the targets' table: in seconds, or in milliseconds below 10 ms."""
    if value >= 0.01:
        return f"{value:{width}.3f} s"
    return f"{value * 1e3:{width}.3f} ms"


def pytest_configure(config: pytest.Config) -> None:
    config.stash[MEDIANS] = {}
    config.stash[NOTES] = []


@pytest.fixture
def bench(request: pytest.FixtureRequest, benchmark: BenchmarkFixture) -> Bench:
    """This benchmark's helpers: sizes, timing with recorded medians, notes."""
    return Bench(benchmark, request.config.stash[MEDIANS], request.config.stash[NOTES])


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Check the targets against the recorded medians; a missed target fails the run."""
    medians = session.config.stash.get(MEDIANS, {})
    if not medians:
        return
    lines: list[str] = []
    missed = False
    for target in (*TARGETS, *length_targets(medians)):
        header = f"issue {target.issue} targets, as ratios of median times:"
        if header not in lines:
            lines.append(header)
        ratio = _ratio(target, medians, lines)
        if ratio is not None:
            met = target.met(ratio)
            missed = missed or not met
            lines[-1] += f"  (target {target.bound()})  {'met' if met else 'MISSED'}"
    for limit in LIMITS:
        header = f"issue {limit.issue} targets, on a figure of their own:"
        if header not in lines:
            lines.append(header)
        median = medians.get(limit.name)
        if median is None:
            lines.append(f"  {limit.label:<70} not measured")
            continue
        met = median <= limit.most
        missed = missed or not met
        bound = limit.shown(limit.most).strip()
        lines.append(
            f"  {limit.label:<70} {limit.shown(median)}  (target <= {bound})  "
            f"{'met' if met else 'MISSED'}"
        )
    if any(figure.slower in medians for figure in WITH_COLLECTOR):
        lines.append("with the collector running through memtape's rounds (figures, not targets):")
        for figure in WITH_COLLECTOR:
            _ratio(figure, medians, lines)
    if missed:
        lines.append("a target was missed: the run fails")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    session.config.stash[REPORT] = lines


def megabytes(value: float, width: int) -> str:
    """A size for the targets' table, in megabytes."""
    return f"{value / 1e6:{width}.2f} MB"


def _ratio(target: Target, medians: dict[str, float], lines: list[str]) -> float | None:
    """Add the line of ``target``'s ratio to ``lines``; the ratio, or None if not measured."""
    slower, faster = medians.get(target.slower), medians.get(target.faster)
    if slower is None or faster is None:
        lines.append(f"  {target.label:<70} not measured")
        return None
    ratio = slower / faster
    shown = megabytes if target.unit == "bytes" else seconds
    lines.append(f"  {target.label:<70} {shown(slower, 7)} / {shown(faster, 6)} = {ratio:6.2f}x")
    return ratio


@pytest.hookimpl(trylast=True)
def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    """Print the noted figures and the targets' table after pytest-benchmark's tables."""
    lines = config.stash.get(NOTES, []) + config.stash.get(REPORT, [])
    if lines:
        terminalreporter.section("figures and targets")
        for line in lines:
            terminalreporter.write_line(line)
