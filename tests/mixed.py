"""A seeded mixed session on all three axes, for the viewer's tests."""

import random
from collections.abc import Iterator

import attrs

from memtape.core.commands import (
    AddTurn,
    AdvanceClock,
    Command,
    Consolidate,
    ReadFact,
    RecordEpisode,
    WriteFact,
)
from memtape.policies.session import Session
from memtape.policies.window.tiered import TieredCompaction
from memtape.scenarios import load_scenario
from memtape.viewer.serve import LiveRun


def mixed_commands(session: Session, count: int, seed: int) -> Iterator[Command]:
    """Seeded turns, writes, reads, clock moves, episodes and passes; none rejected."""
    rng = random.Random(seed)
    words = ("refund", "order", "Dana", "email", "phone", "earbuds", "warranty", "fee", "policy")
    episodes = ("the user's name is Dana", "a restocking fee applies", "the user said thanks")
    clock = 0.0
    for _ in range(count):
        draw = rng.random()
        key = f"k{rng.randrange(8)}"
        if draw < 0.45:
            role = rng.choice(("user", "assistant", "tool"))
            yield AddTurn(role, " ".join(rng.choices(words, k=rng.randint(2, 12))))
        elif draw < 0.65 or (draw < 0.75 and key not in session.state.store.by_key):
            yield WriteFact(key, f"{key} is {rng.randrange(1000)}", rng.randint(0, 100) / 100)
        elif draw < 0.75:
            yield ReadFact(key=key)
        elif draw < 0.85:
            clock += rng.choice((0.5, 1.0, 2.5))
            yield AdvanceClock(clock)
        elif draw < 0.95:
            yield RecordEpisode(rng.choice(episodes))
        else:
            yield Consolidate()


def mixed_live(count: int, seed: int) -> LiveRun:
    """A live session whose recorded commands are a seeded mixed session on all three axes."""
    policies = attrs.evolve(
        load_scenario("sleep-pass").policies, compaction=TieredCompaction(45, 3)
    )
    recorded = Session(policies)
    for command in mixed_commands(recorded, count, seed):
        recorded.execute(command)
    return LiveRun(policies, recorded.run.commands, "mixed")
