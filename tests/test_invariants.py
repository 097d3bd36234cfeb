"""The invariants as plain functions: each catches a run built by hand to break it, and
the recorded seed scenarios break none."""

import math
import time
from collections.abc import Sequence
from typing import Any, ClassVar

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from immutables import Map

from memtape.checking.invariants import (
    StepChecker,
    Violation,
    check_blocks,
    check_codec,
    check_compaction,
    check_determinism,
    check_evictions,
    check_gist,
    check_hot,
    check_pinned,
    check_run,
    check_status,
    check_supersedes,
    check_tiers,
    check_token_total,
    check_verbatim,
    check_well_formed,
    redecide,
    redecide_in_worlds,
    redecide_twice,
)
from memtape.core.commands import (
    AddTurn,
    AdvanceClock,
    Command,
    Query,
    RecordEpisode,
    WriteFact,
)
from memtape.core.errors import BadInput
from memtape.core.events import (
    BlockEdited,
    ClockAdvanced,
    CompactionTriggered,
    EpisodeRecorded,
    Event,
    Evicted,
    Expired,
    FactWritten,
    Queried,
    Superseded,
    TurnAdded,
    WarmItem,
)
from memtape.core.run import Run
from memtape.core.seq import Seq
from memtape.core.state import INITIAL_STATE, SHORT_HOT, Fact, Facts, State, Store, Window
from memtape.policies.plumbing.promises import BUDGET, CAPACITY, EVICTS_WEAKEST, PINNED, WELL_FORMED
from memtape.policies.plumbing.protocols import Scored
from memtape.policies.session import Policies, Session
from memtape.policies.store.forgetting import ImportanceRecencyAccess
from memtape.policies.window.no_compaction import NoCompaction
from memtape.policies.window.tiered import TieredCompaction
from memtape.reducers import fold
from memtape.scenarios import SHIPPED, load_scenario
from memtape.testing.strategies import turn_sequences
from tests.broken_policies import StampsTurns
from tests.suite_profile import examples

Batch = tuple[Command, Sequence[Event]]


def run_of(*batches: Batch) -> Run:
    """A run holding ``batches`` as given, decided by no policy."""
    run = Run(fold)
    for command, events in batches:
        run.append(command, events)
    return run


def write(fact_id: int, key: str, importance: float) -> Batch:
    """A write of fact ``fact_id`` with nothing superseded or evicted."""
    return WriteFact(key, key, importance), (FactWritten(fact_id, key, key, importance),)


def turn(number: int, tokens: int, *, salient: bool = False) -> TurnAdded:
    """Turn ``number`` costing ``tokens``, whatever its text."""
    return TurnAdded(number, "user", f"turn {number}", tokens, salient)


def window_of(
    hot: tuple[TurnAdded, ...] = (),
    *,
    warm: tuple[WarmItem, ...] = (),
    cold: Sequence[int] = (),
    gist: str = "",
    gist_tokens: int = 0,
    dropped: Sequence[int] = (),
    tokens: int | None = None,
    turns: int | None = None,
) -> Window:
    """A window built by hand; its total and count default to those of ``hot`` alone."""
    return Window(
        hot,
        warm,
        Seq(cold),
        gist,
        gist_tokens,
        Seq(dropped),
        sum(t.tokens for t in hot) if tokens is None else tokens,
        len(hot) if turns is None else turns,
    )


def recorded(name: str) -> tuple[Run, Policies]:
    """The run of a shipped scenario, and its policies."""
    scenario = load_scenario(name)
    session = Session(scenario.policies)
    session.execute_all(scenario.steps)
    return session.run, scenario.policies


TIERED = Policies(compaction=TieredCompaction(10, 1))
"""A budget of 10 tokens, one turn kept HOT."""


def forgetting(capacity: int) -> Policies:
    """The seed's forgetting policy with ``capacity``."""
    return Policies(forgetting=ImportanceRecencyAccess(capacity, 4.0, 0.1))


class TestShippedScenarios:
    @pytest.mark.parametrize("name", SHIPPED)
    def test_a_recorded_seed_scenario_breaks_no_invariant(self, name: str) -> None:
        """Checking each shipped scenario's run, with a checkpoint at every event, finds nothing."""
        run, policies = recorded(name)
        assert [] == check_run(run, policies, checkpoint=1)

    @pytest.mark.parametrize("name", SHIPPED)
    def test_a_recorded_seed_scenario_re_decides_to_itself(self, name: str) -> None:
        """Each shipped scenario's policies decide its recorded events again."""
        run, policies = recorded(name)
        assert redecide(run, policies) is None


class TestTokenTotal:
    def test_a_running_total_off_by_one_is_caught(self) -> None:
        """A window whose total is not HOT + WARM + gist is reported with each part."""
        window = window_of((turn(1, 2),), tokens=3)
        expected = [
            Violation(
                7,
                "token-total",
                "the running total is 3 tokens, but HOT 2 + WARM 0 + gist 0 make 2",
            )
        ]
        assert expected == check_token_total(window, at=7)

    def test_a_right_total_passes(self) -> None:
        """HOT, WARM and gist tokens adding up to the total is no violation."""
        window = window_of(
            (turn(3, 2),), warm=(WarmItem(1, "a b", 2),), gist_tokens=4, tokens=8, turns=3
        )
        assert [] == check_token_total(window, at=3)


class TestTiers:
    def test_a_turn_in_two_tiers_is_caught(self) -> None:
        """A turn both HOT and COLD is reported."""
        window = window_of((turn(1, 1),), cold=[1])
        assert [Violation(2, "tiers", "turn 1 is in HOT and COLD")] == check_tiers(window, at=2)

    def test_a_turn_in_no_tier_is_caught(self) -> None:
        """A turn that arrived but sits nowhere is reported."""
        window = window_of((turn(2, 1),), turns=2)
        assert [Violation(2, "tiers", "turn 1 is in no tier")] == check_tiers(window, at=2)

    def test_a_turn_that_never_arrived_is_caught(self) -> None:
        """A tier holding a turn past the count is reported."""
        window = window_of((turn(1, 1),), dropped=[5])
        expected = [Violation(1, "tiers", "turn 5 is in dropped, but 1 turn arrived")]
        assert expected == check_tiers(window, at=1)


