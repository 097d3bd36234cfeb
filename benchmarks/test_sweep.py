"""A sweep of bench cells on Ray against the same sweep on the local process pool, both on
this machine's two CPUs: Ray's tasks must cost about what the pool's processes cost, and
give the same results.

The Ray instance is started (``address="local"``, two CPUs) before the timed rounds and
stopped after them: a round times the cells, not Ray's start. ``conftest.py`` checks the
ratio (issue 14: at most 1.5).
"""

import logging
from collections.abc import Iterator
from typing import Any

import attrs
import pytest
import ray

from benchmarks.conftest import SMOKE_SHRINK, Bench
from memtape.lab.bench import Cell, Result, plan, process_pool, results_data, run_cells, serial
from memtape.lab.generate import support_session
from memtape.lab.ray_engine import ray_engine

TURNS = 5_000
"""Each cell's session length."""

ROUNDS = 3
"""Timed rounds per engine."""

POLICIES = ["tiered", "sliding-window", "rolling-summary"]
GRID = ["compaction.budget=1000,2000"]
"""Six cells: three policies at two budgets."""


@attrs.frozen
class Sweep:
    """The cells to time and what they give when run one after the other."""

    cells: list[Cell]
    expected: list[dict[str, Any]]


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    """A local Ray instance of two CPUs, stopped after the benchmarks."""
    ray.init(
        address="local",
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        logging_level=logging.WARNING,
    )
    try:
        yield
    finally:
        ray.shutdown()


@pytest.fixture(scope="module")
def sweep(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Sweep:
    """The sweep's cells, on a generated support session, and their serial results."""
    timed = not request.config.getoption("benchmark_disable")
    source = tmp_path_factory.mktemp("sweep") / "support.toml"
    source.write_text(support_session(TURNS if timed else TURNS // SMOKE_SHRINK, 1), "utf-8")
    cells = plan([str(source)], POLICIES, grid=GRID)
    return Sweep(cells, _untimed(run_cells(cells, engine=serial)))


def _untimed(results: list[Result]) -> list[dict[str, Any]]:
    data = results_data(results)["results"]
    for result in data:
        result["metrics"].pop("decide_us_per_command")
    return list(data)


def test_sweep_on_the_process_pool(bench: Bench, sweep: Sweep) -> None:
    bench.benchmark.group = "sweep"
    pool = process_pool(2)
    results = bench.measure(
        "sweep-process", lambda: run_cells(sweep.cells, engine=pool), rounds=ROUNDS
    )

    assert sweep.expected == _untimed(results)


@pytest.mark.usefixtures("local_ray")
def test_sweep_on_ray(bench: Bench, sweep: Sweep) -> None:
    bench.benchmark.group = "sweep"
    engine = ray_engine()
    results = bench.measure(
        "sweep-ray", lambda: run_cells(sweep.cells, engine=engine), rounds=ROUNDS
    )

    assert sweep.expected == _untimed(results)
    bench.note(f"sweep: {len(sweep.cells)} cells of {TURNS:,} turns, on two CPUs")
