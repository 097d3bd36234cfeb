"""A window that never compacts: every turn stays HOT, and a turn must still cost the same.

Under ``none`` HOT holds the whole session, so a fold that copied it at each
turn would make 100k turns cost a hundred times what 10k do. Timed as the
compaction benchmarks are, the sizes in turn with the collector paused, in CPU time,
the 10k-turn session ten times a sample (see ``test_compaction.py``); ``conftest.py``
checks the ratio.
"""

import time
from functools import partial

from benchmarks.conftest import Bench, Side
from benchmarks.sessions import support_session
from memtape.core.commands import AddTurn
from memtape.policies.session import Policies, Session
from memtape.policies.window.no_compaction import NoCompaction

SIZES = {"10k": 10_000, "100k": 100_000}
"""Session lengths in turns, by the name the target uses."""

ROUNDS = 5
"""Timed rounds, each running both sizes in turn (``Bench.in_turn``)."""


def run_none(commands: tuple[AddTurn, ...]) -> Session:
    """memtape's real API on a session under ``none``: every turn decided, appended, folded."""
    session = Session(Policies(compaction=NoCompaction(2000)))
    for command in commands:
        session.execute(command)
    return session


def test_none(bench: Bench) -> None:
    sessions = {size: support_session(bench.size(turns)) for size, turns in SIZES.items()}
    most = max(len(session) for session in sessions.values())
    sides = [
        Side(
            f"none-{size}",
            partial(run_none, session),
            clock=time.process_time,
            repeat=most // len(session),
        )
        for size, session in sessions.items()
    ]
    bench.benchmark.group = "no compaction"
    bench.in_turn("none-round", sides, rounds=ROUNDS)
    for size, session in sessions.items():
        if bench.timed:
            per_turn = bench.medians[f"none-{size}"] / len(session) * 1e6
            bench.note(f"none, {len(session):,} turns: {per_turn:.2f} µs/turn")
    longest = sessions["100k"]
    assert len(longest) == len(run_none(longest).state.window.hot)
