"""Imported-like transcripts: hundreds of tool calls at small budgets, and every shipped
compaction policy keeps WELL_FORMED and PINNED under ``memtape check`` and under the kit
(the transcript: ``tests/agent_session.py``)."""

import json
from pathlib import Path

import pytest

from memtape.checking.invariants import check_run
from memtape.cli import main
from memtape.core.commands import AddTurn
from memtape.core.events import CompactionTriggered, TurnAdded
from memtape.policies.plumbing.promises import PINNED, WELL_FORMED
from memtape.policies.session import Policies, Session
from memtape.runs.files import load_run
from memtape.scenarios import load_scenario
from memtape.scenarios.writer import scenario_text
from memtape.testing.checked import CheckedSession
from tests.agent_session import TURNS
from tests.broken_policies import SplitsCalls

SETTINGS = [
    ("tiered", 60, ()),
    ("tiered", 150, ("compaction.hot_n=4",)),
    ("sliding-window", 60, ()),
    ("sliding-window", 150, ("compaction.start_on=user", "compaction.include_system=true")),
    ("rolling-summary", 60, ()),
    ("rolling-summary", 150, ("compaction.keep=4",)),
    ("clear-tool-results", 60, ("compaction.keep=1",)),
    ("clear-tool-results", 150, ()),
    ("none", 60, ()),
]
"""Every shipped compaction policy, at budgets a few turns fill."""


def policies_for(name: str, budget: int, settings: tuple[str, ...]) -> Policies:
    base = Policies.from_params({"compaction": {"policy": name, "budget": budget}})
    return base.with_settings(settings)


def test_the_transcript_is_what_it_says() -> None:
    calls = sum(len(turn.calls) for turn in TURNS)
    answers = sum(len(turn.answers) for turn in TURNS)
    parallel = sum(1 for turn in TURNS if len(turn.answers) > 1)
    assert calls >= 300
    assert (calls - 1, True) == (answers, parallel > 20)
    assert TURNS[0].pin
    assert TURNS[0].role == "system"


@pytest.mark.parametrize(("name", "budget", "settings"), SETTINGS, ids=str)
def test_memtape_check_finds_every_window_well_formed_and_the_prompt_pinned(
    tmp_path: Path, name: str, budget: int, settings: tuple[str, ...]
) -> None:
    policies = policies_for(name, budget, settings)
    assert {WELL_FORMED, PINNED} <= policies.compaction.promises  # type: ignore[union-attr]
    scenario = tmp_path / "session.toml"
    scenario.write_text(
        scenario_text("session", "an imported-like session", policies.params(), TURNS), "utf-8"
    )
    run = tmp_path / "run.jsonl"
    assert 0 == main(["run", str(scenario), "--out", str(run)])
    assert 0 == main(["check", str(run)])

    session = Session(load_scenario(str(scenario)).policies)
    session.execute_all(TURNS)
    window = session.state.window
    compactions = sum(isinstance(e, CompactionTriggered) for e in session.run.events)
    assert [] == check_run(session.run, session.policies, checkpoint=64)
    assert (1, "system") == (window.hot[0].turn, window.hot[0].role)
    assert name == "none" or compactions > 50


@pytest.mark.parametrize(("name", "budget", "settings"), SETTINGS, ids=str)
def test_the_kit_finds_nothing_broken_turn_after_turn(
    name: str, budget: int, settings: tuple[str, ...]
) -> None:
    checked = CheckedSession(policies_for(name, budget, settings))
    found = [violation for turn in TURNS for violation in checked.execute(turn)]
    assert ([], [], len(TURNS)) == (found, checked.finish(), checked.session.state.window.turns)


def test_the_same_transcript_catches_a_window_that_splits_calls() -> None:
    """The transcript has teeth: a sliding window blind to units breaks WELL_FORMED on it,
    for the kit and for ``check`` alike."""
    policies = Policies(compaction=SplitsCalls(60))
    checked = CheckedSession(policies)
    found = {violation.invariant for turn in TURNS for violation in checked.execute(turn)}
    assert "well-formed" in found
    assert "well-formed" in {v.invariant for v in check_run(checked.session.run, policies)}


def as_chat_messages(turns: list[AddTurn]) -> list[dict[str, object]]:
    """``turns`` as an agent's Chat Completions transcript: each call a ``tool_calls`` entry,
    each result a ``tool`` message answering its ``tool_call_id`` (several results in one
    turn become one message each, as the API has them)."""
    messages: list[dict[str, object]] = []
    for turn in turns:
        if turn.answers:
            for call in turn.answers:
                messages.append({"role": "tool", "tool_call_id": call, "content": turn.text})
            continue
        message: dict[str, object] = {"role": turn.role, "content": turn.text}
        if turn.calls:
            message["tool_calls"] = [
                {"id": c, "type": "function", "function": {"name": "grep", "arguments": "{}"}}
                for c in turn.calls
            ]
        messages.append(message)
    return messages


@pytest.mark.parametrize(("name", "budget", "settings"), SETTINGS, ids=str)
def test_an_imported_chat_transcript_checks_clean_under_every_policy(
    tmp_path: Path, name: str, budget: int, settings: tuple[str, ...]
) -> None:
    """The transcript written as the agent's Chat Completions log, through ``memtape import
    --pin system``, then run and checked under each policy from the command line."""
    log = tmp_path / "agent.jsonl"
    log.write_text("".join(json.dumps(m) + "\n" for m in as_chat_messages(TURNS)), "utf-8")
    scenario, run = tmp_path / "agent.toml", tmp_path / "run.jsonl"
    imported = ["import", str(log), "--pin", "system", "--budget", str(budget)]
    assert 0 == main([*imported, "--out", str(scenario)])
    sets = [f"compaction.policy={name}", *settings]
    assert 0 == main(["run", str(scenario), "--out", str(run), *(f"--set={s}" for s in sets)])
    assert 0 == main(["check", str(run)])

    events = load_run(run).session.run.events
    calls = sum(len(e.calls) for e in events if isinstance(e, TurnAdded))
    pinned = [e.turn for e in events if isinstance(e, TurnAdded) and e.pinned]
    compactions = sum(isinstance(e, CompactionTriggered) for e in events)
    assert (sum(len(t.calls) for t in TURNS), [1]) == (calls, pinned)
    assert name == "none" or compactions > 50
