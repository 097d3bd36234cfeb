"""Property tests of the kernel over random command sequences and policy parameters.

The invariants themselves live in ``memtape.checking.invariants`` (``memtape check``
runs the same ones); these tests assert that they find nothing, here and
after every step of the stateful test in ``test_stateful.py``.
"""

import contextlib
import json
import math
from collections.abc import Sequence

import attrs
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from memtape.checking.invariants import (
    Violation,
    check_budget,
    check_capacity,
    check_evictions,
    check_gist,
    check_hot,
    check_ranking,
    check_replay,
    check_run,
    check_status,
    check_tiers,
    check_token_total,
    redecide,
)
from memtape.core.codec import command_data, command_from_data, event_data, event_from_data
from memtape.core.commands import (
    AddTurn,
    AdvanceClock,
    Command,
    Consolidate,
    ReadFact,
    RecordEpisode,
    WriteFact,
)
from memtape.core.errors import BadInput, Rejected
from memtape.core.events import (
    ClockAdvanced,
    CompactionTriggered,
    Consolidated,
    Event,
    FactRead,
    FactWritten,
    TurnAdded,
)
from memtape.core.run import Run
from memtape.core.state import INITIAL_STATE, State, Window
from memtape.policies.consolidation.rules import RuleConsolidation
from memtape.policies.session import Policies, Session
from memtape.policies.store.forgetting import ImportanceRecencyAccess
from memtape.policies.text.tokenizers import WordCount
from memtape.reducers import evolve, fold
from memtape.testing.strategies import (
    PolicyParams,
    command_sequences,
    keys,
    policy_params,
    valid_command_sequences,
)

SLOW = settings(deadline=None)
"""For tests that fold whole logs many times over."""


# -- what the invariants are checked with -----------------------------------------------------


def turns_of(events: Sequence[Event]) -> dict[int, TurnAdded]:
    """Every turn of a log by its number, as it arrived."""
    return {e.turn: e for e in events if isinstance(e, TurnAdded)}


def check_tier_of(window: Window) -> None:
    """``tier_of`` names the one tier each turn sits in, and nothing outside the turns so far."""
    tiers = {
        "hot": [t.turn for t in window.hot],
        "warm": [w.turn for w in window.warm],
        "cold": list(window.cold),
        "dropped": list(window.dropped),
    }
    for turn in range(1, window.turns + 1):
        assert [window.tier_of(turn)] == [name for name, turns in tiers.items() if turn in turns]
    assert window.tier_of(0) is None
    assert window.tier_of(window.turns + 1) is None


def check_command_boundary(
    session: Session, params: PolicyParams, *, compacted: bool
) -> list[Violation]:
    """Every invariant that holds between two commands, on the session's live state."""
    state = session.state
    window = state.window
    at = len(session.run)
    turns = turns_of(session.run.events)
    return [
        *check_token_total(window, at=at),
        *check_tiers(window, at=at),
        *check_gist(window, params.compaction(), at=at),
        *check_budget(window, params.budget, floor=params.compaction().floor(window), at=at),
        *check_hot(window, params.hot_n, turns, compacted=compacted, at=at),
        *check_capacity(state.store, params.capacity, at=at),
        *check_status(state.store, at=at),
        *check_ranking(params.forgetting(), state.store, state.clock, at=at),
    ]


def check_unchanged(
    run: Run, before: tuple[int, State, Sequence[Command], Sequence[Event]]
) -> None:
    """The run is exactly as ``snapshot`` found it."""
    assert before == snapshot(run)


def snapshot(run: Run) -> tuple[int, State, Sequence[Command], Sequence[Event]]:
    """What a rejected command must not change: the length, state, commands and events."""
    return len(run), run.state, run.commands, run.events


# -- recording a session ---------------------------------------------------------------------


@attrs.frozen
class Step:
    """One command of a recorded session: its events (None if rejected) and the states around them.

    ``states[k]`` is the state just before ``events[k]``; ``states[-1]`` the state after it all.
    ``start`` is the number of events before the command, so ``states[k]`` is the run's state
    at position ``start + k``.
    """

    command: Command
    events: tuple[Event, ...] | None
    states: tuple[State, ...]
    start: int

    @property
    def before(self) -> State:
        """The state before the command."""
        return self.states[0]

    @property
    def after(self) -> State:
        """The state after the command."""
        return self.states[-1]


