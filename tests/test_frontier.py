"""memtape.lab.frontier and ``bench --frontier``: the policies no other beats on cost and
gain, said, written and drawn."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import json
from pathlib import Path
from typing import Any

import pytest

from memtape.cli import main
from memtape.lab.bench import METRICS, Result
from memtape.lab.frontier import Frontier, Point, frontier_lines, frontiers
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

    def test_the_plot_draws_it_beside_the_meter(self, tmp_path: Path) -> None:
        pytest.importorskip("matplotlib")
        results = [
            _result("cheap", tokens_resent=100, probe_retention=0.5),
            _result("dear", tokens_resent=300, probe_retention=1.0),
        ]
        _, svg = write_plot(results, tmp_path / "m.png", frontiers(results))
        assert "s: frontier (x: below it)" in svg.read_text("utf-8")
