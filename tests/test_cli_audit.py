"""``memtape audit`` on the command line: a session or a run, one column per policy."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import json
from pathlib import Path

import pytest

from memtape.cli import main

LEDGER = str(Path(__file__).parent / "fixtures" / "ledger-audit.toml")


def _audit(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(["audit", *args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


class TestTable:
    def test_a_session_s_own_policy_has_one_column_counted_by_kind(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        status, out, _ = _audit(capsys, LEDGER)
        table = out.split("\n\n")[1].splitlines()
        assert 0 == status
        assert [
            "kind         tiered",
            "path         0/1 kept (0%), 1 harmful",
            "command      2/2 kept (100%)",
            "number       2/2 kept (100%)",
            "identifier   0/1 kept (0%)",
            "url          0/1 kept (0%)",
            "constraint   0/1 kept (0%)",
            "decision     0/1 kept (0%)",
            "all          4/9 kept (44%), 1 harmful",
        ] == table

    def test_each_policy_has_its_column(self, capsys: pytest.CaptureFixture[str]) -> None:
        _, out, _ = _audit(capsys, LEDGER, "--policy", "tiered", "--policy", "sliding-window")
        heading = out.split("\n\n")[1].splitlines()[0]
        assert ["kind", "tiered", "sliding-window"] == heading.split()

    def test_each_loss_names_its_event_and_the_turn_that_needed_it(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        _, out, _ = _audit(capsys, LEDGER)
        assert (
            "tiered: path 'src/ledger/export.py' lost by event 5 (CompactionTriggered, "
            "after turn 4), mentioned again at turn 8: harmful"
        ) in out.splitlines()

    def test_a_recorded_run_is_audited_against_the_auto_probes(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        run = tmp_path / "ledger.jsonl"
        assert 0 == main(["run", LEDGER, "--out", str(run)])
        capsys.readouterr()
        status, out, _ = _audit(capsys, str(run), "--json")
        data = json.loads(out)
        assert (0, "tiered") == (status, data["policies"][0]["policy"])
        # No probes in a run file: the auto rule plants the system prompt's rule, the
        # decision (an assistant turn), and what the user's and the tool's turns name.
        assert {
            "constraint": 1,
            "path": 3,
            "identifier": 1,
            "number": 4,
            "decision": 1,
            "url": 1,
        } == {kind: count["at_stake"] for kind, count in data["policies"][0]["kinds"].items()}


class TestJson:
    def test_the_json_has_the_session_its_probes_and_a_column_per_policy(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        _, out, _ = _audit(
            capsys, LEDGER, "--json", "--policy", "tiered", "--policy", "tiered:hot_n=3"
        )
        data = json.loads(out)
        assert ("ledger-audit", 7, ["tiered", "tiered:hot_n=3"]) == (
            data["session"],
            data["probes"],
            [policy["policy"] for policy in data["policies"]],
        )


class TestRefusals:
    @pytest.mark.parametrize(
        ("args", "said"),
        [
            (["--policy", "lru"], "--policy lru: a forgetting policy"),
            (["--policy", "nope"], "no policy 'nope'"),
            (["--probes", "missing.toml"], "missing.toml"),
        ],
    )
    def test_bad_input_is_one_line(
        self, args: list[str], said: str, capsys: pytest.CaptureFixture[str]
    ) -> None:
        status, out, err = _audit(capsys, LEDGER, *args)
        assert (2, "", 1) == (status, out, len(err.splitlines()))
        assert said in err

    def test_a_policy_with_nothing_to_apply_names_the_policy_not_set(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        status, _, err = _audit(capsys, "refund-desk", "--policy", "recorded")
        assert (
            2,
            "memtape: error: refund-desk: --policy recorded: nothing to apply: the scenario "
            "recorded no compaction\n",
        ) == (status, err)

    def test_a_session_without_a_compaction_policy_is_refused(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        status, _, err = _audit(capsys, "dana-facts")
        assert (
            2,
            "memtape: error: dana-facts: no compaction policy, so nothing a compaction lost\n",
        ) == (
            status,
            err,
        )

    def test_a_session_without_probes_or_anything_to_plant_is_refused(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        scenario = tmp_path / "bare.toml"
        scenario.write_text(
            '[scenario]\nname = "bare"\nabout = "x"\n[compaction]\npolicy = "tiered"\n'
            'budget = 5\nhot_n = 1\n[[step]]\nturn = "user"\ntext = "hello"\n'
        )
        status, _, err = _audit(capsys, str(scenario))
        assert 2 == status
        assert "no probes to audit" in err