def record(params: PolicyParams, commands: Sequence[Command]) -> tuple[Session, list[Step]]:
    """Execute ``commands`` in a fresh session, noting each one's events and states."""
    session = params.session()
    steps: list[Step] = []
    for command in commands:
        before, start = session.state, len(session.run)
        try:
            events = session.execute(command)
        except Rejected:
            steps.append(Step(command, None, (before,), start))
            continue
        states = [before]
        for event in events:
            states.append(evolve(states[-1], event))
        steps.append(Step(command, events, tuple(states), start))
    return session, steps


def accepted(steps: Sequence[Step]) -> list[tuple[Step, tuple[Event, ...]]]:
    """The steps a policy honoured, with their events."""
    return [(step, step.events) for step in steps if step.events is not None]


# -- the properties --------------------------------------------------------------------------


class TestReplay:
    @SLOW
    @given(policy_params(), command_sequences())
    def test_folding_the_log_from_scratch_gives_the_live_state_after_every_command(
        self, params: PolicyParams, commands: list[Command]
    ) -> None:
        """After each command, folding the whole log from scratch equals the live state."""
        session = params.session()
        for command in commands:
            with contextlib.suppress(Rejected):
                session.execute(command)
            run = session.run
            assert [] == check_replay(fold(run.events), session.state, at=len(run))

    @SLOW
    @given(policy_params(), command_sequences())
    def test_state_at_every_position_is_the_fold_of_that_prefix(
        self, params: PolicyParams, commands: list[Command]
    ) -> None:
        """``state_at(i)`` equals the fold of the first i events, snapshots or not."""
        session, _ = record(params, commands)
        run = session.run
        state = INITIAL_STATE
        for position, event in enumerate(run.events):
            assert [] == check_replay(state, run.state_at(position), at=position)
            state = evolve(state, event)
        assert [] == check_replay(state, run.state_at(len(run)), at=len(run))
        assert [] == check_replay(state, run.state, at=len(run))

    @SLOW
    @given(policy_params(), command_sequences(), st.data())
    def test_folding_any_slice_equals_evolving_event_by_event(
        self, params: PolicyParams, commands: list[Command], data: st.DataObject
    ) -> None:
        """The batch fold (which applies a turn and its compaction in one step) equals
        ``evolve`` event by event, for slices cut anywhere, even between the two."""
        session, _ = record(params, commands)
        events = session.run.events
        states = [INITIAL_STATE]
        for event in events:
            states.append(evolve(states[-1], event))
        start = data.draw(st.integers(0, len(events)), label="start")
        end = data.draw(st.integers(start, len(events)), label="end")
        assert states[end] == fold(events[start:end], states[start])

    @given(policy_params(), command_sequences())
    def test_the_same_commands_always_decide_the_same_events(
        self, params: PolicyParams, commands: list[Command]
    ) -> None:
        """Two sessions running the same commands under the same policies log identical events."""
        first, _ = record(params, commands)
        second, _ = record(params, commands)
        assert first.run.events == second.run.events
        assert first.run.commands == second.run.commands

    @given(policy_params(), command_sequences())
    def test_re_deciding_the_recorded_commands_reproduces_the_log(
        self, params: PolicyParams, commands: list[Command]
    ) -> None:
        """The commands a run remembers, re-decided in a fresh session, give the same events."""
        session, _ = record(params, commands)
        again = params.session()
        again.execute_all(session.run.commands)
        assert session.run.events == again.run.events
        assert session.state == again.state
        assert redecide(session.run, params.policies()) is None

    @given(policy_params(), command_sequences(), st.sampled_from((1, 2, 5)))
    def test_checking_a_whole_recorded_run_finds_nothing(
        self, params: PolicyParams, commands: list[Command], checkpoint: int
    ) -> None:
        """``check_run``, every invariant in one pass over the run, finds no violation."""
        session, _ = record(params, commands)
        assert [] == check_run(session.run, params.policies(), checkpoint=checkpoint)

    @given(policy_params(), command_sequences())
    def test_each_command_remembers_its_batch_of_events(
        self, params: PolicyParams, commands: list[Command]
    ) -> None:
        """``batch(step)`` gives back each honoured command's events and ``step_of`` the reverse."""
        session, steps = record(params, commands)
        run = session.run
        honoured = accepted(steps)
        assert [step.command for step, _ in honoured] == list(run.commands)
        for number, (_, events) in enumerate(honoured, start=1):
            start, end = run.batch(number)
            assert events == tuple(run.events[start:end])
            assert [number] * len(events) == [run.step_of(p) for p in range(start + 1, end + 1)]


