"""memtape.scenarios.block_settings: ``--set block.LABEL.PARAM=VALUE`` changes the step that
creates a memory block, checked as its table is."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import json
from pathlib import Path

import pytest

from memtape.cli import main
from memtape.core.commands import CreateBlock
from memtape.core.errors import BadInput
from memtape.scenarios.block_settings import taken, with_block_settings
from memtape.scenarios.loader import load_scenario, with_settings

EXAMPLE = str(Path(__file__).parent.parent / "examples" / "core-memory.toml")


def _human(*settings: str) -> CreateBlock:
    (created,) = [
        step
        for step in with_settings(load_scenario(EXAMPLE), settings).steps
        if isinstance(step, CreateBlock)
    ]
    return created


class TestSettings:
    def test_a_limit_is_set(self) -> None:
        assert 400 == _human("block.human.limit=400").limit

    def test_read_only_is_set(self) -> None:
        assert _human("block.human.read_only=true").read_only

    def test_a_value_is_set_as_text(self) -> None:
        assert "Name: Ana." == _human("block.human.value=Name: Ana.").value

    def test_other_settings_still_reach_the_policies(self) -> None:
        scenario = with_settings(
            load_scenario(EXAMPLE), ["block.human.limit=400", "compaction.budget=60"]
        )
        assert 60 == scenario.policies.params()["compaction"]["budget"]

    def test_settings_of_other_axes_leave_the_steps_alone(self) -> None:
        steps = load_scenario(EXAMPLE).steps
        assert steps == with_block_settings(steps, ["compaction.budget=60"])


class TestRefusals:
    @pytest.mark.parametrize(
        ("setting", "problem"),
        [
            ("block.humn.limit=9", "this scenario creates no block 'humn' (blocks: 'human')"),
            ("block.human.limt=9", "a block takes limit, value, read_only, not 'limt'"),
            ("block.human.limit=0", "a block's limit is a whole number of at least 1, got '0'"),
            ("block.human.limit=5", "block 'human' would hold 11 characters, over its limit"),
            ("block.human.read_only=yes", "read_only is true or false, got 'yes'"),
            ("block.limit=9", "write block.LABEL.PARAM=VALUE"),
        ],
    )
    def test_a_bad_setting_is_one_line_naming_it(self, setting: str, problem: str) -> None:
        with pytest.raises(BadInput, match=rf"^--set '{setting}': ") as caught:
            _human(setting)
        assert problem in str(caught.value)

    def test_run_refuses_an_edit_under_a_smaller_limit_and_writes_nothing(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        out = tmp_path / "run.jsonl"

        status = main(["run", EXAMPLE, "--set", "block.human.limit=20", "--out", str(out)])

        err = capsys.readouterr().err
        assert (2, False) == (status, out.exists())
        assert "step 3: block 'human' holds at most 20 characters" in err


class TestTaken:
    def test_only_the_settings_of_blocks_the_steps_create_are_taken(self) -> None:
        steps = load_scenario(EXAMPLE).steps
        settings = ["block.human.limit=60", "block.persona.limit=9", "compaction.budget=40"]

        assert {"block.human.limit": "60"} == taken(steps, settings)


class TestBench:
    def test_a_grid_over_a_blocks_limit_shows_it_beside_the_policys_parameters(
        self, tmp_path: Path
    ) -> None:
        out = tmp_path / "bench.json"
        argv = ["bench", EXAMPLE, "--policy", "sliding-window:budget=40", "-q"]

        status = main([*argv, "--grid", "block.human.limit=30,60", "--json", str(out)])

        results = json.loads(out.read_text("utf-8"))["results"]
        assert (0, ["30", "60"]) == (
            status,
            [result["params"]["block.human.limit"] for result in results],
        )

    def test_a_block_too_small_for_the_scenarios_edits_is_one_line(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        argv = ["bench", EXAMPLE, "--policy", "sliding-window:budget=40", "-q"]

        status = main([*argv, "--set", "block.human.limit=20"])

        err = capsys.readouterr().err
        assert (2, 1) == (status, len(err.splitlines()))
        assert "block 'human' holds at most 20 characters" in err

    def test_a_scenario_without_the_block_is_benched_as_it_is(self, tmp_path: Path) -> None:
        other = str(Path(EXAMPLE).parent / "order-recall.toml")
        out = tmp_path / "bench.json"
        argv = ["bench", other, "--policy", "sliding-window:budget=40", "-q"]

        assert 0 == main([*argv, "--set", "block.human.limit=60", "--json", str(out)])

    def test_a_scenario_without_the_block_shows_no_block_setting(self, tmp_path: Path) -> None:
        other = str(Path(EXAMPLE).parent / "order-recall.toml")
        out = tmp_path / "bench.json"
        argv = ["bench", EXAMPLE, other, "--policy", "sliding-window:budget=40", "-q"]

        main([*argv, "--set", "block.human.limit=60", "--json", str(out)])

        results = json.loads(out.read_text("utf-8"))["results"]
        assert ["60", None] == [result["params"].get("block.human.limit") for result in results]

    def test_a_mistyped_block_setting_is_one_line_and_writes_nothing(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        results, runs = tmp_path / "res.jsonl", tmp_path / "runs"
        argv = ["bench", EXAMPLE, "--policy", "sliding-window:budget=40", "-q"]

        status = main(
            [*argv, "--set", "block.human.limt=40", "--results", str(results), "--runs", str(runs)]
        )

        err = capsys.readouterr().err
        assert (2, 1, False, False) == (
            status,
            len(err.splitlines()),
            results.exists(),
            runs.exists(),
        )
