"""memtape.lab.blocks_workload and ``memtape generate blocks``: a support session whose agent
notes each planted fact in a memory block."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

from pathlib import Path

import pytest

from memtape.cli import main
from memtape.core.commands import AddTurn, CreateBlock, EditBlock
from memtape.core.errors import BadInput
from memtape.lab.blocks_workload import blocks_workload
from memtape.lab.generate import support_session
from memtape.policies.session import Session
from memtape.projections.metrics import compaction_metrics
from memtape.scenarios import parse_scenario


def _args(limit: int = 200) -> dict[str, int]:
    return {"budget": 400, "hot_n": 8, "limit": limit}


def _workload(turns: int = 200, seed: int = 3, limit: int = 200) -> str:
    return blocks_workload(turns, seed, **_args(limit))


class TestBlocksWorkload:
    def test_the_same_seed_gives_the_same_bytes(self) -> None:
        assert _workload() == _workload()

    def test_its_turns_and_probes_are_the_support_sessions(self) -> None:
        blocked = parse_scenario(_workload(), "b.toml")
        plain = parse_scenario(support_session(200, 3, budget=400, hot_n=8), "s.toml")
        turns = [step for step in blocked.steps if isinstance(step, AddTurn)]
        assert (list(plain.steps), plain.probes) == (turns, blocked.probes)

    def test_the_block_comes_first_and_each_probe_is_noted_after_its_turn(self) -> None:
        scenario = parse_scenario(_workload(), "b.toml")
        notes = [step.text for step in scenario.steps if isinstance(step, EditBlock)]
        expected = [f"turn {probe.start}: {probe.text}" for probe in scenario.probes]
        assert (CreateBlock("human", 200, ""), expected) == (scenario.steps[0], notes)

    def test_a_full_block_is_rewritten_so_no_edit_is_refused(self) -> None:
        scenario = parse_scenario(_workload(400, 3, limit=40), "b.toml")
        ops = [step.op for step in scenario.steps if isinstance(step, EditBlock)]
        session = Session(scenario.policies)
        session.execute_all(scenario.steps)
        assert ("replace", len(scenario.steps)) == (ops[-1], session.run.steps)

    def test_the_block_keeps_the_probes_a_tight_budget_loses(self) -> None:
        scenario = parse_scenario(_workload(), "b.toml")
        session = Session(scenario.policies)
        session.execute_all(scenario.steps)
        metrics = compaction_metrics(session.run, scenario.probes)
        assert ((), metrics.probe_checks) == (metrics.losses, metrics.probe_passes)

    def test_a_limit_below_1_is_one_line(self) -> None:
        with pytest.raises(BadInput, match=r"^--limit must be an integer in 1"):
            _workload(limit=0)


class TestGenerateBlocks:
    def test_the_command_writes_the_workload(self, tmp_path: Path) -> None:
        out = tmp_path / "b.toml"
        argv = ["generate", "blocks", "--turns", "200", "--seed", "3", "--budget", "400"]
        assert 0 == main([*argv, "--out", str(out)])
        assert _workload() == out.read_text("utf-8")
