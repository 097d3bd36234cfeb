"""memtape.policies.store.rules: what every forgetting policy shares.

Supersession by key against add-only (what each costs), eviction of the weakest under the
policy's ranking, and the checks of writes and reads.
"""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import pytest

from memtape.core.commands import AdvanceClock, Command, Query, ReadFact, WriteFact
from memtape.core.errors import BadInput, Rejected
from memtape.core.events import Evicted, FactRead, FactWritten, Queried, Superseded
from memtape.core.state import Fact
from memtape.policies.session import Policies, Session
from memtape.policies.store.expiry import NO_TTL
from memtape.policies.store.forgetting import ImportanceRecencyAccess
from memtape.policies.store.memorybank import MemoryBank
from memtape.policies.store.rules import (
    capacity_only,
    capacity_table,
    check_supersession,
    decide_write,
    last_touch,
)
from memtape.policies.zoo import FORGETTING

KEY = ImportanceRecencyAccess(4, 4.0, 0.1)
ADD_ONLY = ImportanceRecencyAccess(4, 4.0, 0.1, "add-only")


def _session(policy: ImportanceRecencyAccess | MemoryBank, *commands: Command) -> Session:
    session = Session(Policies(forgetting=policy))
    session.execute_all(commands)
    return session


def _email_then_phone() -> list[Command]:
    return [
        WriteFact("contact", "Dana prefers email", 0.6),
        AdvanceClock(1.0),
        WriteFact("contact", "Dana prefers phone", 0.5),
    ]


class TestSupersessionAgainstAddOnly:
    def test_by_key_a_newer_fact_retires_the_older(self) -> None:
        session = _session(KEY, *_email_then_phone())

        assert ([2], "retired") == (
            sorted(session.state.store.active),
            session.state.store.facts[1].status,
        )
        assert Superseded(1, 2) == session.run.events[-1]

    def test_add_only_keeps_both_facts_active(self) -> None:
        session = _session(ADD_ONLY, *_email_then_phone())

        assert ([1, 2], FactWritten(2, "contact", "Dana prefers phone", 0.5)) == (
            sorted(session.state.store.active),
            session.run.events[-1],
        )

    def test_add_only_reads_by_key_the_newest_active_fact(self) -> None:
        session = _session(ADD_ONLY, *_email_then_phone())

        assert (FactRead(2),) == session.execute(ReadFact(key="contact"))

    def test_add_only_lets_a_query_return_the_stale_fact_first(self) -> None:
        # The email fact is more important (0.6 x 0.5 ** (1 / 4) = 0.505 > 0.5): the cost of
        # never superseding is a query whose best answer is out of date.
        session = _session(ADD_ONLY, *_email_then_phone())

        (event,) = session.execute(Query("how to contact Dana", "contact", 1))

        assert isinstance(event, Queried)
        assert (1,) == event.results

    def test_by_key_the_same_query_returns_the_current_fact(self) -> None:
        session = _session(KEY, *_email_then_phone())

        (event,) = session.execute(Query("how to contact Dana", "contact", 1))

        assert isinstance(event, Queried)
        assert (2,) == event.results

    def test_add_only_costs_capacity(self) -> None:
        # Capacity 2: by key, the two contact facts take one place; add-only, two.
        commands = [*_email_then_phone(), WriteFact("name", "Dana", 0.9)]
        by_key = _session(ImportanceRecencyAccess(2, 4.0, 0.1), *commands)
        add_only = _session(ImportanceRecencyAccess(2, 4.0, 0.1, "add-only"), *commands)

        assert ([], [Evicted]) == (
            [type(e) for e in by_key.run.events if isinstance(e, Evicted)],
            [type(e) for e in add_only.run.events if isinstance(e, Evicted)],
        )

    def test_add_only_still_refuses_to_supersede_a_key_without_an_active_fact(self) -> None:
        with pytest.raises(Rejected, match="cannot supersede 'email': no active fact has that key"):
            _session(ADD_ONLY, WriteFact("phone", "x", 0.5, supersedes="email"))

    def test_add_only_names_a_key_to_supersede_and_retires_nothing(self) -> None:
        session = _session(ADD_ONLY, WriteFact("email", "x", 0.5))

        events = session.execute(WriteFact("phone", "y", 0.5, supersedes="email"))

        assert (FactWritten(2, "phone", "y", 0.5),) == events

    @pytest.mark.parametrize("name", sorted(FORGETTING))
    def test_every_policy_takes_the_option(self, name: str) -> None:
        policy = FORGETTING[name].from_params({"capacity": 4, "supersession": "add-only"}, "t")
        session = _session(policy, *_email_then_phone())

        assert [1, 2] == sorted(session.state.store.active)

    def test_only_key_add_only_and_llm_are_rules(self) -> None:
        with pytest.raises(
            BadInput, match="supersession must be one of key, add-only, llm, got 'x'"
        ):
            check_supersession("x")


class TestEviction:
    def test_each_eviction_re_ranks_the_facts_left(self) -> None:
        # Three facts under a capacity of 4, then a write at t=2 under a capacity of 1: three
        # go, weakest first. Retention: b and c exp(-2) (b written first), a read at t=1
        # exp(-1/2), the new fact 1.
        session = _session(
            MemoryBank(4),
            WriteFact("a", "x", 0.5),
            WriteFact("b", "y", 0.5),
            WriteFact("c", "z", 0.5),
            AdvanceClock(1.0),
            ReadFact(key="a"),
            AdvanceClock(2.0),
        )

        events = decide_write(MemoryBank(1), session.state, WriteFact("d", "w", 0.5))

        assert [2, 3, 1] == [e.id for e in events if isinstance(e, Evicted)]

    def test_a_write_within_capacity_evicts_nothing(self) -> None:
        session = _session(KEY, WriteFact("a", "x", 0.5))

        assert (FactWritten(2, "b", "y", 0.5),) == decide_write(
            KEY, session.state, WriteFact("b", "y", 0.5)
        )


class TestSharedParameters:
    def test_the_table_reads_back_as_capacity_and_supersession(self) -> None:
        table = capacity_table("lru", 3, "add-only")
        assert {"policy": "lru", "capacity": 3, "supersession": "add-only"} == table
        rest = {key: value for key, value in table.items() if key != "policy"}
        assert (3, "add-only", NO_TTL, None) == capacity_only(rest, "f.toml")

    def test_another_parameter_is_refused(self) -> None:
        with pytest.raises(BadInput, match="half_life"):
            capacity_only({"capacity": 3, "half_life": 2.0}, "f.toml")


class TestLastTouch:
    def test_an_unread_fact_was_last_touched_by_its_write(self) -> None:
        assert 2.0 == last_touch(Fact(1, "k", "t", 0.5, written_at=2.0))

    def test_a_read_fact_was_last_touched_by_its_latest_read(self) -> None:
        assert 7.0 == last_touch(Fact(1, "k", "t", 0.5, written_at=2.0, reads=2, last_read_at=7.0))
