"""Replicates of the bench's cells, folded into one result each: medians and their spread.

``bench --replicates N`` runs every cell N times, each past the response
cache and with its own seed, since a model at temperature 0 still answers
differently from run to run and the cache would hide it. Each metric is
then reported as the median of the N values, with an interval: the range
(least to most) below ``PERCENTILE_FROM`` replicates, a 95% percentile
interval from it on (the 2.5th and 97.5th percentiles of the N values,
interpolated linearly between them, as ``statistics.quantiles``' inclusive
method does). Two policies on the same scenario whose intervals for a
metric overlap differ, on that metric, by no more than their own spread:
``within`` names them, and the table marks the cell.
"""

import statistics
from collections.abc import Iterable, Sequence
from numbers import Real
from typing import Any

import attrs

from memtape.lab.bench import METRICS, Cell, Result
from memtape.lab.spread import Replicated, Spread

PERCENTILE_FROM = 5
"""The number of replicates from which the interval is a 95% percentile interval."""

RANGE = "range"
PERCENTILE_95 = "percentile-95"


def spread_of(values: Sequence[float]) -> Spread:
    """The median of ``values`` and their interval (the range, or from ``PERCENTILE_FROM``
    values on the 2.5th to the 97.5th percentile)."""
    median = statistics.median(values)
    if len(values) < PERCENTILE_FROM:
        return Spread(median, min(values), max(values), RANGE)
    # 40 parts: the first cut is the 2.5th percentile, the last the 97.5th.
    cuts = statistics.quantiles(values, n=40, method="inclusive")
    return Spread(median, cuts[0], cuts[-1], PERCENTILE_95)


def once(cells: Sequence[Cell]) -> list[Cell]:
    """Each cell run ``--replicates`` times once (its first replicate), in the order
    ``folded`` gives their results."""
    first: dict[tuple[str, str, tuple[str, ...]], Cell] = {}
    for cell in cells:
        first.setdefault((cell.scenario, cell.label, cell.settings), cell)
    return list(first.values())


def folded(cells: Sequence[Cell], results: Sequence[Result]) -> list[Result]:
    """One result per cell run ``--replicates`` times, in the cells' order: the first
    replicate's result (its series and losses, which a plot and ``--losses`` show), its
    numeric metrics the medians of every replicate's, with their spreads and which other
    policies on the same scenario each metric's spread overlaps. ``peak_over_budget`` is
    true when any replicate went over."""
    groups: dict[tuple[str, str, tuple[str, ...]], list[Result]] = {}
    for cell, result in zip(cells, results, strict=True):
        groups.setdefault((cell.scenario, cell.label, cell.settings), []).append(result)
    return folded_groups(groups.values())


def folded_groups(groups: Iterable[Sequence[Result]]) -> list[Result]:
    """Each group of a cell's replicates' results as one result, as ``folded`` folds them."""
    once = [_fold(group) for group in groups]
    return [_with_overlaps(result, once) for result in once]


def _fold(group: Sequence[Result]) -> Result:
    """A cell's replicates as one result."""
    first = group[0]
    if first.params is None:
        return first
    metrics = dict(first.metrics)
    spreads = {}
    for name in METRICS:
        values = [result.metrics[name] for result in group]
        if name == "peak_over_budget":
            metrics[name] = None if None in values else any(values)
            continue
        if all(_number(value) for value in values):
            spreads[name] = spread_of(values)
            metrics[name] = spreads[name].median
    return attrs.evolve(first, metrics=metrics, spread=Replicated(len(group), spreads))


def _number(value: Any) -> bool:
    """Whether a metric's value is a number to take a median of (not None, not a bool)."""
    return isinstance(value, Real) and not isinstance(value, bool)


def _with_overlaps(result: Result, results: Sequence[Result]) -> Result:
    """``result`` with, for each metric, the labels of the other results on its scenario
    whose spread overlaps its own."""
    if result.spread is None:
        return result
    within: dict[str, tuple[str, ...]] = {}
    for name, spread in result.spread.spreads.items():
        labels = tuple(
            other.label
            for other in results
            if other is not result
            and other.scenario == result.scenario
            and other.spread is not None
            and name in other.spread.spreads
            and spread.overlaps(other.spread.spreads[name])
        )
        if labels:
            within[name] = labels
    return attrs.evolve(result, spread=attrs.evolve(result.spread, within=within))
