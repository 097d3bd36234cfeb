"""memtape.policies.store.temporal: valid time beside record time, and queries as of both."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import math
from typing import Any

import attrs
import pytest

from memtape.core.commands import AdvanceClock, Query, WriteFact
from memtape.core.errors import Rejected
from memtape.core.events import FactWritten, Queried, Superseded, ValidityClosed
from memtape.policies.session import Policies, Session


def _session(**forgetting: Any) -> Session:
    table = {"policy": "importance-recency-access", "capacity": 6, "half_life": 50.0}
    return Session(Policies.from_params({"forgetting": {**table, **forgetting}}))


def _moved() -> Session:
    """Dana lived in Lyon from t=0; at t=12 the store learns she moved to Oslo at t=10."""
    session = _session()
    session.execute(WriteFact("address", "Lyon", 0.8, valid_from=0))
    session.execute(AdvanceClock(12))
    session.execute(WriteFact("address", "Oslo", 0.8, valid_from=10))
    return session


def _ask(session: Session, **times: float) -> tuple[int, ...]:
    (answer,) = session.execute(Query("where", "address", 3, **times))
    assert isinstance(answer, Queried)
    return answer.results


class TestWriting:
    def test_a_write_carries_its_valid_time(self) -> None:
        session = _session()
        events = session.execute(WriteFact("a", "x", 0.5, valid_from=-3, valid_to=7))
        assert (FactWritten(1, "a", "x", 0.5, None, "", -3.0, 7.0),) == events

    def test_a_later_write_naming_valid_from_closes_the_earlier_fact(self) -> None:
        session = _session()
        session.execute(WriteFact("address", "Lyon", 0.8))
        session.execute(AdvanceClock(12))
        events = session.execute(WriteFact("address", "Oslo", 0.8, valid_from=10))
        assert (
            FactWritten(2, "address", "Oslo", 0.8, None, "", 10.0, None),
            Superseded(1, 2),
            ValidityClosed(1, 10.0, 2),
        ) == events

    def test_the_closed_fact_is_kept_with_its_end(self) -> None:
        fact = _moved().state.store.facts[1]
        assert ("retired", 10.0, 12.0, 2) == (
            fact.status,
            fact.closed_to,
            fact.closed_at,
            fact.closed_by,
        )

    def test_a_write_naming_no_valid_time_closes_nothing(self) -> None:
        session = _session()
        session.execute(WriteFact("phone", "0100", 0.6))
        events = session.execute(WriteFact("phone", "0199", 0.6))
        assert (FactWritten(2, "phone", "0199", 0.6), Superseded(1, 2)) == events

    def test_a_fact_already_over_is_not_closed_again(self) -> None:
        session = _session()
        session.execute(WriteFact("a", "x", 0.5, valid_from=0, valid_to=5))
        events = session.execute(WriteFact("a", "y", 0.5, valid_from=8))
        assert not any(isinstance(event, ValidityClosed) for event in events)

    @pytest.mark.parametrize(
        ("fields", "message"),
        [
            ({"valid_from": 5, "valid_to": 5}, "cannot be valid to t=5"),
            ({"valid_to": -1}, "valid from t=0 cannot be valid to t=-1"),
            ({"valid_from": math.nan}, "valid_from must be a finite number"),
            ({"valid_to": math.inf}, "valid_to must be a finite number"),
        ],
    )
    def test_an_impossible_validity_is_refused_and_nothing_written(
        self, fields: dict[str, Any], message: str
    ) -> None:
        session = _session()
        with pytest.raises(Rejected, match=message):
            session.execute(attrs.evolve(WriteFact("a", "x", 0.5), **fields))
        assert 0 == len(session.run)


class TestQuerying:
    def test_now_the_query_finds_the_new_fact(self) -> None:
        assert (2,) == _ask(_moved())

    def test_as_of_a_time_before_the_move_it_finds_the_old_one(self) -> None:
        assert (1,) == _ask(_moved(), as_of=5)

    def test_as_of_a_time_after_the_move_it_finds_the_new_one(self) -> None:
        assert (2,) == _ask(_moved(), as_of=11)

    def test_as_known_before_the_store_learned_of_the_move_it_finds_the_old_one(self) -> None:
        assert (1,) == _ask(_moved(), as_of=11, known_at=11)

    def test_a_fact_is_not_valid_before_its_valid_from(self) -> None:
        assert () == _ask(_moved(), as_of=-1)

    def test_a_fact_without_valid_time_is_true_from_its_write(self) -> None:
        session = _session()
        session.execute(AdvanceClock(4))
        session.execute(WriteFact("a", "x", 0.5))
        assert ((), (1,)) == (_ask(session, as_of=3), _ask(session, as_of=4))

    def test_a_corrected_fact_is_known_only_until_its_correction(self) -> None:
        session = _session()
        session.execute(WriteFact("phone", "0100", 0.6))
        session.execute(AdvanceClock(12))
        session.execute(WriteFact("phone", "0199", 0.6))
        assert ((1,), ()) == (_ask(session, known_at=5), _ask(session, as_of=5))

    def test_a_bitemporal_query_counts_reads_of_active_facts_only(self) -> None:
        session = _moved()
        _ask(session, as_of=5)
        _ask(session, as_of=11)
        store = session.state.store
        assert (0, 1) == (store.facts[1].reads, store.facts[2].reads)

    def test_a_query_cannot_ask_as_known_in_the_future(self) -> None:
        session = _moved()
        with pytest.raises(Rejected, match="as known at t=13: the clock is at t=12"):
            session.execute(Query("where", known_at=13))

    def test_the_query_records_what_it_asked(self) -> None:
        (answer,) = _moved().execute(Query("where", "address", 2, as_of=5))
        assert Queried("where", "address", 2, (1,), answer.scores, 5.0, None) == answer  # type: ignore[union-attr]
