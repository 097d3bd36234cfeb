"""memtape.lab.results_table and ``memtape bench --results FILE.parquet``: a sweep's results
as one Parquet table, a row per cell, that DuckDB and pyarrow read back equal to the JSON."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import json
import sys
from pathlib import Path
from typing import Any

import attrs
import duckdb
import pyarrow
import pyarrow.parquet as pq
import pytest

from memtape.cli import main
from memtape.core.errors import BadInput
from memtape.lab.bench import Result, plan
from memtape.lab.results_table import LEADING, read_table, write_table
from memtape.llm.config import BASE_URL_ENV
from memtape.projections.billing.tally import COST_METRICS
from tests.llm_server import ChatServer

SWEEP = ["refund-desk", "dana-facts", "--policy", "tiered", "--policy", "lru", "--jobs", "1"]
GRID = ["--grid", "compaction.budget=40,60"]


def _bench(tmp_path: Path, *more: str) -> tuple[int, Path, Path]:
    """``bench`` of ``SWEEP`` with ``--json`` and a Parquet table: status, JSON, table."""
    out, table = tmp_path / "out.json", tmp_path / "out.parquet"
    status = main(["bench", *SWEEP, *GRID, "-q", "--json", str(out), "--results", str(table)])
    return status, out, table


def _error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert 1 == len(err.splitlines()), err
    return err


def _as_json(row: dict[str, Any]) -> dict[str, Any]:
    """A table's row as the JSON contract writes its cell."""
    params = {
        name.split(".", 2)[2]: value
        for name, value in row.items()
        if name.startswith("param.") and value is not None
    }
    metrics = {
        name.removeprefix("metric."): value
        for name, value in row.items()
        if name.startswith("metric.")
    }
    # A cell whose policy did not apply has no parameters: null in the JSON.
    return {
        "scenario": row["scenario"],
        "policy": row["policy"],
        "params": params or None,
        "metrics": metrics,
    }


class TestTheTable:
    def test_duckdb_reads_a_row_per_cell_equal_to_the_json(self, tmp_path: Path) -> None:
        status, out, table = _bench(tmp_path)

        assert 0 == status
        cursor = duckdb.connect().execute("SELECT * FROM read_parquet(?)", [str(table)])
        names = [column[0] for column in cursor.description]
        rows = [dict(zip(names, values, strict=True)) for values in cursor.fetchall()]
        assert json.loads(out.read_text("utf-8"))["results"] == [_as_json(r) for r in rows]

    def test_pyarrow_reads_the_same_rows(self, tmp_path: Path) -> None:
        _, out, table = _bench(tmp_path)

        rows = pq.read_table(table).to_pylist()
        assert json.loads(out.read_text("utf-8"))["results"] == [_as_json(r) for r in rows]

    def test_a_query_a_team_would_write(self, tmp_path: Path) -> None:
        _, _, table = _bench(tmp_path)

        found = duckdb.connect().execute(
            'SELECT "param.compaction.budget", "metric.tokens_resent" FROM read_parquet(?) '
            "WHERE scenario = 'refund-desk' AND policy = 'tiered' ORDER BY 1",
            [str(table)],
        )
        assert [(40, 304), (60, 373)] == found.fetchall()

    def test_the_cell_columns_come_first_then_parameters_then_metrics(self, tmp_path: Path) -> None:
        _, _, table = _bench(tmp_path)

        names = pq.read_table(table).schema.names
        assert list(LEADING) == names[: len(LEADING)]
        kinds = [name.partition(".")[0] for name in names[len(LEADING) :]]
        assert sorted(kinds, key=["param", "metric"].index) == kinds
        assert "param.forgetting.capacity" in names

    def test_each_cell_says_its_source_axis_settings_and_label(self, tmp_path: Path) -> None:
        _, _, table = _bench(tmp_path)

        first = pq.read_table(table).to_pylist()[1]
        expected = {
            "scenario": "refund-desk",
            "source": "refund-desk",
            "policy": "tiered",
            "label": "tiered compaction.budget=60",
            "axis": "compaction",
            "settings": ["compaction.budget=60"],
            "idle": None,
        }
        assert expected == {name: first[name] for name in LEADING}

    def test_columns_are_typed_by_their_values(self, tmp_path: Path) -> None:
        _, _, table = _bench(tmp_path)

        schema = pq.read_table(table).schema
        kinds = {
            name: str(schema.field(name).type)
            for name in (
                "param.compaction.budget",
                "param.compaction.tokenizer",
                "metric.probe_retention",
                "metric.peak_over_budget",
                "metric.regret",
            )
        }
        # regret is null in every cell here: a double column with no value.
        expected = {
            "param.compaction.budget": "int64",
            "param.compaction.tokenizer": "string",
            "metric.probe_retention": "double",
            "metric.peak_over_budget": "bool",
            "metric.regret": "double",
        }
        assert expected == kinds

    def test_the_table_says_what_it_is(self, tmp_path: Path) -> None:
        _, _, table = _bench(tmp_path)

        metadata = pq.read_table(table).schema.metadata
        assert b"memtape-bench-table" == metadata[b"memtape.format"]
        assert b"1" == metadata[b"memtape.version"]


