"""Seek on a long run: ``Run.state_at`` at random points against a full replay.

The run is recorded once per benchmark module through ``Session.execute``
from a generated session that mixes conversation turns (tiered compaction)
with fact writes, reads and clock advances (importance x recency x access
forgetting, with a store small enough to evict). Runs with another snapshot
interval get the very same commands and events appended batch by batch
(what ``Session.execute`` appends, without deciding again), so every
interval seeks in the same log.

Figures: the median time of ``state_at`` at seeded random positions; the
time of ``fold`` over the whole log; and the memory the open run holds per
event, measured by walking everything the ``Run`` references (``sys.getsizeof``
of each object once: events, commands, snapshots, its index), right after it
is built. The target of issue 3 (a median seek costs at most 1/1000 of a full
replay, at the default interval) is checked in ``conftest.py``.
"""

import gc
import random
import sys
import time
import types
from collections.abc import Callable, Iterator
from functools import cache
from itertools import cycle

import attrs
import pytest

from benchmarks.conftest import Bench
from benchmarks.sessions import _VOCABULARY, MAX_WORDS, MIN_WORDS, ROLE_WEIGHTS, ROLES
from memtape.core.commands import AddTurn, AdvanceClock, Command, ReadFact, WriteFact
from memtape.core.run import DEFAULT_SNAPSHOT_EVERY, Run
from memtape.core.state import State
from memtape.policies.session import Policies, Session
from memtape.policies.store.forgetting import ImportanceRecencyAccess
from memtape.policies.window.tiered import TieredCompaction
from memtape.reducers import fold

EVENTS = 1_000_000
"""Events in the run (the run ends with the first whole command that reaches it)."""

INTERVALS = (256, DEFAULT_SNAPSHOT_EVERY, 4096)
"""Snapshot intervals measured (the run is decided at the default one)."""

SEEKS = 501
"""Timed seeks per interval, one random position each (their median is the figure)."""

REPLAY_ROUNDS = 3
"""Timed full replays."""

SEED = 3
"""The seed of the session and of the seek positions."""

POLICIES = Policies(
    compaction=TieredCompaction(budget=400, hot_n=8),
    forgetting=ImportanceRecencyAccess(capacity=64, half_life=8.0, access_boost=0.1),
)
"""A window of about 30 turns, and a store of 64 active facts over ``KEYS``."""

KEYS = tuple(f"key-{i}" for i in range(96))
"""Fact keys: half again the store's capacity, so writes supersede and evict."""

TURN, WRITE, READ = 0.60, 0.80, 0.92
"""Cumulative shares of the commands: turns, writes, reads; clock advances the rest."""

CLOCK_STEPS = (0.5, 1.0, 2.0)
"""How far one clock advance moves the time."""


def commands(session: Session, seed: int) -> Iterator[Command]:
    """An endless mixed session, each command generated when it is due.

    A read names a random key; when that key has no active fact now, the
    command writes it instead, so no command is rejected. The same seed gives
    the same commands.
    """
    rng = random.Random(seed)
    clock = 0.0
    while True:
        draw = rng.random()
        if draw < TURN:
            role = rng.choices(ROLES, weights=ROLE_WEIGHTS)[0]
            words = rng.choices(_VOCABULARY[role], k=rng.randint(MIN_WORDS, MAX_WORDS))
            yield AddTurn(role, " ".join(words))
        elif draw < WRITE:
            yield write(rng)
        elif draw < READ:
            key = rng.choice(KEYS)
            yield ReadFact(key=key) if key in session.state.store.by_key else write(rng, key)
        else:
            clock += rng.choice(CLOCK_STEPS)
            yield AdvanceClock(clock)


def write(rng: random.Random, key: str | None = None) -> WriteFact:
    """A write of a random (or the given) key, with a random text and importance."""
    key = rng.choice(KEYS) if key is None else key
    return WriteFact(key, f"{key} is {rng.randrange(1_000_000)}", rng.randint(1, 100) / 100)


NOT_OWNED = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType)
"""What a run references without owning it: classes, modules, functions (its fold)."""