class TestGist:
    def test_a_gist_that_miscounts_the_cold_turns_is_caught(self) -> None:
        """Two cold turns with the gist of one are reported."""
        compaction = TieredCompaction(10, 1)
        window = window_of(cold=[1, 2], gist="[1 earlier turn summarized]", turns=2)
        expected = [
            Violation(
                4, "gist", "2 turns are cold, but the gist reads '[1 earlier turn summarized]'"
            )
        ]
        assert expected == check_gist(window, compaction, at=4)

    def test_a_gist_that_misstates_its_tokens_is_caught(self) -> None:
        """The gist's tokens are what the policy's tokenizer counts."""
        compaction = TieredCompaction(10, 1)
        gist = "[1 earlier turn summarized]"
        window = window_of(cold=[1], gist=gist, gist_tokens=3, turns=1)
        expected = [Violation(4, "gist", f"the gist {gist!r} costs 4 tokens, not 3")]
        assert expected == check_gist(window, compaction, at=4)


class TestBudget:
    def test_a_compaction_leaving_the_window_over_budget_with_warm_items_is_caught(self) -> None:
        """A compaction that folds a turn WARM but pushes nothing COLD, 12 tokens over a budget
        of 10, breaks the budget at its position."""
        compaction = CompactionTriggered(10, (WarmItem(1, "a b c d e f g", 7),), (), 0, "", 0)
        run = run_of(
            (AddTurn("tool", "x"), (turn(1, 8, salient=True),)),
            (AddTurn("user", "y"), (turn(2, 5), compaction)),
        )
        message = (
            "the window holds 12 tokens, over the budget of 10, "
            "though the policy could keep as few as 5"
        )
        assert [Violation(3, "budget", message)] == check_run(run, TIERED)

    def test_a_window_over_budget_with_nothing_warm_is_allowed(self) -> None:
        """HOT alone over the budget, WARM empty: nothing more could be done."""
        compaction = CompactionTriggered(10, (), (1,), 0, "", 0)
        run = run_of(
            (AddTurn("user", "x"), (turn(1, 3),)),
            (AddTurn("user", "y"), (turn(2, 12), compaction)),
        )
        assert [] == check_run(run, TIERED)


class TestHot:
    def test_a_compaction_keeping_more_than_hot_n_turns_is_caught(self) -> None:
        """With hot_n = 1, a compaction that keeps both turns HOT is reported; it also keeps 12
        tokens where the policy's floor (the last turn) is 6, over the budget of 10."""
        compaction = CompactionTriggered(10, (), (), 0, "", 0)
        run = run_of(
            (AddTurn("user", "x"), (turn(1, 6),)),
            (AddTurn("user", "y"), (turn(2, 6), compaction)),
        )
        budget = (
            "the window holds 12 tokens, over the budget of 10, "
            "though the policy could keep as few as 6"
        )
        message = "after a compaction HOT holds turns [1, 2], not the last 1"
        expected = [Violation(3, "budget", budget), Violation(3, "hot", message)]
        assert expected == check_run(run, TIERED)

    def test_a_hot_turn_that_is_not_the_one_that_arrived_is_caught(self) -> None:
        """HOT keeps each turn verbatim, as its TurnAdded brought it."""
        window = window_of((turn(1, 2),))
        arrived = {1: attrs.evolve(turn(1, 2), text="something else")}
        expected = [Violation(1, "hot", "turn 1 in HOT is not verbatim the turn that arrived")]
        assert expected == check_hot(window, 2, arrived, compacted=False, at=1)

    def test_hot_missing_the_newest_turns_is_caught(self) -> None:
        """Without a compaction, HOT ends with the newest turn."""
        window = window_of((turn(1, 2),), turns=2, dropped=[2])
        expected = [Violation(2, "hot", "HOT holds turns [1], not the newest 1 of 2 in order")]
        assert expected == check_hot(window, 0, {1: turn(1, 2)}, compacted=False, at=2)


class TestCapacity:
    def test_a_write_over_capacity_without_an_eviction_is_caught(self) -> None:
        """Three active facts under a capacity of two, reported at the first overflow only."""
        run = run_of(write(1, "a", 0.5), write(2, "b", 0.5), write(3, "c", 0.5), write(4, "d", 0.5))
        expected = [Violation(3, "capacity", "3 facts are active, over the capacity of 2")]
        assert expected == check_run(run, forgetting(2))


class TestEviction:
    def test_evicting_a_fact_that_was_not_the_weakest_is_caught(self) -> None:
        """Over capacity, fact 1 (0.9) goes while fact 2 (0.1) scored lowest."""
        command, written = write(3, "c", 0.5)
        run = run_of(write(1, "a", 0.9), write(2, "b", 0.1), (command, (*written, Evicted(1, 0.9))))
        message = "fact 1 ('a', score 0.9) is evicted, but fact 2 ('b') scored lowest, 0.1"
        assert [Violation(4, "eviction", message)] == check_run(run, forgetting(2))

    def test_a_tie_evicts_the_oldest_write(self) -> None:
        """Three equal scores: the first fact written goes, not the second."""
        command, written = write(3, "c", 0.5)
        run = run_of(write(1, "a", 0.5), write(2, "b", 0.5), (command, (*written, Evicted(2, 0.5))))
        message = "fact 2 ('b', score 0.5) is evicted, but fact 1 ('a') scored lowest, 0.5"
        assert [Violation(4, "eviction", message)] == check_run(run, forgetting(2))

    def test_each_eviction_of_a_batch_is_checked_at_its_position(self) -> None:
        """``check_evictions`` walks a batch from the state before it; the positions count on
        from ``start``."""
        before = run_of(write(1, "a", 0.9), write(2, "b", 0.1)).state
        batch = (FactWritten(3, "c", "c", 0.5), Evicted(1, 0.9))
        message = "fact 1 ('a', score 0.9) is evicted, but fact 2 ('b') scored lowest, 0.1"
        policy = ImportanceRecencyAccess(2, 4.0, 0.1)
        assert [Violation(4, "eviction", message)] == check_evictions(
            policy, before, batch, start=2
        )

    def test_an_eviction_within_capacity_is_caught(self) -> None:
        """Evicting with two active facts under a capacity of three is reported."""
        command, written = write(2, "b", 0.5)
        run = run_of(write(1, "a", 0.1), (command, (*written, Evicted(1, 0.1))))
        message = "fact 1 is evicted with 2 facts active, within the capacity of 3"
        assert [Violation(3, "eviction", message)] == check_run(run, forgetting(3))

    def test_an_eviction_recording_a_wrong_score_is_caught(self) -> None:
        """The weakest fact went, but not with the score it had."""
        command, written = write(2, "b", 0.5)
        run = run_of(write(1, "a", 0.1), (command, (*written, Evicted(1, 0.2))))
        message = "fact 1 is evicted with score 0.2, but it scored 0.1 at t=0"
        assert [Violation(3, "eviction", message)] == check_run(run, forgetting(1))


