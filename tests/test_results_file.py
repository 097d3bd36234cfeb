"""memtape.lab.results_file and ``memtape bench --results/--resume``: a sweep's results
written as each cell finishes, kept by a killed sweep, and not run again on resume."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from memtape.cli import main
from memtape.lab.bench import plan, run_cells
from memtape.lab.results_file import ResultsFile, cell_key, read_results, sweep_id
from memtape.llm.cache_location import CACHE_ENV
from memtape.llm.config import BASE_URL_ENV
from tests.llm_runs import scenario
from tests.llm_server import ChatServer

ROOT = Path(__file__).resolve().parent.parent

SWEEP = ["refund-desk", "dana-facts", "--policy", "tiered", "--policy", "sliding-window"]
GRID = ["--grid", "compaction.budget=40,60"]

TIMED = {"decide_us_per_command", "llm_seconds"}
"""The metrics that are wall-clock times, which no two runs share."""


def _bench(tmp_path: Path, name: str, *more: str) -> tuple[int, Path]:
    out = tmp_path / f"{name}.json"
    status = main(["bench", *SWEEP, *GRID, "-q", "--json", str(out), *more])
    return status, out


def _untimed(path: Path) -> list[dict[str, Any]]:
    results = json.loads(path.read_text("utf-8"))["results"]
    for result in results:
        for name in TIMED:
            result["metrics"].pop(name)
    return list(results)


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def _error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert 1 == len(err.splitlines()), err
    return err


class TestWriting:
    def test_a_line_per_cell_after_a_first_line_naming_the_sweep(self, tmp_path: Path) -> None:
        results = tmp_path / "sweep.jsonl"
        status, out = _bench(tmp_path, "one", "--results", str(results))

        assert 0 == status
        header, *entries = _lines(results)
        cells = plan(["refund-desk", "dana-facts"], ["tiered", "sliding-window"], (), GRID[1:])
        assert {"format": "memtape-bench-results", "version": 1, "sweep": sweep_id(cells)} == (
            header
        )
        assert sorted(map(cell_key, cells)) == sorted(
            (e["scenario"], e["policy"], tuple(e["settings"]), None) for e in entries
        )
        wrote = json.loads(out.read_text("utf-8"))["results"]
        # Lines come in the order cells finish: on a pool, in any order.
        by_cell = {(e["scenario"], e["policy"], e["result"]["label"]): e["result"] for e in entries}
        assert wrote == [
            {k: by_cell[r["scenario"], r["policy"], label][k] for k in r}
            for r, label in zip(wrote, [c.label for c in cells], strict=True)
        ]

    def test_a_pool_writes_every_cell_as_it_finishes(self, tmp_path: Path) -> None:
        results = tmp_path / "sweep.jsonl"
        assert 0 == _bench(tmp_path, "pool", "--results", str(results), "--jobs", "2")[0]
        _, serial = _bench(tmp_path, "serial", "--jobs", "1")

        entries = _lines(results)[1:]
        assert 8 == len(entries)
        assert _untimed(serial) == _untimed(tmp_path / "pool.json")

    def test_an_existing_file_is_refused_without_resume_and_left_as_it_was(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        results = tmp_path / "sweep.jsonl"
        results.write_text("mine\n", "utf-8")

        assert 2 == _bench(tmp_path, "one", "--results", str(results))[0]
        assert f"{results}: it exists: pass --resume" in _error(capsys)
        assert "mine\n" == results.read_text("utf-8")
        assert not (tmp_path / "one.json").exists()

    def test_resume_needs_a_results_file(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        assert 2 == _bench(tmp_path, "one", "--resume")[0]
        assert "--resume needs --results FILE.jsonl" in _error(capsys)

    def test_the_results_file_cannot_be_the_json_file(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        out = tmp_path / "one.json"
        assert 2 == _bench(tmp_path, "one", "--results", str(out))[0]
        assert "it is the --json file too" in _error(capsys)
        assert not out.exists()


class TestResuming:
    def test_a_whole_file_runs_nothing_and_gives_the_same_report(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        results = tmp_path / "sweep.jsonl"
        _, first = _bench(tmp_path, "first", "--results", str(results))
        table = capsys.readouterr().out.replace(str(first), "OUT")
        written = results.read_bytes()

        _, again = _bench(tmp_path, "again", "--results", str(results), "--resume")

        assert table == capsys.readouterr().out.replace(str(again), "OUT")
        assert first.read_bytes() == again.read_bytes()
        assert written == results.read_bytes()

    def test_a_missing_file_is_a_new_sweep(self, tmp_path: Path) -> None:
        results = tmp_path / "sweep.jsonl"
        assert 0 == _bench(tmp_path, "one", "--results", str(results), "--resume")[0]
        assert 9 == len(_lines(results))

    def test_only_the_missing_cells_run_and_the_report_is_the_whole_sweeps(
        self, tmp_path: Path
    ) -> None:
        results = tmp_path / "sweep.jsonl"
        # One process: the file's lines are in the cells' order.
        _, whole = _bench(tmp_path, "whole", "--results", str(results), "--jobs", "1")
        lines = results.read_bytes().splitlines(keepends=True)
        # A sweep that finished three cells, the last of them cut short as it was written.
        results.write_bytes(b"".join(lines[:4]) + lines[4][:40])

        _, resumed = _bench(tmp_path, "resumed", "--results", str(results), "--resume")

        kept = results.read_bytes().splitlines(keepends=True)
        assert lines[:4] == kept[:4]
        assert 9 == len(kept)
        assert all(line.endswith(b"\n") for line in kept)
        # The finished cells are read back, not run again: their times are the first run's.
        first = [json.loads(line)["result"] for line in lines[1:4]]
        report = json.loads(resumed.read_text("utf-8"))["results"]
        assert [r["metrics"] for r in first] == [r["metrics"] for r in report[:3]]
        assert _untimed(whole) == _untimed(resumed)

    @pytest.mark.parametrize(
        ("line", "reason"),
        [
            (b"{nope\n", "not JSON"),
            (b'{"scenario": "refund-desk"}\n', "not a cell's result"),
            (
                b'{"scenario": "refund-desk", "policy": "tiered", "settings": [], "result": {}}\n',
                "refund-desk, tiered is not a cell of this sweep",
            ),
            (
                b'{"scenario": "refund-desk", "policy": "tiered", '
                b'"settings": ["compaction.budget=40"], "result": {"scenario": 3}}\n',
                "not a cell's result",
            ),
        ],
    )
    def test_a_malformed_line_is_named_and_nothing_is_written(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], line: bytes, reason: str
    ) -> None:
        results = tmp_path / "sweep.jsonl"
        _bench(tmp_path, "whole", "--results", str(results))
        header = results.read_bytes().splitlines(keepends=True)[0]
        results.write_bytes(header + line)
        capsys.readouterr()

        assert 2 == _bench(tmp_path, "resumed", "--results", str(results), "--resume")[0]
        err = _error(capsys)
        assert f"{results}:2: " in err
        assert reason in err
        assert header + line == results.read_bytes()
        assert not (tmp_path / "resumed.json").exists()

    def test_a_cell_twice_is_named_with_its_first_line(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        results = tmp_path / "sweep.jsonl"
        _bench(tmp_path, "whole", "--results", str(results))
        lines = results.read_bytes().splitlines(keepends=True)
        results.write_bytes(b"".join([*lines[:3], lines[2]]))
        capsys.readouterr()

        assert 2 == _bench(tmp_path, "resumed", "--results", str(results), "--resume")[0]
        err = _error(capsys)
        # Lines come in the order cells finish: which cell line 3 holds depends on the pool.
        assert f"{results}:4: the result of refund-desk, " in err
        assert err.endswith(" again (first at line 3)\n")

    @pytest.mark.parametrize(
        "first",
        [b"", b"[1, 2]\n", b'{"format": "memtape-bench-results", "version": 9, "sweep": "x"}\n'],
    )
    def test_a_file_that_is_not_a_results_file_is_refused_at_line_one(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], first: bytes
    ) -> None:
        results = tmp_path / "sweep.jsonl"
        results.write_bytes(first)

        assert 2 == _bench(tmp_path, "one", "--results", str(results), "--resume")[0]
        assert f"{results}:1: " in _error(capsys)
        assert first == results.read_bytes()

    def test_the_file_of_another_sweep_is_refused(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        results = tmp_path / "sweep.jsonl"
        assert 0 == main(["bench", "refund-desk", "--policy", "tiered", "--results", str(results)])
        written = results.read_bytes()
        capsys.readouterr()

        assert 2 == _bench(tmp_path, "one", "--results", str(results), "--resume")[0]
        assert f"{results}:1: the results of another sweep" in _error(capsys)
        assert written == results.read_bytes()

    def test_an_edited_scenario_makes_another_sweep(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        path = tmp_path / "desk.toml"
        scenario(path, "http://127.0.0.1:9/v1", compaction='summarizer = "salient"')
        results = tmp_path / "sweep.jsonl"
        sweep = ["bench", str(path), "--policy", "tiered", "--results", str(results), "-q"]
        assert 0 == main(sweep)
        path.write_text(path.read_text("utf-8").replace("twice", "three times"), "utf-8")
        capsys.readouterr()

        assert 2 == main([*sweep, "--resume"])
        assert f"{results}:1: the results of another sweep" in _error(capsys)

    def test_the_same_cells_in_another_order_are_the_same_sweep(self) -> None:
        cells = plan(["refund-desk", "dana-facts"], ["tiered", "sliding-window"])
        assert sweep_id(cells) == sweep_id(reversed(cells))


class TestKilled:
    def test_a_killed_sweep_keeps_its_finished_cells_and_resume_runs_the_rest(
        self, tmp_path: Path, chat_server: ChatServer, llm_env: Path
    ) -> None:
        """The third cell asks a model that does not answer; the sweep is killed there."""
        path = scenario(tmp_path / "desk.toml", chat_server.url, llm="max_retries = 0")
        policies = ["tiered", "sliding-window", "rolling-summary:summarizer=llm"]
        sweep = [
            "bench",
            str(path),
            *(part for name in policies for part in ("--policy", name)),
            "--jobs",
            "1",
            "-q",
        ]
        results = tmp_path / "sweep.jsonl"
        chat_server.stall(3600)
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        command = [sys.executable, "-m", "memtape.cli", *sweep, "--results", str(results)]
        sweeping = subprocess.Popen(command, env=env, cwd=tmp_path, stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 120
            while chat_server.requests == 0 and sweeping.poll() is None:
                if time.monotonic() > deadline:
                    pytest.fail("the third cell never asked the model")
                time.sleep(0.05)
        finally:
            sweeping.send_signal(signal.SIGKILL)
            sweeping.wait()
            assert sweeping.stderr is not None
            sweeping.stderr.close()
        kept = results.read_bytes()
        assert ["tiered", "sliding-window"] == [e["policy"] for e in _lines(results)[1:]]

        asked = chat_server.requests
        resumed = tmp_path / "resumed.json"
        assert 0 == main([*sweep, "--results", str(results), "--resume", "--json", str(resumed)])
        model_calls = chat_server.requests - asked
        whole = tmp_path / "whole.json"
        assert 0 == main([*sweep, "--json", str(whole), "--no-cache"])

        assert results.read_bytes().startswith(kept)
        assert 4 == len(_lines(results))
        assert _untimed(whole) == _untimed(resumed)
        assert json.loads(resumed.read_text("utf-8"))["results"][2]["metrics"]["llm_calls"] == (
            model_calls
        )


class TestTheFile:
    def test_results_come_back_equal_to_those_written(self, tmp_path: Path) -> None:
        cells = plan(["refund-desk", "dana-facts"], ["tiered", "importance-recency-access"])
        results = run_cells(cells)
        store = ResultsFile(tmp_path / "r.jsonl", cells, resume=False)
        store.open()
        for cell, result in zip(cells, results, strict=True):
            store.add(cell, result)
        store.close()

        again = ResultsFile(tmp_path / "r.jsonl", cells, resume=True)
        assert results == [again.finished[cell_key(cell)] for cell in cells]


class TestReadingAnySweep:
    def test_every_result_of_a_file_whatever_its_sweep(self, tmp_path: Path) -> None:
        results = tmp_path / "sweep.jsonl"
        _bench(tmp_path, "one", "--results", str(results), "--jobs", "1")
        lines = _lines(results)[1:]

        found = read_results(results)

        assert [(e["scenario"], e["policy"], tuple(e["settings"]), None) for e in lines] == list(
            found
        )
        assert [e["result"]["metrics"] for e in lines] == [r.metrics for r in found.values()]

    def test_a_last_line_cut_short_is_no_result(self, tmp_path: Path) -> None:
        results = tmp_path / "sweep.jsonl"
        _bench(tmp_path, "one", "--results", str(results), "--jobs", "1")
        lines = results.read_bytes().splitlines(keepends=True)
        results.write_bytes(b"".join(lines[:3]) + lines[3][:40])

        assert 2 == len(read_results(results))


QUESTIONS = """\
[[probe]]
text = "ORD-3300"
from = 2
question = "Which order is it?"
answer = "ORD-3300"

