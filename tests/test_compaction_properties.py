"""Property tests run on every registered compaction policy: each keeps what it promises.

Over random turns, budgets and parameters, after every turn: the running
total and the tiers are right; a policy that promises the budget keeps the
window within ``max(budget, floor(window))``; one that promises recent turns
verbatim keeps them HOT exactly as they arrived; a turn makes at most one
compaction. Over the whole run: folding the log from scratch, and seeking
any point, give the states the session went through, and deciding the same
turns again gives the same events. A fork onto another policy folds cleanly.
"""

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memtape.checking.invariants import budget_bound, check_tiers, check_token_total
from memtape.core.commands import AddTurn
from memtape.core.events import CompactionTriggered, TurnAdded
from memtape.core.state import INITIAL_STATE, State
from memtape.policies.plumbing.promises import BUDGET, RECENT_VERBATIM
from memtape.policies.plumbing.protocols import CompactionPolicy
from memtape.policies.session import Policies, Session
from memtape.policies.text.tokenizers import TOKENIZERS
from memtape.policies.zoo import COMPACTION
from memtape.reducers import fold
from memtape.testing.strategies import add_turns
from tests.suite_profile import examples

PROPERTY = settings(max_examples=examples(30), deadline=None)
"""Thirty sequences per policy keep the whole file within seconds."""

NAMES = sorted(COMPACTION)
"""Every registered compaction policy."""

EXTRA: dict[str, dict[str, st.SearchStrategy[Any]]] = {
    "tiered": {"hot_n": st.integers(0, 4)},
    "sliding-window": {},
    "rolling-summary": {"keep": st.integers(0, 4), "summary_tokens": st.integers(0, 20)},
    "clear-tool-results": {"keep": st.integers(0, 4), "placeholder": st.sampled_from(["[x]", ""])},
    "none": {},
    "recorded": {},
    "observation-masking": {"keep": st.integers(0, 4)},
    "anthropic-clear-tool-uses": {
        "keep": st.integers(0, 4),
        "trigger": st.integers(1, 60),
        "clear_at_least": st.integers(0, 20),
        "clear_tool_inputs": st.booleans(),
    },
    "anthropic-compaction": {"trigger": st.integers(1, 60), "keep": st.integers(0, 2)},
    "claude-code": {"context_window": st.integers(20, 80), "keep": st.integers(0, 4)},
    "codex": {
        "model_auto_compact_token_limit": st.integers(1, 60),
        "context_window": st.integers(20, 80),
        "user_message_tokens": st.integers(0, 30),
    },
    "langchain-summarization": {
        "keep": st.integers(0, 4),
        "trim_tokens_to_summarize": st.integers(0, 30),
    },
    "anthropic-clear-thinking": {"keep": st.one_of(st.integers(0, 3), st.just("all"))},
    "masking-then-summary": {"keep": st.integers(0, 4), "mask_keep": st.integers(0, 4)},
}
"""Each policy's own parameters, drawn; a policy missing here fails the first test."""


