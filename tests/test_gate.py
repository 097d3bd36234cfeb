"""memtape.lab.gate and ``memtape bench --baseline FILE --fail-if RULE``: each cell held to
the rules against its match in the baseline, exit 1 naming each cell that regressed."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from memtape.cli import main
from memtape.lab.gate import Measured, read_baseline
from memtape.scenarios import read_scenario

POLICIES = ["--policy", "tiered", "--policy", "sliding-window", "--jobs", "1", "-q"]
LONGER = """[[step]]
turn = "user"
text = "One more thing before I go: could you also tell me how long shipping usually takes, \
and whether there is any way to get the replacement sent faster than last time?"

"""
"""A turn that, said last, pushes more of the session out of the window."""


@pytest.fixture
def desk(tmp_path: Path) -> Path:
    """refund-desk as a file of its own, to be made worse."""
    path = tmp_path / "desk.toml"
    path.write_text(read_scenario("refund-desk"), "utf-8")
    return path


def _worse(desk: Path) -> None:
    """The same scenario (its name, its policies) with a longer session: both policies keep
    fewer probes and re-send more."""
    text = desk.read_text("utf-8")
    at = text.index("# Probes")
    desk.write_text(text[:at] + LONGER + text[at:], "utf-8")


def _bench(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str]]:
    """``memtape bench ARGS`` in-process: its status and the lines after the table's."""
    status = main(["bench", *argv])
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    return status, [
        line for line in lines if line.startswith(("regressed", "not ", "missing", "gate"))
    ]


def _error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert 1 == len(err.splitlines()), err
    return err


def _baseline(capsys: pytest.CaptureFixture[str], desk: Path, name: str, *more: str) -> Path:
    """The baseline a bench of ``desk`` writes (a table, a results file or --json)."""
    path = desk.parent / name
    option = "--json" if name.endswith(".json") else "--results"
    assert 0 == main(["bench", str(desk), *POLICIES, *more, option, str(path)])
    capsys.readouterr()
    return path


