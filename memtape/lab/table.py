"""The bench's comparison table, rendered with rich."""

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
)
"""Each metric's column and heading, in the JSON contract's order."""


def comparison_table(results: Sequence[Result]) -> Table:
    """One row per result: the scenario, the policy and its parameters, each metric."""
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("scenario")
    table.add_column("policy")
    table.add_column("params")
    for _, heading in COLUMNS:
        table.add_column(heading, justify="right")
    for result in results:
        params = "n/a" if result.params is None else _params(result.params)
        cells = [_cell(name, result.metrics[name]) for name, _ in COLUMNS]
        table.add_row(result.scenario, result.policy, params, *cells)
    return table


def _params(params: dict[str, Any]) -> str:
    return " ".join(f"{name}={value}" for name, value in params.items())


def _cell(name: str, value: Any) -> str:
    """A metric as text: exact integers, shares as percentages, times to 0.1 µs."""
    if value is None:
        return "-"
    if name in {"probe_retention", "hit_at_k"}:
        return f"{value:.1%}"
    if name == "decide_us_per_command":
        return f"{value:.1f}"
    return f"{value:,}"