class TestTheBill:
    """cache-breaker is priced (claude-sonnet-4-5): its cells' cost columns hold figures."""

    def _table(self, tmp_path: Path) -> tuple[Path, Path]:
        out, table = tmp_path / "out.json", tmp_path / "out.parquet"
        argv = ["bench", "cache-breaker", "--policy", "none", "--policy", "sliding-window"]
        argv += ["--policy", "tiered", "--jobs", "1", "-q", "--json", str(out)]
        assert 0 == main([*argv, "--results", str(table)])
        return out, table

    def test_duckdb_reads_each_cell_s_bill_equal_to_the_json(self, tmp_path: Path) -> None:
        out, table = self._table(tmp_path)

        columns = ", ".join(f'"metric.{name}"' for name in COST_METRICS)
        cursor = duckdb.connect().execute(
            f"SELECT policy, {columns} FROM read_parquet(?)", [str(table)]
        )
        written = json.loads(out.read_text("utf-8"))["results"]
        expected = [
            (result["policy"], *(result["metrics"][name] for name in COST_METRICS))
            for result in written
        ]
        assert expected == cursor.fetchall()
        assert [] == [row for row in expected if None in row]

    def test_each_row_names_the_model_its_bill_was_priced_as(self, tmp_path: Path) -> None:
        """cache-breaker's [cost] table names it; no column said which."""
        _, table = self._table(tmp_path)

        found = duckdb.connect().execute(
            "SELECT DISTINCT priced_as FROM read_parquet(?)", [str(table)]
        )
        assert [("claude-sonnet-4-5",)] == found.fetchall()

    def test_the_policy_that_re_sends_fewest_tokens_costs_most(self, tmp_path: Path) -> None:
        _, table = self._table(tmp_path)

        found = duckdb.connect().execute(
            'SELECT arg_min(policy, "metric.tokens_resent"), arg_max(policy, "metric.usd") '
            "FROM read_parquet(?)",
            [str(table)],
        )
        assert [("sliding-window", "sliding-window")] == found.fetchall()


class TestValuesOfAnyShape:
    def _written(self, tmp_path: Path, params: list[dict[str, Any]]) -> list[dict[str, Any]]:
        cells = plan(["refund-desk"], ["tiered", "sliding-window"])
        base = Result("refund-desk", "tiered", "tiered", {}, {"usd": 0.5}, 40, (), ())
        results = [attrs.evolve(base, params=p) for p in params]
        table = tmp_path / "shapes.parquet"
        write_table(table, cells, results)
        return read_table(table)

    def test_a_list_goes_in_as_json_text_and_comes_back_a_list(self, tmp_path: Path) -> None:
        compactions = [{"before": 3, "summary": "the refund"}]

        rows = self._written(tmp_path, [{"compactions": compactions}, {"compactions": []}])

        assert [compactions, []] == [row["param.compaction.compactions"] for row in rows]
        field = pq.read_schema(tmp_path / "shapes.parquet").field("param.compaction.compactions")
        assert {b"memtape.encoding": b"json"} == field.metadata

    def test_a_column_of_text_and_numbers_keeps_each_value(self, tmp_path: Path) -> None:
        rows = self._written(tmp_path, [{"keep": "all"}, {"keep": 4}])

        assert ["all", 4] == [row["param.compaction.keep"] for row in rows]

    def test_integers_and_floats_make_a_double_column(self, tmp_path: Path) -> None:
        rows = self._written(tmp_path, [{"half_life": 4}, {"half_life": 2.5}])

        assert [4.0, 2.5] == [row["param.compaction.half_life"] for row in rows]

    def test_a_metric_the_results_hold_is_a_column_whatever_its_name(self, tmp_path: Path) -> None:
        rows = self._written(tmp_path, [{}, {}])

        assert [0.5, 0.5] == [row["metric.usd"] for row in rows]