class TestRegressions:
    @pytest.mark.parametrize("name", ["base.parquet", "base.jsonl", "base.json"])
    def test_a_worse_sweep_fails_naming_each_cell_that_regressed(
        self, capsys: pytest.CaptureFixture[str], desk: Path, name: str
    ) -> None:
        base = _baseline(capsys, desk, name)
        _worse(desk)

        status, lines = _bench(
            capsys, str(desk), *POLICIES, "--baseline", str(base),
            "--fail-if", "probe_retention < baseline - 0.02",
        )  # fmt: skip

        assert 1 == status
        assert [
            "regressed: refund-desk, tiered budget=40: probe_retention is 0.727273, the baseline "
            "0.888889: breaks 'probe_retention < baseline - 0.02' (0.727273 < 0.888889 - 0.02)",
            "regressed: refund-desk, sliding-window budget=40: probe_retention is 0.545455, the "
            "baseline 0.666667: breaks 'probe_retention < baseline - 0.02' "
            "(0.545455 < 0.666667 - 0.02)",
            f"gate: failed: 2 of 2 cells broke a rule (1 rule, against {base})",
        ] == lines

    def test_each_rule_a_cell_breaks_is_named(
        self, capsys: pytest.CaptureFixture[str], desk: Path
    ) -> None:
        base = _baseline(capsys, desk, "base.parquet")
        _worse(desk)

        status, lines = _bench(
            capsys, str(desk), "--policy", "tiered", "--jobs", "1", "-q", "--baseline", str(base),
            "--fail-if", "probe_retention < baseline - 0.02",
            "--fail-if", "tokens_resent > baseline * 1.05",
        )  # fmt: skip

        assert 1 == status
        assert [
            "regressed: refund-desk, tiered budget=40: probe_retention is 0.727273, the baseline "
            "0.888889: breaks 'probe_retention < baseline - 0.02' (0.727273 < 0.888889 - 0.02)",
            "regressed: refund-desk, tiered budget=40: tokens_resent is 350, the baseline 304: "
            "breaks 'tokens_resent > baseline * 1.05' (350 > 304 * 1.05)",
            f"gate: failed: 1 of 1 cell broke a rule (2 rules, against {base})",
        ] == lines

    def test_a_worse_sweep_within_the_rule_passes(
        self, capsys: pytest.CaptureFixture[str], desk: Path
    ) -> None:
        base = _baseline(capsys, desk, "base.parquet")
        _worse(desk)

        status, lines = _bench(
            capsys, str(desk), *POLICIES, "--baseline", str(base),
            "--fail-if", "tokens_resent > baseline * 1.2",
        )  # fmt: skip

        assert 0 == status
        assert [f"gate: passed: no cell breaks a rule (2 cells, 1 rule, against {base})"] == lines

    def test_the_same_sweep_passes_a_rule_of_no_change(
        self, capsys: pytest.CaptureFixture[str], desk: Path
    ) -> None:
        base = _baseline(capsys, desk, "base.parquet")

        status, _ = _bench(
            capsys, str(desk), *POLICIES, "--baseline", str(base),
            "--fail-if", "compactions != baseline", "--fail-if", "peak_over_budget != baseline",
        )  # fmt: skip

        assert 0 == status

    def test_a_rule_of_a_number_alone_needs_no_baseline(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        status, lines = _bench(capsys, "refund-desk", *POLICIES, "--fail-if", "compactions > 5")

        assert 1 == status
        assert [
            "regressed: refund-desk, sliding-window budget=40: compactions is 6: "
            "breaks 'compactions > 5'",
            "gate: failed: 1 of 2 cells broke a rule (1 rule)",
        ] == lines


class TestCost:
    def test_a_session_that_breaks_more_caches_fails_a_usd_rule(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        """The issue's own rule: the same re-sent tokens, a higher bill."""
        breaker = tmp_path / "breaker.toml"
        breaker.write_text(read_scenario("cache-breaker"), "utf-8")
        policies = ["--policy", "none", "--policy", "sliding-window", "--jobs", "1", "-q"]
        base = tmp_path / "base.parquet"
        assert 0 == main(["bench", str(breaker), *policies, "--results", str(base)])
        text = breaker.read_text("utf-8")
        # The agent pauses ten minutes before its tenth tool call: every cached entry expires.
        at = text.index('[[step]]\nturn = "tool"\ntext = "line 10.0')
        breaker.write_text(text[:at] + "[[step]]\nadvance = 600\n\n" + text[at:], "utf-8")

        status, lines = _bench(
            capsys, str(breaker), *policies, "--baseline", str(base),
            "--fail-if", "usd > baseline * 1.05", "--fail-if", "tokens_resent > baseline",
        )  # fmt: skip

        # Under none the request after the pause writes the 3,700 tokens it read before
        # (1,100 pinned and eight exchanges of 300, then 200), at $3.75 a million instead
        # of $0.30: 3,700 * 3.45 / 1e6 = $0.012765 more, 16% over the baseline's $0.07938.
        # The sliding window's prefix was broken there anyway: 2.7% more, within 5%.
        assert 1 == status
        assert [
            "regressed: cache-breaker, none budget=3000: usd is 0.092145, the baseline "
            "0.07938: breaks 'usd > baseline * 1.05' (0.092145 > 0.07938 * 1.05)",
            f"gate: failed: 1 of 2 cells broke a rule (2 rules, against {base})",
        ] == lines

    def test_a_cost_regression_names_the_models_when_the_baseline_was_priced_as_another(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        """Cells match without their price: the line says why the bill moved."""
        policies = ["--policy", "none", "--jobs", "1", "-q"]
        base = tmp_path / "base.parquet"
        assert 0 == main(["bench", "cache-breaker", *policies, "--results", str(base)])

        status, lines = _bench(
            capsys, "cache-breaker", *policies, "--set", "cost.model=claude-opus-4-5",
            "--baseline", str(base), "--fail-if", "usd > baseline * 1.05",
        )  # fmt: skip

        assert (1, "; priced as claude-opus-4-5 here, as claude-sonnet-4-5 in the baseline") == (
            status,
            lines[0][lines[0].index(";") :],
        )


class TestMatching:
    def test_a_cell_the_baseline_lacks_is_said_and_does_not_fail(
        self, capsys: pytest.CaptureFixture[str], desk: Path
    ) -> None:
        base = _baseline(capsys, desk, "base.parquet")

        status, lines = _bench(
            capsys, str(desk), *POLICIES, "--policy", "tiered:hot_n=3", "--baseline", str(base),
            "--fail-if", "probe_retention < baseline",
        )  # fmt: skip

        assert 0 == status
        assert [
            "not in the baseline: refund-desk, tiered budget=40 hot_n=3 (new: not compared)",
            f"gate: passed: no cell breaks a rule (3 cells, 1 not in the baseline, 1 rule, "
            f"against {base})",
        ] == lines

    def test_with_fail_if_missing_a_cell_the_baseline_lacks_fails(
        self, capsys: pytest.CaptureFixture[str], desk: Path
    ) -> None:
        base = _baseline(capsys, desk, "base.parquet")

        status, lines = _bench(
            capsys, str(desk), *POLICIES, "--policy", "tiered:hot_n=3", "--baseline", str(base),
            "--fail-if", "probe_retention < baseline", "--fail-if-missing",
        )  # fmt: skip

        assert 1 == status
        assert [
            "missing from the baseline: refund-desk, tiered budget=40 hot_n=3",
            f"gate: failed: 1 missing from the baseline (1 rule, against {base})",
        ] == lines

    def test_a_parameter_written_otherwise_is_another_cell(
        self, capsys: pytest.CaptureFixture[str], desk: Path
    ) -> None:
        base = _baseline(capsys, desk, "base.parquet")

        status, lines = _bench(
            capsys, str(desk), "--policy", "tiered", "--jobs", "1", "-q", "--baseline", str(base),
            "--set", "compaction.budget=41", "--fail-if", "probe_retention < baseline",
        )  # fmt: skip

        assert 0 == status
        assert "not in the baseline: refund-desk, tiered budget=41 (new: not compared)" == lines[0]

    def test_a_cell_that_comes_again_under_a_grid_is_matched_in_order(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        sweep = ["dana-facts", "--policy", "lru", "--grid", "compaction.budget=40,60"]
        base = _baseline_of(capsys, tmp_path, sweep)

        status, lines = _bench(
            capsys, *sweep, "--jobs", "1", "-q", "--baseline", str(base),
            "--fail-if", "evictions != baseline",
        )  # fmt: skip

        assert 0 == status
        assert [f"gate: passed: no cell breaks a rule (2 cells, 1 rule, against {base})"] == lines

    def test_a_whole_float_matches_the_integer_it_equals(self) -> None:
        def cell(value: Any) -> Measured:
            return Measured("s", "p", {"half_life": value, "gone": None}, {}, "s, p")

        assert cell(4).key == cell(4.0).key
        assert cell(4).key != cell(4.5).key


class TestNulls:
    def test_a_metric_null_in_the_baseline_is_said_not_compared(
        self, capsys: pytest.CaptureFixture[str], desk: Path
    ) -> None:
        base = _baseline(capsys, desk, "base.json")
        _edit(base, lambda result: result["metrics"].update(probe_retention=None))

        status, lines = _bench(
            capsys, str(desk), "--policy", "tiered", "--jobs", "1", "-q", "--baseline", str(base),
            "--fail-if", "probe_retention < baseline",
        )  # fmt: skip

        assert 0 == status
        assert [
            "not compared: refund-desk, tiered budget=40: probe_retention is null in the "
            "baseline (0.888889 here)",
            f"gate: passed: no cell breaks a rule (1 cell, 1 rule, against {base})",
        ] == lines

    def test_a_metric_not_finite_in_the_baseline_is_said_not_compared(
        self, capsys: pytest.CaptureFixture[str], desk: Path
    ) -> None:
        base = _baseline(capsys, desk, "base.json")
        _edit(base, lambda result: result["metrics"].update(probe_retention=float("nan")))

        status, lines = _bench(
            capsys, str(desk), "--policy", "tiered", "--jobs", "1", "-q", "--baseline", str(base),
            "--fail-if", "probe_retention < baseline",
        )  # fmt: skip

        assert 0 == status
        assert [
            "not compared: refund-desk, tiered budget=40: probe_retention is not a number",
            f"gate: passed: no cell breaks a rule (1 cell, 1 rule, against {base})",
        ] == lines

    def test_a_metric_null_here_is_said_not_compared(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        sweep = ["dana-facts", "--policy", "lru"]
        base = _baseline_of(capsys, tmp_path, sweep, json=True)
        _edit(base, lambda result: result["metrics"].update(probe_retention=0.5))

        status, lines = _bench(
            capsys, *sweep, "--jobs", "1", "-q", "--baseline", str(base),
            "--fail-if", "probe_retention < baseline",
        )  # fmt: skip

        assert 0 == status
        assert [
            "not compared: dana-facts, lru capacity=4: probe_retention is null here "
            "(0.5 in the baseline)",
            f"gate: passed: no cell breaks a rule (1 cell, 1 rule, against {base})",
        ] == lines

    def test_a_metric_null_on_both_sides_is_said_once_for_every_cell(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        sweep = ["dana-facts", "--policy", "lru", "--policy", "fifo"]
        base = _baseline_of(capsys, tmp_path, sweep)

        status, lines = _bench(
            capsys, *sweep, "--jobs", "1", "-q", "--baseline", str(base),
            "--fail-if", "probe_retention < baseline", "--fail-if", "evictions > baseline",
        )  # fmt: skip

        assert 0 == status
        assert [
            "not compared: probe_retention is null in 2 cells: dana-facts, lru capacity=4; "
            "dana-facts, fifo capacity=4",
            f"gate: passed: no cell breaks a rule (2 cells, 2 rules, against {base})",
        ] == lines

    def test_a_cell_whose_policy_did_not_apply_is_not_held_to_the_rules(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        status, lines = _bench(
            capsys, "refund-desk", "dana-facts", "--policy", "tiered", "--jobs", "1", "-q",
            "--fail-if", "compactions > 5",
        )  # fmt: skip

        assert 0 == status
        assert ["gate: passed: no cell breaks a rule (1 cell, 1 rule)"] == lines


class TestRefusals:
    @pytest.mark.parametrize(
        ("more", "reason"),
        [
            (["--fail-if", "compactions > baseline"],
             "--fail-if 'compactions > baseline': it names baseline: give --baseline FILE"),
            (["--baseline", "base.parquet"],
             "--baseline base.parquet: give --fail-if RULE, what a cell must not do"),
            (["--fail-if", "compactions > 3", "--fail-if-missing"],
             "--fail-if-missing needs --baseline FILE"),
            (["--fail-if-missing"], "--fail-if-missing needs --baseline FILE and --fail-if RULE"),
            (["--baseline", "gone.parquet", "--fail-if", "compactions > baseline"],
             "gone.parquet: no such baseline file"),
            (["--baseline", "gone.jsonl", "--fail-if", "compactions > baseline"],
             "gone.jsonl: no such baseline file"),
            (["--baseline", ".", "--fail-if", "compactions > baseline"],
             ".: is a directory, not a baseline file"),
        ],
    )  # fmt: skip
    def test_an_impossible_gate_is_one_line_and_nothing_runs(
        self,
        capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path,
        more: list[str],
        reason: str,
    ) -> None:
        monkeypatch.chdir(tmp_path)

        status = main(["bench", "refund-desk", "--policy", "tiered", "--json", "out.json", *more])

        assert 2 == status
        assert reason in _error(capsys)
        assert [] == list(tmp_path.iterdir())

    @pytest.mark.parametrize(
        ("text", "reason"),
        [
            ("{nope", "base.json: not JSON: "),
            ('{"results": 3}', "base.json: not the JSON of memtape bench: it holds no 'results'"),
            ('{"results": [{"scenario": 3}]}', "base.json: result 1: not a cell's result: "),
            pytest.param(
                '{"results": [{"scenario": "s", "policy": "p", "metrics": {}, "params": {"x": '
                + "[" * 900
                + "]" * 900
                + "}}]}",
                "base.json: cell 1: its parameters nest too deep to compare",
                id="parameters-nested-900-deep",
            ),
        ],
    )
    def test_a_malformed_json_baseline_is_named(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, reason: str
    ) -> None:
        base = tmp_path / "base.json"
        base.write_text(text, "utf-8")

        status = main(
            ["bench", "refund-desk", "--policy", "tiered", "--baseline", str(base),
             "--fail-if", "compactions > baseline"]
        )  # fmt: skip

        assert 2 == status
        assert f"{tmp_path}/{reason}" in _error(capsys)

    def test_a_table_for_baseline_without_pyarrow_names_the_extra(
        self,
        capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch,
        desk: Path,
    ) -> None:
        base = _baseline(capsys, desk, "base.parquet")
        monkeypatch.setitem(sys.modules, "pyarrow", None)

        status = main(
            ["bench", str(desk), "--policy", "tiered", "--baseline", str(base),
             "--fail-if", "compactions > baseline"]
        )  # fmt: skip

        assert 2 == status
        err = _error(capsys)
        assert f"--baseline {base}: a Parquet table needs pyarrow, which is not installed" in err
        assert "[results]" in err

    def test_the_table_written_cannot_be_the_baseline(
        self, capsys: pytest.CaptureFixture[str], desk: Path
    ) -> None:
        base = _baseline(capsys, desk, "base.parquet")
        before = base.read_bytes()

        status = main(
            ["bench", str(desk), *POLICIES, "--baseline", str(base), "--results", str(base),
             "--fail-if", "compactions > baseline"]
        )  # fmt: skip

        assert 2 == status
        assert f"--results {base}: it is the --baseline file too" in _error(capsys)
        assert before == base.read_bytes()


def _baseline_of(
    capsys: pytest.CaptureFixture[str], folder: Path, sweep: list[str], *, json: bool = False
) -> Path:
    """The baseline (a table, or --json) a bench of ``sweep`` writes into ``folder``."""
    path = folder / ("base.json" if json else "base.parquet")
    option = "--json" if json else "--results"
    assert 0 == main(["bench", *sweep, "--jobs", "1", "-q", option, str(path)])
    capsys.readouterr()
    return path


def _edit(path: Path, change: Any) -> None:
    """Apply ``change`` to each result of a ``--json`` file."""
    data = json.loads(path.read_text("utf-8"))
    for result in data["results"]:
        change(result)
    path.write_text(json.dumps(data), "utf-8")


class TestReplicatedBaseline:
    def test_a_results_file_of_replicates_is_compared_by_its_medians(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """Each cell once, as the sweep reports it: a baseline of each replicate would hold
        every cell twice, and the second of each would be no cell of this sweep."""
        base, out = tmp_path / "base.jsonl", tmp_path / "out.json"
        argv = ["bench", "refund-desk", *POLICIES, "--replicates", "2"]
        assert 0 == main([*argv, "--results", str(base), "--json", str(out)])
        written = json.loads(out.read_text("utf-8"))["results"]
        baseline = read_baseline(base)
        assert [(r["policy"], r["metrics"]["tokens_resent"]) for r in written] == [
            (cell.policy, cell.metrics["tokens_resent"]) for cell in baseline
        ]
        capsys.readouterr()
        rule = ["--fail-if", "tokens_resent > baseline", "--baseline", str(base)]
        assert 0 == main([*argv, *rule])
        assert "not in the baseline" not in capsys.readouterr().out
