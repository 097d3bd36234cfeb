"""A metric over a bench cell's replicates: its median, its interval, and the policies whose
interval overlaps it (``bench --replicates``; ``memtape.lab.replicates`` computes them)."""

from typing import Any

import attrs


@attrs.frozen
class Spread:
    """One metric over a cell's replicates: the median and an interval around it, ``range``
    (the least and the most) or ``percentile-95`` (the 2.5th and 97.5th percentiles)."""

    median: float
    low: float
    high: float
    interval: str

    def overlaps(self, other: "Spread") -> bool:
        """Whether the two intervals share a point, and one of them has any width: a
        difference between their medians would lie inside their spread."""
        wide = self.high > self.low or other.high > other.low
        return wide and self.low <= other.high and other.low <= self.high

    def data(self) -> dict[str, Any]:
        """The spread as the JSON contract writes it."""
        return {
            "median": self.median,
            "low": self.low,
            "high": self.high,
            "interval": self.interval,
        }


@attrs.frozen
class Replicated:
    """How many replicates a result stands for, each metric's ``Spread`` over them (a metric
    that was None or not a number in some replicate has none), and for each metric the
    other policies (labels) on the same scenario whose spread overlaps this one's."""

    replicates: int
    spreads: dict[str, Spread]
    within: dict[str, tuple[str, ...]] = attrs.field(factory=dict)

    def data(self) -> dict[str, Any]:
        """``replicates``, ``spread`` (metric: ``Spread.data``) and ``within_spread`` (metric:
        the labels of the policies whose difference from this one lies inside the spread)."""
        return {
            "replicates": self.replicates,
            "spread": {name: spread.data() for name, spread in self.spreads.items()},
            "within_spread": {name: list(labels) for name, labels in self.within.items()},
        }
