"""Summarizers by import path (``summarizer = "pkg.mod:func"``): recorded, and read without them."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memtape.cli import main
from memtape.core.events import CompactionTriggered, TurnAdded
from memtape.policies.session import Policies
from memtape.policies.text.summarizers import (
    SUMMARIZERS,
    PluginSummarizer,
    StoodInSummarizer,
    SummarizerNotHere,
    inputs_hash,
)
from memtape.policies.window.rolling_summary import RollingSummary
from memtape.runs.files import load_run
from tests.chained import lines_of
from tests.llm_runs import scenario

ROOT = Path(__file__).resolve().parent.parent

PLUGIN = '''
def figures(previous, turns, limit):
    """The previous summary and every word with a digit in it."""
    words = [w for t in turns for w in t.text.split() if any(c.isdigit() for c in w)]
    return " ".join([previous, *words]).strip()
'''

PATH = "desk_summaries:figures"


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A plug-in module in ``tmp_path``, the working directory (so it imports), and a
    scenario that names it; yields the scenario."""
    (tmp_path / "desk_summaries.py").write_text(PLUGIN, "utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield scenario(
        tmp_path / "desk.toml", "http://127.0.0.1:9/v1", compaction=f'summarizer = "{PATH}"'
    )
    sys.modules.pop("desk_summaries", None)


def _elsewhere(tmp_path: Path, *commands: list[str]) -> dict[str, Any]:
    """Run ``memtape`` commands in a fresh interpreter in another directory, where the
    plug-in does not import: their exit statuses and what they printed."""
    other = tmp_path / "elsewhere"
    other.mkdir(exist_ok=True)
    script = textwrap.dedent(
        f"""
        import json, sys
        from memtape.cli import main
        codes = [main(args) for args in {list(commands)!r}]
        print(json.dumps(codes))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=other,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        check=False,
    )
    return {
        "codes": json.loads(done.stdout.splitlines()[-1]),
        "out": done.stdout,
        "err": done.stderr,
    }


class TestPlugin:
    def test_a_scenario_names_a_summarizer_by_import_path(self, plugin: Path) -> None:
        policies = Policies.from_params(
            {
                "compaction": {"policy": "rolling-summary", "budget": 30, "summarizer": PATH},
            }
        )

        assert isinstance(policies.compaction, RollingSummary)
        assert isinstance(policies.compaction.summarizer, PluginSummarizer)
        assert PATH == policies.params()["compaction"]["summarizer"]

    def test_each_answer_is_recorded_with_the_hash_of_its_inputs(
        self, plugin: Path, tmp_path: Path
    ) -> None:
        run = tmp_path / "desk.jsonl"
        assert 0 == main(["run", str(plugin), "--out", str(run)])

        loaded = load_run(run)
        events = loaded.session.run.events
        compactions = [e for e in events if isinstance(e, CompactionTriggered)]
        assert 3 == len(compactions)
        assert all(len(c.asked) == 1 for c in compactions)
        first = compactions[0]
        (call,) = first.asked
        assert (PATH, 0, 0, 0.0, False) == (
            call.model,
            call.prompt_tokens,
            call.completion_tokens,
            call.seconds,
            call.cached,
        )
        numbers = {item.turn for item in first.warm}
        before = events[: events.index(first)]
        folded = [e for e in before if isinstance(e, TurnAdded) and e.turn in numbers]
        assert inputs_hash("", folded, 8) == call.prompt
        assert "A-1001 $180.00" == call.output

    def test_two_runs_are_the_same_bytes(self, plugin: Path, tmp_path: Path) -> None:
        for name in ("one", "two"):
            assert 0 == main(["run", str(plugin), "--out", str(tmp_path / f"{name}.jsonl")])

        assert (tmp_path / "one.jsonl").read_bytes() == (tmp_path / "two.jsonl").read_bytes()

    def test_an_import_path_that_does_not_import_is_one_line(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        path = scenario(
            tmp_path / "desk.toml",
            "http://127.0.0.1:9/v1",
            compaction='summarizer = "no_such_module:f"',
        )

        assert 2 == main(["run", str(path), "--out", str(tmp_path / "r.jsonl")])
        err = capsys.readouterr().err
        assert err.startswith(
            f"memtape: error: {path}: [compaction]: summarizer 'no_such_module:f': cannot import"
        )
        assert 1 == len(err.splitlines())

    def test_a_plugin_that_returns_no_string_is_one_line(
        self, plugin: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        (tmp_path / "desk_summaries.py").write_text(
            "def figures(previous, turns, limit):\n    return 3\n", "utf-8"
        )

        assert 2 == main(["run", str(plugin), "--out", str(tmp_path / "r.jsonl")])
        assert "the summarizer 'desk_summaries:figures' returned 3, not a string" in (
            capsys.readouterr().err
        )


class TestReadWithoutIt:
    def test_a_run_file_stands_in_for_the_plugin(self, plugin: Path, tmp_path: Path) -> None:
        run = tmp_path / "desk.jsonl"
        assert 0 == main(["run", str(plugin), "--out", str(run)])

        policies = load_run(run).session.policies
        assert isinstance(policies.compaction, RollingSummary)
        assert StoodInSummarizer(PATH) == policies.compaction.summarizer

    def test_show_timeline_and_check_need_no_plugin(self, plugin: Path, tmp_path: Path) -> None:
        run = tmp_path / "desk.jsonl"
        assert 0 == main(["run", str(plugin), "--out", str(run)])
        ends = len(lines_of(run)) - 1

        done = _elsewhere(
            tmp_path,
            ["show", str(run)],
            ["timeline", str(run)],
            ["check", str(run)],
            ["fork", str(run), "--at", str(ends), "--out", "fork.jsonl"],
        )

        assert ([0, 0, 0, 0], "") == (done["codes"], done["err"])
        assert "re-decides to itself" in done["out"]

    def test_a_fork_that_must_summarize_anew_says_to_trust_the_run(
        self, plugin: Path, tmp_path: Path
    ) -> None:
        run = tmp_path / "desk.jsonl"
        assert 0 == main(["run", str(plugin), "--out", str(run)])

        done = _elsewhere(
            tmp_path,
            ["fork", str(run), "--at", "4", "--set", "compaction.budget=20", "--out", "f.jsonl"],
        )

        assert [2] == done["codes"]
        assert 1 == len(done["err"].splitlines())
        assert f"a new summary needs summarizer '{PATH}'" in done["err"]
        assert "--trust" in done["err"]

    def test_a_summarizer_registered_elsewhere_still_opens(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A run recorded with a summarizer registered by name in another program."""
        SUMMARIZERS["mine"] = lambda previous, turns, limit: "mine"
        try:
            path = scenario(
                tmp_path / "desk.toml", "http://127.0.0.1:9/v1", compaction='summarizer = "mine"'
            )
            run = tmp_path / "desk.jsonl"
            assert 0 == main(["run", str(path), "--out", str(run)])
        finally:
            del SUMMARIZERS["mine"]
        capsys.readouterr()

        assert 0 == main(["show", str(run)])
        assert "mine" in capsys.readouterr().out
        assert 0 == main(["timeline", str(run)])

    def test_a_stand_in_asked_for_a_new_summary_refuses(self) -> None:
        with pytest.raises(SummarizerNotHere, match="not registered here"):
            StoodInSummarizer("mine")("", (), 5)
