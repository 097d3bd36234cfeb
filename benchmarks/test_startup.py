"""Starting the command line: ``memtape --help`` and ``memtape show`` of a small run,
against a bare ``python -c "import json"``, each a whole process.

The three commands run in turn, round after round, so that whatever else the
machine is doing weighs on them alike; each figure is the median of its
rounds. Every process runs the same interpreter (the one running the
benchmarks) with the bytecode cache on, in a folder of its own that a first
untimed round fills, as an installed package has it. Issue 14's targets:
each command at most 3x the bare interpreter.
"""

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.conftest import Bench

ROUNDS = 21
"""Rounds of the three processes when timed (one when not)."""


@pytest.fixture(scope="module")
def folder() -> Iterator[Path]:
    """A folder for the small run and the bytecode cache."""
    with tempfile.TemporaryDirectory() as name:
        yield Path(name)


def _memtape() -> list[str]:
    """The installed ``memtape`` console script beside the interpreter, as a user runs it;
    ``python -m memtape.cli`` where there is none."""
    script = Path(sys.executable).parent / "memtape"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "memtape.cli"]


def test_startup(bench: Bench, folder: Path) -> None:
    environment = {
        key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"
    }
    environment["PYTHONPYCACHEPREFIX"] = str(folder / "bytecode")
    run = folder / "refund-desk.jsonl"
    memtape = _memtape()
    subprocess.run(
        [*memtape, "run", "refund-desk", "--out", str(run)],
        env=environment,
        check=True,
        capture_output=True,
    )
    commands = {
        "startup-python": [sys.executable, "-c", "import json"],
        "startup-help": [*memtape, "--help"],
        "startup-show": [*memtape, "show", str(run)],
    }
    times: dict[str, list[float]] = {name: [] for name in commands}

    def one_round() -> None:
        for name, command in commands.items():
            started = time.perf_counter()
            subprocess.run(command, env=environment, check=True, stdout=subprocess.DEVNULL)
            times[name].append(time.perf_counter() - started)

    one_round()  # fills the bytecode cache; not counted
    for kept in times.values():
        kept.clear()
    bench.measure("startup-round", one_round, rounds=ROUNDS if bench.timed else 1)
    for name, kept in times.items():
        bench.keep(name, kept)
    if bench.timed:
        medians = {name: bench.medians[name] * 1e3 for name in commands}
        bench.note(
            "startup, whole process, median of {} rounds: python -c 'import json' {:.1f} ms, "
            "memtape --help {:.1f} ms, memtape show (15 events) {:.1f} ms".format(
                ROUNDS, *medians.values()
            )
        )
