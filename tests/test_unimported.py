"""Run files are data: opening one imports nothing its header names, deciding one needs --trust.

The attack these tests replay: a run file shared with a ``helper.py`` beside
it, whose header names ``helper:Policy``. Each test puts that module on the
import path and in the working directory, so that any import of it would
succeed, and checks that it was never imported (no marker file, no module).
"""

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memtape.cli import main
from memtape.core.commands import AddTurn, WriteFact
from memtape.core.errors import BadInput, Rejected
from memtape.core.state import INITIAL_STATE
from memtape.policies.session import Policies
from memtape.policies.unimported import (
    NotImported,
    UnimportedCompaction,
    UnimportedConsolidation,
    UnimportedForgetting,
)
from memtape.runs.files import load_run
from memtape.storage import SqliteStore
from memtape.storage.base import stamped_header
from memtape.storage.jsonl import JsonlStore
from tests.chained import lines_of, rechained, write_lines

HELPER = """
from pathlib import Path

Path(__file__).with_name("pwned").write_text("helper.py ran")

from memtape.policies.window.tiered import TieredCompaction
from memtape.policies.store.forgetting import ImportanceRecencyAccess


class Policy(TieredCompaction):
    pass


class Forgets(ImportanceRecencyAccess):
    pass
"""
"""A module that leaves a marker when it is imported, and policies that work if it is."""


@pytest.fixture
def attacked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A directory holding ``helper.py`` (importable, and the working directory) and
    the runs of refund-desk and dana-facts whose headers name its policies."""
    (tmp_path / "helper.py").write_text(HELPER)
    for name, axis, path in [
        ("refund-desk", "compaction", "helper:Policy"),
        ("dana-facts", "forgetting", "helper:Forgets"),
    ]:
        run = tmp_path / f"{name}.jsonl"
        assert 0 == main(["run", name, "--out", str(run)])
        lines = lines_of(run)
        lines[0]["policies"][axis]["policy"] = path
        write_lines(run, rechained(lines))  # a shared file agrees with itself
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("helper", None)
    yield tmp_path
    sys.modules.pop("helper", None)


def untouched(directory: Path) -> bool:
    """Whether ``helper.py`` never ran: no marker beside it, no module imported."""
    return not (directory / "pwned").exists() and "helper" not in sys.modules


READING = [
    ["show", "refund-desk.jsonl"],
    ["show", "refund-desk.jsonl", "--json"],
    ["show", "dana-facts.jsonl"],
    ["show", "dana-facts.jsonl", "--at", "3", "--json"],
    ["timeline", "refund-desk.jsonl"],
    ["timeline", "dana-facts.jsonl", "--json"],
    ["diff", "refund-desk.jsonl", "0", "12"],
    ["diff", "refund-desk.jsonl", "refund-desk.jsonl", "--step", "5"],
    ["why", "refund-desk.jsonl", "turn:1"],
    ["view", "refund-desk.jsonl", "--out", "page.html"],
    ["export", "refund-desk.jsonl", "--redact", "--out", "copy.jsonl"],
    ["export", "dana-facts.jsonl", "--redact", "--out", "copy.jsonl"],
]


class TestReadingImportsNothing:
    @pytest.mark.parametrize("argv", READING, ids=" ".join)
    def test_a_reading_command_runs_no_code_the_run_names(
        self, attacked: Path, argv: list[str], capsys: pytest.CaptureFixture[str]
    ) -> None:
        """Each command that reads a run succeeds on the recorded events alone."""
        assert 0 == main(argv)
        assert untouched(attacked)

    def test_runs_lists_a_store_without_importing(
        self, attacked: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        header = json.loads((attacked / "refund-desk.jsonl").read_text().splitlines()[0])
        store = SqliteStore(attacked / "runs.db", create=True)
        recorded = load_run(attacked / "refund-desk.jsonl").session.run
        store.add_run(stamped_header(header), recorded)
        store.close()
        assert 0 == main(["runs", "runs.db"])
        assert "compaction helper:Policy" in capsys.readouterr().out
        assert 0 == main(["show", "runs.db#1"])
        assert untouched(attacked)

    def test_show_measures_the_window_against_the_recorded_budget(
        self, attacked: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """The stand-in knows the budget its table recorded: the same meter as the real one."""
        assert 0 == main(["show", "refund-desk", "--json"])
        real = json.loads(capsys.readouterr().out)
        assert 0 == main(["show", "refund-desk.jsonl", "--json"])
        assert real == json.loads(capsys.readouterr().out)

    def test_show_lists_the_store_unscored(
        self, attacked: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """Scores need the policy's code: the active facts are listed, each score null,
        and the reason is given."""
        assert 0 == main(["show", "dana-facts", "--json"])
        real = json.loads(capsys.readouterr().out)["store"]
        assert 0 == main(["show", "dana-facts.jsonl", "--json"])
        store = json.loads(capsys.readouterr().out)["store"]
        assert sorted(f["id"] for f in real["ranking"]) == [f["id"] for f in store["ranking"]]
        assert {None} == {fact["score"] for fact in store["ranking"]}
        assert "'helper:Forgets'" in store["unscored"]
        assert (real["retired"], real["evicted"]) == (store["retired"], store["evicted"])
        assert 0 == main(["show", "dana-facts.jsonl"])
        lines = capsys.readouterr().out.splitlines()
        assert any(line.startswith("store  ") and line.endswith(", unscored") for line in lines)

    @pytest.mark.parametrize(
        "argv",
        [["view", "dana-facts.jsonl", "--out", "page.html"], ["why", "dana-facts.jsonl", "name"]],
        ids=" ".join,
    )
    def test_what_needs_scores_says_so_in_one_line(
        self, attacked: Path, argv: list[str], capsys: pytest.CaptureFixture[str]
    ) -> None:
        """The page and a fact's life rank the store: that needs the code, and --trust."""
        assert 2 == main(argv)
        err = capsys.readouterr().err
        assert 1 == len(err.splitlines())
        assert "'helper:Forgets'" in err
        assert "--trust" in err
        assert not (attacked / "page.html").exists()
        assert untouched(attacked)


