"""memtape.lab.table: the bench's comparison table."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import io

import attrs
from rich.console import Console

from memtape.lab.bench import METRICS, Result
from memtape.lab.table import comparison_table, loss_lines, over_budget_lines, skipped_line
from memtape.projections.metrics import ProbeLoss


def _render(*results: Result) -> str:
    out = io.StringIO()
    Console(file=out, width=250).print(comparison_table(results))
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
    assert (skipped_line(results) or "").startswith("1 cell(s) did not apply: ")


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
