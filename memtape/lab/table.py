"""The bench's comparison table, rendered with rich."""

import json
from collections.abc import Sequence
from typing import Any

from rich import box
from rich.table import Table

from memtape.lab.bench import Result

COLUMNS = (
    ("peak_tokens", "peak"),
    ("tokens_resent", "re-sent"),
    ("compactions", "compactions"),
    ("probe_retention", "probes kept"),
    ("hit_at_k", "hit@k"),
    ("stale_reads", "stale reads"),
    ("evictions", "evictions"),
    ("regret", "regret"),
    ("decide_us_per_command", "µs/command"),
    ("llm_calls", "llm calls"),
    ("llm_cache_hits", "cached"),
    ("llm_prompt_tokens", "tok in"),
    ("llm_completion_tokens", "tok out"),
    ("llm_seconds", "llm s"),
)
"""Each metric's column and heading, in the JSON contract's order (``peak_over_budget``
has no column of its own: it marks the peak, with a footnote)."""

OVER_BUDGET_MARKS = {"floor": "*", "unbounded": "†", "unexplained": "!"}
"""The mark after a peak over the budget, for each cause (``Result.over_budget``)."""

OVER_BUDGET_NOTES = {
    "floor": (
        "peak over budget because the policy's floor was: what its own rules must keep "
        "(its recent turns, pinned turns, the newest turn, a summary) held more than the budget"
    ),
    "unbounded": "peak over budget: the policy promises no budget bound",
    "unexplained": (
        "peak over budget beyond the policy's floor: it breaks its BUDGET promise "
        "(memtape check finds the turn)"
    ),
}
"""The footnote under the table for each mark used."""

LLM_COLUMNS = frozenset(name for name, _ in COLUMNS if name.startswith("llm_"))
"""The model columns, shown only when some result asked a model."""


def comparison_table(results: Sequence[Result]) -> Table:
    """One row per result that applies: the scenario, the policy and its notable parameters
    (the shared one and those off the defaults; ``--json`` has them all), each metric,
    and after a peak over the budget its cause's mark (``over_budget_lines`` explains it).
    A policy with nothing to apply to the scenario has its row too, saying why, without
    metrics.

    No edge, so no blank line above or below it and no padding at the ends of its lines.
    """
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    table.add_column("scenario", no_wrap=True)
    table.add_column("policy", no_wrap=True)
    table.add_column("params", no_wrap=True)
    asked = any(r.metrics.get("llm_calls") for r in results if r.params is not None)
    columns = [(n, h) for n, h in COLUMNS if asked or n not in LLM_COLUMNS]
    for _, heading in columns:
        table.add_column(heading, justify="right", no_wrap=True)
    for result in results:
        if result.idle is not None:
            dashes = ["-"] * len(COLUMNS)
            table.add_row(
                result.scenario, result.policy, f"nothing to apply: {result.idle}", *dashes
            )
            continue
        if result.params is None:
            continue
        cells = [_cell(name, result.metrics[name]) + _mark(name, result) for name, _ in columns]
        table.add_row(result.scenario, result.policy, _params(result.notable), *cells)
    return table


def over_budget_lines(results: Sequence[Result]) -> list[str]:
    """One footnote line for each mark the table's peaks carry, in the marks' order."""
    causes = {result.over_budget for result in results if result.params is not None}
    return [
        f"{mark} {OVER_BUDGET_NOTES[cause]} (peak_over_budget: true in --json)"
        for cause, mark in OVER_BUDGET_MARKS.items()
        if cause in causes
    ]


def skipped_line(results: Sequence[Result]) -> str | None:
    """The line under the table counting the cells that did not apply, if any.

    A line of its own rather than the table's caption, which rich centres and
    pads with spaces to the table's width.
    """
    skipped = sum(1 for result in results if result.params is None and result.idle is None)
    if not skipped:
        return None
    return (
        f"{skipped} cell(s) did not apply: the scenario has no turns or no store steps "
        "for that policy's axis (null in --json)"
    )


def _mark(name: str, result: Result) -> str:
    """The mark after a metric's cell: the peak's over-budget cause, if any."""
    if name != "peak_tokens" or result.over_budget is None:
        return ""
    return OVER_BUDGET_MARKS[result.over_budget]


def _params(params: dict[str, Any]) -> str:
    return " ".join(f"{name}={_param(value)}" for name, value in params.items())


def _param(value: Any) -> str:
    """A parameter as text; a string that would not read as one word is quoted, and a list
    shows how many items it holds (``recorded``'s compactions; ``--json`` has them whole)."""
    if isinstance(value, list):
        return str(len(value))
    if isinstance(value, str) and (not value or any(char.isspace() for char in value)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _cell(name: str, value: Any) -> str:
    """A metric as text: exact integers, shares as percentages, times to 0.1 µs."""
    if value is None:
        return "-"
    if name in {"probe_retention", "hit_at_k"}:
        return f"{value:.1%}"
    if name == "decide_us_per_command":
        return f"{value:.1f}"
    if name == "llm_seconds":
        return f"{value:.2f}"
    return f"{value:,}"


def loss_lines(results: Sequence[Result]) -> list[str]:
    """One line per lost probe of each result: where it went missing, and the event."""
    lines = []
    for result in results:
        for loss in result.losses:
            cause = (
                "never visible since it was due"
                if loss.at is None
                else f"lost by event {loss.at} ({loss.event})"
            )
            lines.append(
                f"{result.scenario}, {result.label}: {loss.probe!r} missing at turn {loss.turn}, "
                f"{cause}"
            )
    return lines
