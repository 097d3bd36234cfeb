"""Every registered forgetting policy, under both supersession rules, keeps its promises
over random store sessions: the capacity bound, no stale reads unless add-only, the weakest
evicted under its own ranking, queries answered from the top of it, replay equality and
determinism."""

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memtape.checking.invariants import check_query, check_run, redecide
from memtape.core.commands import Command, Query, WriteFact
from memtape.core.errors import Rejected
from memtape.core.events import Evicted, FactRead, Queried
from memtape.core.state import State
from memtape.policies.plumbing.promises import (
    CAPACITY,
    EVICTS_WEAKEST,
    EXPIRES,
    SUPERSEDES,
    VALID_AS_OF,
)
from memtape.policies.session import Policies, Session
from memtape.policies.store.rules import weakest
from memtape.policies.zoo import FORGETTING
from memtape.reducers import evolve, fold
from memtape.testing.strategies import store_command_sequences
from tests.suite_profile import examples

NAMES = sorted(FORGETTING)


def _policy(name: str, capacity: int, supersession: str) -> Any:
    return FORGETTING[name].from_params({"capacity": capacity, "supersession": supersession}, "t")


def _play(policy: Any, commands: list[Command]) -> Session:
    """A session of ``commands``, rejected ones left out, checked after each command."""
    session = Session(Policies(forgetting=policy))
    for command in commands:
        before = session.state
        try:
            events = session.execute(command)
        except Rejected:
            continue
        _check_batch(policy, before, events, len(session.run) - len(events))
        assert len(session.state.store.active) <= policy.capacity
    return session


def _check_batch(policy: Any, before: State, events: tuple[Any, ...], start: int) -> None:
    """Each eviction takes the weakest under the ranking just before it; each query the top."""
    state = before
    for position, event in enumerate(events, start=start + 1):
        if isinstance(event, Evicted):
            condemned = weakest(policy.rank(state.store, state.clock))
            assert (condemned.fact.id, condemned.score) == (event.id, event.score)
        if isinstance(event, Queried):
            assert [] == check_query(policy, state, event, at=position)
        state = evolve(state, event)


def _stale_reads(session: Session) -> int:
    """Returned facts (by a read or a query) that are not the newest write on their key."""
    stale = 0
    state = session.run.state_at(0)
    for event in session.run.events:
        if isinstance(event, FactRead | Queried):
            returned = (event.id,) if isinstance(event, FactRead) else event.results
            for fact_id in returned:
                key = state.store.facts[fact_id].key
                newest = max(f.id for f in state.store.facts.values() if f.key == key)
                stale += fact_id != newest
        state = evolve(state, event)
    return stale


policies = st.builds(
    _policy,
    st.sampled_from(NAMES),
    st.integers(1, 5),
    st.sampled_from(("key", "add-only")),
)


class TestEveryPolicy:
    @pytest.mark.parametrize("name", NAMES)
    def test_capacity_alone_builds_it(self, name: str) -> None:
        policy = FORGETTING[name].from_params({"capacity": 3}, "t")

        assert (3, "key") == (policy.capacity, policy.params()["supersession"])

    @pytest.mark.parametrize("name", NAMES)
    @pytest.mark.parametrize(
        ("supersession", "promised"),
        [
            ("key", {CAPACITY, EVICTS_WEAKEST, EXPIRES, VALID_AS_OF, SUPERSEDES}),
            ("add-only", {CAPACITY, EVICTS_WEAKEST, EXPIRES, VALID_AS_OF}),
        ],
    )
    def test_promises(self, name: str, supersession: str, promised: set[str]) -> None:
        assert frozenset(promised) == _policy(name, 3, supersession).promises

    @pytest.mark.parametrize("name", NAMES)
    def test_params_read_back_to_the_same_policy(self, name: str) -> None:
        policy = _policy(name, 2, "add-only")

        assert policy == Policies.from_params({"forgetting": policy.params()}).forgetting


class TestProperties:
    @settings(max_examples=examples(100), deadline=None)
    @given(policy=policies, commands=store_command_sequences())
    def test_capacity_weakest_evicted_and_queries_from_the_top(
        self, policy: Any, commands: list[Command]
    ) -> None:
        """Checked after every command inside ``_play``."""
        _play(policy, commands)

    @settings(max_examples=examples(100), deadline=None)
    @given(policy=policies, commands=store_command_sequences())
    def test_no_stale_reads_unless_add_only(self, policy: Any, commands: list[Command]) -> None:
        session = _play(policy, commands)

        if SUPERSEDES in policy.promises:
            assert 0 == _stale_reads(session)

    @settings(max_examples=examples(60), deadline=None)
    @given(policy=policies, commands=store_command_sequences())
    def test_replay_redecide_and_determinism(self, policy: Any, commands: list[Command]) -> None:
        session = _play(policy, commands)
        again = _play(policy, commands)
        run = session.run
        policies_of_run = Policies(forgetting=policy)

        assert run.events == again.run.events
        assert session.state == fold(run.events)
        assert redecide(run, policies_of_run) is None
        assert [] == check_run(run, policies_of_run, checkpoint=1)


class TestAddOnlyCanReadStale:
    def test_a_query_under_add_only_returns_a_superseded_value(self) -> None:
        """The contrast the property above leaves open: add-only does read stale."""
        session = _play(
            _policy("fifo", 4, "add-only"),
            [WriteFact("contact", "email", 0.5), WriteFact("contact", "phone", 0.5), Query(k=2)],
        )

        assert 1 == _stale_reads(session)
