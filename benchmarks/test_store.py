"""The SQLite store: reading a run back, and appending to one live.

Reading: a 200,000-event run read from a store (``SqliteStore.read``: the
rows, their JSON, every check, the events built), against ``orjson.loads``
on each line of the same run as JSONL, timed in turn, with the collector
running as in any program. Issue 14's target: at most 5x. Appending: 2,000
commands, each in a transaction of its own, as ``memtape serve`` or a live
recorder appends; issue 14's target is at least 2,000 commands a second (WAL
journal with ``synchronous = NORMAL``: a commit waits for no disk sync).
"""

import tempfile
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

import orjson
import pytest

from benchmarks.conftest import Bench, Side
from benchmarks.sessions import support_session
from memtape.core.logfile import RunFile
from memtape.core.run import Run
from memtape.policies.session import Policies, Session
from memtape.policies.window.tiered import TieredCompaction
from memtape.runs.files import save_run
from memtape.storage import SqliteStore

EVENTS = 200_000
"""Events in the run read back (50 times fewer in a smoke run)."""

APPENDS = 2_000
"""Commands appended live, one transaction each (50 times fewer in a smoke run)."""

ROUNDS = 3
"""Rounds of each measurement."""

READ_ROUNDS = 7
"""Rounds of the read and its yardstick, in turn: a round lasts some 3 seconds, and with
three the ratio read 6.5x once and 4.0x on the rerun (a full collection lands in a read or
not), so the median rests on more."""


class Recorded:
    """One run, recorded once, saved as JSONL and into a store."""

    def __init__(self, folder: Path, events: int) -> None:
        folder.mkdir()
        session = Session(Policies(compaction=TieredCompaction(400, 8)))
        commands = iter(support_session(events))
        while len(session.run) < events:
            session.execute(next(commands))
        self.run: Run = session.run
        self.jsonl = folder / "run.jsonl"
        self.store = folder / "runs.db"
        save_run(session, self.jsonl, "store-benchmark")
        save_run(session, self.store, "store-benchmark")
        self.folder = folder


@pytest.fixture(scope="module")
def recorded() -> Iterator[Callable[[int], Recorded]]:
    """Recorded runs by size, each made once per module in a folder of its own."""
    with tempfile.TemporaryDirectory() as folder:
        runs: dict[int, Recorded] = {}

        def record(events: int) -> Recorded:
            if events not in runs:
                runs[events] = Recorded(Path(folder) / str(events), events)
            return runs[events]

        yield record


def parse_lines(path: Path) -> int:
    """The yardstick: ``orjson.loads`` on every line; how many lines it parsed."""
    with path.open("rb") as lines:
        return sum(1 for line in lines if orjson.loads(line) is not None)


def test_store_read(bench: Bench, recorded: Callable[[int], Recorded]) -> None:
    run = recorded(bench.size(EVENTS))
    bench.benchmark.group = "store"
    store = SqliteStore(run.store)
    try:
        sides = (
            Side("store-orjson", partial(parse_lines, run.jsonl), collector=True),
            Side("store-read", store.read, collector=True),
        )
        bench.in_turn("store-read-round", sides, rounds=READ_ROUNDS)
        loaded: RunFile = store.read()
    finally:
        store.close()

    assert parse_lines(run.jsonl) > bench.size(EVENTS)
    assert run.run.events == tuple(e for batch in loaded.batches for e in batch.events)


def append_all(path: Path, run: Run, commands: int) -> int:
    """Append the first ``commands`` commands of ``run`` to a fresh store at ``path``."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    store = SqliteStore(path, create=True)
    try:
        run_id = store.create({"scenario": "store-benchmark"})
        position = 0
        for step in range(1, commands + 1):
            start, end = run.batch(step)
            position = store.append(run_id, run.commands[step - 1], run.events[start:end], position)
    finally:
        store.close()
    return position


def test_live_appends(bench: Bench, recorded: Callable[[int], Recorded]) -> None:
    run = recorded(bench.size(EVENTS))
    commands = bench.size(APPENDS)
    bench.benchmark.group = "store"
    path = run.folder / "appended.db"
    written = bench.measure("store-append-2000", append_all, path, run.run, commands, rounds=ROUNDS)

    assert run.run.batch(commands)[1] == written
    if bench.median is not None:
        bench.note(f"SQLite live appends: {commands / bench.median:,.0f} commands a second")