def deep_size(root: object) -> int:
    """The bytes of ``root`` and of everything it references, each object counted once."""
    seen = {id(root)}
    level: list[object] = [root]
    total = 0
    while level:
        total += sum(map(sys.getsizeof, level))
        below: list[object] = []
        for referent in gc.get_referents(*level):
            if id(referent) not in seen and not isinstance(referent, NOT_OWNED):
                seen.add(id(referent))
                below.append(referent)
        level = below
    return total


@attrs.frozen
class Recorded:
    """A run, what it held per event when built, and how long building took."""

    run: Run
    bytes_per_event: float
    seconds: float


def record(events: int, snapshot_every: int, source: Run | None) -> Recorded:
    """A run of at least ``events`` events: decided afresh, or ``source``'s batches appended."""
    gc.collect()
    start = time.perf_counter()
    if source is None:
        session = Session(POLICIES, snapshot_every=snapshot_every)
        run = session.run
        mixed = commands(session, SEED)
        while len(run) < events:
            session.execute(next(mixed))
    else:
        run = Run(fold, snapshot_every=snapshot_every)
        log = source.events
        for step, command in enumerate(source.commands, start=1):
            begin, end = source.batch(step)
            run.append(command, log[begin:end])
    seconds = time.perf_counter() - start
    return Recorded(run, deep_size(run) / len(run), seconds)


Recorder = Callable[[int, int], Recorded]
"""The run of a size at a snapshot interval."""


@pytest.fixture(scope="module")
def recorded() -> Recorder:
    """The runs, each recorded once while this module runs (then freed).

    The run at the default interval is decided through ``Session.execute``;
    the others re-append its batches.
    """

    @cache
    def at(events: int, snapshot_every: int) -> Recorded:
        if snapshot_every == DEFAULT_SNAPSHOT_EVERY:
            return record(events, snapshot_every, None)
        return record(events, snapshot_every, at(events, DEFAULT_SNAPSHOT_EVERY).run)

    return at


class Seeker:
    """``state_at`` at the next of a fixed list of positions, round after round."""

    def __init__(self, run: Run, positions: list[int]) -> None:
        self.run = run
        self.positions = cycle(positions)

    def __call__(self) -> State:
        return self.run.state_at(next(self.positions))


def seek_positions(length: int, count: int) -> list[int]:
    """``count`` seeded random positions in ``0..length``."""
    rng = random.Random(SEED)
    return [rng.randint(0, length) for _ in range(count)]


def test_replay(bench: Bench, recorded: Recorder) -> None:
    recording = recorded(bench.size(EVENTS), DEFAULT_SNAPSHOT_EVERY)
    run = recording.run
    events = run.events
    bench.benchmark.group = "seek"
    state = bench.measure("replay", fold, events, rounds=REPLAY_ROUNDS)
    assert state == run.state
    bench.benchmark.extra_info.update(events=len(run), steps=run.steps)
    if bench.median is not None:
        bench.note(
            f"seek on {len(run):,} events ({run.steps:,} commands, decided in"
            f" {recording.seconds:.1f} s): full replay {bench.median:.3f} s"
        )


@pytest.mark.parametrize("snapshot_every", INTERVALS)
def test_seek(bench: Bench, recorded: Recorder, snapshot_every: int) -> None:
    recording = recorded(bench.size(EVENTS), snapshot_every)
    run = recording.run
    positions = seek_positions(len(run), SEEKS)
    first = positions[0]
    # The seek rebuilds exactly the state a replay of the first events reaches.
    assert run.state_at(first) == fold(run.events[:first])
    assert run.state_at(len(run)) == run.state
    assert recording.bytes_per_event > 0
    bench.benchmark.group = "seek"
    bench.measure(f"seek-{snapshot_every}", Seeker(run, positions), rounds=SEEKS)
    bench.benchmark.extra_info.update(
        events=len(run), bytes_per_event=round(recording.bytes_per_event)
    )
    if bench.median is not None:
        replay = bench.medians.get("replay")
        share = "" if replay is None else f" = 1/{replay / bench.median:,.0f} of the replay"
        bench.note(
            f"  snapshot every {snapshot_every:>4}: median seek {bench.median * 1e3:6.3f} ms"
            f"{share}; the open run holds {recording.bytes_per_event:,.0f} bytes/event"
        )
