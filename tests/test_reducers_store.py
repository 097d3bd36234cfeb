"""memtape.reducers.store: facts written, read, superseded (kept) and evicted (kept)."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memtape.core.errors import CorruptLog
from memtape.core.events import (
    Evicted,
    Expired,
    FactRead,
    FactWritten,
    Queried,
    Superseded,
    ValidityClosed,
)
from memtape.core.state import EMPTY_STORE, Fact, Store
from memtape.reducers.store import (
    evicted,
    expired,
    fact_read,
    fact_written,
    queried,
    superseded,
    validity_closed,
)
from tests.suite_profile import examples


def _store(*keys: str, clock: float = 0.0) -> Store:
    store = EMPTY_STORE
    for n, key in enumerate(keys, start=1):
        store = fact_written(store, FactWritten(n, key, f"fact {n}", 0.5), clock)
    return store


class TestFactWritten:
    def test_a_written_fact_is_stored_active_at_the_clock(self) -> None:
        store = fact_written(EMPTY_STORE, FactWritten(1, "name", "Dana", 0.9), 2.5)

        assert Fact(1, "name", "Dana", 0.9, 2.5) == store.facts[1]

    def test_a_written_fact_is_active(self) -> None:
        assert {1, 2} == set(_store("a", "b").active)

    def test_a_written_fact_answers_for_its_key(self) -> None:
        assert {"a": 1, "b": 2} == dict(_store("a", "b").by_key)

    def test_the_newest_fact_on_a_key_answers_for_it(self) -> None:
        assert 2 == _store("a", "a").by_key["a"]

    @pytest.mark.parametrize("fact_id", [1, 3, 0])
    def test_an_id_out_of_sequence_is_corrupt(self, fact_id: int) -> None:
        with pytest.raises(CorruptLog, match=f"fact {fact_id} cannot follow fact 1"):
            fact_written(_store("a"), FactWritten(fact_id, "b", "v", 0.5), 0.0)

    def test_the_store_before_is_left_unchanged(self) -> None:
        before = _store("a")

        fact_written(before, FactWritten(2, "b", "v", 0.5), 0.0)

        assert ([1], [1]) == (list(before.facts), list(before.active))


class TestExpired:
    def _expiring(self) -> Store:
        return fact_written(EMPTY_STORE, FactWritten(1, "promo", "sale", 0.3, 5.0, "promo*"), 1.0)

    def test_a_written_fact_keeps_when_it_expires_and_why(self) -> None:
        fact = self._expiring().facts[1]
        assert (5.0, "promo*") == (fact.expires_at, fact.ttl)

    def test_a_read_keeps_the_expiry(self) -> None:
        fact = fact_read(self._expiring(), FactRead(1), 2.0).facts[1]
        assert (1, 5.0, "promo*") == (fact.reads, fact.expires_at, fact.ttl)

    def test_an_expired_fact_is_kept_inactive_with_its_reason(self) -> None:
        store = expired(self._expiring(), Expired(1, "due"), 7.0)
        fact = store.facts[1]
        assert ("expired", 7.0, "due", [], {}) == (
            fact.status,
            fact.ended_at,
            fact.expired_reason,
            list(store.active),
            dict(store.by_key),
        )

    def test_an_expiry_before_the_facts_time_is_corrupt(self) -> None:
        with pytest.raises(CorruptLog, match="cannot expire at t=4: it expires at t=5"):
            expired(self._expiring(), Expired(1, "early"), 4.0)

    def test_a_fact_that_never_expires_cannot_expire(self) -> None:
        with pytest.raises(CorruptLog, match="it expires never"):
            expired(_store("a"), Expired(1, "why"), 4.0)

    def test_a_fact_written_to_expire_at_once_is_corrupt(self) -> None:
        with pytest.raises(CorruptLog, match="which is not later"):
            fact_written(EMPTY_STORE, FactWritten(1, "a", "x", 0.5, 3.0, ""), 3.0)


class TestValidityClosed:
    def test_a_closed_fact_keeps_its_status_and_learns_its_end(self) -> None:
        store = validity_closed(_store("a", "a"), ValidityClosed(1, 4.0, 2), 6.0)
        fact = store.facts[1]
        assert ("active", 4.0, 6.0, 2) == (
            fact.status,
            fact.closed_to,
            fact.closed_at,
            fact.closed_by,
        )

    def test_a_close_by_an_earlier_fact_is_corrupt(self) -> None:
        with pytest.raises(CorruptLog, match="not a later one"):
            validity_closed(_store("a", "a"), ValidityClosed(2, 4.0, 1), 6.0)

    def test_a_validity_that_ends_before_it_starts_is_corrupt(self) -> None:
        with pytest.raises(CorruptLog, match="ends before it starts"):
            fact_written(EMPTY_STORE, FactWritten(1, "a", "x", 0.5, None, "", 5.0, 5.0), 0.0)

    def test_a_bitemporal_query_may_return_a_retired_fact_without_reading_it(self) -> None:
        store = superseded(_store("a", "a"), Superseded(1, 2), 1.0)
        event = Queried("", "", 2, (1, 2), (0.5, 0.5), 0.0, None)
        after = queried(store, event, 3.0)
        assert (0, 1) == (after.facts[1].reads, after.facts[2].reads)

    def test_a_query_of_now_may_not_return_a_retired_fact(self) -> None:
        store = superseded(_store("a", "a"), Superseded(1, 2), 1.0)
        with pytest.raises(CorruptLog, match="fact 1 is not active"):
            queried(store, Queried("", "", 1, (1,), (0.5,)), 3.0)


class TestFactRead:
    def test_a_read_counts_one_more_read(self) -> None:
        store = fact_read(fact_read(_store("a"), FactRead(1), 1.0), FactRead(1), 2.0)

        assert 2 == store.facts[1].reads

    def test_a_read_records_its_time_but_not_as_a_write(self) -> None:
        fact = fact_read(_store("a", clock=1.0), FactRead(1), 3.0).facts[1]

        assert (3.0, 1.0) == (fact.last_read_at, fact.written_at)

    def test_reading_a_fact_that_does_not_exist_is_corrupt(self) -> None:
        with pytest.raises(CorruptLog, match="fact 2 is not active"):
            fact_read(_store("a"), FactRead(2), 0.0)

    def test_reading_a_retired_fact_is_corrupt(self) -> None:
        store = superseded(_store("a", "a"), Superseded(1, 2), 0.0)

        with pytest.raises(CorruptLog, match="fact 1 is not active"):
            fact_read(store, FactRead(1), 0.0)


class TestQueried:
    def test_each_returned_fact_is_read_once_more_at_the_clock(self) -> None:
        store = queried(_store("a", "b", "c"), Queried("", "", 3, (3, 1), (0.5, 0.25)), 4.0)

        assert [(1, 4.0), (0, None), (1, 4.0)] == [
            (store.facts[i].reads, store.facts[i].last_read_at) for i in (1, 2, 3)
        ]

    def test_a_query_reads_as_the_same_reads_would(self) -> None:
        by_query = queried(_store("a", "b"), Queried("x", "a", 2, (2, 1), (0.5, 0.5)), 1.0)
        by_reads = fact_read(fact_read(_store("a", "b"), FactRead(2), 1.0), FactRead(1), 1.0)

        assert by_reads == by_query

    def test_a_query_that_returned_nothing_changes_nothing(self) -> None:
        before = _store("a")

        assert before == queried(before, Queried("x", "", 3, (), ()), 1.0)

    def test_returning_a_fact_that_is_not_active_is_corrupt(self) -> None:
        store = superseded(_store("a", "a"), Superseded(1, 2), 0.0)

        with pytest.raises(CorruptLog, match="fact 1 is not active"):
            queried(store, Queried("", "", 3, (2, 1), (0.5, 0.5)), 0.0)

    def test_more_results_than_k_is_corrupt(self) -> None:
        with pytest.raises(CorruptLog, match="a query for the top 1 returned 2 facts"):
            queried(_store("a", "b"), Queried("", "", 1, (1, 2), (0.5, 0.5)), 0.0)

    def test_a_fact_returned_twice_is_corrupt(self) -> None:
        with pytest.raises(CorruptLog, match=r"a query returned a fact twice: \[1, 1\]"):
            queried(_store("a"), Queried("", "", 3, (1, 1), (0.5, 0.5)), 0.0)

    def test_results_without_a_score_each_are_corrupt(self) -> None:
        with pytest.raises(CorruptLog, match=r"returned 2 facts with 1 score"):
            queried(_store("a", "b"), Queried("", "", 3, (1, 2), (0.5,)), 0.0)


class TestSuperseded:
    def test_the_old_fact_is_retired_and_kept(self) -> None:
        fact = superseded(_store("a", "a"), Superseded(1, 2), 4.0).facts[1]

        assert ("retired", 2, 4.0, "fact 1") == (
            fact.status,
            fact.superseded_by,
            fact.ended_at,
            fact.text,
        )

    def test_the_old_fact_leaves_the_actives(self) -> None:
        assert {2} == set(superseded(_store("a", "a"), Superseded(1, 2), 0.0).active)

    def test_the_key_keeps_answering_with_the_newer_fact(self) -> None:
        assert {"a": 2} == dict(superseded(_store("a", "a"), Superseded(1, 2), 0.0).by_key)

    def test_superseding_by_a_fact_of_another_key_drops_the_old_key(self) -> None:
        store = superseded(_store("contact", "phone"), Superseded(1, 2), 0.0)

        assert {"phone": 2} == dict(store.by_key)

    def test_the_reads_of_the_retired_fact_are_kept(self) -> None:
        store = fact_read(_store("a", "a"), FactRead(1), 1.0)

        fact = superseded(store, Superseded(1, 2), 2.0).facts[1]

        assert (1, 1.0) == (fact.reads, fact.last_read_at)

    def test_superseding_a_fact_that_is_not_active_is_corrupt(self) -> None:
        store = superseded(_store("a", "a"), Superseded(1, 2), 0.0)

        with pytest.raises(CorruptLog, match="fact 1 is not active"):
            superseded(store, Superseded(1, 2), 0.0)

    def test_superseding_by_a_fact_that_does_not_exist_is_corrupt(self) -> None:
        with pytest.raises(CorruptLog, match="superseded by fact 9, which does not exist"):
            superseded(_store("a"), Superseded(1, 9), 0.0)


class TestEvicted:
    def test_the_evicted_fact_is_kept_with_its_score(self) -> None:
        fact = evicted(_store("a", "b"), Evicted(1, 0.0707), 6.0).facts[1]

        assert ("evicted", 0.0707, 6.0, None) == (
            fact.status,
            fact.evicted_score,
            fact.ended_at,
            fact.superseded_by,
        )

    def test_the_evicted_fact_leaves_the_actives_and_its_key(self) -> None:
        store = evicted(_store("a", "b"), Evicted(1, 0.1), 0.0)

        assert ({2}, {"b": 2}) == (set(store.active), dict(store.by_key))

    def test_another_active_fact_on_the_key_then_answers_for_it(self) -> None:
        store = evicted(_store("a", "a", "a"), Evicted(3, 0.1), 0.0)

        assert 2 == store.by_key["a"]

    def test_evicting_an_older_fact_of_a_shared_key_keeps_the_newest(self) -> None:
        store = evicted(_store("a", "a"), Evicted(1, 0.1), 0.0)

        assert 2 == store.by_key["a"]

    def test_evicting_an_evicted_fact_is_corrupt(self) -> None:
        store = evicted(_store("a"), Evicted(1, 0.1), 0.0)

        with pytest.raises(CorruptLog, match="fact 1 is not active"):
            evicted(store, Evicted(1, 0.1), 0.0)

    def test_evicting_a_retired_fact_is_corrupt(self) -> None:
        store = superseded(_store("a", "a"), Superseded(1, 2), 0.0)

        with pytest.raises(CorruptLog, match="fact 1 is not active"):
            evicted(store, Evicted(1, 0.1), 0.0)

    def test_evicting_a_fact_that_does_not_exist_is_corrupt(self) -> None:
        with pytest.raises(CorruptLog, match="fact 7 is not active"):
            evicted(_store("a"), Evicted(7, 0.1), 0.0)

    def test_the_store_before_is_left_unchanged(self) -> None:
        before = _store("a")

        evicted(before, Evicted(1, 0.1), 0.0)

        assert ("active", {1}) == (before.facts[1].status, set(before.active))


class TestSharedKeys:
    def test_a_key_with_several_active_facts_counts_them(self) -> None:
        assert {"a": 3} == dict(_store("a", "b", "a", "a").shared)

    def test_a_supersession_by_key_leaves_no_key_shared(self) -> None:
        assert {} == dict(superseded(_store("a", "a"), Superseded(1, 2), 0.0).shared)

    def test_evicting_one_of_two_facts_unshares_the_key(self) -> None:
        store = evicted(_store("a", "a"), Evicted(2, 0.1), 0.0)

        assert ({}, {"a": 1}) == (dict(store.shared), dict(store.by_key))

    def test_evicting_the_only_fact_on_its_key_does_not_walk_the_actives(self) -> None:
        # An active id with no fact behind it would break a walk through the actives.
        store = _store("a", "b")
        trap = Store(store.facts, store.active.set(99, None), store.by_key, store.shared)

        assert {"b": 2} == dict(evicted(trap, Evicted(1, 0.1), 0.0).by_key)

    @settings(max_examples=examples(60), deadline=None)
    @given(
        st.lists(
            st.tuples(st.sampled_from("abc"), st.booleans(), st.integers(min_value=0)),
            max_size=30,
        )
    )
    def test_the_counts_and_the_newest_per_key_match_a_recount(
        self, steps: list[tuple[str, bool, int]]
    ) -> None:
        # Each step writes a fact on a key, then may evict an active fact picked by index.
        store = EMPTY_STORE
        for key, evict, pick in steps:
            store = fact_written(store, FactWritten(len(store.facts) + 1, key, "t", 0.5), 0.0)
            if evict:
                victim = sorted(store.active)[pick % len(store.active)]
                store = evicted(store, Evicted(victim, 0.1), 0.0)
        keys = [store.facts[i].key for i in store.active]

        assert (
            {k: keys.count(k) for k in set(keys) if keys.count(k) > 1},
            {k: max(i for i in store.active if store.facts[i].key == k) for k in set(keys)},
        ) == (dict(store.shared), dict(store.by_key))
