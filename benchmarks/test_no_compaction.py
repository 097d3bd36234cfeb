"""A window that never compacts: every turn stays HOT, and a turn must still cost the same.

Under ``none`` HOT holds the whole session, so a fold that copied it at each
turn would make 100k turns cost a hundred times what 10k do. Timed as the
compaction benchmarks are, with the collector paused (see
``test_compaction.py``); ``conftest.py`` checks the ratio.
"""

import pytest

from benchmarks.conftest import Bench
from benchmarks.sessions import support_session
from memtape.core.commands import AddTurn
from memtape.policies.no_compaction import NoCompaction
from memtape.policies.session import Policies, Session

SIZES = {"10k": 10_000, "100k": 100_000}
"""Session lengths in turns, by the name the target uses."""

ROUNDS = 3
"""Timed rounds per size."""


def run_none(commands: tuple[AddTurn, ...]) -> Session:
    """memtape's real API on a session under ``none``: every turn decided, appended, folded."""
    session = Session(Policies(compaction=NoCompaction(2000)))
    for command in commands:
        session.execute(command)
    return session


@pytest.mark.parametrize("size", list(SIZES))
def test_none(bench: Bench, size: str) -> None:
    turns = bench.size(SIZES[size])
    bench.benchmark.group = "no compaction"
    session = bench.measure(
        f"none-{size}", run_none, support_session(turns), rounds=ROUNDS, collector=False
    )
    assert turns == len(session.state.window.hot)
    if bench.median is not None:
        bench.note(f"none, {turns:,} turns: {bench.median / turns * 1e6:.2f} µs/turn")
