"""memtape.lab.bench and ``memtape bench``: cells, results, the JSON contract, the pool."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import json
import logging
import multiprocessing
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import attrs
import pytest
import structlog

from memtape.cli import main
from memtape.core.errors import BadInput
from memtape.core.logs import LOGGER_NAME
from memtape.lab import bench, report
from memtape.lab.bench import (
    METRICS,
    Cell,
    Result,
    parse_grid,
    parse_policy,
    plan,
    policies_for,
    results_data,
    run_cell,
    run_cells,
)
from memtape.lab.bench import cells as running
from memtape.lab.generate import support_session
from memtape.policies.session import Session
from memtape.policies.text.tokenizers import WordCount
from memtape.policies.window.tiered import TieredCompaction
from memtape.projections.metrics import compaction_metrics
from memtape.runs.files import load_run
from memtape.scenarios import load_scenario

SUPPORT = """
[compaction]
policy = "tiered"
budget = 30
hot_n = 3

[[probe]]
text = "ORD-77"
from = 2

[[step]]
turn = "user"
text = "hello I need help with an order please"

[[step]]
turn = "tool"
text = "lookup: ORD-77 shipped on Monday"

[[step]]
turn = "user"
text = "great thanks, and when will it arrive at my door"

[[step]]
turn = "user"
text = "also can I change the address on it"

[[step]]
turn = "tool"
text = "lookup: address changes close once shipped"
"""


FORGETTING = '[forgetting]\npolicy = "importance-recency-access"\ncapacity = 4\n\n'


def _without_time(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The results with the one non-deterministic number taken out."""
    rows = []
    for row in data["results"]:
        metrics = dict(row["metrics"])
        metrics.pop("decide_us_per_command")
        rows.append({**row, "metrics": metrics})
    return rows


def _support(tmp_path: Path) -> str:
    path = tmp_path / "support.toml"
    path.write_text(SUPPORT, "utf-8")
    return str(path)


class TestParsePolicy:
    def test_a_bare_name_finds_its_axis(self) -> None:
        spec = parse_policy("tiered")
        assert ("compaction", "tiered", ()) == (spec.axis, spec.name, spec.settings)

    def test_parameters_become_settings_on_its_axis(self) -> None:
        spec = parse_policy("importance-recency-access:capacity=3, half_life=2.5")
        expected = ("forgetting.capacity=3", "forgetting.half_life=2.5")
        assert expected == spec.settings

    def test_a_policy_of_an_axis_bench_does_not_compare_is_named_as_such(self) -> None:
        with pytest.raises(
            BadInput,
            match=r"^--policy 'rules': 'rules' is a consolidation policy, and bench compares "
            r"compaction or forgetting policies$",
        ):
            parse_policy("rules")

    def test_an_unknown_policy_names_the_known_ones(self) -> None:
        with pytest.raises(BadInput, match=r"no policy 'nope' \(known: .*tiered"):
            parse_policy("nope")

    @pytest.mark.parametrize("text", ["tiered:hot_n", "tiered:=3", "tiered:policy=none"])
    def test_a_malformed_parameter_is_refused(self, text: str) -> None:
        with pytest.raises(BadInput, match="NAME:PARAM=VALUE"):
            parse_policy(text)


class TestParseGrid:
    def test_no_grid_is_one_point_with_no_settings(self) -> None:
        assert ((),) == parse_grid([])

    def test_two_options_give_every_combination(self) -> None:
        points = parse_grid(["compaction.budget=10,20", "compaction.hot_n=1,2"])
        assert (
            ("compaction.budget=10", "compaction.hot_n=1"),
            ("compaction.budget=10", "compaction.hot_n=2"),
            ("compaction.budget=20", "compaction.hot_n=1"),
            ("compaction.budget=20", "compaction.hot_n=2"),
        ) == points

    @pytest.mark.parametrize("text", ["budget=1,2", "compaction.budget", "compaction.budget="])
    def test_a_malformed_grid_is_refused(self, text: str) -> None:
        with pytest.raises(BadInput, match=r"AXIS\.PARAM=V1,V2"):
            parse_grid([text])


