"""memtape.lab.frontier and ``bench --frontier``: the policies no other beats on cost and
gain, said, written and drawn."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import json
from pathlib import Path
from typing import Any

import pytest

from memtape.cli import main
from memtape.core.errors import BadInput
from memtape.lab.bench import METRICS, Result
from memtape.lab.frontier import Frontier, Point, check_gain, frontier_lines, frontiers
from memtape.lab.plot import write_plot


def _result(label: str, scenario: str = "s", **metrics: Any) -> Result:
    values = dict.fromkeys(METRICS) | metrics
    return Result(scenario, label, label, {}, values, 40, (10, 20), (None, 1.0))


class TestFrontiers:
    def test_a_policy_beaten_on_both_counts_is_below_the_frontier(self) -> None:
        results = [
            _result("cheap", tokens_resent=100, probe_retention=0.5),
            _result("dear", tokens_resent=300, probe_retention=1.0),
            _result("worse", tokens_resent=200, probe_retention=0.5),
        ]
        assert [
            Frontier(
                "s",
                "tokens_resent",
                "probe_retention",
                (
                    Point("cheap", 100, 0.5, None),
                    Point("dear", 300, 1.0, None),
                    Point("worse", 200, 0.5, "cheap"),
                ),
            )
        ] == frontiers(results)

    def test_the_bill_and_the_answers_are_weighed_when_every_result_has_them(self) -> None:
        results = [
            _result("a", tokens_resent=1, probe_retention=1.0, usd=0.5, answers_correct=3),
            _result("b", tokens_resent=2, probe_retention=0.0, usd=0.2, answers_correct=1),
        ]
        (frontier,) = frontiers(results)
        assert ("usd", "answers_correct") == (frontier.cost, frontier.gain)

    def test_a_scenario_with_one_policy_has_no_frontier(self) -> None:
        assert [] == frontiers([_result("alone", tokens_resent=1, probe_retention=1.0)])

    def test_equal_points_beat_neither(self) -> None:
        results = [
            _result("a", tokens_resent=5, probe_retention=0.5),
            _result("b", tokens_resent=5, probe_retention=0.5),
        ]
        assert [None, None] == [point.beaten_by for point in frontiers(results)[0].points]


class TestHarmfulLosses:
    def test_fewer_harmful_losses_is_better(self) -> None:
        results = [
            _result("cheap", tokens_resent=100, harmful_losses=3, probe_retention=1.0),
            _result("careful", tokens_resent=300, harmful_losses=0, probe_retention=0.0),
            _result("careless", tokens_resent=200, harmful_losses=3, probe_retention=1.0),
        ]
        (frontier,) = frontiers(results, "harmful_losses")
        assert ("harmful_losses", [None, None, "cheap"]) == (
            frontier.gain,
            [point.beaten_by for point in frontier.points],
        )

    def test_the_line_says_fewer_is_better(self) -> None:
        results = [
            _result("cheap", tokens_resent=100, harmful_losses=3),
            _result("careful", tokens_resent=300, harmful_losses=0),
        ]
        (line,) = frontier_lines(frontiers(results, "harmful_losses"))
        assert (
            "frontier of s (tokens_resent against harmful_losses, fewer is better): "
            "cheap (100, 3), careful (300, 0)"
        ) == line

    def test_a_gain_of_another_name_is_refused(self) -> None:
        with pytest.raises(BadInput) as refused:
            check_gain("peak_tokens")
        assert (
            "--frontier-on 'peak_tokens': rank on one of answers_correct, probe_retention, "
            "harmful_losses"
        ) == str(refused.value)


class TestLines:
    def test_the_frontier_cheapest_first_then_each_policy_below_it(self) -> None:
        results = [
            _result("dear", tokens_resent=300, probe_retention=1.0),
            _result("cheap", tokens_resent=100, probe_retention=0.5),
            _result("worse", tokens_resent=200, probe_retention=0.5),
        ]
        assert [
            "frontier of s (tokens_resent against probe_retention): cheap (100, 50.0%), "
            "dear (300, 100.0%)",
            "s, worse: below the frontier, beaten by cheap",
        ] == frontier_lines(frontiers(results))


class TestBench:
    def test_the_frontier_is_said_and_written(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        out = tmp_path / "bench.json"
        argv = ["bench", "refund-desk", "--policy", "tiered", "--policy", "rolling-summary:keep=2"]
        assert 0 == main([*argv, "--frontier", "-q", "--jobs", "1", "--json", str(out)])
        printed = capsys.readouterr().out
        assert (
            "refund-desk, tiered: below the frontier, beaten by rolling-summary:keep=2" in printed
        )
        (written,) = json.loads(out.read_text("utf-8"))["frontiers"]
        assert ("refund-desk", "tokens_resent", "probe_retention") == (
            written["scenario"],
            written["cost"],
            written["gain"],
        )

    def test_frontier_on_harmful_losses_is_said_and_written(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        out = tmp_path / "bench.json"
        argv = ["bench", "refund-desk", "--policy", "tiered", "--policy", "sliding-window"]
        argv += ["--frontier-on", "harmful_losses", "-q", "--jobs", "1", "--json", str(out)]
        assert 0 == main(argv)
        printed = capsys.readouterr().out
        assert "(tokens_resent against harmful_losses, fewer is better)" in printed
        data = json.loads(out.read_text("utf-8"))
        (written,) = data["frontiers"]
        harmful = {r["policy"]: r["metrics"]["harmful_losses"] for r in data["results"]}
        assert ("harmful_losses", harmful) == (
            written["gain"],
            {point["label"]: point["gain"] for point in written["points"]},
        )

    def test_frontier_on_another_metric_is_one_line_before_any_cell_runs(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        out = tmp_path / "bench.json"
        argv = ["bench", "refund-desk", "--policy", "tiered", "--policy", "sliding-window"]
        assert 2 == main([*argv, "--frontier-on", "usd", "-q", "--json", str(out)])
        err = capsys.readouterr().err.splitlines()
        assert (1, False) == (len(err), out.exists())
        assert "--frontier-on 'usd': rank on one of" in err[0]

    def test_frontier_on_answers_without_a_judge_is_one_line(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        argv = ["bench", "refund-desk", "--policy", "tiered", "--policy", "sliding-window"]
        assert 2 == main([*argv, "--frontier-on", "answers_correct", "-q"])
        assert [
            "memtape: error: --frontier-on answers_correct: give --judge MODEL, which answers them"
        ] == capsys.readouterr().err.splitlines()

    def test_the_plot_draws_the_harmful_frontier(self, tmp_path: Path) -> None:
        pytest.importorskip("matplotlib")
        results = [
            _result("cheap", tokens_resent=100, harmful_losses=2),
            _result("dear", tokens_resent=300, harmful_losses=0),
        ]
        _, svg = write_plot(results, tmp_path / "m.png", frontiers(results, "harmful_losses"))
        assert "harmful_losses (fewer is better)" in svg.read_text("utf-8")

    def test_the_plot_draws_it_beside_the_meter(self, tmp_path: Path) -> None:
        pytest.importorskip("matplotlib")
        results = [
            _result("cheap", tokens_resent=100, probe_retention=0.5),
            _result("dear", tokens_resent=300, probe_retention=1.0),
        ]
        _, svg = write_plot(results, tmp_path / "m.png", frontiers(results))
        assert "s: frontier (x: below it)" in svg.read_text("utf-8")
