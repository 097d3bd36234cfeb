"""memtape.policies.store.cache: LRU (last touch), LFU (reads) and FIFO (write time)."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import pytest

from memtape.core.commands import AdvanceClock, Command, Query, ReadFact, WriteFact
from memtape.core.errors import BadInput
from memtape.core.events import Evicted
from memtape.policies.session import Policies, Session
from memtape.policies.store.cache import FirstInFirstOut, LeastFrequentlyUsed, LeastRecentlyUsed

Cache = LeastRecentlyUsed | LeastFrequentlyUsed | FirstInFirstOut


def _evicted(policy: Cache, *commands: Command) -> list[int]:
    session = Session(Policies(forgetting=policy))
    session.execute_all(commands)
    return [e.id for e in session.run.events if isinstance(e, Evicted)]


def _a_b_read_a_then_c() -> list[Command]:
    """a at t=0, b at t=1, a read at t=2, c at t=3."""
    return [
        WriteFact("a", "x", 0.9),
        AdvanceClock(1.0),
        WriteFact("b", "y", 0.9),
        AdvanceClock(2.0),
        ReadFact(key="a"),
        AdvanceClock(3.0),
        WriteFact("c", "z", 0.9),
    ]


class TestWhoGoes:
    def test_lru_evicts_the_fact_touched_longest_ago(self) -> None:
        # Last touches: a 2 (the read), b 1, c 3.
        assert [2] == _evicted(LeastRecentlyUsed(2), *_a_b_read_a_then_c())

    def test_lfu_evicts_the_fact_read_least_ties_to_the_oldest_write(self) -> None:
        # Reads: a 1, b 0, c 0: b and c tie, b was written first.
        assert [2] == _evicted(LeastFrequentlyUsed(2), *_a_b_read_a_then_c())

    def test_fifo_evicts_the_first_written_whatever_its_reads(self) -> None:
        assert [1] == _evicted(FirstInFirstOut(2), *_a_b_read_a_then_c())

    def test_a_query_touches_for_lru(self) -> None:
        # Written at 0 and 1; a query for the top 2 at t=2 touches both.
        policy = LeastRecentlyUsed(4)
        session = Session(Policies(forgetting=policy))
        session.execute_all([WriteFact("a", "x", 0.9), AdvanceClock(1.0), WriteFact("b", "y", 0.9)])
        session.execute_all([AdvanceClock(2.0), Query("", "", 2)])

        assert [2.0, 2.0] == [s.score for s in policy.rank(session.state.store, 2.0)]

    def test_a_query_counts_for_lfu(self) -> None:
        # The query's top 1 under LFU with no reads yet is a (the oldest write): a has 1
        # read, so b goes (without the query a, the oldest write, would).
        commands: list[Command] = [
            WriteFact("a", "x", 0.9),
            WriteFact("b", "y", 0.9),
            Query("", "", 1),
            WriteFact("c", "z", 0.9),
        ]
        assert [2] == _evicted(LeastFrequentlyUsed(2), *commands)


class TestScores:
    @pytest.mark.parametrize(
        ("policy", "factor", "values"),
        [
            (LeastRecentlyUsed(4), "last_touch", [2.0, 1.0]),
            (LeastFrequentlyUsed(4), "reads", [1.0, 0.0]),
            (FirstInFirstOut(4), "written_at", [1.0, 0.0]),
        ],
        ids=["lru", "lfu", "fifo"],
    )
    def test_each_ranks_by_its_one_factor(
        self, policy: Cache, factor: str, values: list[float]
    ) -> None:
        session = Session(Policies(forgetting=policy))
        session.execute_all(_a_b_read_a_then_c()[:5])
        ranking = policy.rank(session.state.store, 2.0)

        assert [(v, {factor: v}) for v in values] == [(s.score, s.factors) for s in ranking]


class TestParameters:
    @pytest.mark.parametrize("cls", [LeastRecentlyUsed, LeastFrequentlyUsed, FirstInFirstOut])
    def test_capacity_alone_builds_each(self, cls: type[Cache]) -> None:
        assert cls(3, "key") == cls.from_params({"capacity": 3}, "here")

    @pytest.mark.parametrize("cls", [LeastRecentlyUsed, LeastFrequentlyUsed, FirstInFirstOut])
    def test_params_read_back(self, cls: type[Cache]) -> None:
        policy = cls(2, "add-only")
        data = policy.params()

        assert (cls.name, policy) == (data.pop("policy"), cls.from_params(data, "here"))

    def test_a_capacity_of_zero_is_refused(self) -> None:
        with pytest.raises(BadInput, match=r"^here: capacity must be an integer >= 1, got 0$"):
            LeastRecentlyUsed.from_params({"capacity": 0}, "here")