class TestCodec:
    @given(policy_params(), command_sequences())
    def test_every_event_survives_the_json_round_trip(
        self, params: PolicyParams, commands: list[Command]
    ) -> None:
        """Each logged event, through JSON text and back, equals itself, types included."""
        session, _ = record(params, commands)
        for event in session.run.events:
            cls = type(event)
            data = json.loads(json.dumps(event_data(event)))
            back = event_from_data(cls.__name__, cls.VERSION, data)
            assert event == back
            assert repr(event) == repr(back)

    @given(policy_params(), command_sequences())
    def test_every_recorded_command_survives_the_json_round_trip(
        self, params: PolicyParams, commands: list[Command]
    ) -> None:
        """Each command a run recorded, through JSON text and back, equals itself."""
        session, _ = record(params, commands)
        for command in session.run.commands:
            back = command_from_data(json.loads(json.dumps(command_data(command))))
            assert command == back
            assert repr(command) == repr(back)


class TestCompaction:
    @given(policy_params(), command_sequences())
    def test_after_every_command_the_window_invariants_hold(
        self, params: PolicyParams, commands: list[Command]
    ) -> None:
        """Between commands: token total, tiers, gist, budget and HOT all check out."""
        session = params.session()
        for command in commands:
            try:
                events = session.execute(command)
            except Rejected:
                events = ()
            compacted = any(isinstance(e, CompactionTriggered) for e in events)
            assert [] == check_command_boundary(session, params, compacted=compacted)
            check_tier_of(session.state.window)

    @given(policy_params(), command_sequences())
    def test_the_running_total_is_hot_plus_warm_plus_gist_at_every_event(
        self, params: PolicyParams, commands: list[Command]
    ) -> None:
        """Even inside a batch, the running token total equals the tiers recounted from scratch."""
        _, steps = record(params, commands)
        for step in steps:
            for at, state in enumerate(step.states, start=step.start):
                assert [] == check_token_total(state.window, at=at)

    @given(policy_params(), command_sequences())
    def test_a_compaction_happens_exactly_when_a_turn_takes_the_window_over_budget(
        self, params: PolicyParams, commands: list[Command]
    ) -> None:
        """A turn is followed by a compaction iff the window with it exceeds the budget."""
        _, steps = record(params, commands)
        for step, events in accepted(steps):
            if not isinstance(events[0], TurnAdded):
                assert not any(isinstance(e, CompactionTriggered) for e in events)
                continue
            over = step.states[1].window.tokens > params.budget
            assert over == (len(events) == 2)
            assert over == any(isinstance(e, CompactionTriggered) for e in events)

    @given(policy_params(), command_sequences())
    def test_after_a_compaction_hot_holds_exactly_the_last_hot_n_turns_verbatim(
        self, params: PolicyParams, commands: list[Command]
    ) -> None:
        """HOT after a compaction: the last min(hot_n, turns) turns, as they arrived."""
        session, steps = record(params, commands)
        turns = turns_of(session.run.events)
        compactions = 0
        for step, events in accepted(steps):
            if isinstance(events[-1], CompactionTriggered):
                compactions += 1
                window = step.after.window
                at = step.start + len(events)
                assert [] == check_hot(window, params.hot_n, turns, compacted=True, at=at)
                assert events[-1].budget == params.budget
                # What left HOT is what the compaction names as moving, and only that.
                arrived = [t.turn for t in step.before.window.hot] + [window.turns]
                left = sorted(set(arrived) - {t.turn for t in window.hot})
                named = [*(item.turn for item in events[-1].warm), *events[-1].dropped]
                assert left == sorted(named)
        assert compactions == sum(isinstance(e, CompactionTriggered) for e in session.run.events)

    @given(policy_params(), command_sequences())
    def test_after_a_compaction_the_window_is_over_budget_only_when_warm_is_empty(
        self, params: PolicyParams, commands: list[Command]
    ) -> None:
        """A compaction brings the window within budget unless HOT plus the gist alone exceed it."""
        _, steps = record(params, commands)
        for step, events in accepted(steps):
            if isinstance(events[-1], CompactionTriggered):
                at = step.start + len(events)
                window = step.after.window
                floor = params.compaction().floor(window)
                assert [] == check_budget(window, params.budget, floor=floor, at=at)

    @given(policy_params(), command_sequences())
    def test_warm_and_cold_hold_salient_turns_and_dropped_ones_are_chatter(
        self, params: PolicyParams, commands: list[Command]
    ) -> None:
        """A turn leaving HOT goes WARM as its bare text if salient, or is dropped if not."""
        session, _ = record(params, commands)
        turns = turns_of(session.run.events)
        window = session.state.window
        for item in window.warm:
            assert turns[item.turn].salient
            assert turns[item.turn].text == item.text
            assert WordCount().count(item.text) == item.tokens
        assert all(turns[n].salient for n in window.cold)
        assert not any(turns[n].salient for n in window.dropped)

    @given(policy_params(), command_sequences())
    def test_a_turn_costs_its_recorded_count_else_the_words_of_role_and_text(
        self, params: PolicyParams, commands: list[Command]
    ) -> None:
        """A turn's tokens are its recorded count (``tokens = N``) when it has one, else the
        word count of ``"{role}: {text}"``; salient defaults to tool."""
        _, steps = record(params, commands)
        for step, events in accepted(steps):
            command, turn = step.command, events[0]
            if isinstance(command, AddTurn):
                assert isinstance(turn, TurnAdded)
                words = len(f"{command.role}: {command.text}".split())
                assert (words if command.tokens is None else command.tokens) == turn.tokens
                salient = command.role == "tool" if command.salient is None else command.salient
                assert (command.role, command.text, salient) == (turn.role, turn.text, turn.salient)
                assert step.before.window.turns + 1 == turn.turn


