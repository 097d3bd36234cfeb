"""memtape.lab.table: the bench's comparison table."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import io

import attrs
import pytest
from rich.console import Console

from memtape.core.errors import BadInput
from memtape.lab.bench import METRICS, Result, plan, results_data, run_cells
from memtape.lab.table import (
    COLUMNS,
    OVER_BUDGET_MARKS,
    _cell,
    column_names,
    comparison_table,
    left_out_line,
    loss_lines,
    over_budget_lines,
    skipped_line,
)
from memtape.projections.metrics import ProbeLoss


def _render(*results: Result) -> str:
    out = io.StringIO()
    Console(file=out, width=250).print(comparison_table(results).table)
    return out.getvalue()


def _result(scenario: str, params: dict[str, object] | None, **metrics: object) -> Result:
    values = dict.fromkeys(METRICS) | metrics
    return Result(scenario, "tiered", "tiered", params, values, 40, (), (), params or {})


def test_numbers_are_grouped_shares_are_percentages_and_null_is_a_dash() -> None:
    text = _render(
        _result("s", {"budget": 40}, tokens_resent=1234567, probe_retention=8 / 9, hit_at_k=None)
    )
    row = next(line for line in text.splitlines() if line.strip().startswith("s "))
    assert ["s", "tiered", "budget=40", "-", "1,234,567", "-", "88.9%"] == row.split()[:7]


def test_cells_that_do_not_apply_are_counted_not_shown() -> None:
    results = (_result("shown", {"budget": 40}), _result("hidden", None))
    text = _render(*results)
    assert "shown" in text
    assert "hidden" not in text
    assert (skipped_line(results) or "").startswith("1 cell did not apply: ")


def test_every_cell_applies_so_nothing_is_said() -> None:
    assert None is skipped_line((_result("shown", {"budget": 40}),))


def test_no_blank_line_and_no_trailing_space() -> None:
    """The table starts with its header and ends with its last row, each line trimmed."""
    lines = _render(_result("s", {"budget": 40}), _result("t", {"budget": 60})).splitlines()
    assert (["scenario", "s", "t"], []) == (
        [line.split()[0] for line in lines if line and line[0] != "\u2500"],
        [line for line in lines if line != line.rstrip() or not line],
    )


def test_an_empty_string_parameter_is_quoted() -> None:
    assert 'placeholder=""' in _render(_result("s", {"placeholder": ""}))


def test_each_lost_probe_is_a_line_naming_the_event() -> None:
    lost = ProbeLoss("$180.00", 10, 15, "CompactionTriggered")
    never = ProbeLoss("ACC-1", 3, None, None)
    result = attrs.evolve(_result("refund-desk", {"budget": 40}), losses=(lost, never))
    assert [
        "refund-desk, tiered: '$180.00' missing at turn 10, lost by event 15 (CompactionTriggered)",
        "refund-desk, tiered: 'ACC-1' missing at turn 3, never visible since it was due",
    ] == loss_lines([result])


def test_typed_losses_are_counted_by_kind_then_listed_grouped_by_kind() -> None:
    losses = (
        ProbeLoss("$180.00", 10, 15, "CompactionTriggered", "number"),
        ProbeLoss("src/app.py", 3, None, None, "path"),
        ProbeLoss("note", 4, 9, "CompactionTriggered"),
        ProbeLoss("$5", 11, 15, "CompactionTriggered", "number"),
    )
    result = attrs.evolve(_result("s", {"budget": 40}), losses=losses)
    assert [
        "s, tiered: 4 losses by kind: path 1, number 2, untyped 1",
        "s, tiered: path 'src/app.py' missing at turn 3, never visible since it was due",
        "s, tiered: number '$180.00' missing at turn 10, lost by event 15 (CompactionTriggered)",
        "s, tiered: number '$5' missing at turn 11, lost by event 15 (CompactionTriggered)",
        "s, tiered: 'note' missing at turn 4, lost by event 9 (CompactionTriggered)",
    ] == loss_lines([result])


def test_a_peak_over_budget_carries_its_cause_s_mark() -> None:
    results = [
        attrs.evolve(_result(name, {"budget": 40}, peak_tokens=peak), over_budget=cause)
        for name, peak, cause in [
            ("a", 40, None),
            ("b", 51, "floor"),
            ("c", 101, "unbounded"),
            ("d", 60, "unexplained"),
        ]
    ]
    rows = [line.split() for line in _render(*results).splitlines()[2:]]
    assert ["40", "51*", "101†", "60!"] == [row[3] for row in rows]


def test_each_mark_used_has_one_footnote_in_the_marks_order() -> None:
    unbounded = attrs.evolve(_result("c", {"budget": 40}), over_budget="unbounded")
    floor = attrs.evolve(_result("b", {"budget": 40}), over_budget="floor")
    lines = over_budget_lines([unbounded, floor, floor, _result("a", {"budget": 40})])
    assert ["*", "†"] == [line[0] for line in lines]
    assert lines[0].startswith("* peak over budget because the policy's floor was: ")
    assert all(line.endswith(" (peak_over_budget: true in --json)") for line in lines)


def test_no_peak_over_budget_no_footnote() -> None:
    assert [] == over_budget_lines([_result("a", {"budget": 40}), _result("b", None)])


BENCH_POLICIES = ("tiered", "sliding-window", "rolling-summary:keep=4", "clear-tool-results", "lru")


@pytest.fixture(scope="module")
def bench_results() -> list[Result]:
    """A real bench: the three seed scenarios under compaction and forgetting policies."""
    return run_cells(plan(["refund-desk", "dana-facts", "sleep-pass"], BENCH_POLICIES))


def _fitted_text(results: list[Result], width: int, columns: list[str] | None = None) -> str:
    fitted = comparison_table(results, width=width, columns=columns)
    out = io.StringIO()
    Console(file=out, width=width).print(fitted.table)
    note = left_out_line(fitted)
    return out.getvalue() + ("" if note is None else note + "\n")


def _shown_cells(results: list[Result], headings: list[str]) -> list[str]:
    """Every metric the table shows under ``headings``, as the table writes it."""
    names = [name for name, heading in COLUMNS if heading in headings]
    data = results_data(results)["results"]
    return [
        _cell(name, row["metrics"][name])
        for row in data
        if row["metrics"] is not None
        for name in names
    ]


class TestFitting:
    @pytest.mark.parametrize("width", [80, 120])
    def test_no_line_is_wider_and_no_number_is_cut(
        self, bench_results: list[Result], width: int
    ) -> None:
        text = _fitted_text(bench_results, width)
        table = text.split("columns left out")[0]

        assert [] == [line for line in table.splitlines() if len(line) > width]
        assert "…" not in text
        headings = [h for _, h in COLUMNS if h in table.splitlines()[0]]
        words = [word.rstrip("".join(OVER_BUDGET_MARKS.values())) for word in table.split()]
        missing = [cell for cell in _shown_cells(bench_results, headings) if cell not in words]
        assert [] == missing

    @pytest.mark.parametrize("width", [80, 120])
    def test_what_is_left_out_is_said_under_the_table(
        self, bench_results: list[Result], width: int
    ) -> None:
        fitted = comparison_table(bench_results, width=width)
        header = _fitted_text(bench_results, width).splitlines()[0]

        assert fitted.left_out
        assert [] == [name for name in fitted.left_out if dict(COLUMNS)[name] in header]
        fit = ", ".join(dict(COLUMNS)[n] for n in fitted.left_out if n not in fitted.empty)
        empty = ", ".join(dict(COLUMNS)[n] for n in fitted.left_out if n in fitted.empty)
        said = [f"left out to fit {width} columns: {fit}"] if fit else []
        said += [f"left out, no value in any row: {empty}"] if empty else []
        assert f"columns {'; '.join(said)}; --columns to choose" == left_out_line(fitted)

    def test_columns_with_no_value_are_said_apart_from_those_left_out_for_room(self) -> None:
        """A compaction-only bench has no store figures: those columns go first, and the
        line does not say they were left out for room."""
        results = run_cells(plan(["refund-desk"], ["tiered", "none"]))
        assert (
            "columns left out to fit 60 columns: µs/command, compactions, peak; left out, no value "
            "in any row: hit@k, stale reads, evictions, regret; --columns to choose"
        ) == left_out_line(comparison_table(results, width=60))

    def test_the_wider_terminal_leaves_out_fewer(self, bench_results: list[Result]) -> None:
        narrow = comparison_table(bench_results, width=80).left_out
        wide = comparison_table(bench_results, width=120).left_out

        assert set(wide) < set(narrow)

    def test_at_80_the_peak_and_the_probes_are_kept(self, bench_results: list[Result]) -> None:
        header = _fitted_text(bench_results, 80).splitlines()[0].split()

        assert {"peak", "probes"} <= set(header)

    def test_at_60_the_re_sent_tokens_and_the_probes_kept_stay(
        self, bench_results: list[Result]
    ) -> None:
        text = _fitted_text(bench_results, 60)

        assert ("re-sent", "probes kept") == tuple(
            heading for heading in ("re-sent", "probes kept") if heading in text.splitlines()[0]
        )
        assert [] == [line for line in text.splitlines()[:-1] if len(line) > 60]

    def test_the_policy_and_its_params_share_a_column_only_to_make_room(
        self, bench_results: list[Result]
    ) -> None:
        shared = {width: comparison_table(bench_results, width=width).shared for width in (60, 120)}

        assert {60: True, 120: False} == shared

    def test_scenario_and_params_wrap_rather_than_vanish(self) -> None:
        long = _result("a-very-long-scenario-name", {"budget": 40, "hot_n": 3, "extra": "x y z"})
        lines = _fitted_text([long], 60).splitlines()
        header = lines[0]
        policy, params, first_metric = (
            header.index("policy"),
            header.index("params"),
            header.index(next(h for _, h in COLUMNS if h in header)),
        )
        rows = [line.ljust(60) for line in lines[2:] if not line.startswith("columns left out")]

        assert "…" not in "".join(lines)
        assert len(rows) > 1
        assert "a-very-long-scenario-name" == "".join(row[:policy].strip() for row in rows)
        assert 'budget=40 hot_n=3 extra="x y z"' == " ".join(
            row[params:first_metric].strip() for row in rows
        )

    def test_what_fits_leaves_nothing_out(self, bench_results: list[Result]) -> None:
        fitted = comparison_table(bench_results, width=400)

        assert ((), None) == (fitted.left_out, left_out_line(fitted))

    def test_columns_chooses_them_in_its_order(self, bench_results: list[Result]) -> None:
        header = _fitted_text(bench_results, 120, ["regret", "peak_tokens"]).splitlines()[0]

        assert ["scenario", "policy", "params", "regret", "peak"] == header.split()

    def test_an_unknown_column_lists_the_known_ones(self) -> None:
        with pytest.raises(BadInput) as refused:
            column_names("peak_tokens,peak")

        known = ", ".join(name for name, _ in COLUMNS)
        assert f"--columns: unknown column 'peak' (known: {known})" == str(refused.value)

    def test_column_names_are_read_in_order(self) -> None:
        assert ("hit_at_k", "regret") == column_names("hit_at_k, regret")


class TestCostColumns:
    """The cost columns: shown when a run was priced, beside the tokens re-sent."""

    def test_a_priced_result_shows_usd_right_after_re_sent(self) -> None:
        text = _render(_result("s", {"budget": 40}, tokens_resent=300, usd=0.0123456))
        header = text.splitlines()[0].split()
        assert ["re-sent", "usd", "billed", "in"] == header[header.index("re-sent") :][:4]
        row = next(line for line in text.splitlines() if line.strip().startswith("s "))
        assert ["300", "0.0123"] == row.split()[4:6]

    def test_a_narrow_terminal_keeps_usd_beside_re_sent(self) -> None:
        result = _result(
            "s",
            {"budget": 40},
            peak_tokens=40,
            tokens_resent=300,
            compactions=2,
            probe_retention=1.0,
            billed_input_tokens=100,
            cache_read_tokens=150,
            cache_write_tokens=50,
            cache_breaks=1,
            usd=0.5,
        )
        fitted = comparison_table([result], width=60)
        assert {"usd", "tokens_resent", "probe_retention"}.isdisjoint(fitted.left_out)
        assert {"cache_write_tokens", "cache_read_tokens", "billed_input_tokens"} <= set(
            fitted.left_out
        )