class TestPolicies:
    def test_the_scenarios_own_policy_keeps_its_parameters(self, tmp_path: Path) -> None:
        scenario = load_scenario(_support(tmp_path))
        policies = policies_for(scenario, Cell(scenario.source, parse_policy("tiered"), (), ()))
        assert policies is not None
        assert TieredCompaction(30, 3) == policies.compaction

    def test_settings_and_parameters_apply_on_top(self, tmp_path: Path) -> None:
        scenario = load_scenario(_support(tmp_path))
        cell = Cell(scenario.source, parse_policy("tiered:hot_n=1"), ("compaction.budget=9",), ())
        policies = policies_for(scenario, cell)
        assert policies is not None
        assert TieredCompaction(9, 1) == policies.compaction

    def test_a_scenario_without_the_axis_does_not_apply(self) -> None:
        scenario = load_scenario("dana-facts")
        cell = Cell("dana-facts", parse_policy("tiered"), ("compaction.budget=9",), ())
        assert policies_for(scenario, cell) is None

    def test_a_setting_on_an_unknown_axis_is_refused(self) -> None:
        with pytest.raises(BadInput, match="no axis 'window'"):
            plan(["refund-desk"], ["tiered"], ["window.budget=3"])

    def test_an_unknown_parameter_is_refused_before_any_cell_runs(self) -> None:
        with pytest.raises(BadInput, match=r"refund-desk: --policy tiered:bogus=1: .*bogus"):
            plan(["refund-desk"], ["tiered:bogus=1"])


