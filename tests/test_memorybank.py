"""memtape.policies.store.memorybank: Ebbinghaus retention R = exp(-dt / S) (Zhong et al., 2023).

S starts at 1 and grows by 1 at each recall (a read, or a query that returns the fact),
which also resets dt.
"""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import math

import pytest

from memtape.core.commands import AdvanceClock, Command, Query, ReadFact, WriteFact
from memtape.core.errors import BadInput
from memtape.core.events import Evicted, FactWritten
from memtape.policies.plumbing.promises import (
    CAPACITY,
    EVICTS_WEAKEST,
    EXPIRES,
    SUPERSEDES,
    VALID_AS_OF,
)
from memtape.policies.session import Policies, Session
from memtape.policies.store.memorybank import MemoryBank

POLICY = MemoryBank(capacity=4)


def _session(*commands: Command, policy: MemoryBank = POLICY) -> Session:
    session = Session(Policies(forgetting=policy))
    session.execute_all(commands)
    return session


class TestRetention:
    def test_a_fresh_fact_is_fully_retained(self) -> None:
        session = _session(WriteFact("a", "x", 0.1))

        assert [1.0] == [s.score for s in POLICY.rank(session.state.store, 0.0)]

    def test_retention_decays_as_exp_of_minus_elapsed_over_strength(self) -> None:
        session = _session(WriteFact("a", "x", 0.9), AdvanceClock(3.0))
        (scored,) = POLICY.rank(session.state.store, 3.0)

        assert (math.exp(-3.0 / 1.0), {"strength": 1.0, "elapsed": 3.0}) == (
            scored.score,
            scored.factors,
        )

    def test_a_recall_grows_strength_by_one_and_resets_elapsed(self) -> None:
        # Written at 0, read at 2 (S = 2, dt from 2), ranked at 6: exp(-4 / 2).
        session = _session(WriteFact("a", "x", 0.9), AdvanceClock(2.0), ReadFact(key="a"))
        (scored,) = POLICY.rank(session.state.store, 6.0)

        assert (math.exp(-4.0 / 2.0), {"strength": 2.0, "elapsed": 4.0}) == (
            scored.score,
            scored.factors,
        )

    def test_a_query_that_returns_a_fact_recalls_it(self) -> None:
        session = _session(WriteFact("a", "x", 0.9), AdvanceClock(2.0), Query("", "a", 1))
        (scored,) = POLICY.rank(session.state.store, 6.0)

        assert {"strength": 2.0, "elapsed": 4.0} == scored.factors

    def test_importance_plays_no_part(self) -> None:
        session = _session(WriteFact("a", "x", 0.9), WriteFact("b", "y", 0.1), AdvanceClock(5.0))

        assert [1, 2] == [s.fact.id for s in POLICY.rank(session.state.store, 5.0)]
        assert 1 == len({s.score for s in POLICY.rank(session.state.store, 5.0)})


class TestRankingOverTime:
    def test_the_recalled_fact_overtakes_a_newer_one(self) -> None:
        # a written at 0 and read twice at 1 (S = 3); b written at 2 (S = 1).
        # At t=2: a = exp(-1/3) = 0.72 < b = 1.
        # At t=8: a = exp(-7/3) = 0.097 > b = exp(-6) = 0.0025.
        session = _session(
            WriteFact("a", "x", 0.5),
            AdvanceClock(1.0),
            ReadFact(key="a"),
            ReadFact(key="a"),
            AdvanceClock(2.0),
            WriteFact("b", "y", 0.5),
        )
        store = session.state.store

        assert ([2, 1], [1, 2]) == (
            [s.fact.id for s in POLICY.rank(store, 2.0)],
            [s.fact.id for s in POLICY.rank(store, 8.0)],
        )


class TestEviction:
    def test_the_lowest_retention_goes(self) -> None:
        # At t=4: a read at 2 (S = 2): exp(-2/2); b written at 2 (S = 1): exp(-2); c new: 1.
        policy = MemoryBank(2)
        session = _session(
            WriteFact("a", "x", 0.5),
            AdvanceClock(2.0),
            ReadFact(key="a"),
            WriteFact("b", "y", 0.5),
            AdvanceClock(4.0),
            policy=policy,
        )

        events = session.execute(WriteFact("c", "z", 0.5))

        assert (FactWritten(3, "c", "z", 0.5), Evicted(2, math.exp(-2.0))) == events

    def test_ties_go_to_the_oldest_write(self) -> None:
        policy = MemoryBank(2)
        session = _session(WriteFact("a", "x", 0.5), WriteFact("b", "y", 0.5), policy=policy)

        events = session.execute(WriteFact("c", "z", 0.5))

        assert Evicted(1, 1.0) == events[-1]


class TestParameters:
    def test_capacity_alone_builds_it(self) -> None:
        assert MemoryBank(3, "key") == MemoryBank.from_params({"capacity": 3}, "here")

    def test_params_read_back(self) -> None:
        policy = MemoryBank(3, "add-only")
        data = policy.params()
        del data["policy"]

        assert policy == MemoryBank.from_params(data, "here")

    def test_an_unknown_parameter_is_refused(self) -> None:
        with pytest.raises(BadInput, match=r"^here: unknown parameter half_life$"):
            MemoryBank.from_params({"capacity": 3, "half_life": 2}, "here")

    def test_promises(self) -> None:
        assert (
            frozenset({CAPACITY, EVICTS_WEAKEST, EXPIRES, SUPERSEDES, VALID_AS_OF}),
            frozenset({CAPACITY, EVICTS_WEAKEST, EXPIRES, VALID_AS_OF}),
        ) == (
            MemoryBank(2).promises,
            MemoryBank(2, "add-only").promises,
        )
