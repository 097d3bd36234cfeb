"""memtape.lab.replicates and ``bench --replicates``: medians, spreads, and differences that
lie inside them."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import json
from pathlib import Path
from typing import Any

import pytest

from memtape.cli import main
from memtape.core.errors import BadInput
from memtape.lab.bench import Cell, parse_policy, plan, replicate_settings, run_cell
from memtape.lab.replicates import PERCENTILE_95, RANGE, folded, spread_of
from memtape.lab.spread import Spread
from memtape.policies.session import Policies
from memtape.policies.zoo import COMPACTION
from memtape.scenarios import load_scenario
from tests.llm_runs import scenario
from tests.llm_server import ChatServer

NOISY = "drops-at-random"


@pytest.fixture
def noisy(monkeypatch: pytest.MonkeyPatch) -> None:
    """The noisy stand-in policy (``tests.noisy_policies``) benched by name."""
    monkeypatch.setitem(COMPACTION._homes, NOISY, "tests.noisy_policies:DropsAtRandom")


def _bench_json(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, *argv: str
) -> list[dict[str, Any]]:
    out = tmp_path / "bench.json"
    assert 0 == main(["bench", *argv, "--jobs", "1", "-q", "--json", str(out)])
    capsys.readouterr()
    results: list[dict[str, Any]] = json.loads(out.read_text("utf-8"))["results"]
    return results


class TestSpread:
    def test_below_five_replicates_the_interval_is_the_range(self) -> None:
        assert Spread(3.5, 1, 10, RANGE) == spread_of([10, 1, 3, 4])

    def test_from_five_on_it_is_the_95_percent_percentile_interval(self) -> None:
        # Inclusive percentiles of 0..10: the 2.5th is 0.25, the 97.5th 9.75.
        assert Spread(5, 0.25, 9.75, PERCENTILE_95) == spread_of(list(range(11)))


class TestPlan:
    def test_each_cell_is_planned_once_a_replicate(self) -> None:
        cells = plan(["refund-desk"], ["tiered", "sliding-window"], replicates=3)
        assert [
            ("tiered", 0),
            ("tiered", 1),
            ("tiered", 2),
            ("sliding-window", 0),
            ("sliding-window", 1),
            ("sliding-window", 2),
        ] == [(cell.label, cell.replicate) for cell in cells]

    def test_no_replicate_is_refused(self) -> None:
        with pytest.raises(BadInput, match="--replicates must be at least 1, got 0"):
            plan(["refund-desk"], ["tiered"], replicates=0)

    def test_more_replicates_than_the_most_is_refused_before_any_cell_is_made(self) -> None:
        with pytest.raises(BadInput, match="--replicates 1000000000 is more than 1,000"):
            plan(["refund-desk"], ["tiered"], replicates=1_000_000_000)


class TestSeeds:
    def test_the_model_and_a_policy_that_samples_get_the_replicate_s_seed(
        self, noisy: None
    ) -> None:
        policies = Policies.from_params(
            {
                "llm": {"model": "m", "seed": 7},
                "compaction": {"policy": NOISY, "budget": 9, "seed": 100},
            }
        )
        assert ["llm.seed=9", "compaction.seed=102"] == replicate_settings(
            policies, "compaction", 2
        )

    def test_a_policy_that_neither_asks_nor_samples_gets_no_seed(self) -> None:
        policies = load_scenario("refund-desk").policies
        assert [] == replicate_settings(policies, "compaction", 3)


class TestNoisyPolicy:
    def test_its_replicates_differ_and_its_spreads_overlap(
        self, noisy: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        results = _bench_json(
            capsys,
            tmp_path,
            "refund-desk",
            "--policy",
            NOISY,
            "--policy",
            f"{NOISY}:seed=50",
            "--replicates",
            "5",
        )
        first = results[0]["spread"]["tokens_resent"]
        assert (5, PERCENTILE_95) == (results[0]["replicates"], first["interval"])
        assert first["low"] < first["high"]
        assert [f"{NOISY}:seed=50"] == results[0]["within_spread"]["tokens_resent"]
        assert [NOISY] == results[1]["within_spread"]["tokens_resent"]

    def test_a_deterministic_policy_has_no_spread_and_is_set_apart(
        self, noisy: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        results = _bench_json(
            capsys,
            tmp_path,
            "refund-desk",
            "--policy",
            "tiered",
            "--policy",
            "none",
            "--replicates",
            "2",
        )
        spreads = [result["spread"]["tokens_resent"] for result in results]
        assert [(s["low"], s["high"]) for s in spreads] == [
            (s["median"], s["median"]) for s in spreads
        ]
        assert {} == {
            name: labels
            for name, labels in results[0]["within_spread"].items()
            if name != "decide_us_per_command"
        }

    def test_the_table_marks_a_difference_inside_the_spread(
        self, noisy: None, capsys: pytest.CaptureFixture[str]
    ) -> None:
        argv = ["bench", "refund-desk", "--policy", NOISY, "--policy", f"{NOISY}:seed=50"]
        assert 0 == main(
            [*argv, "--replicates", "5", "--jobs", "1", "-q", "--columns", "tokens_resent"]
        )
        out = capsys.readouterr().out
        rows = [line for line in out.splitlines() if line.startswith("refund-desk")]
        assert 2 == len(rows)
        assert all(row.endswith("]~") for row in rows)
        assert "medians of 5 replicates [95% percentile interval]" in out


class TestModelReplicates:
    def test_each_replicate_asks_the_model_afresh_with_its_own_seed(
        self, chat_server: ChatServer, llm_env: Path, tmp_path: Path
    ) -> None:
        desk = scenario(tmp_path / "desk.toml", chat_server.url, llm="max_retries = 0\nseed = 7")
        cells = plan([str(desk)], ["rolling-summary"], replicates=2)
        results = [run_cell(cell) for cell in cells]
        asked = len(chat_server.bodies)
        assert [0, 0] == [result.metrics["llm_cache_hits"] for result in results]
        assert {7, 8} == {body["seed"] for body in chat_server.bodies}
        assert asked == sum(result.metrics["llm_calls"] for result in results)

    def test_without_replicates_the_cache_answers_the_second_run(
        self, chat_server: ChatServer, llm_env: Path, tmp_path: Path
    ) -> None:
        desk = scenario(tmp_path / "desk.toml", chat_server.url, llm="max_retries = 0\nseed = 7")
        (cell,) = plan([str(desk)], ["rolling-summary"])
        run_cell(cell)
        again = run_cell(cell)
        assert again.metrics["llm_calls"] == again.metrics["llm_cache_hits"]


class TestFolded:
    def test_one_result_a_cell_with_its_medians(self) -> None:
        cells = plan(["refund-desk"], ["tiered"], replicates=3)
        results = folded(cells, [run_cell(cell) for cell in cells])
        (result,) = results
        assert (3, 304) == (
            result.spread.replicates if result.spread else 0,
            result.metrics["tokens_resent"],
        )

    def test_results_and_replicates_go_together(self, tmp_path: Path) -> None:
        argv = ["bench", "refund-desk", "--policy", "tiered", "--replicates", "2", "--jobs", "1"]
        assert 0 == main([*argv, "--results", str(tmp_path / "r.jsonl"), "-q"])
        assert 3 == len((tmp_path / "r.jsonl").read_text("utf-8").splitlines())


def test_a_cell_keeps_its_replicate() -> None:
    cell = Cell("refund-desk", parse_policy("tiered"), (), (), replicate=4)
    assert 4 == cell.replicate