[[probe]]
text = "10%"
from = 6
question = "What is the restocking fee?"
answer = "10%"
"""
"""Two questions of the refund desk, in a --probes file."""


def _answerer(model: str, prompt: str) -> str:
    """The first question's answer as written; "No." to anything else (the judge too)."""
    return "ORD-3300" if "Which order" in prompt and "Reply to grade" not in prompt else "No."


class TestReplicatesJudgeAndProbes:
    def test_each_replicate_is_a_line_and_a_resume_runs_none_again(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        results = tmp_path / "sweep.jsonl"
        argv = ["bench", "refund-desk", "--policy", "tiered", "--policy", "sliding-window"]
        argv += ["--replicates", "2", "--jobs", "1", "-q", "--results", str(results)]
        assert 0 == main([*argv, "--json", str(tmp_path / "first.json")])
        first = capsys.readouterr().out.replace("first.json", "again.json")
        entries = _lines(results)[1:]
        assert [("tiered", 0), ("tiered", 1), ("sliding-window", 0), ("sliding-window", 1)] == [
            (entry["policy"], entry["replicate"]) for entry in entries
        ]
        assert 0 == main([*argv, "--resume", "--json", str(tmp_path / "again.json")])
        assert (first, 5) == (capsys.readouterr().out, len(_lines(results)))
        assert _untimed(tmp_path / "first.json") == _untimed(tmp_path / "again.json")

    def test_a_judged_sweep_keeps_its_answers_and_resumes_with_the_server_stopped(
        self,
        tmp_path: Path,
        chat_server: ChatServer,
        llm_env: Path,
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        monkeypatch.setenv(BASE_URL_ENV, chat_server.url)
        chat_server.answerer = _answerer
        Path("q.toml").write_text(QUESTIONS, "utf-8")
        results = tmp_path / "sweep.jsonl"
        argv = ["bench", "refund-desk", "--policy", "tiered", "--probes", "q.toml"]
        argv += ["--judge", "judge-model", "--jobs", "1", "-q", "--results", str(results)]
        assert 0 == main([*argv, "--json", "first.json"])
        (entry,) = _lines(results)[1:]
        assert (1, ["ORD-3300", "No."]) == (
            entry["result"]["metrics"]["answers_correct"],
            [verdict["reply"] for verdict in entry["result"]["verdicts"]],
        )
        chat_server.stop()
        monkeypatch.setenv(CACHE_ENV, str(tmp_path / "empty.sqlite"))
        assert 0 == main([*argv, "--resume", "--json", "again.json"])
        assert _untimed(Path("first.json")) == _untimed(Path("again.json"))

    def test_another_judge_or_probes_file_is_another_sweep(self, tmp_path: Path) -> None:
        probes = tmp_path / "q.toml"
        probes.write_text(QUESTIONS, "utf-8")
        cells = plan(["refund-desk"], ["tiered"], judge="a", probes=str(probes))
        other = plan(["refund-desk"], ["tiered"], judge="b", probes=str(probes))
        before = sweep_id(cells)
        probes.write_text(QUESTIONS.replace("10%", "15%"), "utf-8")
        assert len({before, sweep_id(other), sweep_id(cells)}) == 3
