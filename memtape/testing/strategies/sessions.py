"""Whole sessions: commands of every kind, clock moves made absolute, scenarios and their
probes."""

import math
from collections.abc import Sequence
from typing import TypeVar

import attrs
from hypothesis import strategies as st

from memtape.core.commands import AddTurn, AdvanceClock, Command, Consolidate, ReadFact
from memtape.scenarios import Probe, Scenario
from memtape.scenarios.probes import PROBE_KINDS
from memtape.testing.strategies.facts import (
    keys,
    queries,
    read_facts,
    record_episodes,
    write_facts,
)
from memtape.testing.strategies.params import policy_params
from memtape.testing.strategies.turns import add_turns
from memtape.testing.strategies.words import texts, weighted

T = TypeVar("T")


@attrs.frozen
class ClockStep:
    """A clock move relative to the clock so far; ``command_sequences`` makes it absolute."""

    delta: float


def clock_steps(*, nan: bool = True) -> st.SearchStrategy[ClockStep]:
    """Mostly forward moves (zero included), some backward, some far, some not finite."""
    deltas = weighted(
        (12, st.floats(0.0, 20.0)),
        (2, st.floats(-20.0, -0.001)),
        (2, st.floats(1e3, 1e9)),
        (1, st.sampled_from((math.inf, -math.inf, math.nan) if nan else (math.inf, -math.inf))),
    )
    return st.builds(ClockStep, deltas)


def _absolute(steps: Sequence[Command | ClockStep]) -> list[Command]:
    clock = 0.0
    commands: list[Command] = []
    for step in steps:
        if isinstance(step, ClockStep):
            to = clock + step.delta
            if math.isfinite(to) and to >= clock:
                clock = to
            commands.append(AdvanceClock(to))
        else:
            commands.append(step)
    return commands


def commands(*, nan: bool = True) -> st.SearchStrategy[Command | ClockStep]:
    """One command of any kind (a clock move still relative)."""
    return weighted(
        (6, add_turns()),
        (4, write_facts(nan=nan)),
        (2, clock_steps(nan=nan)),
        (2, read_facts()),
        (2, queries()),
        (2, record_episodes()),
        (1, st.just(Consolidate())),
    )


def command_sequences(*, max_size: int = 40, nan: bool = True) -> st.SearchStrategy[list[Command]]:
    """Whole sessions: random commands, clock moves relative to the clock reached so far.

    A backward move is written as an absolute time below the clock, so the
    session rejects it; ``nan=False`` leaves out NaN times and importances
    (whose commands cannot equal themselves).
    """
    return _sequences(commands(nan=nan), max_size).map(_absolute)


def valid_command_sequences(*, max_size: int = 30) -> st.SearchStrategy[list[Command]]:
    """Sessions of commands that mostly succeed: valid roles, keys, importances, forward clock."""
    step: st.SearchStrategy[Command | ClockStep] = weighted(
        (6, add_turns(valid_only=True)),
        (4, write_facts(valid_only=True)),
        (2, st.builds(ClockStep, st.floats(0.0, 20.0))),
        (1, st.builds(ReadFact, key=keys(valid_only=True))),
        (1, st.builds(ReadFact, id=st.integers(1, 6))),
        (1, queries(valid_only=True)),
        (2, record_episodes()),
        (1, st.just(Consolidate())),
    )
    return _sequences(step, max_size).map(_absolute)


def store_command_sequences(*, max_size: int = 30) -> st.SearchStrategy[list[Command]]:
    """Sessions of the store alone: writes (often to the same keys), reads, queries, clock."""
    step: st.SearchStrategy[Command | ClockStep] = weighted(
        (5, write_facts(valid_only=True)),
        (2, st.builds(ClockStep, st.floats(0.0, 50.0))),
        (2, st.builds(ReadFact, key=keys(valid_only=True))),
        (1, st.builds(ReadFact, id=st.integers(1, 12))),
        (3, queries(valid_only=True)),
    )
    return _sequences(step, max_size).map(_absolute)


def _sequences(step: st.SearchStrategy[T], max_size: int) -> st.SearchStrategy[list[T]]:
    # Hypothesis keeps lists short on average; long sessions are where
    # compactions push items cold and writes evict, so draw those often.
    short = min(6, max_size)
    return weighted(
        (1, st.lists(step, max_size=short)),
        (2, st.lists(step, min_size=min(15, max_size), max_size=max_size)),
    )


@st.composite
def scenarios(draw: st.DrawFn, *, max_size: int = 30) -> Scenario:
    """Whole scenarios: all three seed policies under random parameters, a session of
    commands that mostly succeed (what ``scenario_text`` writes and ``memtape run`` runs),
    and now and then probes (``probe_sets``) on its turns."""
    params = draw(policy_params())
    # A scenario without steps does not load: it has nothing to run.
    steps = draw(valid_command_sequences(max_size=max_size).filter(len))
    turns = sum(isinstance(step, AddTurn) for step in steps)
    probes = draw(weighted((2, st.just(())), (1, probe_sets(turns))))
    return Scenario("generated", "", params.policies(), tuple(steps), "-", probes)


def probe_sets(turns: int, *, max_size: int = 4) -> st.SearchStrategy[tuple[Probe, ...]]:
    """Probes for a scenario of ``turns`` turns: plain ones (a text that must stay visible,
    of a kind or none) and questions (a question and its answer, with or without a text,
    their evidence distinct turns of the scenario), each from a turn of at least 1."""
    words = texts().filter(str.strip)
    start = st.integers(1, max(turns, 1) + 2)
    kind = st.one_of(st.none(), st.sampled_from(PROBE_KINDS))
    plain = st.builds(Probe, words, start, kind)
    evidence: st.SearchStrategy[tuple[int, ...]] = st.just(())
    if turns:
        evidence = st.lists(st.integers(1, turns), max_size=3, unique=True).map(tuple)
    question = st.builds(
        Probe,
        st.one_of(st.none(), words),
        start,
        kind,
        question=words,
        answer=words,
        evidence=evidence,
    )
    return st.lists(weighted((1, plain), (1, question)), max_size=max_size).map(tuple)
