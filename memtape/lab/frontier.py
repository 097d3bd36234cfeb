"""The cost frontier of a bench: on each scenario, the policies no other beats on both counts.

A policy is *on the frontier* when no other policy on the same scenario costs
no more and does at least as well, and one of the two strictly. The cost is
``usd`` when the runs were priced (the cost model's metric), else the tokens
re-sent; what a policy does well is ``answers_correct`` when a judge answered
questions (``bench --judge``), else the share of probe checks passed, unless
``bench --frontier-on`` names the gain: one of ``GAINS`` or ``harmful_losses``
(the probes a compaction lost that a later turn mentioned again), where fewer
is better. Each policy below the frontier is named with one that beats it.
"""

from collections.abc import Sequence
from typing import Any

import attrs

from memtape.core.errors import BadInput
from memtape.core.visible import visible
from memtape.lab.bench import Result

COSTS = ("usd", "tokens_resent")
"""The cost a frontier weighs, the first that every applied result of a scenario has."""

GAINS = ("answers_correct", "probe_retention")
"""What it weighs the cost against, likewise, unless one is named."""

FEWER_IS_BETTER = frozenset({"harmful_losses"})
"""The gains that count something lost: a policy does better with fewer."""

RANKED_ON = (*GAINS, "harmful_losses")
"""The gains ``bench --frontier-on`` may name."""


@attrs.frozen
class Point:
    """A policy's place on a scenario's plane: its cost and its gain, and the policy
    beating it (None on the frontier)."""

    label: str
    cost: float
    gain: float
    beaten_by: str | None


@attrs.frozen
class Frontier:
    """One scenario's frontier: which metrics it weighs, and every policy's point."""

    scenario: str
    cost: str
    gain: str
    points: tuple[Point, ...]

    @property
    def front(self) -> tuple[Point, ...]:
        """The points on the frontier, cheapest first."""
        return tuple(sorted((p for p in self.points if p.beaten_by is None), key=lambda p: p.cost))

    def data(self) -> dict[str, Any]:
        """The frontier as ``bench --json`` writes it (with ``--frontier``)."""
        return {
            "scenario": self.scenario,
            "cost": self.cost,
            "gain": self.gain,
            "points": [attrs.asdict(point) for point in self.points],
        }


def check_gain(name: str) -> str:
    """``name`` when it is one of ``RANKED_ON``; refused in one line otherwise."""
    if name not in RANKED_ON:
        raise BadInput(f"--frontier-on {name!r}: rank on one of {', '.join(RANKED_ON)}")
    return name


def frontiers(results: Sequence[Result], gain: str | None = None) -> list[Frontier]:
    """The frontier of each scenario with two applied results or more that have a cost and a
    gain (``gain``, or by default the first of ``GAINS`` they all have), in the order the
    scenarios first appear."""
    found = []
    for scenario in dict.fromkeys(result.scenario for result in results):
        applied = [r for r in results if r.scenario == scenario and r.params is not None]
        cost = _shared(applied, COSTS)
        weighed = _shared(applied, GAINS if gain is None else (gain,))
        if cost is None or weighed is None or len(applied) < 2:
            continue
        placed = [(r.label, float(r.metrics[cost]), float(r.metrics[weighed])) for r in applied]
        # Fewer of a loss is better: weighed negated, it is beaten as a gain is.
        sign = -1.0 if weighed in FEWER_IS_BETTER else 1.0
        points = tuple(
            Point(label, spent, won, _beaten_by(label, spent, sign * won, placed, sign))
            for label, spent, won in placed
        )
        found.append(Frontier(scenario, cost, weighed, points))
    return found


def _shared(results: Sequence[Result], names: Sequence[str]) -> str | None:
    """The first of ``names`` every result has a number for."""
    for name in names:
        if results and all(isinstance(r.metrics.get(name), int | float) for r in results):
            return name
    return None


def _beaten_by(
    label: str,
    cost: float,
    gain: float,
    placed: Sequence[tuple[str, float, float]],
    sign: float = 1.0,
) -> str | None:
    """The first other policy costing no more and gaining no less (its gain times ``sign``),
    one of them strictly."""
    for other, spent, value in placed:
        won = sign * value
        if other != label and spent <= cost and won >= gain and (spent < cost or won > gain):
            return other
    return None


def frontier_lines(found: Sequence[Frontier]) -> list[str]:
    """Under the table: each scenario's frontier, cheapest first, then each policy below
    it with one that beats it."""
    lines = []
    for frontier in found:
        front = ", ".join(
            f"{visible(point.label)} ({_figure(frontier.cost, point.cost)}, "
            f"{_figure(frontier.gain, point.gain)})"
            for point in frontier.front
        )
        scenario = visible(frontier.scenario)
        fewer = ", fewer is better" if frontier.gain in FEWER_IS_BETTER else ""
        weighed = f"{frontier.cost} against {frontier.gain}{fewer}"
        lines.append(f"frontier of {scenario} ({weighed}): {front}")
        lines.extend(
            f"{scenario}, {visible(point.label)}: below the frontier, beaten by "
            f"{visible(point.beaten_by)}"
            for point in frontier.points
            if point.beaten_by is not None
        )
    return lines


def _figure(name: str, value: float) -> str:
    """A cost or a gain as the table writes it, roughly."""
    if name == "usd":
        return f"${value:,.4f}"
    if name == "probe_retention":
        return f"{value:.1%}"
    return f"{value:,.0f}" if value.is_integer() else f"{value:,.1f}"