class TestResults:
    def test_an_edited_scenario_file_is_read_again(self, tmp_path: Path) -> None:
        path = _support(tmp_path)
        (before,) = run_cells(plan([path], ["tiered"]))
        Path(path).write_text(SUPPORT + '\n[[step]]\nturn = "user"\ntext = "one more"\n', "utf-8")
        (after,) = run_cells(plan([path], ["tiered"]))
        assert (5, 6) == (len(before.sent), len(after.sent))

    def test_a_cell_measures_the_run_it_made(self, tmp_path: Path) -> None:
        (result,) = run_cells(plan([_support(tmp_path)], ["tiered"]))
        metrics = result.metrics
        assert (max(result.sent), sum(result.sent)) == (
            metrics["peak_tokens"],
            metrics["tokens_resent"],
        )
        assert {"budget": 30, "hot_n": 3, "tokenizer": "words"} == result.params
        assert 5 == len(result.sent)
        assert metrics["decide_us_per_command"] > 0

    def test_measuring_as_the_run_is_made_equals_measuring_the_recorded_run(
        self, tmp_path: Path
    ) -> None:
        path = tmp_path / "long.toml"
        path.write_text(support_session(300, 4, budget=120, hot_n=2), "utf-8")
        (result,) = run_cells(plan([str(path)], ["sliding-window"]))
        scenario = load_scenario(str(path))
        policies = scenario.policies.with_settings(["compaction.policy=sliding-window"])
        session = Session(policies)
        session.execute_all(scenario.steps)
        replayed = compaction_metrics(session.run, scenario.probes)
        assert replayed.losses
        assert (replayed.sent, replayed.retention) == (result.sent, result.retention)
        assert (replayed.compactions, replayed.probe_retention) == (
            result.metrics["compactions"],
            result.metrics["probe_retention"],
        )

    def test_forgetting_metrics_do_not_apply_to_a_window_only_scenario(self) -> None:
        (result,) = run_cells(plan(["refund-desk"], ["tiered"]))
        assert {None} == {result.metrics[name] for name in ("hit_at_k", "stale_reads", "regret")}

    def test_a_forgetting_cell_measures_queries_and_not_the_window(self) -> None:
        queries = str(Path(__file__).parent / "fixtures" / "dana-queries.toml")
        (result,) = run_cells(plan([queries], ["importance-recency-access:capacity=2"]))
        metrics = result.metrics
        assert (0.5, 0, 2, 1) == (
            metrics["hit_at_k"],
            metrics["stale_reads"],
            metrics["evictions"],
            metrics["regret"],
        )
        assert {None} == {metrics[name] for name in ("peak_tokens", "compactions")}

    def test_the_notable_parameters_are_the_shared_one_and_those_off_the_defaults(self) -> None:
        results = run_cells(plan(["refund-desk"], ["tiered", "tiered:hot_n=3,tokenizer=words"]))
        assert [{"budget": 40}, {"budget": 40, "hot_n": 3}] == [r.notable for r in results]

    def test_another_policy_keeps_the_shared_parameters_only(self) -> None:
        (result,) = run_cells(plan(["refund-desk"], ["sliding-window"]))
        assert 40 == (result.params or {}).get("budget")
        assert "hot_n" not in (result.params or {})

    def test_a_forgetting_policy_does_not_apply_to_a_session_without_store_steps(
        self, tmp_path: Path
    ) -> None:
        path = tmp_path / "long.toml"
        path.write_text(support_session(50, 4), "utf-8")  # both headers, only turns
        (result,) = run_cells(plan([str(path)], ["importance-recency-access"]))
        assert (None, dict.fromkeys(METRICS)) == (result.params, result.metrics)

    def test_a_cell_reports_only_its_own_axis(self, tmp_path: Path) -> None:
        path = tmp_path / "both.toml"
        path.write_text(
            SUPPORT.replace("[[probe]]", FORGETTING + "[[probe]]")
            + '[[step]]\nwrite = "k"\ntext = "t"\nimportance = 0.5\n',
            "utf-8",
        )
        window, store = run_cells(plan([str(path)], ["tiered", "importance-recency-access"]))
        assert {None} == {window.metrics[name] for name in ("stale_reads", "evictions")}
        assert {None} == {store.metrics[name] for name in ("peak_tokens", "compactions")}
        assert (0, 0) == (store.metrics["stale_reads"], store.metrics["evictions"])

    def test_a_cell_that_does_not_apply_has_every_metric_null(self) -> None:
        (result,) = run_cells(plan(["dana-facts"], ["tiered"]))
        assert (None, dict.fromkeys(METRICS)) == (result.params, result.metrics)

    def test_the_json_holds_exactly_the_contract(self, tmp_path: Path) -> None:
        results = run_cells(plan([_support(tmp_path), "dana-facts"], ["tiered"]))
        data = results_data(results)
        assert ["results"] == list(data)
        for row in data["results"]:
            assert ["scenario", "policy", "params", "metrics"] == list(row)
            assert list(METRICS) == list(row["metrics"])

    def test_the_same_inputs_give_the_same_numbers(self, tmp_path: Path) -> None:
        cells = plan(
            [_support(tmp_path), "refund-desk", "dana-facts"], ["tiered", "tiered:hot_n=1"]
        )
        first = results_data(run_cells(cells))
        second = results_data(run_cells(cells))
        assert _without_time(first) == _without_time(second)

    def test_a_grid_on_a_pool_equals_a_serial_run(self, tmp_path: Path) -> None:
        cells = plan(
            [_support(tmp_path), "refund-desk"],
            ["tiered", "tiered:hot_n=1"],
            grid=["compaction.budget=12,25,60"],
        )
        assert 12 == len(cells)
        serial = run_cells(cells, jobs=1)
        pooled = run_cells(cells, jobs=2)
        assert _without_time(results_data(serial)) == _without_time(results_data(pooled))
        assert [r.sent for r in serial] == [r.sent for r in pooled]

    def test_a_grid_varies_its_parameter(self) -> None:
        results = run_cells(plan(["refund-desk"], ["tiered"], grid=["compaction.budget=30,60"]))
        assert [30, 60] == [r.params["budget"] for r in results if r.params]
        assert ["tiered compaction.budget=30", "tiered compaction.budget=60"] == [
            r.label for r in results
        ]

    def test_progress_is_told_after_each_cell(self) -> None:
        seen: list[tuple[int, int]] = []
        run_cells(
            plan(["refund-desk"], ["tiered", "tiered:hot_n=1"]),
            progress=lambda done, total, _: seen.append((done, total)),
        )
        assert [(1, 2), (2, 2)] == seen