class TestQuery:
    def test_a_query_returning_the_top_of_the_ranking_passes(self) -> None:
        """Scores 0.9 and 0.5 at t=0 (recency 1, no reads): the top 2 are facts 2 and 3."""
        answer = (Queried("", "", 2, (2, 3), (0.9, 0.5)),)
        run = run_of(
            write(1, "a", 0.2), write(2, "b", 0.9), write(3, "c", 0.5), (Query(k=2), answer)
        )
        assert [] == check_run(run, forgetting(4))

    def test_a_query_out_of_ranking_order_is_caught(self) -> None:
        """The best fact (0.9) must come first."""
        answer = (Queried("", "", 2, (3, 2), (0.5, 0.9)),)
        run = run_of(
            write(1, "a", 0.2), write(2, "b", 0.9), write(3, "c", 0.5), (Query(k=2), answer)
        )
        message = (
            "the query '' returned facts [3, 2], but the top 2 of the ranking at t=0 are [2, 3]"
        )
        assert [Violation(4, "query", message)] == check_run(run, forgetting(4))

    def test_a_query_returning_fewer_than_it_could_is_caught(self) -> None:
        """Three active facts and k = 2: one result is not the top 2."""
        answer = (Queried("", "", 2, (2,), (0.9,)),)
        run = run_of(
            write(1, "a", 0.2), write(2, "b", 0.9), write(3, "c", 0.5), (Query(k=2), answer)
        )
        assert ["query"] == [v.invariant for v in check_run(run, forgetting(4))]

    def test_a_query_recording_wrong_scores_is_caught(self) -> None:
        answer = (Queried("", "", 1, (2,), (0.8,)),)
        run = run_of(write(1, "a", 0.2), write(2, "b", 0.9), (Query(k=1), answer))
        message = "the query returned scores [0.8], the ranking gives [0.9]"
        assert [Violation(3, "query", message)] == check_run(run, forgetting(4))


@attrs.frozen
class RanksEveryFact(ImportanceRecencyAccess):
    """A broken policy: its ranking includes retired and evicted facts."""

    def rank(self, store: Store, now: float, query: str = "") -> list[Scored]:
        """Every fact ever written, by id."""
        return [self.score(fact, now) for _, fact in sorted(store.facts.items())]


class TestRanking:
    def test_a_retired_fact_in_a_ranking_is_caught(self) -> None:
        """After a supersession, a ranking still holding the old fact is reported."""
        command, written = write(2, "a", 0.5)
        run = run_of(write(1, "a", 0.5), (command, (*written, Superseded(1, 2))))
        policies = Policies(forgetting=RanksEveryFact(4, 4.0, 0.1))
        message = "the ranking holds facts [1, 2], the active ones are [2]"
        assert [Violation(3, "ranking", message)] == check_run(run, policies)


class TestStatus:
    def test_an_active_id_whose_fact_is_retired_is_caught(self) -> None:
        """``active`` naming a retired fact, and a key pointing to it, are both reported."""
        fact = Fact(1, "a", "a", 0.5, 0.0, status="retired")
        store = Store(Facts([fact]), Map({1: None}), Map({"a": 1}))
        expected = [
            Violation(
                5, "status", "the active facts are [1], but the facts with status active are []"
            ),
        ]
        assert expected == check_status(store, at=5)

    def test_a_key_pointing_to_an_inactive_fact_is_caught(self) -> None:
        """``by_key`` names only active facts."""
        fact = Fact(1, "a", "a", 0.5, 0.0, status="evicted")
        store = Store(Facts([fact]), Map(), Map({"a": 1}))
        expected = [
            Violation(5, "status", "key 'a' points to fact 1, which is not its active fact")
        ]
        assert expected == check_status(store, at=5)


def skipping_clock(events: Sequence[Event], state: State) -> State:
    """A broken fold: it ignores the clock."""
    return fold([e for e in events if not isinstance(e, ClockAdvanced)], state)


def accepting_anything(events: Sequence[Event], state: State) -> State:
    """A broken fold: it accepts every event and changes nothing."""
    return state


class TestReplay:
    def test_a_run_whose_state_differs_from_the_fold_is_caught(self) -> None:
        """A run kept by a fold that skips the clock disagrees with the fold at its first
        checkpoint, and says which part differs."""
        run = Run(skipping_clock)
        run.append(AdvanceClock(5.0), (ClockAdvanced(5.0),))
        run.append(AdvanceClock(6.0), (ClockAdvanced(6.0),))
        message = "folding the log from scratch gives another clock than the run"
        assert [Violation(1, "replay", message)] == check_run(run, Policies(), checkpoint=1)

    def test_checkpoints_double_so_a_late_checkpoint_reports_where_it_looked(self) -> None:
        """With checkpoints at 1, 2, 4, ..., a divergence from event 3 on shows at 4."""
        run = Run(skipping_clock)
        for episode in (1, 2):
            run.append(RecordEpisode("e"), (EpisodeRecorded(episode, "e"),))
        for to in (3.0, 4.0, 5.0):
            run.append(AdvanceClock(to), (ClockAdvanced(to),))
        message = "folding the log from scratch gives another clock than the run"
        assert [Violation(4, "replay", message)] == check_run(run, Policies(), checkpoint=1)