class TestForgetting:
    @given(policy_params(), command_sequences())
    def test_active_facts_never_exceed_capacity_after_a_command(
        self, params: PolicyParams, commands: list[Command]
    ) -> None:
        """A whole command leaves at most ``capacity`` active facts (one more mid-batch)."""
        _, steps = record(params, commands)
        for step in steps:
            at = step.start + len(step.states) - 1
            assert [] == check_capacity(step.after.store, params.capacity, at=at)
            for state in step.states:
                assert len(state.store.active) <= params.capacity + 1

    @given(policy_params(), command_sequences())
    def test_a_retired_or_evicted_fact_never_appears_in_a_ranking(
        self, params: PolicyParams, commands: list[Command]
    ) -> None:
        """At every event, the ranking holds active facts only."""
        policy = params.forgetting()
        _, steps = record(params, commands)
        for step in steps:
            for at, state in enumerate(step.states, start=step.start):
                assert [] == check_ranking(policy, state.store, state.clock, at=at)
                assert [] == check_status(state.store, at=at)

    @given(policy_params(), command_sequences())
    def test_an_evicted_fact_had_the_lowest_score_among_the_actives(
        self, params: PolicyParams, commands: list[Command]
    ) -> None:
        """The evicted fact scored lowest then (new fact included); ties: oldest, lowest id."""
        _, steps = record(params, commands)
        policy = params.forgetting()
        for step, events in accepted(steps):
            assert [] == check_evictions(policy, step.before, events, start=step.start)

    @given(policy_params(), command_sequences())
    def test_advancing_the_clock_never_raises_a_score(
        self, params: PolicyParams, commands: list[Command]
    ) -> None:
        """Each active fact scores no higher after the clock moves forward."""
        policy = params.forgetting()
        _, steps = record(params, commands)
        for step, events in accepted(steps):
            if isinstance(events[0], ClockAdvanced):
                before, after = step.before, step.after
                assert before.store == after.store
                for fact_id in before.store.active:
                    earlier = policy.score(before.store.facts[fact_id], before.clock).score
                    later = policy.score(after.store.facts[fact_id], after.clock).score
                    assert later <= earlier

    @given(policy_params(), command_sequences())
    def test_a_read_never_lowers_a_score(
        self, params: PolicyParams, commands: list[Command]
    ) -> None:
        """Each active fact scores no lower after a read, and the read fact counts one more read."""
        policy = params.forgetting()
        _, steps = record(params, commands)
        for step, events in accepted(steps):
            read = events[0]
            if isinstance(read, FactRead):
                before, after = step.before, step.after
                assert before.store.facts[read.id].reads + 1 == after.store.facts[read.id].reads
                for fact_id in before.store.active:
                    earlier = policy.score(before.store.facts[fact_id], before.clock).score
                    later = policy.score(after.store.facts[fact_id], after.clock).score
                    assert later >= earlier

    @given(
        params=policy_params(access_boosts=st.floats(0.0, allow_infinity=False, allow_nan=False)),
        importance=st.floats(0.0, 1.0),
        later=st.floats(0.0, 1e9),
        reads=st.integers(1, 3),
    )
    @example(
        params=PolicyParams(
            budget=40, hot_n=2, capacity=4, half_life=1e-300, access_boost=1e308, snapshot_every=1
        ),
        importance=0.0,
        later=1.0,
        reads=2,
    )
    def test_a_read_never_lowers_a_score_whatever_access_boost_the_policy_accepts(
        self, params: PolicyParams, importance: float, later: float, reads: int
    ) -> None:
        """For any access_boost the policy accepts, scores stay numbers; reads never lower one."""
        session = params.session()
        policy = params.forgetting()
        session.execute_all(
            [WriteFact("name", "the user is Dana", importance), AdvanceClock(later)]
        )
        scores = [policy.score(session.state.store.facts[1], later).score]
        for _ in range(reads):
            session.execute(ReadFact(id=1))
            scores.append(policy.score(session.state.store.facts[1], later).score)
        assert [s for s in scores if math.isnan(s)] == []
        assert sorted(scores) == scores

    @given(policy_params(), command_sequences())
    def test_a_superseded_fact_is_retired_and_kept(
        self, params: PolicyParams, commands: list[Command]
    ) -> None:
        """A write retires the active fact of its key; every fact ever written is kept."""
        _, steps = record(params, commands)
        for step, events in accepted(steps):
            command = step.command
            if not isinstance(command, WriteFact):
                continue
            named = (
                [command.key] if command.supersedes is None else [command.key, command.supersedes]
            )
            was = {step.before.store.by_key[k] for k in named if k in step.before.store.by_key}
            for fact_id in was:
                assert step.after.store.facts[fact_id].status == "retired"
            assert len(step.before.store.facts) + 1 == len(step.after.store.facts)
            assert (
                FactWritten(
                    len(step.after.store.facts), command.key, command.text, command.importance
                )
                == events[0]
            )


