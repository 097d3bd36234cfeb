"""The memory an open run holds, per event: decided live, and read back from its file.

The run is the seek benchmark's mixed session (tiered compaction, and fact
writes, reads and clock advances with forgetting over a store small enough
to evict) at 200,000 events, decided through ``Session.execute``; then saved
as JSONL and opened again with ``load_run``, as ``memtape show`` opens a
run. Each figure walks everything the ``Run`` references (``deep_size``):
its history, its snapshots, its state. Issue 14's target: at most 200 bytes
an event, either way. Rounds are one each: sizes do not vary.
"""

import tempfile
from pathlib import Path

from benchmarks.conftest import Bench
from benchmarks.test_seek import POLICIES, SEED, commands, deep_size
from memtape.policies.session import Session
from memtape.runs.files import load_run, save_run

EVENTS = 200_000
"""Events in the run (it ends with the first whole command that reaches it)."""


def decided(events: int) -> Session:
    """The mixed session, decided command by command until it holds ``events`` events."""
    session = Session(POLICIES)
    mixed = commands(session, SEED)
    while len(session.run) < events:
        session.execute(next(mixed))
    return session


def test_memory_of_an_open_run(bench: Bench) -> None:
    bench.benchmark.group = "memory"
    session = bench.measure("memory-decide", decided, bench.size(EVENTS), rounds=1)
    run = session.run
    live = deep_size(run) / len(run)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "mixed.jsonl"
        save_run(session, path, "memory")
        loaded = load_run(path).session.run
    read = deep_size(loaded) / len(loaded)

    assert (loaded.events, loaded.state) == (run.events, run.state)
    bench.record("memory-live", live)
    bench.record("memory-loaded", read)
    bench.note(
        f"an open run of {len(run):,} events: {live:,.0f} bytes an event decided live, "
        f"{read:,.0f} read back from its file"
    )