class TestIntegrity:
    def test_an_event_that_does_not_fold_stops_the_check_at_its_position(self) -> None:
        """Turn 2 with no turn 1 before it is reported, and nothing after it is checked."""
        run = Run(accepting_anything)
        run.append(AdvanceClock(1.0), (ClockAdvanced(1.0),))
        run.append(AddTurn("user", "x"), (turn(2, 1),))
        run.append(AddTurn("user", "y"), (turn(3, 1),))
        expected = [Violation(2, "integrity", "TurnAdded: turn 2 cannot follow turn 0")]
        assert expected == check_run(run, TIERED)


class TestCheckpoints:
    def test_a_checkpoint_interval_below_one_is_refused(self) -> None:
        """Checkpoints every 0 events would never come."""
        with pytest.raises(BadInput, match="checkpoint must be at least 1, got 0"):
            check_run(Run(fold), Policies(), checkpoint=0)


@attrs.frozen
class SkipsATurn:
    """A broken compaction policy: it numbers each turn one too high."""

    name: ClassVar[str] = "skips-a-turn"
    budget: int = 10
    promises: frozenset[str] = frozenset()

    def decide(self, state: State, command: AddTurn) -> tuple[Event, ...]:
        """The turn, numbered as if one had been skipped."""
        return (turn(state.window.turns + 2, 1),)

    def params(self) -> dict[str, Any]:
        """No parameters."""
        return {"policy": self.name}


class TestRedecide:
    def test_a_hand_edited_token_count_is_caught_at_its_position(self) -> None:
        """Turn 4 of refund-desk logged with 13 tokens instead of 12 still folds; re-deciding
        finds it at event 4, naming the field and both values."""
        original, policies = recorded("refund-desk")
        run = Run(fold)
        for step, command in enumerate(original.commands, start=1):
            start, end = original.batch(step)
            events = list(original.events[start:end])
            if step == 4:
                assert isinstance(events[0], TurnAdded)
                events[0] = attrs.evolve(events[0], tokens=13)
            run.append(command, events)
        message = "step 4 (AddTurn): the log's TurnAdded has tokens 13 where the policies decide 12"
        assert Violation(4, "re-decide", message) == redecide(run, policies)

    def test_a_policy_whose_behaviour_changed_is_caught(self) -> None:
        """dana-facts re-decided under a half-life of 8 scores its eviction differently."""
        run, _ = recorded("dana-facts")
        policies = Policies(forgetting=ImportanceRecencyAccess(4, 8.0, 0.1))
        message = (
            "step 9 (WriteFact): the log's Evicted has score 0.07071067811865477 "
            "where the policies decide 0.11892071150027211"
        )
        assert Violation(11, "re-decide", message) == redecide(run, policies)

    def test_an_event_the_policies_no_longer_decide_is_caught(self) -> None:
        """Under a capacity of 5, dana-facts' eviction is one event too many."""
        run, _ = recorded("dana-facts")
        message = (
            "step 9 (WriteFact): the log has Evicted(id=4, score=0.07071067811865477), "
            "which the policies do not decide"
        )
        assert Violation(11, "re-decide", message) == redecide(run, forgetting(5))

    def test_an_event_missing_from_the_log_is_caught(self) -> None:
        """A turn logged without the compaction it triggers is reported after the turn."""
        original, policies = recorded("refund-desk")
        start, end = original.batch(4)
        turn_four, compaction = original.events[start:end]
        run = Run(fold)
        for step, command in enumerate(original.commands[:4], start=1):
            start, end = original.batch(step)
            run.append(command, original.events[start:end] if step < 4 else (turn_four,))
        message = f"step 4 (AddTurn): the policies also decide {compaction!r}, which the log lacks"
        assert Violation(4, "re-decide", message) == redecide(run, policies)

    def test_an_event_of_another_type_is_caught(self) -> None:
        """A write logged as an episode is reported with both events."""
        run = run_of((WriteFact("a", "x", 0.5), (EpisodeRecorded(1, "x"),)))
        message = (
            "step 1 (WriteFact): the log has EpisodeRecorded(id=1, text='x'), "
            "the policies decide FactWritten(id=1, key='a', text='x', importance=0.5, "
            "expires_at=None, ttl='', valid_from=None, valid_to=None)"
        )
        assert Violation(1, "re-decide", message) == redecide(run, forgetting(4))

    def test_a_policy_deciding_events_that_do_not_fold_is_caught(self) -> None:
        """A log kept by a fold that accepts anything, of a policy that numbers turns from 2:
        the log re-decides to itself, but does not fold."""
        run = Run(accepting_anything)
        run.append(AddTurn("user", "x"), (turn(2, 1),))
        message = "step 1 (AddTurn): turn 2 cannot follow turn 0"
        assert Violation(1, "integrity", message) == redecide(run, Policies(SkipsATurn()))

    def test_a_command_the_policies_reject_is_caught(self) -> None:
        """A turn re-decided without a compaction policy is rejected, at its first event."""
        run, _ = recorded("refund-desk")
        message = (
            "step 1 (AddTurn): the policies reject the command: "
            "a turn needs a [compaction] policy, and this session has none"
        )
        assert Violation(1, "re-decide", message) == redecide(run, Policies())


