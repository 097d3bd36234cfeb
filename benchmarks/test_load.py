"""Loading a recorded run: decoding a 1,000,000-event JSONL file into events.

The yardstick is ``orjson.loads`` on each of the file's lines: parsing the
JSON and nothing more. memtape's ``read_run`` parses with the standard
library, checks every line (positions, steps, command and end marks) and
structures each event through the one cattrs codec; the fold is not
included. The two are timed in turn, with the collector running. Issue 3's
target: at most 5x the yardstick.
"""

import tempfile
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

import orjson
import pytest

from benchmarks.conftest import Bench, Side
from benchmarks.sessions import support_session
from memtape.core.logfile import RunFile, read_run
from memtape.policies.session import Policies, Session
from memtape.policies.window.tiered import TieredCompaction
from memtape.runs.files import save_run

EVENTS = 1_000_000
"""How many events the timed run holds (50 times fewer in a smoke run)."""

ROUNDS = 3
"""Rounds, each reading the whole file both ways in turn (``Bench.in_turn``)."""


@pytest.fixture(scope="module")
def recorded() -> Iterator[Callable[[int], Path]]:
    """Run files by size, recorded once per module in a folder of their own."""
    with tempfile.TemporaryDirectory() as folder:
        files: dict[int, Path] = {}

        def record(events: int) -> Path:
            if events not in files:
                session = Session(Policies(compaction=TieredCompaction(400, 8)))
                commands = iter(support_session(events))
                while len(session.run) < events:
                    session.execute(next(commands))
                path = Path(folder) / f"run-{events}.jsonl"
                save_run(session, path, "load-benchmark")
                files[events] = path
            return files[events]

        yield record


def parse_lines(path: Path) -> int:
    """The yardstick: ``orjson.loads`` on every line; how many lines it parsed."""
    with path.open("rb") as lines:
        return sum(1 for line in lines if orjson.loads(line) is not None)


def test_load(bench: Bench, recorded: Callable[[int], Path]) -> None:
    path = recorded(bench.size(EVENTS))
    bench.benchmark.group = "load"
    sides = (
        Side("load-orjson", partial(parse_lines, path), collector=True),
        Side("load-read_run", partial(read_run, path), collector=True),
    )
    bench.in_turn("load-round", sides, rounds=ROUNDS)
    loaded: RunFile = read_run(path)
    events = sum(len(batch.events) for batch in loaded.batches)

    assert parse_lines(path) > bench.size(EVENTS)
    assert events >= bench.size(EVENTS)
    if bench.timed:
        median = bench.medians["load-read_run"]
        bench.note(
            f"load a {events:,}-event JSONL run (read_run, the fold not included): "
            f"{median:.3f} s, {median / events * 1e6:.2f} µs/event"
        )
