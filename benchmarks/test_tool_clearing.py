"""``clear-tool-results`` stays flat: a decide step, a run file and a check that cost what moved.

Issue 14's targets, with the collector running as in any program:

- 20,000 chat turns with no tool turn (so nothing is ever cleared): a
  command under ``clear-tool-results`` costs at most twice one under
  ``none``, though the window is over budget from early on and HOT holds
  every turn;
- 20,000 generated support turns (``memtape generate support``): the run
  file under ``clear-tool-results`` is at most twice the size of ``none``'s;
- ``memtape check`` of that run (integrity, invariants, three re-decisions)
  in under 10 seconds.
"""

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.conftest import Bench
from benchmarks.sessions import support_session
from memtape.checking.check import check_file
from memtape.core.commands import AddTurn
from memtape.lab.generate import support_session as generated_support
from memtape.policies.session import Policies, Session
from memtape.policies.window.no_compaction import NoCompaction
from memtape.policies.window.tool_clearing import ClearToolResults
from memtape.runs.files import save_run
from memtape.scenarios.loader import parse_scenario

CHAT_TURNS = 20_000
"""Turns of the chat without tool turns (50 times fewer in a smoke run)."""

SUPPORT_TURNS = 20_000
"""Turns of the generated support session (50 times fewer in a smoke run)."""

BUDGET = 2000
"""The budget of both policies: a chat of 20k turns is over it from turn ~200 on."""

ROUNDS = 3
"""Rounds of each timed measurement."""

POLICIES = {"none": "none", "clear": "clear-tool-results"}
"""The compaction policies compared, by the name the targets use."""


def chat_session(turns: int) -> tuple[AddTurn, ...]:
    """``turns`` turns of users and assistants talking, no tool turn among them."""
    chat = tuple(c for c in support_session(turns * 2) if c.role != "tool")
    return chat[:turns]


def run_chat(policy: NoCompaction | ClearToolResults, commands: tuple[AddTurn, ...]) -> Session:
    """memtape's real API: every command decided, appended and folded."""
    session = Session(Policies(compaction=policy))
    for command in commands:
        session.execute(command)
    return session


@pytest.mark.parametrize("name", list(POLICIES))
def test_a_command_costs_about_what_it_does_under_none(bench: Bench, name: str) -> None:
    turns = bench.size(CHAT_TURNS)
    commands = chat_session(turns)
    policy = NoCompaction(BUDGET) if name == "none" else ClearToolResults(BUDGET)
    bench.benchmark.group = "clear-tool-results: 20k chat turns"
    session = bench.measure(f"chat-{name}-20k", run_chat, policy, commands, rounds=ROUNDS)
    assert (turns, turns) == (len(session.state.window.hot), len(session.run))
    if bench.median is not None:
        bench.note(
            f"{POLICIES[name]}, {turns:,} chat turns: {bench.median / turns * 1e6:.2f} µs/cmd"
        )


@pytest.fixture(scope="module")
def support_runs() -> Iterator[tuple[int, dict[str, Path]]]:
    """The generated support session's full length, and where each policy's run is saved
    (each test sizes it with ``bench.size``, the fixture being function-scoped)."""
    with tempfile.TemporaryDirectory() as folder:
        yield SUPPORT_TURNS, {name: Path(folder) / f"{name}.jsonl" for name in POLICIES}


def record(turns: int, policy: str, path: Path) -> Path:
    """Run ``turns`` generated support turns under ``policy`` and save the run to ``path``."""
    scenario = parse_scenario(generated_support(turns, 1), "support.toml")
    policies = scenario.policies.with_settings([f"compaction.policy={policy}"])
    session = Session(policies)
    for command in scenario.steps:
        session.execute(command)
    save_run(session, path, scenario.name)
    return path


@pytest.mark.parametrize("name", list(POLICIES))
def test_the_run_file_is_about_the_size_of_none(
    bench: Bench, support_runs: tuple[int, dict[str, Path]], name: str
) -> None:
    full, paths = support_runs
    turns = bench.size(full)
    bench.benchmark.group = "clear-tool-results: 20k support turns"
    path = bench.measure(f"record-{name}-20k", record, turns, POLICIES[name], paths[name], rounds=1)
    size = path.stat().st_size
    bench.record(f"bytes-{name}-20k", size)
    bench.note(f"{POLICIES[name]}, {turns:,} support turns: run file {size / 1e6:.2f} MB")
    assert size > 0


def test_check_of_the_cleared_run(bench: Bench, support_runs: tuple[int, dict[str, Path]]) -> None:
    full, paths = support_runs
    path = paths["clear"]
    if not path.exists():
        record(bench.size(full), POLICIES["clear"], path)
    bench.benchmark.group = "clear-tool-results: 20k support turns"
    report = bench.measure("check-clear-20k", check_file, path, rounds=1)
    assert () == report.problems
