"""memtape.policies.store.expiry: a fact's own time, a policy's TTL, and ``Expired`` events."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import math
from typing import Any

import pytest

from memtape.core.commands import AdvanceClock, Query, ReadFact, WriteFact
from memtape.core.errors import BadInput, Rejected
from memtape.core.events import ClockAdvanced, Expired, FactWritten
from memtape.policies.plumbing.params import Params
from memtape.policies.session import Policies, Session
from memtape.policies.store.expiry import NO_TTL, Ttl, due, read_ttl


def _policies(**forgetting: Any) -> Policies:
    table = {"policy": "importance-recency-access", "capacity": 5, **forgetting}
    return Policies.from_params({"forgetting": table})


def _session(**forgetting: Any) -> Session:
    return Session(_policies(**forgetting))


class TestTtlParameter:
    def test_a_number_is_a_ttl_for_every_key(self) -> None:
        assert Ttl((("*", 60.0),)) == read_ttl(Params({"ttl": 60}, "f.toml: [forgetting]"))

    def test_a_table_keeps_its_patterns_in_order(self) -> None:
        table = {"session.*": 3600, "*": 86400.0}
        expected = Ttl((("session.*", 3600.0), ("*", 86400.0)))
        assert expected == read_ttl(Params({"ttl": table}, "f.toml: [forgetting]"))

    def test_no_ttl_by_default(self) -> None:
        assert NO_TTL == read_ttl(Params({}, "f.toml: [forgetting]"))

    @pytest.mark.parametrize("value", [0, -5, math.inf, "soon", True, {"a.*": 0}, {}])
    def test_an_impossible_ttl_names_the_table(self, value: Any) -> None:
        with pytest.raises(BadInput, match=r"^f\.toml: \[forgetting\]: ttl "):
            read_ttl(Params({"ttl": value}, "f.toml: [forgetting]"))

    @pytest.mark.parametrize(
        ("ttl", "table"),
        [(None, None), (60, 60.0), ({"session.*": 3600}, {"session.*": 3600.0})],
    )
    def test_the_table_reads_back(self, ttl: Any, table: Any) -> None:
        policies = _policies(**({} if ttl is None else {"ttl": ttl}))
        assert table == policies.params()["forgetting"].get("ttl")

    @pytest.mark.parametrize("name", ["lru", "lfu", "fifo", "memorybank", "generative-agents"])
    def test_every_shipped_store_takes_a_ttl(self, name: str) -> None:
        tables = {"forgetting": {"policy": name, "capacity": 3, "ttl": {"s.*": 5}}}
        assert {"s.*": 5.0} == Policies.from_params(tables).params()["forgetting"]["ttl"]

    def test_set_changes_it_and_a_new_policy_keeps_it(self) -> None:
        policies = _policies(ttl=60).with_settings(["forgetting.ttl=30", "forgetting.policy=lru"])
        assert ("lru", 30.0) == (
            policies.params()["forgetting"]["policy"],
            policies.params()["forgetting"]["ttl"],
        )


class TestWriting:
    def test_a_write_may_name_its_own_expiry(self) -> None:
        session = _session()
        events = session.execute(WriteFact("promo", "free shipping", 0.3, expires_at=10))
        assert (FactWritten(1, "promo", "free shipping", 0.3, 10.0, ""),) == events

    def test_the_first_matching_pattern_sets_the_expiry(self) -> None:
        session = _session(ttl={"session.*": 3600, "*": 86400})
        session.execute(AdvanceClock(100))
        events = session.execute(WriteFact("session.topic", "an order", 0.6))
        assert (FactWritten(1, "session.topic", "an order", 0.6, 3700.0, "session.*"),) == events

    def test_a_key_no_pattern_matches_never_expires(self) -> None:
        session = _session(ttl={"session.*": 3600})
        assert (FactWritten(1, "name", "Dana", 0.9),) == session.execute(
            WriteFact("name", "Dana", 0.9)
        )

    def test_a_writes_own_expiry_wins_over_the_ttl(self) -> None:
        session = _session(ttl=3600)
        events = session.execute(WriteFact("promo", "sale", 0.3, expires_at=5))
        assert (FactWritten(1, "promo", "sale", 0.3, 5.0, ""),) == events

    @pytest.mark.parametrize("expires_at", [0.0, 4.0])
    def test_an_expiry_not_after_the_clock_is_refused_and_nothing_written(
        self, expires_at: float
    ) -> None:
        session = _session()
        session.execute(AdvanceClock(4))
        with pytest.raises(Rejected, match=r"cannot expire at t=.*the clock is already at t=4"):
            session.execute(WriteFact("promo", "sale", 0.3, expires_at=expires_at))
        assert 1 == len(session.run)

    def test_a_ttl_that_runs_past_the_largest_time_is_refused_and_nothing_written(
        self,
    ) -> None:
        """clock + ttl overflowed to inf: the run file held Infinity, which no reader takes."""
        session = _session(ttl={"session.*": 1e308})
        session.execute(AdvanceClock(1e308))
        with pytest.raises(Rejected) as caught:
            session.execute(WriteFact("session.note", "a note", 0.5))
        assert (
            "a fact written at t=1e+308 under ttl 1e+308 for keys 'session.*' would expire "
            "past the largest time there is",
            1,
        ) == (str(caught.value), len(session.run))


class TestExpiring:
    def test_a_fact_leaves_at_the_first_command_at_its_time(self) -> None:
        session = _session()
        session.execute(WriteFact("promo", "sale", 0.3, expires_at=10))
        reason = "its own expires_at, due at t=10"
        assert (ClockAdvanced(10.0), Expired(1, reason)) == session.execute(AdvanceClock(10))

    def test_a_fact_stays_before_its_time(self) -> None:
        session = _session()
        session.execute(WriteFact("promo", "sale", 0.3, expires_at=10))
        assert (ClockAdvanced(9.5),) == session.execute(AdvanceClock(9.5))

    def test_a_ttl_expiry_says_its_rule_and_times(self) -> None:
        session = _session(ttl={"session.*": 3600})
        session.execute(WriteFact("session.topic", "an order", 0.6))
        events = session.execute(AdvanceClock(5000))
        reason = "ttl 3600 for keys 'session.*' from its write at t=0, due at t=3600"
        assert Expired(1, reason) == events[1]

    def test_the_expired_fact_is_kept_with_its_reason(self) -> None:
        session = _session()
        session.execute(WriteFact("promo", "sale", 0.3, expires_at=10))
        session.execute(AdvanceClock(12))
        fact = session.state.store.facts[1]
        reason = "its own expires_at, due at t=10"
        assert ("expired", 12.0, reason, {}) == (
            fact.status,
            fact.ended_at,
            fact.expired_reason,
            dict(session.state.store.active),
        )

    def test_several_leave_soonest_first(self) -> None:
        session = _session()
        session.execute(WriteFact("a", "x", 0.3, expires_at=8))
        session.execute(WriteFact("b", "y", 0.3, expires_at=3))
        session.execute(WriteFact("c", "z", 0.3, expires_at=20))
        events = session.execute(AdvanceClock(10))
        assert [2, 1] == [event.id for event in events if isinstance(event, Expired)]

    def test_an_expired_fact_is_never_returned_by_a_query(self) -> None:
        session = _session()
        session.execute(WriteFact("promo", "sale", 0.9, expires_at=10))
        session.execute(WriteFact("name", "Dana", 0.1))
        session.execute(AdvanceClock(10))
        (answer,) = session.execute(Query("sale", k=3))
        assert (2,) == answer.results  # type: ignore[union-attr]

    def test_an_expired_fact_cannot_be_read(self) -> None:
        session = _session()
        session.execute(WriteFact("promo", "sale", 0.9, expires_at=10))
        session.execute(AdvanceClock(10))
        with pytest.raises(Rejected, match="no active fact has that key"):
            session.execute(ReadFact(key="promo"))

    def test_a_newer_write_on_the_key_answers_for_it_after_expiry(self) -> None:
        session = _session(supersession="add-only")
        session.execute(WriteFact("k", "old", 0.5, expires_at=5))
        session.execute(WriteFact("k", "new", 0.5))
        session.execute(AdvanceClock(6))
        assert 2 == session.state.store.by_key["k"]

    def test_due_is_empty_while_nothing_is_due(self) -> None:
        session = _session(ttl=10)
        session.execute(WriteFact("a", "x", 0.5))
        assert () == due(session.state)
