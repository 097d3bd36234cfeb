"""memtape.lab.generate and ``memtape generate``: seeded scenario files."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import argparse
from collections.abc import Callable
from pathlib import Path

import pytest

from memtape.cli import main
from memtape.commandline import generate
from memtape.core.commands import AddTurn, AdvanceClock, Query, WriteFact
from memtape.core.errors import BadInput
from memtape.lab.blocks_workload import blocks_workload
from memtape.lab.expiry_workload import expiry_workload
from memtape.lab.generate import store_workload, support_session
from memtape.lab.judged_workload import judged_workload
from memtape.lab.recall_workload import recall_workload
from memtape.lab.temporal_workload import temporal_workload
from memtape.policies.session import Session
from memtape.projections.metrics import compaction_metrics, forgetting_metrics
from memtape.scenarios import parse_scenario


class TestSupport:
    def test_the_same_seed_gives_the_same_bytes(self) -> None:
        assert support_session(300, 7) == support_session(300, 7)

    def test_another_seed_gives_another_session(self) -> None:
        assert support_session(300, 7) != support_session(300, 8)

    def test_it_has_one_turn_per_step_and_a_probe_every_40_turns(self) -> None:
        scenario = parse_scenario(support_session(400, 1), "gen.toml")
        assert 400 == len(scenario.steps)
        assert all(isinstance(step, AddTurn) for step in scenario.steps)
        assert list(range(40, 401, 40)) == [probe.start for probe in scenario.probes]

    def test_each_probe_is_said_at_its_turn_and_nowhere_else(self) -> None:
        scenario = parse_scenario(support_session(400, 3), "gen.toml")
        texts = [step.text for step in scenario.steps if isinstance(step, AddTurn)]
        for probe in scenario.probes:
            assert probe.text is not None
            assert [probe.start] == [n for n, text in enumerate(texts, 1) if probe.text in text]

    def test_every_probe_is_visible_at_its_own_turn(self) -> None:
        scenario = parse_scenario(support_session(200, 5, budget=150, hot_n=2), "gen.toml")
        session = Session(scenario.policies)
        session.execute_all(scenario.steps)
        metrics = compaction_metrics(session.run, scenario.probes)
        assert [] == [loss for loss in metrics.losses if loss.at is None]
        assert metrics.compactions > 0

    @pytest.mark.parametrize(
        ("kwargs", "message"),
        [
            ({"turns": 0}, "--turns must be an integer in 1.."),
            ({"turns": 10, "budget": 0}, "--budget must be"),
            ({"turns": 10, "hot_n": -1}, "--hot-n must be"),
            ({"turns": 10, "probe_every": 0}, "--probe-every must be"),
        ],
    )
    def test_impossible_parameters_are_refused(self, kwargs: dict[str, int], message: str) -> None:
        turns = kwargs.pop("turns")
        with pytest.raises(BadInput, match=message):
            support_session(turns, 1, **kwargs)


class TestCli:
    def test_generate_support_writes_the_same_file_twice(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        first, second = tmp_path / "a.toml", tmp_path / "b.toml"
        for out in (first, second):
            assert 0 == main(
                ["generate", "support", "--turns", "120", "--seed", "7", "--out", str(out)]
            )
        assert f"wrote {first}\nwrote {second}\n" == capsys.readouterr().out
        assert first.read_bytes() == second.read_bytes()
        assert first.read_text("utf-8") == support_session(120, 7)

    def test_a_bad_parameter_is_one_line_and_writes_nothing(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        out = tmp_path / "a.toml"
        status = main(["generate", "support", "--turns", "0", "--seed", "7", "--out", str(out)])
        err = capsys.readouterr().err
        assert (2, 1) == (status, len(err.splitlines()))
        assert "--turns must be" in err
        assert not out.exists()

    def test_a_missing_directory_is_named(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        out = tmp_path / "no" / "a.toml"
        status = main(["generate", "support", "--turns", "5", "--seed", "7", "--out", str(out)])
        assert 2 == status
        assert f"{out}: cannot write it: no such directory" in capsys.readouterr().err

    def test_the_out_path_is_checked_before_generating(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        generated: list[int] = []
        monkeypatch.setattr(
            generate, "support_session", lambda *args, **kwargs: generated.append(1)
        )
        out = tmp_path / "no" / "a.toml"
        status = main(["generate", "support", "--turns", "5", "--seed", "7", "--out", str(out)])
        assert (2, []) == (status, generated)
        assert f"{out}: cannot write it: no such directory" in capsys.readouterr().err


class TestStore:
    def test_the_same_seed_gives_the_same_bytes(self) -> None:
        assert store_workload(300, 7) == store_workload(300, 7)

    def test_another_seed_gives_another_workload(self) -> None:
        assert store_workload(300, 7) != store_workload(300, 8)

    def test_it_writes_rewrites_advances_and_queries(self) -> None:
        steps = parse_scenario(store_workload(500, 2), "gen.toml").steps
        writes = [step.key for step in steps if isinstance(step, WriteFact)]
        kinds = {type(step) for step in steps}
        assert {WriteFact, AdvanceClock, Query} == kinds
        assert len(set(writes)) < len(writes)  # some keys are written again

    def test_every_query_expects_a_key_written_before_it(self) -> None:
        steps = parse_scenario(store_workload(500, 4), "gen.toml").steps
        written: set[str] = set()
        for step in steps:
            if isinstance(step, WriteFact):
                written.add(step.key)
            elif isinstance(step, Query):
                assert step.key in written
                assert 3 == step.k

    def test_it_runs_under_a_small_store_and_scores_its_queries(self) -> None:
        scenario = parse_scenario(store_workload(400, 9), "gen.toml")
        session = Session(scenario.policies)
        session.execute_all(scenario.steps)
        metrics = forgetting_metrics(session.run)
        assert metrics.queries > 0
        assert metrics.evictions > 0
        assert 0 == metrics.stale_reads

    def test_the_capacity_is_the_seeds_unless_given(self) -> None:
        def capacity(text: str) -> object:
            return parse_scenario(text, "g.toml").policies.params()["forgetting"]["capacity"]

        assert (4, 30) == (
            capacity(store_workload(20, 1)),
            capacity(store_workload(20, 1, capacity=30)),
        )

    def test_the_header_has_no_compaction_policy(self) -> None:
        """A store workload has no turns: a [compaction] table would mean nothing."""
        scenario = parse_scenario(store_workload(20, 1), "g.toml")
        assert (None, ["forgetting"]) == (
            scenario.policies.compaction,
            list(scenario.policies.params()),
        )

    @pytest.mark.parametrize("option", ["--budget", "--hot-n"])
    def test_generate_store_takes_no_compaction_option(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str
    ) -> None:
        out = tmp_path / "store.toml"
        argv = ["generate", "store", "--steps", "5", "--seed", "3", "--out", str(out), option, "9"]
        with pytest.raises(SystemExit) as exited:
            main(argv)
        assert (2, False) == (exited.value.code, out.exists())
        assert f"unrecognized arguments: {option} 9" in capsys.readouterr().err

    def test_generate_store_writes_the_file(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        out = tmp_path / "store.toml"
        argv = ["generate", "store", "--steps", "50", "--seed", "3", "--out", str(out)]
        assert 0 == main(argv)
        assert store_workload(50, 3) == out.read_text("utf-8")
        assert f"wrote {out}\n" == capsys.readouterr().out


_OPTIONS = {
    "budget": 300,
    "hot_n": 3,
    "probe_every": 10,
    "recall_after": 5,
    "limit": 120,
    "customers": 4,
    "capacity": 3,
}
_SESSION = {"budget": 300, "hot_n": 3, "probe_every": 10}
_WORKLOAD = {"customers": 4, "capacity": 3}


class TestKinds:
    def test_every_kind_has_a_row_and_a_handler_of_its_name(self) -> None:
        names = ["blocks", "expiry", "judged", "recall", "store", "support", "temporal"]

        assert (names, names) == (
            sorted(generate.KINDS),
            sorted(getattr(generate, name).__name__ for name in generate.KINDS),
        )

    @pytest.mark.parametrize(
        ("name", "expected"),
        [
            ("support", lambda: support_session(30, 5, **_SESSION)),
            ("store", lambda: store_workload(30, 5, **_WORKLOAD)),
            ("expiry", lambda: expiry_workload(30, 5, **_WORKLOAD)),
            ("temporal", lambda: temporal_workload(30, 5, **_WORKLOAD)),
            ("judged", lambda: judged_workload(30, 5, **_WORKLOAD)),
            ("recall", lambda: recall_workload(30, 5, **_SESSION, recall_after=5)),
            ("blocks", lambda: blocks_workload(30, 5, **_SESSION, limit=120)),
        ],
    )
    def test_a_kinds_handler_writes_its_generators_file_with_every_option(
        self, tmp_path: Path, name: str, expected: Callable[[], str]
    ) -> None:
        out = tmp_path / f"{name}.toml"
        args = argparse.Namespace(out=str(out), seed=5, turns=30, steps=30, **_OPTIONS)

        assert 0 == getattr(generate, name)(args)
        assert expected() == out.read_text("utf-8")