DECIDING = [
    ["check", "refund-desk.jsonl"],
    ["fork", "refund-desk.jsonl", "--at", "0", "--out", "fork.jsonl"],
    ["serve", "refund-desk.jsonl", "--port", "0"],
]


class TestDecidingNeedsTrust:
    @pytest.mark.parametrize("argv", DECIDING, ids=" ".join)
    def test_refused_in_one_line_saying_how_to_proceed(
        self, attacked: Path, argv: list[str], capsys: pytest.CaptureFixture[str]
    ) -> None:
        assert 2 == main(argv)
        err = capsys.readouterr().err
        assert 1 == len(err.splitlines())
        assert "memtape would import 'helper:Policy'" in err
        assert "run files are data" in err
        assert "--trust" in err
        assert "MEMTAPE_TRUST=1" in err
        assert not (attacked / "fork.jsonl").exists()
        assert untouched(attacked)

    def test_check_trusted_imports_and_re_decides(
        self, attacked: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """``--trust`` is the user's word that the code is theirs: it is imported, and
        the run (recorded by the same logic) re-decides to itself."""
        assert 0 == main(["check", "--trust", "refund-desk.jsonl"])
        assert "re-decides to itself" in capsys.readouterr().out
        assert (attacked / "pwned").exists()

    def test_the_environment_trusts_too(
        self,
        attacked: Path,
        monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        monkeypatch.setenv("MEMTAPE_TRUST", "1")
        assert 0 == main(["fork", "refund-desk.jsonl", "--at", "0", "--out", "fork.jsonl"])
        assert (attacked / "fork.jsonl").exists()
        assert (attacked / "pwned").exists()

    @pytest.mark.parametrize("value", ["0", "yes", ""])
    def test_only_1_trusts(
        self,
        attacked: Path,
        monkeypatch: pytest.MonkeyPatch,
        value: str,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        monkeypatch.setenv("MEMTAPE_TRUST", value)
        assert 2 == main(["check", "refund-desk.jsonl"])
        assert untouched(attacked)

    def test_a_scenario_s_import_path_is_imported_as_before(
        self, attacked: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A scenario file is the user's own configuration: its import paths work."""
        (attacked / "s.toml").write_text(
            '[compaction]\npolicy = "helper:Policy"\nbudget = 40\n\n'
            '[[step]]\nturn = "user"\ntext = "hi"\n'
        )
        assert 0 == main(["run", "s.toml", "--out", "s.jsonl"])
        assert (attacked / "pwned").exists()


class TestStandIns:
    def test_a_header_builds_stand_ins_and_writes_back_the_same_tables(self) -> None:
        tables: dict[str, Any] = {
            "compaction": {"policy": "x.y:C", "budget": 40, "tokenizer": "words", "k": [1]},
            "forgetting": {"policy": "x.y:F", "capacity": 3},
            "consolidation": {"policy": "x.y:M", "rules": []},
        }
        policies = Policies.from_params(tables, "here", imports=False)
        assert isinstance(policies.compaction, UnimportedCompaction)
        assert isinstance(policies.forgetting, UnimportedForgetting)
        assert isinstance(policies.consolidation, UnimportedConsolidation)
        assert (40, 3) == (policies.compaction.budget, policies.forgetting.capacity)
        assert "words" == getattr(policies.compaction.tokenizer, "name", None)
        assert ("x.y:C", "x.y:F", "x.y:M") == policies.unimported()
        assert tables == policies.params()

    def test_a_registered_name_is_built_as_ever(self) -> None:
        tables = {"compaction": {"policy": "tiered", "budget": 40, "hot_n": 2}}
        assert () == Policies.from_params(tables, imports=False).unimported()

    @pytest.mark.parametrize("budget", [None, 0, "40", True])
    def test_a_stand_in_needs_a_budget_to_measure_by(self, budget: object) -> None:
        tables = {"compaction": {"policy": "x.y:C", "budget": budget}}
        with pytest.raises(BadInput, match=r"here: \[compaction\]: policy 'x.y:C' is not imported"):
            Policies.from_params(tables, "here", imports=False)

    def test_a_stand_in_decides_nothing_and_scores_nothing(self) -> None:
        compaction = UnimportedCompaction.from_table("x.y:C", {"budget": 4}, "here")
        forgetting = UnimportedForgetting.from_table("x.y:F", {"capacity": 4}, "here")
        with pytest.raises(Rejected, match="--trust"):
            compaction.decide(INITIAL_STATE, AddTurn("user", "hi"))
        with pytest.raises(Rejected, match="--trust"):
            forgetting.decide(INITIAL_STATE, WriteFact("k", "v", 0.5))
        with pytest.raises(NotImported, match=r"ranking the store needs policy 'x\.y:F'"):
            forgetting.rank(INITIAL_STATE.store, 0.0)

    def test_load_run_trusted_imports(self, attacked: Path) -> None:
        loaded = load_run(attacked / "refund-desk.jsonl", trust=True)
        assert () == loaded.unimported()
        assert (attacked / "pwned").exists()

    def test_a_jsonl_store_reads_without_importing(self, attacked: Path) -> None:
        recorded = JsonlStore(attacked / "refund-desk.jsonl").read()
        assert "helper:Policy" == recorded.header["policies"]["compaction"]["policy"]
        assert untouched(attacked)


class TestRoles:
    def test_a_scenario_role_outside_the_closed_set_is_one_line_naming_the_step(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        scenario, out = tmp_path / "s.toml", tmp_path / "s.jsonl"
        scenario.write_text(
            '[compaction]\npolicy = "tiered"\nbudget = 40\n\n'
            '[[step]]\nturn = "user"\ntext = "hi"\n\n'
            '[[step]]\nturn = "Dana Smith SSN 123-45-6789"\ntext = "hi"\n'
        )
        assert 2 == main(["run", str(scenario), "--out", str(out)])
        err = capsys.readouterr().err
        assert 1 == len(err.splitlines())
        assert f"{scenario}: step 2" in err
        assert "a turn's role is one of system, user, assistant, tool" in err
        assert not out.exists()

    def test_an_old_log_with_a_free_text_role_is_not_redacted(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A log written before roles were closed may hold one: the copy would keep it."""
        run, copy = tmp_path / "r.jsonl", tmp_path / "copy.jsonl"
        assert 0 == main(["run", "refund-desk", "--out", str(run)])
        lines = [json.loads(line) for line in run.read_text("utf-8").splitlines()]
        lines[3]["command"]["role"] = lines[3]["event"]["role"] = "Dana Smith"
        run.write_text("".join(json.dumps(line) + "\n" for line in lines), "utf-8")
        assert 2 == main(["export", str(run), "--redact", "--out", str(copy)])
        err = capsys.readouterr().err
        assert "line 4: TurnAdded.role: a turn's role is one of" in err
        assert "'Dana Smith'" in err
        assert not copy.exists()
