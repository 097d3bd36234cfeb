"""Policies named by import path, in scenarios, in --set, and in what a run writes back."""

from pathlib import Path

import pytest

from memtape.cli import main
from memtape.core.errors import BadInput
from memtape.policies.plumbing.imports import import_path, policy_class
from memtape.policies.session import Policies
from tests.broken_policies import NeverCompacts, StampsTurns


class TestPolicyClass:
    def test_an_import_path_names_its_class(self) -> None:
        """``module:Class`` finds the class."""
        assert NeverCompacts is policy_class("tests.broken_policies:NeverCompacts", "here")

    @pytest.mark.parametrize(
        ("path", "problem"),
        [
            ("nowhere_at_all:Policy", "cannot import nowhere_at_all"),
            ("tests.broken_policies:Missing", "tests.broken_policies has no Missing"),
            ("tests.broken_policies:time", "is not a policy class with from_params"),
            (":Policy", "is not an import path like mypkg.module:Policy"),
            ("tests.broken_policies:", "is not an import path like mypkg.module:Policy"),
        ],
    )
    def test_a_bad_path_is_one_clear_line(self, path: str, problem: str) -> None:
        """Each way a path can be wrong says where and what."""
        with pytest.raises(BadInput) as raised:
            policy_class(path, "f.toml: [compaction]")
        message = str(raised.value)
        assert message.startswith(f"f.toml: [compaction]: policy {path!r}")
        assert problem in message
        assert "\n" not in message

    def test_a_module_that_fails_to_load_is_reported_not_raised(self, tmp_path: Path) -> None:
        """A user's module raising while it loads becomes one BadInput line."""
        (tmp_path / "explodes_on_import.py").write_text("raise RuntimeError('boom')\n")
        with pytest.MonkeyPatch.context() as patch:
            patch.syspath_prepend(str(tmp_path))
            with pytest.raises(BadInput, match="RuntimeError: boom"):
                policy_class("explodes_on_import:Policy", "here")


class TestPolicies:
    def test_a_table_naming_an_import_path_builds_that_policy(self) -> None:
        """The rest of the table goes to the class's from_params."""
        tables = {"compaction": {"policy": "tests.broken_policies:NeverCompacts", "budget": 7}}
        assert Policies(compaction=NeverCompacts(7)) == Policies.from_params(tables)

    def test_an_unregistered_policy_writes_its_import_path_back(self) -> None:
        """``params`` names a subclass of a registered policy by its path, so it round-trips."""
        policies = Policies(compaction=StampsTurns(10, 2))
        tables = policies.params()
        assert import_path(StampsTurns) == tables["compaction"]["policy"]
        assert policies == Policies.from_params(tables)


SCENARIO = """
[compaction]
policy = "tests.broken_policies:NeverCompacts"
budget = 3

[[step]]
turn = "user"
text = "a b c"
"""


class TestCli:
    def test_a_scenario_naming_an_import_path_runs(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """``memtape run`` records it, and ``memtape check`` reports its broken budget."""
        scenario, out = tmp_path / "s.toml", tmp_path / "run.jsonl"
        scenario.write_text(SCENARIO)
        assert 0 == main(["run", str(scenario), "--out", str(out)])
        assert 1 == main(["check", "--trust", str(out)])
        assert "event 1: budget: the window holds 4 tokens" in capsys.readouterr().out

    def test_set_may_switch_to_an_import_path(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """``--set compaction.policy=module:Class`` builds that class from the table."""
        out = tmp_path / "run.jsonl"
        settings = ["--set", "compaction.policy=tests.broken_policies:StampsTurns"]
        assert 0 == main(["run", "refund-desk", "--out", str(out), *settings])
        assert "tests.broken_policies:StampsTurns" in out.read_text().splitlines()[0]

    def test_a_bad_import_path_is_one_line_and_exit_2(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """Nothing is written, and stderr holds one line naming the file and the path."""
        scenario, out = tmp_path / "s.toml", tmp_path / "run.jsonl"
        scenario.write_text(SCENARIO.replace("NeverCompacts", "Nope"))
        assert 2 == main(["run", str(scenario), "--out", str(out)])
        lines = capsys.readouterr().err.splitlines()
        expected = (
            f"memtape: error: {scenario}: [compaction]: policy "
            "'tests.broken_policies:Nope': tests.broken_policies has no Nope"
        )
        assert [expected] == lines
        assert not out.exists()