@st.composite
def recorded_compactions(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A ``compactions`` list of the recorded policy: boundaries before increasing turns."""
    befores = sorted(draw(st.lists(st.integers(2, 26), min_size=1, max_size=4, unique=True)))
    summaries = st.sampled_from(["", "summary", "what the agent kept of the turns before"])
    return [{"before": before, "summary": draw(summaries)} for before in befores]


REQUIRED: dict[str, dict[str, st.SearchStrategy[Any]]] = {
    "recorded": {"compactions": recorded_compactions()},
}
"""The parameters a policy cannot be built without, beyond the budget: always drawn."""

FORK_SETTINGS: dict[str, tuple[str, ...]] = {
    "recorded": ('compaction.compactions=[{before = 3, summary = "kept"}]',),
}
"""What a fork onto a policy sets besides its name, when its shared parameters do not do."""


@st.composite
def compaction_tables(draw: st.DrawFn, name: str | None = None) -> dict[str, Any]:
    """A ``[compaction]`` table of a registered policy, with some of its own parameters
    and, one time in four, a tokenizer of any kind."""
    chosen = draw(st.sampled_from(sorted(COMPACTION))) if name is None else name
    table: dict[str, Any] = {"policy": chosen, "budget": draw(st.integers(1, 60))}
    if draw(st.integers(0, 3)) == 0:
        table["tokenizer"] = draw(st.sampled_from(sorted(TOKENIZERS)))
    for param, values in EXTRA[chosen].items():
        if draw(st.booleans()):
            table[param] = draw(values)
    for param, values in REQUIRED.get(chosen, {}).items():
        table[param] = draw(values)
    return table


def _policy(table: dict[str, Any]) -> CompactionPolicy:
    compaction = Policies.from_params({"compaction": table}).compaction
    assert compaction is not None
    return compaction


def _check_after_turn(
    policy: CompactionPolicy, state: State, arrived: dict[int, TurnAdded], events: tuple[Any, ...]
) -> None:
    window = state.window
    assert [] == check_token_total(window, at=0)
    assert [] == check_tiers(window, at=0)
    assert isinstance(events[0], TurnAdded)
    assert len(events) <= 2
    assert all(isinstance(e, CompactionTriggered) for e in events[1:])
    if BUDGET in policy.promises:
        floor = policy.floor(window)  # type: ignore[attr-defined]
        bound = budget_bound(policy, compacted=len(events) == 2)
        assert bound is None or window.tokens <= max(bound, floor)
    if RECENT_VERBATIM in policy.promises:
        verbatim: int = policy.verbatim  # type: ignore[attr-defined]
        newest = list(range(max(window.turns - verbatim, 0) + 1, window.turns + 1))
        assert newest == [t.turn for t in window.hot[len(window.hot) - len(newest) :]]
        assert all(arrived[t.turn] is t for t in window.hot)


def test_every_registered_policy_has_drawn_parameters() -> None:
    assert sorted(COMPACTION) == sorted(EXTRA)


@pytest.mark.parametrize("name", NAMES)
@PROPERTY
@given(data=st.data(), turns=st.lists(add_turns(valid_only=True), max_size=25))
def test_each_policy_keeps_its_promises_after_every_turn(
    name: str, data: st.DataObject, turns: list[AddTurn]
) -> None:
    table = data.draw(compaction_tables(name))
    policy = _policy(table)
    session = Session(Policies(compaction=policy), snapshot_every=4)
    arrived: dict[int, TurnAdded] = {}
    for turn in turns:
        events = session.execute(turn)
        assert isinstance(events[0], TurnAdded)
        arrived[events[0].turn] = events[0]
        _check_after_turn(policy, session.state, arrived, events)


@pytest.mark.parametrize("name", NAMES)
@PROPERTY
@given(data=st.data(), turns=st.lists(add_turns(valid_only=True), max_size=25))
def test_replay_seek_and_a_second_decision_agree_with_the_run(
    name: str, data: st.DataObject, turns: list[AddTurn]
) -> None:
    table = data.draw(compaction_tables(name))
    session = Session(Policies(compaction=_policy(table)), snapshot_every=4)
    states = [session.state]
    for turn in turns:
        session.execute(turn)
        states.append(session.state)
    run = session.run
    again = Session(Policies(compaction=_policy(table)))
    again.execute_all(turns)

    assert session.state == fold(run.events, INITIAL_STATE)
    ends = [0, *(run.batch(step)[1] for step in range(1, run.steps + 1))]
    assert states == [run.state_at(end) for end in ends]
    assert run.events == again.run.events


@PROPERTY
@given(
    first=compaction_tables(),
    then=st.sampled_from(NAMES),
    turns=st.lists(add_turns(valid_only=True), min_size=1, max_size=20),
    data=st.data(),
)
def test_a_fork_onto_another_policy_folds_cleanly(
    first: dict[str, Any], then: str, turns: list[AddTurn], data: st.DataObject
) -> None:
    session = Session(Policies(compaction=_policy(first)))
    session.execute_all(turns)
    step = data.draw(st.integers(0, len(turns)))
    at = session.run.batch(step)[1] if step else 0

    forked = session.fork(at, [f"compaction.policy={then}", *FORK_SETTINGS.get(then, ())])

    window = forked.state.window
    assert forked.state == fold(forked.run.events, INITIAL_STATE)
    assert ([], []) == (check_token_total(window, at=0), check_tiers(window, at=0))
    assert then == forked.policies.params()["compaction"]["policy"]
