"""A bench cell is flat per turn: its whole cell, metrics included, at 5k, 20k and 50k turns.

``bench`` computes metrics beside each decision (the tokens sent, the probes
kept and lost). Under ``clear-tool-results`` HOT keeps every turn, so a probe
tracker that read the whole window at each compaction made the cell quadratic:
1.6 s at 5,000 turns, 20 s at 20,000, over 5 minutes at 50,000 (issue 27).
Here one cell of a generated support session (``memtape generate support``,
with a probe every 40 turns) is run at each length, the lengths in turn, with the
collector running as in any bench, in the CPU time the process spent (the wall clock of
this shared machine swung the ratio by half from one run to the next).
``conftest.py`` checks the cost per turn at 20k and 50k against 5k.
"""

import time
from functools import partial
from pathlib import Path

import pytest

from benchmarks.conftest import Bench, Side
from memtape.lab.bench import Result, plan, run_cell
from memtape.lab.generate import support_session
from memtape.scenarios.loader import Scenario, parse_scenario

SIZES = {"5k": 5_000, "20k": 20_000, "50k": 50_000}
"""The generated session's lengths in turns, by the name the targets use (50 times fewer
in a smoke run)."""

POLICY = "clear-tool-results"
"""The policy benched: the one whose HOT keeps every turn."""

ROUNDS = 5
"""Timed rounds, each running every length in turn (``Bench.in_turn``)."""


def one_cell(path: Path, scenario: Scenario) -> Result:
    """The bench's cell of ``POLICY`` on the scenario at ``path``, run in this process."""
    (cell,) = plan([str(path)], [POLICY])
    return run_cell(cell, scenario)


def test_a_bench_cell_costs_the_same_per_turn_at_any_length(
    bench: Bench, tmp_path_factory: pytest.TempPathFactory
) -> None:
    folder = tmp_path_factory.mktemp("bench-length")
    cells = {}
    for size, turns in SIZES.items():
        path = folder / f"support-{size}.toml"
        path.write_text(support_session(bench.size(turns), 1), "utf-8")
        cells[size] = partial(one_cell, path, parse_scenario(path.read_text("utf-8"), str(path)))
    sides = [
        Side(f"bench-cell-{size}", cells[size], collector=True, clock=time.process_time)
        for size in SIZES
    ]
    bench.benchmark.group = f"bench of {POLICY}: a cell at 5k / 20k / 50k turns"
    bench.in_turn("bench-cell-round", sides, rounds=ROUNDS)
    for size, turns in SIZES.items():
        if bench.timed:
            # Per turn, so that each length compares with the others directly.
            per_turn = bench.medians[f"bench-cell-{size}"] / turns
            bench.record(f"bench-turn-{size}", per_turn)
            bench.note(f"bench, {POLICY}, {turns:,} turns: {per_turn * 1e6:.1f} µs/turn")
    result = cells["50k"]()
    assert bench.size(SIZES["50k"]) == len(result.sent)
    assert result.metrics["probe_retention"] is not None