@attrs.frozen
class DatesTurns(TieredCompaction):
    """Marks each turn with whether the wall clock is past mid-2025: always so now, not
    in made-up world 0, so in world 1 (so a plain re-decision does not depend on luck)."""

    def decide(self, state: State, command: AddTurn) -> tuple[Event, ...]:
        """The seed's events for the turn, its text marked."""
        mark = "late" if time.time() > 1.75e9 else "early"
        return super().decide(state, attrs.evolve(command, text=f"{command.text} {mark}"))


class TestBothRedecisionsInOnePass:
    def test_each_finds_what_it_finds_alone(self) -> None:
        """A run recorded by a policy that stamps the wall clock, one token count edited:
        the plain re-decision and the one in two worlds each report what each alone does
        (the edited turn, and the first turn whose stamp differs between worlds)."""
        commands = [AddTurn("user", f"turn {n}") for n in range(1, 6)]
        policies = Policies(compaction=DatesTurns(40, 1))
        session = Session(policies)
        session.execute_all(commands)
        run = Run(fold)
        for step, command in enumerate(session.run.commands, start=1):
            start, end = session.run.batch(step)
            events = list(session.run.events[start:end])
            if step == 3:
                assert isinstance(events[0], TurnAdded)
                events[0] = attrs.evolve(events[0], tokens=99)
            run.append(command, events)
        heard: list[int] = []

        both = redecide_twice(run, policies, progress=heard.append)

        alone = (redecide(run, policies), redecide_in_worlds(run, policies))
        assert alone == both
        assert ["re-decide", "determinism"] == [v.invariant for v in both if v is not None]
        assert [run.steps] == heard

    def test_a_clean_run_is_clean_in_both(self) -> None:
        """refund-desk re-decides to itself, in every world."""
        run, policies = recorded("refund-desk")
        assert (None, None) == redecide_twice(run, policies)


class TestViolation:
    def test_a_violation_reads_as_its_position_invariant_and_message(self) -> None:
        """``str`` gives the line a report prints; position 0 is the header."""
        lines = [str(Violation(4, "budget", "over")), str(Violation(0, "header", "no policies"))]
        assert ["event 4: budget: over", "header: no policies"] == lines


class TestVerbatim:
    def test_hot_not_ending_with_the_last_turns_is_caught(self) -> None:
        """With verbatim 2, HOT holding turns 1 and 3 of 3 misses turn 2."""
        window = window_of((turn(1, 1), turn(3, 1)), turns=3, dropped=[2])
        arrived = {n: turn(n, 1) for n in (1, 2, 3)}
        message = "HOT holds turns [1, 3], which do not end with the last 2 [2, 3]"
        expected = [Violation(4, "recent-verbatim", message)]
        assert expected == check_verbatim(window, 2, arrived, at=4)

    def test_older_turns_before_the_last_ones_are_the_policys_business(self) -> None:
        """A pinned first turn before the last two is no violation."""
        window = window_of((turn(1, 1), turn(4, 1), turn(5, 1)), turns=5, dropped=[2, 3])
        arrived = {n: turn(n, 1) for n in range(1, 6)}
        assert [] == check_verbatim(window, 2, arrived, at=9)

    def test_a_changed_turn_is_caught(self) -> None:
        """The last turn in HOT must be exactly the turn that arrived."""
        window = window_of((turn(1, 2),))
        arrived = {1: attrs.evolve(turn(1, 2), text="edited")}
        message = "turn 1 in HOT is not verbatim the turn that arrived"
        assert [Violation(1, "recent-verbatim", message)] == check_verbatim(
            window, 1, arrived, at=1
        )


class TestVerbatimAfterACommand:
    """``check_compaction`` with ``arrived``: without a compaction, HOT only grew by the
    command's turns, so only they are held against RECENT_VERBATIM."""

    WINDOW = window_of((turn(1, 1), turn(2, 1)))
    """Two turns HOT; turn 1 is not the turn that arrived (see ``ARRIVED``)."""

    ARRIVED: ClassVar[dict[int, TurnAdded]] = {
        1: attrs.evolve(turn(1, 1), text="edited"),
        2: turn(2, 1),
    }
    """What arrived: turn 1 differently from what HOT holds."""

    def test_without_a_compaction_only_the_turns_the_command_added_are_checked(self) -> None:
        violations = check_compaction(
            NoCompaction(10), self.WINDOW, self.ARRIVED, compacted=False, at=2, arrived=1
        )
        assert [] == violations

    @pytest.mark.parametrize(("compacted", "arrived"), [(False, None), (False, 2), (True, 1)])
    def test_the_whole_tail_is_checked_otherwise(
        self, compacted: bool, arrived: int | None
    ) -> None:
        """Every turn when the count is not given, when the command added both, or after a
        compaction (which may have rebuilt HOT)."""
        violations = check_compaction(
            NoCompaction(10),
            self.WINDOW,
            self.ARRIVED,
            compacted=compacted,
            at=2,
            arrived=arrived,
        )
        message = "turn 1 in HOT is not verbatim the turn that arrived"
        assert [Violation(2, "recent-verbatim", message)] == violations