class TestWarmUp:
    """A cell's decision cost is its own commands': each process warms up before its first
    cell is timed (shown by the order of what runs, not by timing it)."""

    @pytest.fixture
    def order(self, monkeypatch: pytest.MonkeyPatch) -> list[str]:
        """What ran, in order: ``warm`` for a warm-up, ``clock`` for each reading of the
        clock that times the commands; this process not warmed yet."""
        order: list[str] = []

        def clock() -> int:
            order.append("clock")
            return len(order)

        monkeypatch.setattr(running, "_warmed_in", None)
        monkeypatch.setattr(running, "warm_up", lambda: order.append("warm"))
        monkeypatch.setattr(running, "_clock", clock)
        return order

    def test_a_process_warms_up_before_its_first_command_is_timed(self, order: list[str]) -> None:
        cell = plan(["refund-desk"], ["tiered"])[0]
        bench.run_cell(cell)
        bench.run_cell(cell)

        assert (["warm", "clock"], 1) == (order[:2], order.count("warm"))

    def test_a_cells_tokenizer_counts_once_before_its_first_command_is_timed(
        self, order: list[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A BPE vocabulary loads on its first count: that belongs to no command."""
        counted = WordCount.count

        def count(tokenizer: WordCount, text: str) -> int:
            order.append("count")
            return counted(tokenizer, text)

        monkeypatch.setattr(WordCount, "count", count)
        bench.run_cell(plan(["refund-desk"], ["tiered"])[0])

        assert ["warm", "count", "clock"] == order[:3]

    def test_a_process_forked_from_a_warm_one_warms_up_again(
        self, order: list[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A forked worker inherits its parent's flag, not its parent's warmth."""
        monkeypatch.setattr(running, "_warmed_in", os.getpid() + 1)
        bench.run_cell(plan(["refund-desk"], ["tiered"])[0])

        assert ["warm", "clock"] == order[:2]

    @pytest.mark.skipif(
        multiprocessing.get_start_method() != "fork",
        reason="a pool's workers see this test's stand-ins only when forked",
    )
    def test_each_worker_of_a_pool_warms_up_before_its_first_cell(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        def noted(what: str) -> None:
            with (tmp_path / str(os.getpid())).open("a", encoding="utf-8") as file:
                file.write(f"{what}\n")

        def clock() -> int:
            noted("clock")
            return 0

        monkeypatch.setattr(running, "_warmed_in", None)
        monkeypatch.setattr(running, "warm_up", lambda: noted("warm"))
        monkeypatch.setattr(running, "_clock", clock)
        run_cells(plan(["refund-desk"], ["tiered"] * 4), jobs=2)

        workers = [path.read_text("utf-8").split() for path in tmp_path.iterdir()]
        assert [(["warm", "clock"], 1)] * len(workers) == [
            (lines[:2], lines.count("warm")) for lines in workers
        ]
        assert str(os.getpid()) not in {path.name for path in tmp_path.iterdir()}

    def test_the_warm_up_logs_no_decision(self) -> None:
        """``-v`` shows the cells' decisions, not the warm-up's."""
        logger = logging.getLogger(LOGGER_NAME)
        level = logger.level
        logger.setLevel(logging.DEBUG)
        try:
            with structlog.testing.capture_logs() as entries:
                bench.warm_up()
        finally:
            logger.setLevel(level)

        assert [] == entries


class TestPeakOverBudget:
    """``peak_over_budget``: some turn sent more than the budget, for any reason."""

    def test_a_tiered_budget_below_its_hot_turns_marks_the_row(self, tmp_path: Path) -> None:
        # hot_n = 3 keeps three turns of 6 to 11 tokens: more than 12 whatever it drops.
        (result,) = run_cells(plan([_support(tmp_path)], ["tiered"], ["compaction.budget=12"]))
        row = result.data()["metrics"]
        assert (True, "floor") == (row["peak_over_budget"], result.over_budget)
        assert row["peak_tokens"] > 12

    def test_a_run_within_its_budget_is_not_marked(self, tmp_path: Path) -> None:
        (result,) = run_cells(plan([_support(tmp_path)], ["tiered"], ["compaction.budget=40"]))
        row = result.data()["metrics"]
        assert (False, None) == (row["peak_over_budget"], result.over_budget)
        assert 30 < row["peak_tokens"] <= 40

    def test_every_json_row_carries_the_field(self, tmp_path: Path) -> None:
        scenarios = [_support(tmp_path), "dana-facts"]
        policies = ["tiered:hot_n=5", "sliding-window", "none", "importance-recency-access"]
        rows = results_data(run_cells(plan(scenarios, policies)))["results"]
        assert [
            ("support", "tiered", True),
            ("support", "sliding-window", False),
            ("support", "none", True),
            ("support", "importance-recency-access", None),
            ("dana-facts", "tiered", None),
            ("dana-facts", "sliding-window", None),
            ("dana-facts", "none", None),
            ("dana-facts", "importance-recency-access", None),
        ] == [(row["scenario"], row["policy"], row["metrics"]["peak_over_budget"]) for row in rows]

    def test_the_table_marks_the_peak_and_says_why_under_it(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        status, printed, _ = _bench(capsys, "refund-desk", "--policy", "tiered", "--policy", "none")
        lines = printed.splitlines()
        tiered, unbounded = (line.split()[3] for line in lines if line.startswith("refund-desk"))
        assert (0, "40", "101†") == (status, tiered, unbounded)
        assert [
            "† peak over budget: the policy promises no budget bound "
            "(peak_over_budget: true in --json)"
        ] == [line for line in lines if line.startswith(("*", "†", "!"))]


def _bench(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["bench", *argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


class TestCli:
    def test_bench_without_a_policy_says_how_to_name_one(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A newcomer's first ``memtape bench refund-desk`` learns what to add."""
        status, _, err = _bench(capsys, "refund-desk")

        assert (2, True, True) == (status, "--policy tiered" in err, "memtape policies" in err)

    def test_bench_prints_a_row_per_cell_and_writes_json(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        out = tmp_path / "bench.json"
        status, printed, err = _bench(
            capsys,
            "refund-desk",
            "--policy",
            "tiered",
            "--policy",
            "tiered:hot_n=1",
            "--json",
            str(out),
        )
        assert (0, "") == (status, err)
        assert 2 == printed.count("refund-desk")
        data = json.loads(out.read_text("utf-8"))
        assert [2, 1] == [row["params"]["hot_n"] for row in data["results"]]

    def test_losses_lists_the_event_that_lost_each_probe(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        status, printed, _ = _bench(capsys, "refund-desk", "--policy", "tiered", "--losses")
        assert 0 == status
        assert printed.rstrip().endswith(
            "refund-desk, tiered: 'restocking fee' missing at turn 10, "
            "lost by event 15 (CompactionTriggered)"
        )

    def test_bench_plots_png_and_svg(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        png = tmp_path / "meter.png"
        status, _, err = _bench(capsys, "refund-desk", "--policy", "tiered", "--plot", str(png))
        assert (0, "") == (status, err)
        assert png.read_bytes().startswith(b"\x89PNG")
        assert b"<svg" in png.with_suffix(".svg").read_bytes()

    @pytest.mark.parametrize(
        ("argv", "fragment"),
        [
            (["refund-desk", "--policy", "nope"], "no policy 'nope'"),
            (["nowhere.toml", "--policy", "tiered"], "nowhere.toml: no such scenario file"),
            (["refund-desk", "--policy", "tiered", "--set", "compaction.budget=0"], "budget"),
            (["refund-desk", "--policy", "tiered", "--plot", "x.pdf"], "name a .png file"),
            (["dana-facts", "--policy", "tiered", "--plot", "x.png"], "no scenario has turns"),
            (["refund-desk", "--policy", "lru"], "nothing to compare"),
            (
                ["refund-desk", "--policy", "tiered:keep=4"],
                "refund-desk: --policy tiered:keep=4: [compaction]: unknown parameter keep",
            ),
            (
                ["refund-desk", "--policy", "tiered", "--grid", "compaction.budget=a,b"],
                "refund-desk: --grid point compaction.budget=a: [compaction]: budget must be",
            ),
            (
                ["refund-desk", "--policy", "tiered", "--set", "compaction.hot_n=-1"],
                "refund-desk: --set: [compaction]: hot_n must be",
            ),
            (
                ["refund-desk", "--policy", "tiered", "--columns", "peak_tokens,peak"],
                "--columns: unknown column 'peak' (known: peak_tokens, tokens_resent, ",
            ),
        ],
    )
    def test_bad_input_is_one_line_and_writes_nothing(
        self,
        tmp_path: Path,
        capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch,
        argv: list[str],
        fragment: str,
    ) -> None:
        monkeypatch.chdir(tmp_path)
        status, _, err = _bench(capsys, *argv, "--json", "out.json")
        assert 2 == status
        assert 1 == len(err.splitlines())
        assert err.startswith("memtape: error: ")
        assert fragment in err
        assert [] == list(tmp_path.iterdir())


def test_result_data_is_the_contract_row() -> None:
    result = Result("s", "tiered x", "tiered", {"budget": 3}, {"peak_tokens": 1}, 3, (1,), (None,))
    assert {
        "scenario": "s",
        "policy": "tiered",
        "params": {"budget": 3},
        "metrics": {"peak_tokens": 1},
    } == result.data()


class TestProbesFile:
    def test_a_file_s_probes_are_checked_beside_the_scenario_s(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """refund-desk's own two probes stay visible; ORD-3300, said at turn 1 and due from
        turn 2, is dropped by tiered's first compaction (turn 4), so fewer checks pass."""
        extra = tmp_path / "extra.toml"
        extra.write_text('[[probe]]\ntext = "ORD-3300"\nfrom = 2\nkind = "identifier"\n')
        out = tmp_path / "bench.json"
        argv = ["refund-desk", "--policy", "tiered", "-q", "--jobs", "1"]
        assert 0 == _bench(capsys, *argv, "--json", str(out))[0]
        alone = json.loads(out.read_text("utf-8"))["results"][0]["metrics"]["probe_retention"]
        assert 0 == _bench(capsys, *argv, "--probes", str(extra), "--json", str(out))[0]
        data = json.loads(out.read_text("utf-8"))["results"][0]
        assert data["metrics"]["probe_retention"] < alone
        assert "ORD-3300" in [
            loss["probe"]
            for loss in bench.results_data(
                [bench.run_cell(bench.plan(["refund-desk"], ["tiered"], probes=str(extra))[0])],
                losses=True,
            )["results"][0]["losses"]
        ]

    def test_a_bad_file_is_one_line_and_nothing_runs(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        extra = tmp_path / "extra.toml"
        extra.write_text('[[probe]]\ntext = ""\nfrom = 2\n')
        status, out, err = _bench(
            capsys, "refund-desk", "--policy", "tiered", "--probes", str(extra)
        )
        assert (2, "", 1) == (status, out, len(err.splitlines()))
        assert f"{extra}: probe 1" in err

    def test_auto_is_refused_without_being_offered(self) -> None:
        with pytest.raises(BadInput) as refused:
            bench.plan(["refund-desk"], ["tiered"], probes="auto")
        assert (
            "--probes auto: bench takes a file ending in .toml ([[probe]] tables) or .jsonl "
            '(one {"text", "from"} object a line); auto plants probes in import and audit'
        ) == str(refused.value)


class TestCost:
    """The cost metrics of a compaction cell, for the model the scenario or --set prices."""

    def test_a_scenario_without_a_model_has_no_cost_metrics(self) -> None:
        result = run_cell(plan(["refund-desk"], ["tiered"])[0])
        expected = dict.fromkeys(
            (
                "billed_input_tokens",
                "cache_read_tokens",
                "cache_write_tokens",
                "cache_breaks",
                "usd",
            )
        )
        assert expected == {name: result.metrics[name] for name in expected}

    def test_set_cost_model_prices_the_run(self) -> None:
        result = run_cell(plan(["refund-desk"], ["tiered"], ["cost.model=gpt-5"])[0])
        # refund-desk's prompts are far below 1,024 tokens: every one is billed as input.
        sent = result.metrics["tokens_resent"]
        expected = sent * 1.25 / 1e6
        assert (sent, 0) == (
            result.metrics["billed_input_tokens"],
            result.metrics["cache_read_tokens"],
        )
        assert expected == pytest.approx(result.metrics["usd"], rel=1e-12)

    def test_a_priced_result_names_the_model_it_was_billed_as(self) -> None:
        """From the scenario's [cost] table, a dated snapshot priced as its model's row, or
        from --set; the JSON said neither."""
        priced = run_cell(plan(["cache-breaker"], ["none"])[0])
        snapshot = ["cost.model=claude-sonnet-4-5-20250929"]
        dated = run_cell(plan(["refund-desk"], ["tiered"], snapshot)[0])
        unpriced = run_cell(plan(["refund-desk"], ["tiered"])[0])
        assert ("claude-sonnet-4-5", "claude-sonnet-4-5", None) == (
            priced.data().get("priced_as"),
            dated.data().get("priced_as"),
            unpriced.priced_as,
        )
        assert "priced_as" not in unpriced.data()

    def test_an_unknown_model_is_refused_before_any_cell_runs(self) -> None:
        with pytest.raises(BadInput) as error:
            plan(["refund-desk"], ["tiered"], ["cost.model=gpt5"])
        expected = (
            "--set cost.model: no price for model 'gpt5' (--prices FILE.toml adds one): "
            "did you mean 'gpt-5'?"
        )
        assert expected == str(error.value)

    def test_a_bad_price_file_is_one_line_and_nothing_runs(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        prices = tmp_path / "prices.toml"
        prices.write_text('[models."m"]\nprovider = "openai"\ninput = "cheap"\n', "utf-8")
        out = tmp_path / "bench.json"
        status, printed, err = _bench(
            capsys, "refund-desk", "--policy", "tiered", "--prices", str(prices), "--json", str(out)
        )
        expected = (
            f"memtape: error: {prices}: models.'m': input must be a number in [0, 1e+06], "
            "got 'cheap'\n"
        )
        assert (2, "", expected, False) == (status, printed, err, out.exists())


class TestRuns:
    def test_each_cell_writes_its_run_under_a_name_of_its_own(self, tmp_path: Path) -> None:
        runs = tmp_path / "runs"
        argv = ["bench", "refund-desk", "--policy", "tiered", "--grid", "compaction.budget=40,60"]
        assert 0 == main([*argv, "--runs", str(runs), "-q", "--jobs", "1"])
        names = sorted(path.name for path in runs.iterdir())
        assert 2 == len(names)
        assert all(name.startswith("refund-desk-tiered-compaction.budget-") for name in names)

    def test_the_run_written_is_the_cells(self, tmp_path: Path) -> None:
        (cell,) = plan(["refund-desk"], ["sliding-window"])
        run_cell(attrs.evolve(cell, runs=str(tmp_path)))
        scenario = load_scenario("refund-desk")
        session = Session(scenario.policies.with_settings(["compaction.policy=sliding-window"]))
        session.execute_all(scenario.steps)
        loaded = load_run(tmp_path / cell.run_name)
        assert session.run.events == loaded.session.run.events

    def test_a_relative_runs_path_is_the_one_a_worker_elsewhere_writes_to(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()

        def worker(jobs: int, within: object) -> bench.Engine:
            def run(cells: Sequence[Cell]) -> Iterator[tuple[int, Result]]:
                # A Ray worker runs in a working directory of its own.
                monkeypatch.chdir(elsewhere)
                for number, cell in enumerate(cells):
                    yield number, run_cell(cell)

            return run

        monkeypatch.setattr(report, "process_pool", worker)
        monkeypatch.chdir(tmp_path)
        argv = ["bench", "refund-desk", "--policy", "tiered", "--runs", "runs", "-q"]

        assert 0 == main(argv)
        assert (1, False) == (
            len(list((tmp_path / "runs").iterdir())),
            (elsewhere / "runs").exists(),
        )

    def test_a_resumed_sweep_writes_the_runs_of_the_cells_it_runs_into_its_own_directory(
        self, tmp_path: Path
    ) -> None:
        results, runs = tmp_path / "res.jsonl", tmp_path / "runs"
        argv = ["bench", "refund-desk", "--policy", "tiered", "--grid", "compaction.budget=40,60"]
        argv += ["--results", str(results), "--runs", str(runs), "-q", "--jobs", "1"]
        assert 0 == main(argv)
        # Cut short after its first cell: the second's result and run are not there.
        header, first, _ = results.read_text("utf-8").splitlines(keepends=True)
        results.write_text(header + first, "utf-8")
        kept = {path.name: path.read_bytes() for path in runs.iterdir()}
        cells = plan(["refund-desk"], ["tiered"], grid=["compaction.budget=40,60"])
        done = json.loads(first)["settings"]
        (lost,) = [cell.run_name for cell in cells if list(cell.settings) != done]
        (runs / lost).unlink()
        (finished,) = set(kept) - {lost}
        kept[finished] = b"the first attempt's, left as it is"
        (runs / finished).write_bytes(kept[finished])

        status = main([*argv, "--resume"])

        assert (0, kept) == (status, {path.name: path.read_bytes() for path in runs.iterdir()})

    def test_a_resumed_sweep_refuses_a_runs_directory_holding_another_file(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        results, runs = tmp_path / "res.jsonl", tmp_path / "runs"
        runs.mkdir()
        (runs / "old.jsonl").write_text("mine", "utf-8")
        argv = ["bench", "refund-desk", "--policy", "tiered", "-q", "--jobs", "1"]

        status = main([*argv, "--results", str(results), "--runs", str(runs), "--resume"])

        err = capsys.readouterr().err
        assert (2, 1, False, ["old.jsonl"]) == (
            status,
            len(err.splitlines()),
            results.exists(),
            [path.name for path in runs.iterdir()],
        )
        assert "old.jsonl" in err

    @pytest.mark.parametrize("holding", ["a file", "a directory with a file"])
    def test_a_runs_path_that_holds_anything_is_one_line_and_runs_nothing(
        self, tmp_path: Path, holding: str, capsys: pytest.CaptureFixture[str]
    ) -> None:
        runs = tmp_path / "runs"
        if holding == "a file":
            runs.write_text("mine", "utf-8")
        else:
            runs.mkdir()
            (runs / "old.jsonl").write_text("mine", "utf-8")
        argv = ["bench", "refund-desk", "--policy", "tiered", "--runs", str(runs), "-q"]
        assert 2 == main([*argv, "--json", str(tmp_path / "out.json")])
        assert 1 == len(capsys.readouterr().err.splitlines())
        assert not (tmp_path / "out.json").exists()