class TestConsolidation:
    @given(policy_params(), command_sequences())
    def test_a_pass_consumes_every_pending_episode(
        self, params: PolicyParams, commands: list[Command]
    ) -> None:
        """After a consolidation pass no episode is left pending, matched by a rule or not."""
        _, steps = record(params, commands)
        for step, events in accepted(steps):
            if isinstance(events[0], Consolidated):
                pending = tuple(e.id for e in step.before.memory.episodes)
                assert pending == events[0].episodes
                assert list(step.after.memory.episodes) == []

    @given(
        st.lists(
            st.sampled_from((" = blue", "colour = red", "nothing of note")), min_size=1, max_size=5
        )
    )
    @example([" = blue"])
    def test_a_pass_is_never_refused_even_when_a_rule_distills_a_blank_key(
        self, episodes: list[str]
    ) -> None:
        """A pass consumes every pending episode, whatever key a rule's template produces."""
        rule = {
            "pattern": "^(?P<key>\\w*) = (?P<value>\\w+)$",
            "semantic": {"key": "{key}", "text": "{key} is {value}", "importance": 0.5},
        }
        try:
            consolidation = RuleConsolidation.from_params({"rule": [rule]}, "test")
        except BadInput:
            return  # refusing, up front, a rule that can distill a blank key is fine too
        forgetting = ImportanceRecencyAccess(4, 4.0, 0.1)
        session = Session(Policies(forgetting=forgetting, consolidation=consolidation))
        session.execute_all(RecordEpisode(text) for text in episodes)
        events = session.execute(Consolidate())
        assert isinstance(events[0], Consolidated)
        assert tuple(range(1, len(episodes) + 1)) == events[0].episodes
        assert [] == list(session.state.memory.episodes)


