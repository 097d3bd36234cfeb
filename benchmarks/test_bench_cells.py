"""Identical bench cells on the process pool: each cell's µs/command is its own commands'
cost, not its worker's start, so two identical cells report about the same figure.

Before issue 29 the first cell of each worker also paid the worker's lazy imports and
first writes to the memory it shares with its parent (1,342 µs/command against 98 for
an identical later cell); ``memtape.lab.bench.warm_up`` runs before a process's first
cell. ``conftest.py`` checks the slowest cell against the fastest (issue 29: at most
1.3x).
"""

from pathlib import Path

import pytest

from benchmarks.conftest import Bench
from memtape.lab.bench import plan, process_pool, run_cells
from memtape.lab.generate import support_session

TURNS = 2_000
"""Each cell's session length."""

CELLS = 4
"""Identical cells, two on each of the pool's two workers."""

ROUNDS = 3
"""Pools started afresh, one a round."""


@pytest.fixture(scope="module")
def scenario(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated support session, at full size when the benchmarks are timed."""
    timed = not request.config.getoption("benchmark_disable")
    path = tmp_path_factory.mktemp("cells") / "support.toml"
    path.write_text(support_session(TURNS if timed else TURNS // 50, 1), "utf-8")
    return path


def test_identical_cells_report_the_same_cost(bench: Bench, scenario: Path) -> None:
    bench.benchmark.group = "bench cells"
    cells = plan([str(scenario)], ["tiered"] * CELLS)
    slowest: list[float] = []
    fastest: list[float] = []

    def one_round() -> None:
        results = run_cells(cells, engine=process_pool(2))
        costs = [result.metrics["decide_us_per_command"] / 1e6 for result in results]
        slowest.append(max(costs))
        fastest.append(min(costs))

    bench.measure("cells-round", one_round, rounds=ROUNDS if bench.timed else 1)
    bench.keep("cells-slowest", slowest)
    bench.keep("cells-fastest", fastest)
    assert CELLS == len(cells)
