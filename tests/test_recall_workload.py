"""memtape.lab.recall_workload and ``memtape generate recall``: probes recalled once they left."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

from pathlib import Path

import pytest

from memtape.cli import main
from memtape.core.commands import AddTurn, Recall
from memtape.core.events import Recalled
from memtape.lab.generate import support_session
from memtape.lab.recall_workload import recall_workload
from memtape.policies.session import Session
from memtape.projections.metrics import compaction_metrics
from memtape.scenarios import parse_scenario


def _workload(turns: int = 200, seed: int = 3) -> str:
    return recall_workload(turns, seed, budget=200, hot_n=4, probe_every=40, recall_after=20)


class TestRecallWorkload:
    def test_the_same_seed_gives_the_same_bytes(self) -> None:
        assert _workload() == _workload()

    def test_its_turns_are_the_support_sessions(self) -> None:
        ours = parse_scenario(_workload(), "r.toml").steps
        support = parse_scenario(support_session(200, 3, budget=200, hot_n=4), "s.toml").steps
        assert list(support) == [step for step in ours if isinstance(step, AddTurn)]

    def test_a_recall_follows_each_probe_by_recall_after_turns(self) -> None:
        steps = parse_scenario(_workload(), "r.toml").steps
        turns = 0
        recalled_at = []
        for step in steps:
            turns += isinstance(step, AddTurn)
            if isinstance(step, Recall):
                recalled_at.append(turns)
        assert [60, 100, 140, 180] == recalled_at

    def test_a_recall_asks_without_the_probe_itself(self) -> None:
        scenario = parse_scenario(_workload(), "r.toml")
        queries = [step.text for step in scenario.steps if isinstance(step, Recall)]
        probes = [probe.text or "" for probe in scenario.probes]
        assert not any(probe in query for probe in probes for query in queries)

    def test_recall_brings_each_probes_turn_back(self) -> None:
        scenario = parse_scenario(_workload(), "r.toml")
        session = Session(scenario.policies)
        session.execute_all(scenario.steps)
        brought = [
            {item.turn for item in event.brought}
            for event in session.run.events
            if isinstance(event, Recalled)
        ]
        starts = [probe.start for probe in scenario.probes][: len(brought)]
        assert [True] * 4 == [start in turns for start, turns in zip(starts, brought, strict=True)]

    def test_probes_kept_counts_what_recall_brought_back(self) -> None:
        ours = parse_scenario(_workload(), "r.toml")
        support = parse_scenario(support_session(200, 3, budget=200, hot_n=4), "s.toml")
        kept = []
        for scenario in (support, ours):
            session = Session(scenario.policies)
            session.execute_all(scenario.steps)
            metrics = compaction_metrics(session.run, scenario.probes, scenario.policies.compaction)
            kept.append(metrics.probe_retention)
        assert (True, True) == (None not in kept, (kept[0] or 0) < (kept[1] or 0))


class TestGenerateRecall:
    def test_it_writes_the_workload(self, tmp_path: Path) -> None:
        out = tmp_path / "r.toml"
        argv = ["generate", "recall", "--turns", "200", "--seed", "3", "--out", str(out)]
        assert 0 == main([*argv, "--budget", "200", "--hot-n", "4"])
        assert _workload() == out.read_text("utf-8")

    def test_an_impossible_recall_after_is_one_clear_line(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        out = tmp_path / "r.toml"
        argv = ["generate", "recall", "--turns", "20", "--seed", "3", "--out", str(out)]
        assert 0 != main([*argv, "--recall-after", "0"])
        assert (False, 1) == (out.exists(), len(capsys.readouterr().err.splitlines()))
