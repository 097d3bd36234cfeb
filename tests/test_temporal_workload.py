"""memtape.lab.temporal_workload and ``memtape generate temporal``: changes learned late."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

from pathlib import Path

import pytest

from memtape.checking.invariants import check_run
from memtape.cli import main
from memtape.core.commands import Query, WriteFact
from memtape.core.events import ValidityClosed
from memtape.lab.temporal_workload import temporal_workload
from memtape.policies.session import Session
from memtape.projections.metrics import forgetting_metrics
from memtape.scenarios import parse_scenario


def _run(text: str) -> Session:
    scenario = parse_scenario(text, "gen.toml")
    session = Session(scenario.policies)
    session.execute_all(scenario.steps)
    return session


class TestTemporalWorkload:
    def test_the_same_seed_gives_the_same_bytes(self) -> None:
        assert temporal_workload(300, 5) == temporal_workload(300, 5)

    def test_another_seed_gives_another_workload(self) -> None:
        assert temporal_workload(300, 5) != temporal_workload(300, 6)

    def test_writes_say_when_the_change_happened_never_after_it_was_learned(self) -> None:
        clock = 0.0
        dated = corrections = 0
        for step in parse_scenario(temporal_workload(400, 2), "g.toml").steps:
            if isinstance(step, WriteFact):
                if step.valid_from is None:
                    corrections += 1
                else:
                    dated += 1
                    assert step.valid_from <= clock
            elif hasattr(step, "to"):
                clock = step.to
        assert dated > corrections > 0

    def test_every_query_asks_about_the_past(self) -> None:
        queries = [
            step
            for step in parse_scenario(temporal_workload(400, 3), "g.toml").steps
            if isinstance(step, Query)
        ]
        assert queries
        assert all(query.as_of is not None for query in queries)

    def test_it_runs_closes_validity_and_keeps_every_invariant(self) -> None:
        session = _run(temporal_workload(400, 4))
        closed = [e for e in session.run.events if isinstance(e, ValidityClosed)]
        assert closed
        assert [] == check_run(session.run, session.policies)

    def test_a_fact_valid_in_the_past_is_no_stale_read(self) -> None:
        assert 0 == forgetting_metrics(_run(temporal_workload(400, 4)).run).stale_reads

    def test_generate_temporal_writes_the_file(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        out = tmp_path / "temporal.toml"
        argv = ["generate", "temporal", "--steps", "50", "--seed", "3", "--out", str(out)]
        assert 0 == main(argv)
        assert temporal_workload(50, 3) == out.read_text("utf-8")
        assert f"wrote {out}\n" == capsys.readouterr().out
