"""A state machine drives a session with random commands, valid and not, and checks
the kernel's invariants after every step, beside a tiny model of what must follow."""

import json
import math

import pytest
from hypothesis import assume, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from memtape.checking.invariants import (
    check_budget,
    check_capacity,
    check_evictions,
    check_gist,
    check_hot,
    check_query,
    check_ranking,
    check_replay,
    check_run,
    check_status,
    check_tiers,
    check_token_total,
    redecide,
)
from memtape.core.codec import event_data, event_from_data
from memtape.core.commands import (
    AddTurn,
    AdvanceClock,
    Command,
    Consolidate,
    Query,
    ReadFact,
    RecordEpisode,
    WriteFact,
)
from memtape.core.errors import Rejected
from memtape.core.events import (
    ClockAdvanced,
    CompactionTriggered,
    Consolidated,
    Event,
    FactRead,
    FactWritten,
    Queried,
    TurnAdded,
)
from memtape.core.state import INITIAL_STATE, State
from memtape.reducers import evolve, fold
from memtape.testing.strategies import (
    BAD_ROLES,
    PolicyParams,
    add_turns,
    bad_importances,
    importances,
    keys,
    policy_params,
    queries,
    record_episodes,
    texts,
    write_facts,
)
from tests.suite_profile import examples
from tests.test_properties import check_tier_of, check_unchanged, snapshot, turns_of