class TestRejection:
    @given(command_sequences())
    def test_a_command_for_an_axis_without_a_policy_is_rejected(
        self, commands: list[Command]
    ) -> None:
        """A session without policies rejects every command but a clock move, changing nothing."""
        session = Session(Policies())
        for command in commands:
            if not isinstance(command, AdvanceClock):
                self._assert_rejected(session, command)

    @given(policy_params(), command_sequences())
    def test_a_rejected_command_leaves_log_and_state_unchanged(
        self, params: PolicyParams, commands: list[Command]
    ) -> None:
        """Whatever a session rejects, its length, state, commands and events stay as they were."""
        session = params.session()
        for command in commands:
            before = snapshot(session.run)
            try:
                session.execute(command)
            except Rejected:
                check_unchanged(session.run, before)
            else:
                assert len(session.run.commands) == len(before[2]) + 1

    @given(policy_params(), valid_command_sequences(), st.data())
    def test_the_clock_moving_backwards_or_off_the_line_is_rejected(
        self, params: PolicyParams, commands: list[Command], data: st.DataObject
    ) -> None:
        """An advance to an earlier time, infinity or NaN is rejected and changes nothing."""
        session, _ = record(params, commands)
        clock = session.state.clock
        to = data.draw(
            st.one_of(
                st.floats(max_value=clock, exclude_max=True, allow_infinity=False),
                st.sampled_from((math.inf, -math.inf, math.nan)),
            )
        )
        self._assert_rejected(session, AdvanceClock(to))

    @given(policy_params(), valid_command_sequences(), st.data())
    def test_a_write_with_an_importance_outside_the_unit_interval_is_rejected(
        self, params: PolicyParams, commands: list[Command], data: st.DataObject
    ) -> None:
        """Importance below 0, above 1, infinite or NaN is rejected and changes nothing."""
        session, _ = record(params, commands)
        importance = data.draw(
            st.one_of(
                st.floats(allow_nan=False).filter(lambda x: not 0.0 <= x <= 1.0),
                st.just(math.nan),
            )
        )
        key = data.draw(keys(valid_only=True))
        self._assert_rejected(session, WriteFact(key, "text", importance))

    @given(policy_params(), valid_command_sequences(), st.data())
    def test_superseding_a_key_with_no_active_fact_is_rejected(
        self, params: PolicyParams, commands: list[Command], data: st.DataObject
    ) -> None:
        """``supersedes`` naming a key without an active fact is rejected and changes nothing."""
        session, _ = record(params, commands)
        missing = data.draw(
            st.text(max_size=8).filter(lambda k: k not in session.state.store.by_key)
        )
        key = data.draw(keys(valid_only=True))
        self._assert_rejected(session, WriteFact(key, "text", 0.5, supersedes=missing))

    @given(policy_params(), valid_command_sequences(), st.data())
    def test_reading_a_fact_that_is_unknown_or_gone_is_rejected(
        self, params: PolicyParams, commands: list[Command], data: st.DataObject
    ) -> None:
        """Reading an unknown id, a retired or evicted fact, or an inactive key is rejected."""
        session, _ = record(params, commands)
        store = session.state.store
        gone = [i for i, f in store.facts.items() if f.status != "active"]
        unknown_id = st.integers().filter(lambda i: i not in store.facts)
        unknown_key = st.text(max_size=8).filter(lambda k: k not in store.by_key)
        choices = [
            unknown_id.map(lambda i: ReadFact(id=i)),
            unknown_key.map(lambda k: ReadFact(key=k)),
        ]
        if gone:
            choices.append(st.sampled_from(gone).map(lambda i: ReadFact(id=i)))
        self._assert_rejected(session, data.draw(st.one_of(choices)))

    @given(policy_params(), valid_command_sequences(), st.data())
    def test_a_read_naming_both_key_and_id_or_neither_is_rejected(
        self, params: PolicyParams, commands: list[Command], data: st.DataObject
    ) -> None:
        """A read names its fact by key or by id, exactly one; otherwise it is rejected."""
        session, _ = record(params, commands)
        store = session.state.store
        both = [ReadFact(key=k, id=i) for k, i in store.by_key.items()]
        read = data.draw(st.sampled_from([ReadFact(), ReadFact(key="name", id=1), *both]))
        self._assert_rejected(session, read)

    @staticmethod
    def _assert_rejected(session: Session, command: Command) -> None:
        before = snapshot(session.run)
        with pytest.raises(Rejected):
            session.execute(command)
        check_unchanged(session.run, before)
