"""memtape.projections.metrics: window and store metrics, each traced to its events."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memtape.core.commands import (
    AddTurn,
    AdvanceClock,
    Command,
    CreateBlock,
    EditBlock,
    Query,
    ReadFact,
    WriteFact,
)
from memtape.core.events import (
    CompactionTriggered,
    Evicted,
    FactRead,
    FactWritten,
    Queried,
    TurnAdded,
    WarmItem,
)
from memtape.core.run import Run
from memtape.core.state import State
from memtape.policies.plumbing.protocols import CompactionPolicy
from memtape.policies.session import Policies, Session
from memtape.policies.store.forgetting import ImportanceRecencyAccess
from memtape.policies.window.no_compaction import NoCompaction
from memtape.policies.window.sliding_window import SlidingWindow
from memtape.policies.window.tiered import TieredCompaction
from memtape.policies.window.tool_clearing import ClearToolResults
from memtape.policies.zoo import COMPACTION
from memtape.projections.metrics import (
    ProbeLoss,
    WindowTally,
    compaction_metrics,
    forgetting_metrics,
    steps,
    visible,
)
from memtape.projections.probe_parts import ProbeParts
from memtape.reducers import evolve, fold
from memtape.scenarios import load_scenario
from tests.blocked import blocked_session
from tests.broken_policies import NeverCompacts
from tests.playing import OWN_PARAMS
from tests.suite_profile import examples

FIXTURES = Path(__file__).parent / "fixtures"


@attrs.frozen
class Probe:
    text: str
    start: int
    kind: str | None = None


def _session(budget: int, hot_n: int, *commands: Command) -> Session:
    session = Session(Policies(compaction=TieredCompaction(budget=budget, hot_n=hot_n)))
    session.execute_all(commands)
    return session


def _refund_desk() -> tuple[Session, tuple[Probe, ...]]:
    scenario = load_scenario("refund-desk")
    session = Session(scenario.policies)
    session.execute_all(scenario.steps)
    return session, tuple(Probe(p.text, p.start) for p in scenario.probes if p.text is not None)


class TestSentTokens:
    def test_each_turn_sends_the_window_after_its_whole_batch(self) -> None:
        session, _ = _refund_desk()
        run = session.run
        after_each_step = [run.state_at(run.batch(step)[1]).window.tokens for step in range(1, 11)]
        assert after_each_step == list(compaction_metrics(run).sent)

    def test_peak_and_resent_are_the_max_and_sum_of_what_was_sent(self) -> None:
        session, _ = _refund_desk()
        metrics = compaction_metrics(session.run)
        assert (max(metrics.sent), sum(metrics.sent)) == (
            metrics.peak_tokens,
            metrics.tokens_resent,
        )

    def test_refund_desk_never_sends_more_than_its_budget(self) -> None:
        session, _ = _refund_desk()
        assert 40 >= (compaction_metrics(session.run).peak_tokens or 0)

    def test_compactions_count_the_compaction_events(self) -> None:
        session, _ = _refund_desk()
        events = session.run.events
        expected = sum(isinstance(e, CompactionTriggered) for e in events)
        assert 5 == expected
        assert expected == compaction_metrics(session.run).compactions

    def test_steps_other_than_turns_send_nothing(self) -> None:
        session = Session(
            Policies(
                compaction=TieredCompaction(budget=40, hot_n=2),
                forgetting=ImportanceRecencyAccess(capacity=4, half_life=4.0, access_boost=0.1),
            )
        )
        session.execute_all([AddTurn("user", "one two"), AdvanceClock(3), WriteFact("k", "t", 0.5)])
        assert (3,) == compaction_metrics(session.run).sent

    def test_a_run_without_turns_has_no_peak(self) -> None:
        metrics = compaction_metrics(Run(fold))
        assert (None, 0, None) == (
            metrics.peak_tokens,
            metrics.tokens_resent,
            metrics.probe_retention,
        )


LONG = "one two three four five six seven eight nine ten"
"""A turn of 11 tokens (``user: `` counts one)."""


def _over(policy: CompactionPolicy, *texts: str) -> tuple[int | None, bool | None, str | None]:
    session = Session(Policies(compaction=policy))
    session.execute_all(AddTurn("user", text) for text in texts)
    metrics = compaction_metrics(session.run, (), policy)
    return metrics.peak_tokens, metrics.peak_over_budget, metrics.over_budget


class TestOverBudget:
    def test_a_tiered_budget_below_its_hot_turns_is_over_because_of_the_floor(self) -> None:
        # hot_n = 2 keeps two turns of 11 tokens: 22, over a budget of 15.
        assert (22, True, "floor") == _over(TieredCompaction(15, 2), LONG, LONG, LONG)

    def test_a_run_within_its_budget_is_not_over(self) -> None:
        assert (33, False, None) == _over(TieredCompaction(40, 2), LONG, LONG, LONG)

    def test_the_newest_turn_alone_over_the_budget_is_sliding_window_s_floor(self) -> None:
        assert (11, True, "floor") == _over(SlidingWindow(5), "a", LONG)

    def test_a_policy_that_promises_no_budget_is_over_unbounded(self) -> None:
        assert (33, True, "unbounded") == _over(NoCompaction(15), LONG, LONG, LONG)

    def test_a_broken_budget_promise_is_over_unexplained(self) -> None:
        assert (33, True, "unexplained") == _over(NeverCompacts(15), LONG, LONG, LONG)

    def test_without_a_policy_or_without_turns_there_is_nothing_to_say(self) -> None:
        session = _session(15, 2, AddTurn("user", LONG), AddTurn("user", LONG))
        without_policy = compaction_metrics(session.run)
        without_turns = compaction_metrics(Run(fold), (), TieredCompaction(15, 2))
        assert [(None, None), (None, None)] == [
            (metrics.peak_over_budget, metrics.over_budget)
            for metrics in (without_policy, without_turns)
        ]


class TestProbes:
    def test_refund_desk_loses_the_restocking_fee_to_the_last_compaction(self) -> None:
        session, probes = _refund_desk()
        metrics = compaction_metrics(session.run, probes)
        # "restocking fee" is due from turn 5 (6 checks), "$180.00" from turn 8 (3 checks);
        # turn 10's compaction pushes turn 5's WARM item into the COLD gist.
        assert (9, 8) == (metrics.probe_checks, metrics.probe_passes)
        assert 8 / 9 == metrics.probe_retention
        assert (None,) * 4 + (1.0,) * 5 + (0.5,) == metrics.retention
        (loss,) = metrics.losses
        assert ("restocking fee", 10, len(session.run)) == (loss.probe, loss.turn, loss.at)
        assert 5 in session.state.window.cold
        assert isinstance(session.run.events[-1], CompactionTriggered)

    def test_a_dropped_chatter_turn_loses_its_probe_at_the_compaction(self) -> None:
        session = _session(
            6,
            1,
            AddTurn("user", "refund is $180.00"),
            AddTurn("user", "thanks a lot"),
        )
        metrics = compaction_metrics(session.run, [Probe("$180.00", 1)])
        assert (1.0, 0.0) == metrics.retention
        (loss,) = metrics.losses
        assert isinstance(session.run.events[2], CompactionTriggered)
        assert ("$180.00", 2, 3, "CompactionTriggered") == (
            loss.probe,
            loss.turn,
            loss.at,
            loss.event,
        )

    def test_a_salient_turn_keeps_its_probe_in_warm_until_it_goes_cold(self) -> None:
        session = _session(
            7,
            1,
            AddTurn("tool", "refund is $180.00"),
            AddTurn("user", "ok"),
            AddTurn("user", "and now a much longer turn"),
        )
        metrics = compaction_metrics(session.run, [Probe("$180.00", 1)])
        assert 1 == session.state.window.gist.count("summarized")
        assert (1.0, 1.0, 0.0) == metrics.retention
        assert [3] == [loss.turn for loss in metrics.losses]

    def test_a_probe_that_never_shows_is_lost_at_no_event(self) -> None:
        session = _session(40, 2, AddTurn("user", "hello"), AddTurn("user", "bye"))
        metrics = compaction_metrics(session.run, [Probe("$180.00", 1)])
        assert (0.0, 0.0) == metrics.retention
        assert [(1, None, None)] == [(loss.turn, loss.at, loss.event) for loss in metrics.losses]

    def test_probes_are_found_as_plain_text_even_inside_one_another(self) -> None:
        session = _session(
            40,
            3,
            AddTurn("user", "is it a+b?"),
            AddTurn("user", "the total is $5.00"),
            AddTurn("user", "ok"),
        )
        probes = [Probe("a+b", 1), Probe("$5.00", 2), Probe("5.0", 2), Probe("a+c", 3)]
        metrics = compaction_metrics(session.run, probes)
        assert (1.0, 1.0, 0.75) == metrics.retention
        assert ["a+c"] == [loss.probe for loss in metrics.losses]

    def test_a_probe_is_not_checked_before_its_turn(self) -> None:
        session = _session(40, 2, AddTurn("user", "hello"), AddTurn("user", "$5 it is"))
        metrics = compaction_metrics(session.run, [Probe("$5", 2)])
        assert ((None, 1.0), 1) == (metrics.retention, metrics.probe_checks)

    def test_a_turn_that_shows_no_probe_checks_none_of_those_already_due(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        checked: list[int] = []
        shows = ProbeParts.visible

        def counted(tracker: ProbeParts, index: int) -> bool:
            checked.append(index)
            return shows(tracker, index)

        monkeypatch.setattr(ProbeParts, "visible", counted)
        session = Session(Policies(compaction=TieredCompaction(budget=10_000, hot_n=4)))
        tally = WindowTally([Probe(f"code-{n}", 1) for n in range(1000)])
        for number, text in enumerate(["code-7 here", "nothing", "still nothing"]):
            before = session.state
            events = session.execute(AddTurn("user", text))
            tally.step(AddTurn("user", text), events, before, session.state, number)
            if number == 0:
                assert 1000 == len(checked)
                checked.clear()
        assert [] == checked
        assert (0.001, 0.001, 0.001) == tally.metrics().retention


class TestFollowingTheWindow:
    """The probe tracker follows a compaction through what its event names, never reading
    the whole window: a policy that keeps a long HOT costs the bench the same per turn
    at any length."""

    def test_a_compaction_and_the_probe_it_loses_are_followed_without_reading_a_window(
        self,
    ) -> None:
        session = Session(Policies(compaction=ClearToolResults(budget=20, keep=1)))
        tally = WindowTally([Probe("code-7", 1), Probe("refund", 2)])
        commands = [
            AddTurn("tool", "lookup: code-7 is the order"),
            AddTurn("user", "and the refund please"),
            AddTurn("tool", "refund: thirty days from the purchase date"),
            AddTurn("tool", "status: shipped and delivered on the fifth"),
        ]
        for offset, command in enumerate(commands):
            before = session.state
            events = session.execute(command)
            after = session.state
            if any(isinstance(event, CompactionTriggered) for event in events):
                before, after = _unreadable(before), _unreadable(after)
            tally.step(command, events, before, after, offset)

        assert (1.0, 1.0, 1.0, 0.5) == tally.metrics().retention
        assert [("code-7", 4)] == [(loss.probe, loss.turn) for loss in tally.metrics().losses]

    def test_a_result_cleared_in_place_stops_showing_its_probe(self) -> None:
        session = Session(Policies(compaction=ClearToolResults(budget=25, keep=1)))
        session.execute_all(
            [
                AddTurn("assistant", "looking it up", calls=("a",)),
                AddTurn("tool", "lookup: code-7 is the order", answers=("a",)),
                AddTurn("assistant", "and the policy", calls=("b",)),
                AddTurn("tool", "policy: thirty days from the purchase date", answers=("b",)),
                AddTurn("user", "thanks, code-7 it is then"),
            ]
        )
        probes = [Probe("code-7", 2), Probe("lookup", 2), Probe("thirty", 4)]
        metrics = compaction_metrics(session.run, probes)

        cleared = session.state.window.cleared
        assert ([2], (1.0, 1.0, 1.0, 2 / 3)) == (list(cleared), metrics.retention[1:])
        assert _losses_by_searching_every_window(session.run, probes) == list(metrics.losses)

    def test_an_old_compaction_listing_what_stays_is_followed_as_the_window_went(self) -> None:
        turns = [TurnAdded(n, "user", f"turn {n} says code-{n}", 4, False) for n in (1, 2, 3)]
        listed = CompactionTriggered(40, (WarmItem(2, "code-2 in short", 3),), (1,), 0, "", 0)
        listed = attrs.evolve(listed, kept=(3,))
        tally = WindowTally([Probe("code-1", 1), Probe("code-2", 2), Probe("code-3", 3)])
        state = fold(())
        for offset, batch in enumerate([(turns[0],), (turns[1],), (turns[2], listed)]):
            after = fold(batch, state)
            tally.step(AddTurn("user", "x"), batch, state, after, offset)
            state = after

        assert (1.0, 1.0, 2 / 3) == tally.metrics().retention


def _unreadable(state: State) -> State:
    """``state`` with a window whose HOT and WARM fail when read."""
    return state._replace(window=state.window._replace(hot=Unreadable(), warm=Unreadable()))


class TestEmptyProbe:
    def test_an_empty_probe_shows_everywhere_beside_one_that_shows_nowhere(self) -> None:
        session = _session(10, 1, *(AddTurn("user", f"turn {n} here") for n in range(6)))

        metrics = compaction_metrics(session.run, [Probe("", 1), Probe("zzz", 1)])

        assert (0.5,) * 6 == metrics.retention


class Unreadable(tuple[Any, ...]):
    """A window part that fails when read: the tracker must follow the events instead."""

    def __iter__(self) -> Iterator[Any]:
        raise AssertionError("the tracker read the whole window")

    def __len__(self) -> int:
        raise AssertionError("the tracker read the whole window")


texts = st.lists(st.sampled_from(["alpha", "beta", "gamma", "delta", "x"]), min_size=1, max_size=6)


def _played(policy: str, turns: list[tuple[str, list[str]]], budget: int) -> Session:
    """A session of ``turns`` (role, words) under a compaction policy and budget."""
    table = {"policy": policy, "budget": budget, **OWN_PARAMS.get(policy, {})}
    policies = Policies.from_params({"compaction": table})
    session = Session(policies)
    session.execute_all(AddTurn(role, " ".join(words)) for role, words in turns)
    return session


@settings(max_examples=examples(60), deadline=None)
@given(
    policy=st.sampled_from(sorted(COMPACTION)),
    turns=st.lists(st.tuples(st.sampled_from(["user", "tool"]), texts), min_size=1, max_size=25),
    budget=st.integers(min_value=4, max_value=30),
    starts=st.lists(st.integers(min_value=1, max_value=25), min_size=4, max_size=4),
)
def test_incremental_retention_equals_searching_every_window(
    policy: str, turns: list[tuple[str, list[str]]], budget: int, starts: list[int]
) -> None:
    session = _played(policy, turns, budget)
    probes = [
        Probe(text, start)
        for text, start in zip(["alpha", "beta", "gamma", "delta"], starts, strict=True)
    ]
    expected = []
    for _, _, _, after in steps(session.run):
        due = [p for p in probes if p.start <= after.window.turns]
        shown = [p for p in due if visible(after.window, p.text)]
        expected.append(len(shown) / len(due) if due else None)
    assert tuple(expected) == compaction_metrics(session.run, probes).retention


@settings(max_examples=examples(60), deadline=None)
@given(
    turns=st.lists(st.text("ab$. ", min_size=1, max_size=12), min_size=1, max_size=12),
    probes=st.lists(st.text("ab$.", min_size=1, max_size=3), min_size=1, max_size=6),
)
def test_probes_inside_or_across_one_another_are_each_found(
    turns: list[str], probes: list[str]
) -> None:
    """Probes that begin, contain or overlap one another (``ab``, ``ab$``, ``b$.``) are each
    found where they show, as a search of every window finds them."""
    session = _played("clear-tool-results", [("tool", [text]) for text in turns], 8)
    planted = [Probe(text, 1) for text in probes]
    expected = []
    for _, _, _, after in steps(session.run):
        shown = [p for p in planted if visible(after.window, p.text)]
        expected.append(len(shown) / len(planted))
    assert tuple(expected) == compaction_metrics(session.run, planted).retention


def _losses_by_searching_every_window(run: Run, probes: list[Probe]) -> list[ProbeLoss]:
    """Each loss as the metric defines it, found by searching every due probe at every turn."""
    seen = [False] * len(probes)
    losses = []
    for step, batch, before, after in steps(run):
        if not isinstance(run.commands[step - 1], AddTurn):
            continue
        turn = after.window.turns
        for index, probe in enumerate(probes):
            if probe.start > turn:
                continue
            if visible(after.window, probe.text):
                seen[index] = True
            elif seen[index] or probe.start == turn:
                at = event = None
                state, offset = before, run.batch(step)[0]
                for position, each in enumerate(batch, start=offset + 1):
                    was, state = visible(state.window, probe.text), evolve(state, each)
                    if was and not visible(state.window, probe.text):
                        at, event = position, type(each).__name__
                        break
                losses.append(ProbeLoss(probe.text, turn, at, event))
                seen[index] = False
    return losses


@settings(max_examples=examples(60), deadline=None)
@given(
    policy=st.sampled_from(sorted(COMPACTION)),
    turns=st.lists(st.tuples(st.sampled_from(["user", "tool"]), texts), min_size=1, max_size=25),
    budget=st.integers(min_value=4, max_value=30),
    starts=st.lists(st.integers(min_value=1, max_value=25), min_size=5, max_size=5),
)
def test_incremental_losses_and_checks_equal_searching_every_window(
    policy: str, turns: list[tuple[str, list[str]]], budget: int, starts: list[int]
) -> None:
    session = _played(policy, turns, budget)
    # Two probes share a text, and their starts are in no particular order.
    probe_texts = ["gamma", "alpha", "beta", "alpha", "delta"]
    probes = [Probe(text, start) for text, start in zip(probe_texts, starts, strict=True)]
    metrics = compaction_metrics(session.run, probes)
    due = [sum(p.start <= turn for p in probes) for turn in range(1, len(turns) + 1)]
    assert sum(due) == metrics.probe_checks
    assert _losses_by_searching_every_window(session.run, probes) == list(metrics.losses)


class TestForgetting:
    def test_dana_facts_reads_fresh_facts_and_evicts_one(self) -> None:
        scenario = load_scenario("dana-facts")
        session = Session(scenario.policies)
        session.execute_all(scenario.steps)
        metrics = forgetting_metrics(session.run)
        assert (2, 0, 1) == (metrics.reads, metrics.stale_reads, metrics.evictions)

    def test_a_read_of_an_older_fact_on_a_key_is_stale(self) -> None:
        # Two active facts on one key, as a policy that never supersedes leaves them.
        run = Run(fold)
        run.append(WriteFact("k", "old", 0.5), [FactWritten(1, "k", "old", 0.5)])
        run.append(WriteFact("k", "new", 0.5), [FactWritten(2, "k", "new", 0.5)])
        run.append(ReadFact(id=1), [FactRead(1)])
        run.append(ReadFact(id=2), [FactRead(2)])
        metrics = forgetting_metrics(run)
        assert (2, 1) == (metrics.reads, metrics.stale_reads)

    def test_evictions_count_the_evicted_facts(self) -> None:
        run = Run(fold)
        run.append(
            WriteFact("a", "t", 0.5),
            [FactWritten(1, "a", "t", 0.5)],
        )
        run.append(
            WriteFact("b", "t", 0.1),
            [FactWritten(2, "b", "t", 0.1), Evicted(2, 0.1)],
        )
        assert 1 == forgetting_metrics(run).evictions

    def test_without_queries_hit_at_k_and_regret_do_not_apply(self) -> None:
        metrics = forgetting_metrics(Run(fold))
        assert (None, None) == (metrics.hit_at_k, metrics.regret)


def _dana_queries(capacity: int) -> Session:
    scenario = load_scenario(str(FIXTURES / "dana-queries.toml"))
    session = Session(scenario.policies.with_settings([f"forgetting.capacity={capacity}"]))
    session.execute_all(scenario.steps)
    return session


class TestQueries:
    def test_hit_at_k_is_the_share_of_queries_that_found_their_key(self) -> None:
        session = _dana_queries(4)
        queried = [e for e in session.run.events if isinstance(e, Queried)]
        store = session.state.store
        found = [any(store.facts[i].key == q.key for i in q.results) for q in queried]
        # The contact query's top 2 are the name and the order; the name query finds it.
        assert [False, True] == found
        metrics = forgetting_metrics(session.run)
        assert (0.5, 0, 0) == (metrics.hit_at_k, metrics.regret, metrics.stale_reads)

    def test_regret_counts_queries_whose_key_was_evicted(self) -> None:
        session = _dana_queries(2)
        evicted = {
            session.state.store.facts[e.id].key
            for e in session.run.events
            if isinstance(e, Evicted)
        }
        assert "contact" in evicted
        metrics = forgetting_metrics(session.run)
        assert (1, 2) == (metrics.regret, metrics.evictions)

    def test_query_results_count_as_reads_and_may_be_stale(self) -> None:
        run = Run(fold)
        run.append(WriteFact("k", "old", 0.9), [FactWritten(1, "k", "old", 0.9)])
        run.append(WriteFact("k", "new", 0.1), [FactWritten(2, "k", "new", 0.1)])
        run.append(Query("k?", "k", 2), [Queried("k?", "k", 2, (1, 2), (0.9, 0.1))])
        metrics = forgetting_metrics(run)
        assert (2, 1, 1.0, 0) == (
            metrics.reads,
            metrics.stale_reads,
            metrics.hit_at_k,
            metrics.regret,
        )

    def test_a_query_without_an_expected_key_is_not_scored(self) -> None:
        run = Run(fold)
        run.append(WriteFact("k", "t", 0.5), [FactWritten(1, "k", "t", 0.5)])
        run.append(Query("t", "", 1), [Queried("t", "", 1, (1,), (0.5,))])
        metrics = forgetting_metrics(run)
        assert (1, None, None) == (metrics.reads, metrics.hit_at_k, metrics.regret)


class TestBlocksShowProbes:
    def test_a_memory_block_shows_its_text_in_the_window(self) -> None:
        assert visible(blocked_session().state.window, "Lives in Porto")

    def test_a_probe_noted_in_a_block_is_kept_after_its_turn_leaves(self) -> None:
        session = Session(
            Policies.from_params({"compaction": {"policy": "sliding-window", "budget": 12}})
        )
        session.execute_all(
            [
                CreateBlock("human", 60, ""),
                AddTurn("user", "my account is ACC-1"),
                EditBlock("human", "append", "ACC-1"),
                AddTurn("user", "one two three four five six seven"),
                AddTurn("user", "one two three four five six seven"),
            ]
        )
        metrics = compaction_metrics(session.run, [Probe("ACC-1", 1)])
        assert ((), 3) == (metrics.losses, metrics.probe_passes)