class SessionMachine(RuleBasedStateMachine):
    """Random commands against a real session; the model counts what each must change."""

    def __init__(self) -> None:
        super().__init__()
        self.params = PolicyParams(40, 2, 4, 4.0, 0.1, 1024)
        self.session = self.params.session()
        self.compacted = False
        self.clock = 0.0
        self.turns = 0
        self.facts = 0
        self.pending = 0

    @initialize(params=policy_params())
    def start(self, params: PolicyParams) -> None:
        """A fresh session under random policy parameters and snapshot interval."""
        self.params = params
        self.session = params.session()

    # -- helpers -----------------------------------------------------------------------------

    @property
    def state(self) -> State:
        """The live state of the session."""
        return self.session.state

    def execute(self, command: Command) -> tuple[Event, ...]:
        """Execute a command that must be honoured, and keep the model in step."""
        before, start = self.state, len(self.session.run)
        events = self.session.execute(command)
        assert len(events) >= 1
        assert [] == check_evictions(self.params.forgetting(), before, events, start=start)
        self.compacted = any(isinstance(e, CompactionTriggered) for e in events)
        self.facts += sum(isinstance(e, FactWritten) for e in events)
        return events

    def reject(self, command: Command) -> None:
        """Execute a command that must be rejected, and check that nothing changed."""
        before = snapshot(self.session.run)
        with pytest.raises(Rejected):
            self.session.execute(command)
        check_unchanged(self.session.run, before)
        self.compacted = False

    def scores(self, state: State) -> dict[int, float]:
        """The score of each active fact in ``state``, at its clock."""
        policy = self.params.forgetting()
        return {
            i: policy.score(state.store.facts[i], state.clock).score for i in state.store.active
        }

    # -- the window --------------------------------------------------------------------------

    @rule(command=add_turns(valid_only=True))
    def add_turn(self, command: AddTurn) -> None:
        """A turn with a proper role joins the window, numbered next."""
        events = self.execute(command)
        self.turns += 1
        turn = events[0]
        assert isinstance(turn, TurnAdded)
        assert (self.turns, command.role, command.text) == (turn.turn, turn.role, turn.text)

    @rule(role=st.sampled_from(BAD_ROLES), text=texts())
    def add_turn_with_a_bad_role(self, role: str, text: str) -> None:
        """A blank role, or one with surrounding whitespace, is rejected."""
        self.reject(AddTurn(role, text))

    # -- the clock ---------------------------------------------------------------------------

    @rule(delta=st.one_of(st.floats(0.0, 20.0), st.floats(1e3, 1e9)))
    def advance(self, delta: float) -> None:
        """The clock moves forward (or stays); no score rises."""
        before = self.state
        to = self.clock + delta
        events = self.execute(AdvanceClock(to))
        assert (ClockAdvanced(to),) == events
        self.clock = to
        earlier, later = self.scores(before), self.scores(self.state)
        assert earlier.keys() == later.keys()
        assert all(later[i] <= earlier[i] for i in earlier)

    @rule(delta=st.one_of(st.floats(0.001, 20.0), st.sampled_from((math.inf, math.nan))))
    def advance_backwards(self, delta: float) -> None:
        """The clock moving backwards, or to a time that is not finite, is rejected."""
        to = self.clock - delta if math.isfinite(delta) else delta
        assume(not (math.isfinite(to) and to >= self.clock))
        self.reject(AdvanceClock(to))

    # -- the store ---------------------------------------------------------------------------

    @rule(command=write_facts(valid_only=True))
    def write(self, command: WriteFact) -> None:
        """A write is honoured unless it supersedes a key without an active fact."""
        if command.supersedes is not None and command.supersedes not in self.state.store.by_key:
            self.reject(command)
            return
        events = self.execute(command)
        assert FactWritten(self.facts, command.key, command.text, command.importance) == events[0]

    @rule(key=keys(valid_only=True), importance=bad_importances())
    def write_with_a_bad_importance(self, key: str, importance: float) -> None:
        """An importance outside [0, 1], or NaN, is rejected."""
        self.reject(WriteFact(key, "text", importance))

    @rule(key=keys(valid_only=True), importance=importances(), data=st.data())
    def supersede_a_missing_key(self, key: str, importance: float, data: st.DataObject) -> None:
        """Superseding a key with no active fact is rejected."""
        by_key = self.state.store.by_key
        missing = data.draw(keys().filter(lambda k: k not in by_key))
        self.reject(WriteFact(key, "text", importance, supersedes=missing))

    @precondition(lambda self: bool(self.state.store.active))
    @rule(data=st.data(), by_key=st.booleans())
    def read_active(self, data: st.DataObject, by_key: bool) -> None:
        """Reading an active fact counts one more read and lowers no score."""
        before = self.state
        fact = before.store.facts[data.draw(st.sampled_from(sorted(before.store.active)))]
        named = before.store.by_key[fact.key]
        command = ReadFact(key=fact.key) if by_key else ReadFact(id=fact.id)
        events = self.execute(command)
        assert (FactRead(named if by_key else fact.id),) == events
        earlier, later = self.scores(before), self.scores(self.state)
        assert earlier.keys() == later.keys()
        assert all(later[i] >= earlier[i] for i in earlier)

    @precondition(lambda self: len(self.state.store.active) < len(self.state.store.facts))
    @rule(data=st.data(), by_key=st.booleans())
    def read_gone(self, data: st.DataObject, by_key: bool) -> None:
        """Reading a retired or evicted fact (by id, or by a key left without one) is rejected."""
        store = self.state.store
        gone = sorted(i for i, f in store.facts.items() if f.status != "active")
        fact = store.facts[data.draw(st.sampled_from(gone))]
        assume(not by_key or fact.key not in store.by_key)
        self.reject(ReadFact(key=fact.key) if by_key else ReadFact(id=fact.id))

    @rule(fact_id=st.integers(), key=keys(), by_key=st.booleans())
    def read_unknown(self, fact_id: int, key: str, by_key: bool) -> None:
        """Reading an id never written, or a key without an active fact, is rejected."""
        store = self.state.store
        if by_key:
            assume(key not in store.by_key)
            self.reject(ReadFact(key=key))
        else:
            assume(fact_id not in store.facts)
            self.reject(ReadFact(id=fact_id))

    @rule(key=keys(), fact_id=st.integers(-1, 8), both=st.booleans())
    def read_naming_both_or_neither(self, key: str, fact_id: int, both: bool) -> None:
        """A read names a fact by key or by id, exactly one of them."""
        self.reject(ReadFact(key=key, id=fact_id) if both else ReadFact())

    @rule(command=queries(valid_only=True))
    def query(self, command: Query) -> None:
        """A query returns the top k of the ranking for its text, each read once more."""
        before = self.state
        (event,) = self.execute(command)
        assert isinstance(event, Queried)
        assert len(event.results) == min(command.k, len(before.store.active))
        check = check_query(self.params.forgetting(), before, event, at=len(self.session.run))
        assert [] == check
        for fact_id in event.results:
            fact = self.state.store.facts[fact_id]
            assert (before.store.facts[fact_id].reads + 1, self.state.clock) == (
                fact.reads,
                fact.last_read_at,
            )

    @rule(k=st.integers(-3, 0), text=texts())
    def query_for_fewer_than_one(self, k: int, text: str) -> None:
        """A query for fewer than one fact is rejected."""
        self.reject(Query(text, "", k))

    # -- consolidation -----------------------------------------------------------------------

    @rule(command=record_episodes())
    def record_episode(self, command: RecordEpisode) -> None:
        """An episode waits for the next pass."""
        self.execute(command)
        self.pending += 1

    @rule()
    def consolidate(self) -> None:
        """A pass consumes every pending episode, matched by a rule or not."""
        pending = tuple(e.id for e in self.state.memory.episodes)
        events = self.execute(Consolidate())
        assert isinstance(events[0], Consolidated)
        assert pending == events[0].episodes
        self.pending = 0

    # -- invariants --------------------------------------------------------------------------

    @invariant()
    def the_model_agrees(self) -> None:
        """Clock, turn count, fact count and pending episodes are what the commands made them."""
        state = self.state
        expected = (self.clock, self.turns, self.facts, self.pending)
        actual = (
            state.clock,
            state.window.turns,
            len(state.store.facts),
            len(state.memory.episodes),
        )
        assert expected == actual

    @invariant()
    def folding_the_log_gives_the_live_state(self) -> None:
        """The log folded from scratch equals the live state."""
        run = self.session.run
        assert [] == check_replay(fold(run.events), self.state, at=len(run))

    @invariant()
    def the_window_holds_together(self) -> None:
        """Token total, tiers, gist, budget and HOT all check out."""
        window = self.state.window
        at = len(self.session.run)
        turns = turns_of(self.session.run.events)
        assert [] == [
            *check_token_total(window, at=at),
            *check_tiers(window, at=at),
            *check_gist(window, self.params.compaction(), at=at),
            *check_budget(
                window, self.params.budget, floor=self.params.compaction().floor(window), at=at
            ),
            *check_hot(window, self.params.hot_n, turns, compacted=self.compacted, at=at),
        ]
        check_tier_of(window)

    @invariant()
    def the_store_holds_together(self) -> None:
        """Capacity, statuses and the ranking check out."""
        state = self.state
        at = len(self.session.run)
        assert [] == [
            *check_capacity(state.store, self.params.capacity, at=at),
            *check_status(state.store, at=at),
            *check_ranking(self.params.forgetting(), state.store, state.clock, at=at),
        ]

    def teardown(self) -> None:
        """Seeks, replay and the codec agree with the whole log, which checks out whole and
        re-decides to itself."""
        run = self.session.run
        state = INITIAL_STATE
        for position, event in enumerate(run.events):
            assert [] == check_replay(state, run.state_at(position), at=position)
            cls = type(event)
            data = json.loads(json.dumps(event_data(event)))
            assert event == event_from_data(cls.__name__, cls.VERSION, data)
            state = evolve(state, event)
        assert [] == check_replay(run.state, run.state_at(len(run)), at=len(run))
        again = self.params.session()
        again.execute_all(run.commands)
        assert run.events == again.run.events
        policies = self.params.policies()
        assert [] == check_run(run, policies, checkpoint=1)
        assert redecide(run, policies) is None


class TestSessionMachine:
    def test_random_commands_keep_every_invariant_after_every_step(self) -> None:
        """Any sequence of commands, honoured or rejected, keeps the kernel's invariants."""
        run_state_machine_as_test(
            SessionMachine,
            settings=settings(max_examples=examples(150), stateful_step_count=50, deadline=None),
        )
