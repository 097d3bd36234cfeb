"""Loading a recorded run: decoding a 1,000,000-event JSONL file into events.

The yardstick is ``orjson.loads`` on each of the file's lines: parsing the
JSON and nothing more. memtape's ``read_run`` parses with the standard
library, checks every line (positions, steps, command and end marks) and
structures each event through the one cattrs codec; the fold is not
included. Issue 3's target: at most 5x the yardstick.
"""

import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import orjson
import pytest

from benchmarks.conftest import Bench
from benchmarks.sessions import support_session
from memtape.core.logfile import RunFile, read_run
from memtape.policies.compaction import TieredCompaction
from memtape.policies.session import Policies, Session
from memtape.runs.files import save_run

EVENTS = 1_000_000
"""How many events the timed run holds (50 times fewer in a smoke run)."""

ROUNDS = 3
"""Rounds of each measurement: each reads the whole file."""


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


def test_orjson_per_line(bench: Bench, recorded: Callable[[int], Path]) -> None:
    path = recorded(bench.size(EVENTS))
    bench.benchmark.group = "load"
    parsed = bench.measure("load-orjson", parse_lines, path, rounds=ROUNDS)

    assert parsed > bench.size(EVENTS)


def test_read_run(bench: Bench, recorded: Callable[[int], Path]) -> None:
    path = recorded(bench.size(EVENTS))
    bench.benchmark.group = "load"
    loaded: RunFile = bench.measure("load-read_run", read_run, path, rounds=ROUNDS)
    events = sum(len(batch.events) for batch in loaded.batches)

    assert events >= bench.size(EVENTS)
    if bench.median is not None:
        bench.note(
            f"load a {events:,}-event JSONL run (read_run, the fold not included): "
            f"{bench.median:.3f} s, {bench.median / events * 1e6:.2f} µs/event"
        )