class TestTokenTotalOfALongWindow:
    """The token total is recounted after each event while the window is short, and at the
    checkpoints of ``check_run`` always (a ``none`` window keeps every turn)."""

    @staticmethod
    def miscounted(turns: int, wrong_at: int, monkeypatch: pytest.MonkeyPatch) -> list[Violation]:
        """``check_run`` over ``turns`` turns under ``none``, its own fold one token off
        from the turn ``wrong_at`` on."""
        session = Session(Policies(compaction=NoCompaction(10)))
        session.execute_all(AddTurn("user", "a b") for _ in range(turns))

        def off_by_one(state: State, event: Event) -> State:
            after = fold((event,), state)
            if isinstance(event, TurnAdded) and event.turn == wrong_at:
                return after._replace(window=after.window._replace(tokens=after.window.tokens + 1))
            return after

        monkeypatch.setattr("memtape.checking.invariants.steps.evolve", off_by_one)
        return [v for v in check_run(session.run, session.policies) if v.invariant == "token-total"]

    def test_a_short_window_is_caught_at_the_event(self, monkeypatch: pytest.MonkeyPatch) -> None:
        [violation] = self.miscounted(20, 5, monkeypatch)
        assert 5 == violation.position

    def test_a_long_window_is_caught_at_the_next_checkpoint(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        [violation] = self.miscounted(SHORT_HOT + 50, SHORT_HOT + 10, monkeypatch)
        assert SHORT_HOT + 50 == violation.position


class TestExpiry:
    def test_a_fact_left_active_past_its_time_is_caught(self) -> None:
        """A clock move that leaves a due fact active: a query could rank and return it."""
        command = WriteFact("promo", "sale", 0.5, expires_at=5)
        written = FactWritten(1, "promo", "sale", 0.5, 5.0, "")
        run = run_of((command, (written,)), (AdvanceClock(6), (ClockAdvanced(6.0),)))
        message = "fact 1 ('promo') is still active at t=6, though it expires at t=5"
        assert [Violation(2, "expires", message)] == check_run(run, forgetting(4))

    def test_a_fact_that_left_at_its_time_keeps_the_promise(self) -> None:
        command = WriteFact("promo", "sale", 0.5, expires_at=5)
        written = FactWritten(1, "promo", "sale", 0.5, 5.0, "")
        gone = Expired(1, "its own expires_at, due at t=5")
        run = run_of((command, (written,)), (AdvanceClock(6), (ClockAdvanced(6.0), gone)))
        assert [] == check_run(run, forgetting(4))


class TestValidAsOf:
    def test_a_bitemporal_query_returning_a_fact_not_yet_true_is_caught(self) -> None:
        """A fact true from t=10, returned by a query as of t=5."""
        command = WriteFact("address", "Oslo", 0.8, valid_from=10)
        written = FactWritten(1, "address", "Oslo", 0.8, None, "", 10.0, None)
        asked = Query("where", "address", 1, as_of=5)
        answer = Queried("where", "address", 1, (1,), (0.8,), 5.0, None)
        run = run_of((command, (written,)), (asked, (answer,)))
        message = (
            "the query as of t=5, as known at t=0, returned facts [1], not valid then as known then"
        )
        assert [Violation(2, "valid-as-of", message)] == check_run(run, forgetting(4))

    def test_the_query_the_policy_decides_keeps_it(self) -> None:
        session = Session(forgetting(4))
        session.execute(WriteFact("address", "Oslo", 0.8, valid_from=10))
        session.execute(Query("where", "address", 1, as_of=5))
        session.execute(Query("where", "address", 1, as_of=11))
        assert [] == check_run(session.run, session.policies)


class TestSupersedes:
    def test_two_active_facts_on_a_key_are_caught(self) -> None:
        """A write to a key that retires nothing, under a policy promising supersession."""
        command, written = write(2, "a", 0.5)
        run = run_of(write(1, "a", 0.5), (command, written))
        message = "key 'a' has 2 active facts, [1, 2]"
        assert [Violation(2, "supersedes", message)] == check_run(run, forgetting(4))

    def test_a_policy_that_does_not_promise_it_is_not_held_to_it(self) -> None:
        """The same run under a policy without SUPERSEDES keeps every invariant it promises."""
        command, written = write(2, "a", 0.5)
        run = run_of(write(1, "a", 0.5), (command, written))
        assert [] == check_run(run, Policies(forgetting=AddOnly(4, 4.0, 0.1)))

    def test_the_check_itself_passes_one_fact_per_key(self) -> None:
        """Distinct keys are no violation."""
        store = run_of(write(1, "a", 0.5), write(2, "b", 0.5)).state.store
        assert [] == check_supersedes(store, at=2)


@attrs.frozen
class AddOnly(ImportanceRecencyAccess):
    """Promises capacity and eviction of the weakest, not supersession."""

    @property
    def promises(self) -> frozenset[str]:
        """No SUPERSEDES."""
        return frozenset({CAPACITY, EVICTS_WEAKEST})


@attrs.frozen
class NoPromises(TieredCompaction):
    """The tiered policy promising nothing (and so held to nothing but its own design)."""

    @property
    def promises(self) -> frozenset[str]:
        """Nothing."""
        return frozenset()


@attrs.frozen
class Normalized(ImportanceRecencyAccess):
    """Scores min-max normalized over the active facts: a score depends on the others."""

    def rank(self, store: Store, now: float, query: str = "") -> list[Scored]:
        """The seed's ranking, each score scaled into [0, 1] over the actives."""
        ranked = super().rank(store, now, query)
        low, high = min(s.score for s in ranked), max(s.score for s in ranked)
        span = (high - low) or 1.0
        return [Scored(s.fact, s.factors, (s.score - low) / span) for s in ranked]


class TestPromises:
    def test_a_budget_not_promised_is_not_checked(self) -> None:
        """The run the budget test builds passes under a policy that promises no budget."""
        compaction = CompactionTriggered(10, (WarmItem(1, "a b c d e f g", 7),), (), 0, "", 0)
        run = run_of(
            (AddTurn("tool", "x"), (turn(1, 8, salient=True),)),
            (AddTurn("user", "y"), (turn(2, 5), compaction)),
        )
        assert [] == check_run(run, Policies(compaction=NoPromises(10, 1)))

    def test_a_promise_without_its_member_is_reported(self) -> None:
        """A policy promising the budget with no floor cannot be checked, and says so."""
        run = run_of((AddTurn("user", "x"), (turn(1, 1),)))
        message = "FloorlessBudget promises budget but has no floor(window)"
        assert [Violation(1, "promise", message)] == check_run(run, Policies(FloorlessBudget()))

    def test_an_eviction_is_judged_by_the_policys_own_ranking(self) -> None:
        """Under normalized scores the evicted fact scores 0.0, as its Evicted event says."""
        command, written = write(3, "c", 0.5)
        first, second = write(1, "a", 0.9), write(2, "b", 0.1)
        run = run_of(first, second, (command, (*written, Evicted(2, 0.0))))
        policies = Policies(forgetting=Normalized(2, 4.0, 0.1))
        assert [] == check_run(run, policies)
        wrong = run_of(first, second, (command, (*written, Evicted(2, 0.1))))
        message = "fact 2 is evicted with score 0.1, but it scored 0.0 at t=0"
        assert [Violation(4, "eviction", message)] == check_run(wrong, policies)


@attrs.frozen
class FloorlessBudget:
    """Promises the budget but cannot say its floor."""

    name: ClassVar[str] = "floorless"
    budget: int = 10

    @property
    def promises(self) -> frozenset[str]:
        """The budget."""
        return frozenset({BUDGET})

    def decide(self, state: State, command: AddTurn) -> tuple[Event, ...]:
        """The turn."""
        return (turn(state.window.turns + 1, 1),)

    def params(self) -> dict[str, Any]:
        """No parameters."""
        return {"policy": self.name}


class TestCodec:
    def test_an_event_that_reads_back_as_itself_passes(self) -> None:
        """A turn survives JSON."""
        assert [] == check_codec(turn(1, 2), at=1)

    def test_an_event_that_cannot_survive_a_run_file_is_caught(self) -> None:
        """A NaN importance is written as null and cannot be read back."""
        violations = check_codec(FactWritten(1, "k", "t", math.nan), at=3)
        assert [(3, "codec")] == [(v.position, v.invariant) for v in violations]


class TestDeterminism:
    def test_the_seed_policies_decide_the_same_in_any_world(self) -> None:
        """A turn decided under the tiered policy does not depend on the clock."""
        assert [] == check_determinism(TIERED, INITIAL_STATE, AddTurn("user", "hi"), at=1)

    def test_a_policy_reading_the_wall_clock_is_caught(self) -> None:
        """A turn stamped with time.time() differs between two worlds."""
        policies = Policies(compaction=StampsTurns(10, 1))
        violations = check_determinism(policies, INITIAL_STATE, AddTurn("user", "hi"), at=1)
        assert [(1, "determinism")] == [(v.position, v.invariant) for v in violations]

    def test_the_same_rejection_twice_is_deterministic(self) -> None:
        """A blank role is rejected in both worlds with the same message."""
        assert [] == check_determinism(TIERED, INITIAL_STATE, AddTurn("", "hi"), at=1)


@attrs.frozen
class Requests(NoCompaction):
    """``none``, promising well-formed windows and pinned turns and nothing else."""

    @property
    def promises(self) -> frozenset[str]:
        return frozenset({WELL_FORMED, PINNED})


@attrs.frozen
class NeverPromises(NoCompaction):
    """``none``, promising nothing at all."""

    @property
    def promises(self) -> frozenset[str]:
        return frozenset()


NONE = Policies(compaction=Requests(100))
"""Held to WELL_FORMED and PINNED alone, whatever a hand-made run drops."""


def call_turn(number: int, *ids: str, pin: bool = False) -> TurnAdded:
    return TurnAdded(number, "assistant", f"call {number}", 2, False, ids, (), pin)


def result_turn(number: int, *ids: str, pin: bool = False) -> TurnAdded:
    return TurnAdded(number, "tool", f"result {number}", 2, True, (), ids, pin)


def added(event: TurnAdded) -> Batch:
    """The batch of a turn that arrived as ``event``."""
    return AddTurn(event.role, event.text, None, event.calls, event.answers, event.pinned), (event,)


def dropping(number: int, *dropped: int, hot: tuple[int, ...]) -> Batch:
    """Turn ``number`` (chatter) arriving, and a compaction dropping ``dropped``."""
    return AddTurn("user", f"turn {number}"), (
        turn(number, 2),
        CompactionTriggered(100, (), dropped, 0, "", 0),
    )


class TestWellFormed:
    def test_a_call_with_its_result_is_a_request(self) -> None:
        state = fold([call_turn(1, "a", "b"), result_turn(2, "b"), result_turn(3, "a")])
        assert [] == check_well_formed(state.window, at=3)

    def test_a_result_whose_call_left_is_named_with_its_id(self) -> None:
        state = fold(
            [
                call_turn(1, "a"),
                result_turn(2, "a"),
                CompactionTriggered(9, (), (1,), 0, "", 0),
            ]
        )
        message = "turn 2 answers 'a', whose call is not HOT"
        assert [Violation(3, "well-formed", message)] == check_well_formed(state.window, at=3)

    def test_a_call_whose_result_left_is_named_with_its_id(self) -> None:
        state = fold(
            [
                call_turn(1, "a"),
                result_turn(2, "a"),
                CompactionTriggered(9, (), (2,), 0, "", 0),
            ]
        )
        message = "turn 1 calls 'a', whose result has left HOT"
        assert [Violation(3, "well-formed", message)] == check_well_formed(state.window, at=3)

    def test_a_call_still_waiting_is_no_violation(self) -> None:
        assert [] == check_well_formed(fold([turn(1, 2), call_turn(2, "a")]).window, at=2)

    def test_check_run_names_the_turn_and_the_id_where_a_call_left_without_its_result(
        self,
    ) -> None:
        run = run_of(
            added(call_turn(1, "a")), added(result_turn(2, "a")), dropping(3, 1, hot=(2, 3))
        )
        message = "turn 2 answers 'a', whose call is not HOT (turn 1 made it, and left)"
        assert [Violation(4, "well-formed", message)] == check_run(run, NONE)

    def test_check_run_names_a_result_that_left_without_its_call(self) -> None:
        run = run_of(
            added(call_turn(1, "a")), added(result_turn(2, "a")), dropping(3, 2, hot=(1, 3))
        )
        message = "turn 1 calls 'a', whose result has left HOT (turn 2 carried it)"
        assert [Violation(4, "well-formed", message)] == check_run(run, NONE)

    def test_check_run_refuses_a_recorded_answer_no_call_waits_on(self) -> None:
        run = run_of(added(turn(1, 2)), added(result_turn(2, "ghost")))
        message = (
            "turn 2 answers 'ghost', which no call is waiting on "
            "(no earlier turn called it, or its result already arrived)"
        )
        assert [Violation(2, "well-formed", message)] == check_run(run, NONE)

    def test_a_policy_that_does_not_promise_it_is_not_held_to_it(self) -> None:
        run = run_of(
            added(call_turn(1, "a")), added(result_turn(2, "a")), dropping(3, 1, hot=(2, 3))
        )
        assert [] == check_run(run, Policies(compaction=NeverPromises(100)))


class TestPinned:
    def test_a_pinned_turn_hot_as_it_arrived_is_no_violation(self) -> None:
        pin = TurnAdded(1, "system", "rules", 2, False, pinned=True)
        assert [] == check_pinned(fold([pin, turn(2, 2)]).window, {1: pin}, at=2)

    @pytest.mark.parametrize(
        ("compaction", "message"),
        [
            (CompactionTriggered(9, (), (1,), 0, "", 0), "pinned turn 1 is DROPPED now"),
            (
                CompactionTriggered(9, (WarmItem(1, "rules", 1),), (), 0, "", 0),
                "pinned turn 1 is WARM now",
            ),
            (
                CompactionTriggered(9, (), (), 0, "", 0, cleared=(WarmItem(1, "[x]", 1),)),
                "pinned turn 1 is HOT but reads '[x]', not as it arrived",
            ),
        ],
        ids=["dropped", "folded", "cleared"],
    )
    def test_a_pinned_turn_moved_is_named(
        self, compaction: CompactionTriggered, message: str
    ) -> None:
        pin = TurnAdded(1, "system", "rules", 2, False, pinned=True)
        run = run_of(added(pin), (AddTurn("user", "turn 2"), (turn(2, 2), compaction)))
        expected = message if "HOT" in message else f"{message}, no longer HOT"
        assert [Violation(3, "pinned", expected)] == check_run(run, NONE)


class TestVerbatimUnits:
    def test_a_result_among_the_last_turns_needs_its_call_and_what_is_between(self) -> None:
        events = [call_turn(1, "a"), turn(2, 2), turn(3, 2), result_turn(4, "a")]
        state = fold([*events, CompactionTriggered(9, (), (2,), 0, "", 0)])
        arrived = {t.turn: t for t in events}
        message = (
            "HOT holds turns [1, 3, 4] of the unit(s) of the last 1, not every turn from 1 to 4"
        )
        assert [Violation(5, "recent-verbatim", message)] == check_verbatim(
            state.window, 1, arrived, at=5
        )

    def test_the_whole_unit_kept_is_no_violation(self) -> None:
        events = [turn(1, 2), call_turn(2, "a"), turn(3, 2), result_turn(4, "a")]
        state = fold([*events, CompactionTriggered(9, (), (1,), 0, "", 0)])
        assert [] == check_verbatim(state.window, 1, {t.turn: t for t in events}, at=5)


@settings(max_examples=examples(60), deadline=None)
@given(data=st.data())
def test_the_step_checker_and_the_whole_window_check_agree(data: st.DataObject) -> None:
    """Whatever a policy drops, the step-by-step check of WELL_FORMED breaks first where the
    whole-window check of the window after that step first breaks."""
    commands = data.draw(turn_sequences(max_size=25))
    session = Session(NONE)
    checker = StepChecker(INITIAL_STATE)
    first_step = first_whole = None
    for number, command in enumerate(commands, start=1):
        events = list(NoCompaction(100).decide(session.state, command))
        assert isinstance(events[0], TurnAdded)
        hot = [t.turn for t in (*session.state.window.hot, events[0])]
        drop = data.draw(st.integers(0, len(hot) - 1))
        if drop:
            events.append(CompactionTriggered(100, (), tuple(hot[:drop]), 0, "", 0))
        session.run.append(command, events)
        step = [
            v
            for v in checker.check(NONE, events, start=len(session.run) - len(events))
            if v.invariant == "well-formed"
        ]
        whole = check_well_formed(session.state.window, at=number)
        if step and first_step is None:
            first_step = number
        if whole and first_whole is None:
            first_whole = number
    assert first_step == first_whole


class TestBlocks:
    OVER = BlockEdited("human", 1, "create", "Name: Dana.", 2, 4)

    def test_a_block_over_its_limit_is_caught(self) -> None:
        window = fold([self.OVER]).window
        expected = [
            Violation(
                5,
                "block-limit",
                "block 'human' holds 11 characters at version 1, over its limit of 4",
            )
        ]
        assert expected == check_blocks(window, [self.OVER], at=5)

    def test_only_a_batch_that_edited_a_block_is_looked_at(self) -> None:
        assert [] == check_blocks(fold([self.OVER]).window, [ClockAdvanced(1.0)], at=5)

    def test_the_step_checker_holds_every_session_to_it(self) -> None:
        checker = StepChecker(INITIAL_STATE)
        found = checker.check(Policies(), [self.OVER], start=0)
        assert ["block-limit"] == [violation.invariant for violation in found]

    def test_a_redacted_copy_is_not_held_to_it(self) -> None:
        checker = StepChecker(INITIAL_STATE, own_texts=False)
        assert [] == checker.check(Policies(), [self.OVER], start=0)

    def test_a_read_only_block_that_was_edited_is_caught(self) -> None:
        created = BlockEdited("persona", 1, "create", "Polite.", 1, 40, read_only=True)
        edited = BlockEdited("persona", 2, "replace", "Rude.", 1)

        window = fold([created, edited]).window

        assert [
            Violation(
                2, "block-limit", "block 'persona' is read-only, but an edit made its version 2"
            )
        ] == check_blocks(window, [edited], at=2)

    def test_the_token_total_counts_the_blocks(self) -> None:
        window = fold([self.OVER, TurnAdded(1, "user", "hi", 2, False)]).window
        assert [] == check_token_total(window._replace(tokens=4), at=2)
        assert "+ blocks 2 make 4" in check_token_total(window._replace(tokens=3), at=2)[0].message
