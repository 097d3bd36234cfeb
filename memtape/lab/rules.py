"""The rules of ``bench --fail-if``: ``METRIC OP EXPR``, read by memtape, never evaluated.

``OP`` is one of ``< <= > >= == !=``; ``EXPR`` is ``baseline`` (the cell's value in
the baseline), a number, or ``baseline`` and one of ``+ - * /`` and a number:
``probe_retention < baseline - 0.02``, ``usd > baseline * 1.05``, ``peak_tokens > 4000``.
A rule says when a cell fails: its metric's value against the threshold ``EXPR`` gives.
Anything else is refused with the column where reading it stopped.
"""

import math
import operator
import re
from collections.abc import Callable, Iterable

import attrs

from memtape.core.errors import BadInput
from memtape.core.spelling import did_you_mean

BASELINE = "baseline"
"""The word that stands for the cell's value in the baseline."""

COMPARISONS: dict[str, Callable[[float, float], bool]] = {
    "<=": operator.le,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    ">": operator.gt,
}
"""Each ``OP`` and what it tests (the two-character ones first: they are read first)."""

ARITHMETIC: dict[str, Callable[[float, float], float]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
}
"""What may follow ``baseline``, with a number after it."""

EXAMPLE = "probe_retention < baseline - 0.02"
"""A rule, as a refusal shows one."""

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# ASCII digits only: \d alone takes any script's digits (float reads "\u0663" as 3).
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)


@attrs.frozen
class Rule:
    """One ``--fail-if`` rule, as written and as read."""

    text: str
    metric: str
    comparison: str
    """One of ``COMPARISONS``."""
    relative: bool
    """Whether ``EXPR`` names the baseline (the cell then needs one to be compared)."""
    arithmetic: str | None
    """One of ``ARITHMETIC`` after ``baseline``, or None."""
    number: float | None
    """The number of ``EXPR``: alone, or after ``arithmetic``; None for ``baseline`` alone."""

    def threshold(self, baseline: float | None) -> float:
        """What the value is compared with, given the cell's value in the baseline (needed
        only when the rule is ``relative``)."""
        if not self.relative:
            assert self.number is not None, "a rule without baseline has a number"
            return self.number
        assert baseline is not None, "a relative rule needs the baseline's value"
        if self.arithmetic is None or self.number is None:
            return baseline
        return ARITHMETIC[self.arithmetic](baseline, self.number)

    def fails(self, value: float, baseline: float | None) -> bool:
        """Whether ``value`` breaks the rule (against ``baseline`` when it is ``relative``)."""
        return COMPARISONS[self.comparison](value, self.threshold(baseline))

    def expression(self, baseline: float | None) -> str:
        """``EXPR`` with the baseline's value written out: ``0.888889 - 0.02``."""
        if not self.relative:
            return _shown(self.number)
        if self.arithmetic is None:
            return _shown(baseline)
        return f"{_shown(baseline)} {self.arithmetic} {_shown(self.number)}"


def parse_rule(text: str, metrics: Iterable[str]) -> Rule:
    """``text`` read as a rule on one of ``metrics``; refused as bad input naming the rule and
    the column (from 1) where it broke."""
    return _Reader(text, tuple(metrics)).rule()


class _Reader:
    """Reads one rule from left to right, keeping the column it has got to."""

    def __init__(self, text: str, metrics: tuple[str, ...]) -> None:
        self.text = text
        self.metrics = metrics
        self.at = 0

    def rule(self) -> Rule:
        metric = self._metric()
        comparison = self._comparison(metric)
        relative, arithmetic, number = self._expression()
        self._skip()
        if self.at < len(self.text):
            raise self._refusal(f"the rule ends after {self.text[: self.at].strip()!r}, found")
        return Rule(self.text.strip(), metric, comparison, relative, arithmetic, number)

    def _metric(self) -> str:
        self._skip()
        found = _NAME.match(self.text, self.at)
        if found is None:
            raise self._refusal(f"write METRIC OP EXPR, e.g. {EXAMPLE!r}: no metric name, found")
        name = found.group()
        if name not in self.metrics:
            hint = did_you_mean(name, self.metrics)
            raise BadInput(
                f"{self._named()}: no metric {name!r} (known: {', '.join(self.metrics)}){hint}"
            )
        self.at = found.end()
        return name

    def _comparison(self, metric: str) -> str:
        self._skip()
        for comparison in COMPARISONS:
            if self.text.startswith(comparison, self.at):
                self.at += len(comparison)
                return comparison
        raise self._refusal(f"after {metric!r}, one of {' '.join(COMPARISONS)} is wanted, found")

    def _expression(self) -> tuple[bool, str | None, float | None]:
        self._skip()
        found = _NAME.match(self.text, self.at)
        if found is None:
            return False, None, self._number("baseline or a number")
        if found.group() != BASELINE:
            hint = did_you_mean(found.group(), [BASELINE])
            raise BadInput(
                f"{self._named()}: column {self.at + 1}: baseline or a number is wanted, "
                f"found {found.group()!r}{hint}"
            )
        self.at = found.end()
        self._skip()
        sign = self.text[self.at : self.at + 1]
        if not sign:
            return True, None, None
        if sign not in ARITHMETIC:
            raise self._refusal(f"after baseline, one of {' '.join(ARITHMETIC)} or the end, found")
        self.at += 1
        number = self._number(f"a number after {sign!r}")
        if sign == "/" and number == 0:
            raise BadInput(f"{self._named()}: it divides by zero")
        return True, sign, number

    def _number(self, wanted: str) -> float:
        self._skip()
        found = _NUMBER.match(self.text, self.at)
        if found is None:
            raise self._refusal(f"{wanted} is wanted, found")
        number = float(found.group())
        if not math.isfinite(number):
            raise self._refusal(f"{wanted} is wanted (a finite one), found")
        self.at = found.end()
        return number

    def _skip(self) -> None:
        while self.at < len(self.text) and self.text[self.at].isspace():
            self.at += 1

    def _named(self) -> str:
        return f"--fail-if {self.text!r}"

    def _refusal(self, reason: str) -> BadInput:
        rest = self.text[self.at :].split()
        found = repr(rest[0]) if rest else "the end"
        return BadInput(f"{self._named()}: column {self.at + 1}: {reason} {found}")


def _shown(number: float | None) -> str:
    """A number as the gate's lines show it: six significant figures."""
    return "null" if number is None else f"{number:.6g}"
