"""Decision cost of each forgetting policy on a full store.

A store is filled to ``CAPACITY`` active facts under each policy (seeded
random keys, texts and importances); then one write that evicts and one
query for the top 3 are decided, repeatedly, from that state. A decision
ranks the active facts, so it costs O(capacity log capacity), however long
the run before it.
"""

import random
from collections.abc import Callable
from functools import cache

import pytest

from benchmarks.conftest import Bench
from memtape.core.commands import AdvanceClock, Query, WriteFact
from memtape.core.events import Evicted, Queried
from memtape.core.state import State
from memtape.policies.session import Policies, Session
from memtape.policies.zoo import FORGETTING

CAPACITY = 1000
"""Active facts in the store when timed (a smoke run shrinks it)."""

ROUNDS = 20
"""Timed rounds per policy and decision."""

WORDS = ("dana", "order", "refund", "email", "phone", "fee", "window", "policy", "ok", "$200")


def full_store(name: str, capacity: int) -> State:
    """The state after ``capacity`` writes (and a clock move each ten) under policy ``name``."""
    rng = random.Random(7)
    policy = FORGETTING[name].from_params({"capacity": capacity}, "bench")
    session = Session(Policies(forgetting=policy))
    for n in range(capacity):
        text = " ".join(rng.choice(WORDS) for _ in range(6))
        session.execute(WriteFact(f"key{n}", text, rng.random()))
        if n % 10 == 0:
            session.execute(AdvanceClock(float(n)))
    return session.state


@pytest.fixture(scope="module")
def stores() -> Callable[[str, int], State]:
    """``full_store``, once per policy and size while this module runs."""
    return cache(full_store)


@pytest.mark.parametrize("name", sorted(FORGETTING))
def test_a_write_that_evicts(bench: Bench, stores: Callable[[str, int], State], name: str) -> None:
    capacity = max(bench.size(CAPACITY), 2)
    state = stores(name, capacity)
    policy = FORGETTING[name].from_params({"capacity": capacity}, "bench")
    bench.benchmark.group = "forgetting-write"
    events = bench.measure(
        f"write-{name}", policy.decide, state, WriteFact("new", "dana refund", 0.5), rounds=ROUNDS
    )
    assert 1 == sum(isinstance(e, Evicted) for e in events)
    if bench.median is not None:
        bench.note(f"{name}: a write that evicts, {capacity} active: {bench.median * 1e6:,.0f} us")


@pytest.mark.parametrize("name", sorted(FORGETTING))
def test_a_query(bench: Bench, stores: Callable[[str, int], State], name: str) -> None:
    capacity = max(bench.size(CAPACITY), 2)
    state = stores(name, capacity)
    policy = FORGETTING[name].from_params({"capacity": capacity}, "bench")
    bench.benchmark.group = "forgetting-query"
    events = bench.measure(
        f"query-{name}", policy.decide, state, Query("dana refund email", "", 3), rounds=ROUNDS
    )
    (queried,) = events
    assert isinstance(queried, Queried)
    assert 3 == len(queried.results)
    if bench.median is not None:
        bench.note(
            f"{name}: a query for the top 3, {capacity} active: {bench.median * 1e6:,.0f} us"
        )
