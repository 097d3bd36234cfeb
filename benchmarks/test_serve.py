"""``memtape serve``: what one command costs the server, early in a session and late.

The session is the seek benchmark's mixed one (turns under tiered
compaction, fact writes, reads and clock moves under importance x recency x
access forgetting, seeded), replayed command by command through ``LiveRun``
as "Add next turn" / "Next step" clicks replay it. A command's cost is what
the server does for one click: execute the next recorded command, grow the
page's data by its events, and encode the answer the page asks for (what
came after the events it held). It is timed at events 100, 2,000 and
20,000 of the same session; for comparison, the whole run's payload at
event 20,000 (what each click cost before the server kept the payload built
so far) is timed too.
"""

from functools import cache

import orjson
import pytest

from benchmarks.conftest import Bench
from benchmarks.test_seek import POLICIES, SEED, commands
from memtape.core.commands import Command
from memtape.policies.session import Session
from memtape.viewer.payload import run_payload
from memtape.viewer.serve import LiveRun

POSITIONS = {"early": 100, "middle": 2_000, "late": 20_000}
"""Where in the session a command is timed, in events."""

COMMANDS = 101
"""Timed commands at each position (one click each; their median is the figure)."""

WHOLE_ROUNDS = 3
"""Timed builds of the whole payload."""


@cache
def recorded(events: int) -> tuple[Command, ...]:
    """The mixed session's commands up to ``events`` events, and ``COMMANDS`` more."""
    session = Session(POLICIES)
    mixed = commands(session, SEED)
    while len(session.run) < events:
        session.execute(next(mixed))
    for _ in range(COMMANDS):
        session.execute(next(mixed))
    return session.run.commands


def live_at(events: int, late: int) -> LiveRun:
    """A live replay of the session, clicked on until it holds at least ``events`` events."""
    live = LiveRun(POLICIES, recorded(late), "mixed")
    while len(live.session.run) < events:
        live.next()
    return live


def click(live: LiveRun) -> bytes:
    """One "next" click: the command executed, the page's answer encoded."""
    held = len(live.session.run)
    live.next()
    return orjson.dumps(live.data(held))


@pytest.mark.parametrize("where", list(POSITIONS))
def test_a_command(bench: Bench, where: str) -> None:
    late = bench.size(POSITIONS["late"])
    live = live_at(bench.size(POSITIONS[where]), late)
    at = len(live.session.run)
    bench.benchmark.group = "serve"
    answer = bench.measure(f"serve-{where}", click, live, rounds=COMMANDS)
    assert orjson.loads(answer)["runs"][0]["from"]["events"] < len(live.session.run)
    bench.benchmark.extra_info.update(events=at)
    if bench.median is not None:
        bench.note(
            f"serve: one command at event {at:,}: median {bench.median * 1e3:.3f} ms"
            f" over {COMMANDS} commands"
        )


def test_the_whole_payload(bench: Bench) -> None:
    live = live_at(bench.size(POSITIONS["late"]), bench.size(POSITIONS["late"]))
    session = live.session

    def whole() -> bytes:
        return orjson.dumps(run_payload(session.run, session.policies_at, "mixed"))

    bench.benchmark.group = "serve"
    answer = bench.measure("serve-whole", whole, rounds=WHOLE_ROUNDS)
    assert len(orjson.loads(answer)["frames"]) == len(session.run)
    if bench.median is not None:
        bench.note(
            f"serve: the whole payload at event {len(session.run):,} (each command's cost"
            f" before): median {bench.median * 1e3:.1f} ms"
        )