class TestFromTheCommandLine:
    def test_a_jsonl_results_file_and_a_table_from_one_sweep(self, tmp_path: Path) -> None:
        jsonl, table = tmp_path / "sweep.jsonl", tmp_path / "sweep.parquet"

        status = main(["bench", *SWEEP, "-q", "--results", str(jsonl), "--results", str(table)])

        assert 0 == status
        assert 5 == len(jsonl.read_text("utf-8").splitlines())
        assert 4 == pq.read_table(table).num_rows

    def test_the_table_overwrites_an_older_one(self, tmp_path: Path) -> None:
        table = tmp_path / "sweep.parquet"
        table.write_bytes(b"old")

        assert 0 == main(["bench", *SWEEP, "-q", "--results", str(table)])
        assert 4 == pq.read_table(table).num_rows

    @pytest.mark.parametrize(
        ("suffix", "kind"), [(".parquet", "Parquet table"), (".jsonl", "JSONL results file")]
    )
    def test_two_files_of_one_format_are_refused(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], suffix: str, kind: str
    ) -> None:
        first, second = tmp_path / f"a{suffix}", tmp_path / f"b{suffix}"

        status = main(["bench", *SWEEP, "-q", "--results", str(first), "--results", str(second)])

        assert 2 == status
        assert f"--results {second}: a second {kind} (after {first})" in _error(capsys)
        assert [] == list(tmp_path.iterdir())

    def test_without_pyarrow_one_line_names_the_extra_and_nothing_is_written(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setitem(sys.modules, "pyarrow", None)
        out, table = tmp_path / "out.json", tmp_path / "out.parquet"

        status = main(["bench", *SWEEP, "-q", "--json", str(out), "--results", str(table)])

        assert 2 == status
        err = _error(capsys)
        assert f"--results {table}: a Parquet table needs pyarrow, which is not installed" in err
        assert "[results]" in err
        assert [] == list(tmp_path.iterdir())

    def test_a_file_that_is_no_table_is_refused_as_it_is_read(self, tmp_path: Path) -> None:
        table = tmp_path / "old.parquet"
        table.write_text("not a table", "utf-8")

        with pytest.raises(BadInput, match=r"old\.parquet: not a Parquet table: "):
            read_table(table)


class TestUnsafeReaders:
    def test_a_pyarrow_that_may_unpickle_a_file_s_types_is_refused_before_reading(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        _, _, table = _bench(tmp_path)
        monkeypatch.setattr(pyarrow, "__version__", "14.0.0")

        with pytest.raises(BadInput) as refused:
            read_table(table)

        assert (
            f"{table}: pyarrow 14.0.0 may run code a Parquet file holds (CVE-2023-47248): "
            "install pyarrow 14.0.1 or later"
        ) == str(refused.value)


class TestReplicatesAndJudge:
    def test_a_replicated_row_holds_its_medians_intervals_and_overlaps(
        self, tmp_path: Path
    ) -> None:
        out, table = tmp_path / "out.json", tmp_path / "out.parquet"
        argv = ["bench", "refund-desk", "--policy", "tiered", "--policy", "sliding-window"]
        argv += ["--replicates", "3", "--jobs", "1", "-q", "--json", str(out)]
        assert 0 == main([*argv, "--results", str(table)])
        written = json.loads(out.read_text("utf-8"))["results"]
        rows = read_table(table)
        assert [3, 3] == [row["replicates"] for row in rows]
        assert [result["metrics"] for result in written] == [_as_json(r)["metrics"] for r in rows]
        for result, row in zip(written, rows, strict=True):
            for name, spread in result["spread"].items():
                assert (spread["low"], spread["high"], spread["interval"]) == (
                    row[f"spread.{name}.low"],
                    row[f"spread.{name}.high"],
                    row[f"spread.{name}.interval"],
                )
            within = {
                name.removeprefix("within_spread."): value
                for name, value in row.items()
                if name.startswith("within_spread.") and value is not None
            }
            assert result["within_spread"] == within

    def test_a_judged_row_holds_the_judge_the_probes_and_the_answers(
        self,
        tmp_path: Path,
        chat_server: ChatServer,
        llm_env: Path,
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        monkeypatch.setenv(BASE_URL_ENV, chat_server.url)
        Path("q.toml").write_text(
            '[[probe]]\ntext = "ORD-3300"\nfrom = 2\nquestion = "Which order is it?"\n'
            'answer = "ORD-3300"\n',
            "utf-8",
        )
        argv = ["bench", "refund-desk", "--policy", "tiered", "--probes", "q.toml"]
        argv += ["--judge", "judge-model", "--jobs", "1", "-q", "--json", "out.json"]
        assert 0 == main([*argv, "--results", "out.parquet"])
        (result,) = json.loads(Path("out.json").read_text("utf-8"))["results"]
        (row,) = read_table(Path("out.parquet"))
        assert ("judge-model", "q.toml", result["answers"]) == (
            row["judge"],
            row["probes"],
            row["answers"],
        )
        assert (result["metrics"]["answers_correct"], result["metrics"]["answers_judged"]) == (
            row["metric.answers_correct"],
            row["metric.answers_judged"],
        )
