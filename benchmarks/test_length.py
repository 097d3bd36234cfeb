"""Every compaction policy is flat at any length: a turn costs at 1M turns what it costs at 10k.

For each compaction policy the zoo holds (``memtape.policies.zoo.COMPACTION``,
each built from a budget alone; one that needs more, as ``recorded`` needs its
recorded compactions, is left out), the next ``TIMED_TURNS`` turns of a support
session are timed through memtape's real API (decided, appended, folded) from
the state the policy reached after 10k, 100k and 1M turns, the sizes in turn
with the collector paused, in the CPU time the process spent (the wall clock of
this shared machine swung a 20,000-turn stretch of ``none`` by half).
``conftest.py`` checks each longer size against 10k (``length_targets``).

The long states are built cheaply: each decided and folded without a run (no
history, no snapshots), the collector paused, and the 1M-turn one only for a
policy whose window grows with the run (HOT and WARM hold over twice as many items at 100k
turns as at 10k: ``none`` and ``clear-tool-results`` today). A policy that
compacts to its budget holds the same window at any length, and what else
grows (COLD's and the dropped turns' numbers, the tool turns') is appended to
in the same few steps at 100k as at 1M.
"""

import gc
import time
from collections.abc import Iterator
from functools import partial

import pytest

from benchmarks.conftest import Bench, Side
from benchmarks.sessions import support_session
from memtape.core.commands import AddTurn
from memtape.core.errors import BadInput
from memtape.core.run import Run
from memtape.core.state import INITIAL_STATE, State
from memtape.policies.session import Policies, Session
from memtape.policies.zoo import COMPACTION
from memtape.reducers import fold

SIZES = {"10k": 10_000, "100k": 100_000, "1M": 1_000_000}
"""The lengths a timed stretch starts from, in turns, by the name the targets use."""

TIMED_TURNS = 20_000
"""The turns timed after each length (50 times fewer in a smoke run, as the lengths): long
enough that a stretch under `none`, the cheapest policy, lasts a third of a second."""

BUDGET = 2000
"""The budget of every policy: a support session is over it from turn ~200 on."""

ROUNDS = 5
"""Timed rounds, each running every length in turn (``Bench.in_turn``)."""

AT_THE_BUDGET: dict[str, dict[str, int]] = {
    "anthropic-compaction": {"trigger": BUDGET},
    "claude-code": {"context_window": BUDGET},
    "codex": {"context_window": BUDGET, "user_message_tokens": BUDGET // 10},
}
"""The replicas whose default trigger lies far above the budget (150,000 tokens, or a share
of a 200,000- or 272,000-token window), set to compact near it (and Codex to keep a
tenth of it in recent user turns, as its 20,000 tokens are of its window): at their defaults a
support session first compacts after some 20,000 turns, so the stretch after 10k would be
timed compacting nothing and the later ones compacting (each turn folded once: flat, but
not what the stretch after 10k measured)."""


def table(name: str) -> dict[str, int]:
    """The ``[compaction]`` table of ``name`` in these benchmarks."""
    return {"budget": BUDGET, **AT_THE_BUDGET.get(name, {})}


def buildable() -> Iterator[str]:
    """The names of the zoo's compaction policies that a budget alone builds."""
    for name in COMPACTION:
        try:
            COMPACTION[name].from_params(table(name), "bench")
        except BadInput:
            continue
        yield name


def states_at(
    policies: Policies,
    commands: tuple[AddTurn, ...],
    lengths: list[int],
    start: tuple[int, State] = (0, INITIAL_STATE),
) -> dict[int, State]:
    """The state ``policies`` reach after each of ``lengths`` of ``commands``, from the
    state ``start`` holds after its count of them: each turn decided and folded without
    a run, with the collector paused."""
    states: dict[int, State] = {}
    done, state = start
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        for length in sorted(lengths):
            for command in commands[done:length]:
                state = fold(policies.decide(state, command), state)
            states[length], done = state, length
    finally:
        if was_enabled:
            gc.enable()
    return states


def window_items(state: State) -> int:
    """The items the window holds: HOT's turns and WARM's items."""
    return len(state.window.hot) + len(state.window.warm)


def run_from(policies: Policies, state: State, commands: tuple[AddTurn, ...]) -> Session:
    """memtape's real API from ``state`` on: every command decided, appended and folded."""
    session = Session(policies, run=Run(fold, state))
    for command in commands:
        session.execute(command)
    return session


@pytest.mark.parametrize("name", list(buildable()))
def test_a_turn_costs_the_same_at_any_length(bench: Bench, name: str) -> None:
    policies = Policies(compaction=COMPACTION[name].from_params(table(name), "bench"))
    short, middle, long = (bench.size(turns) for turns in SIZES.values())
    timed = bench.size(TIMED_TURNS)
    commands = support_session(long + timed)
    states = states_at(policies, commands, [short, middle])
    lengths = {"10k": short, "100k": middle}
    if window_items(states[middle]) > 2 * window_items(states[short]):
        lengths["1M"] = long
        states.update(states_at(policies, commands, [long], (middle, states[middle])))
    sides = [
        Side(
            f"length-{name}-{size}",
            partial(run_from, policies, states[turns], commands[turns : turns + timed]),
            clock=time.process_time,
        )
        for size, turns in lengths.items()
    ]
    bench.benchmark.group = f"{name}: {timed:,} turns after 10k / 100k / 1M"
    bench.in_turn(f"length-{name}-round", sides, rounds=ROUNDS)
    for size in lengths:
        if bench.timed:
            per_turn = bench.medians[f"length-{name}-{size}"] / timed * 1e6
            bench.note(f"{name}, {timed:,} turns after {size}: {per_turn:.2f} µs/turn")
    last = run_from(policies, states[short], commands[short : short + timed])
    assert short + timed == last.state.window.turns
