"""Reading policy parameters from scenario data, with errors that name the place."""

import math
from collections.abc import Mapping
from typing import Any

from memtape.core.errors import BadInput
from memtape.core.plural import noun_for

MAX_INT = 2**63 - 1
"""The largest integer parameter: run files carry 64-bit integers."""


class Params:
    """Typed access to one table of parameters; ``done()`` rejects leftovers."""

    def __init__(self, data: Mapping[str, Any], where: str) -> None:
        self._data = dict(data)
        self._where = where
        self._asked: list[str] = []
        """The parameters read so far: what an unknown one may have meant."""

    @property
    def where(self) -> str:
        """The table's place, as errors name it (``scenario.toml: [compaction]``)."""
        return self._where

    def integer(self, name: str, default: int | None = None, *, minimum: int) -> int:
        """An integer parameter of at least ``minimum``."""
        value = self._take(name, default)
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise self.error(name, f"must be an integer >= {minimum}, got {value!r}")
        if value > MAX_INT:
            raise self.error(name, f"must be at most {MAX_INT} (64 bits), got {value}")
        return value

    def number(
        self,
        name: str,
        default: float | None = None,
        *,
        minimum: float,
        maximum: float = math.inf,
        exclusive_minimum: bool = False,
    ) -> float:
        """A finite number within the given bounds."""
        value = self._take(name, default)
        if (
            not _finite(value)
            or (value <= minimum if exclusive_minimum else value < minimum)
            or value > maximum
        ):
            if math.isinf(minimum) and math.isinf(maximum):
                raise self.error(name, f"must be a finite number, got {value!r}")
            low = "(" if exclusive_minimum else "["
            high = f"{maximum:g}]" if math.isfinite(maximum) else "inf)"
            raise self.error(name, f"must be a number in {low}{minimum:g}, {high}, got {value!r}")
        return float(value)

    def text(self, name: str, default: str | None = None) -> str:
        """A string parameter."""
        value = self._take(name, default)
        if not isinstance(value, str):
            raise self.error(name, f"must be a string, got {value!r}")
        return value

    def flag(self, name: str, default: bool) -> bool:
        """A true-or-false parameter."""
        self._asked.append(name)
        value = self._data.pop(name, default)
        if not isinstance(value, bool):
            raise self.error(name, f"must be true or false, got {value!r}")
        return value

    def raw(self, name: str, default: Any = None) -> Any:
        """A parameter of any shape, for the caller to check."""
        return self._take(name, default)

    def optional(self, name: str) -> Any:
        """A parameter of any shape, or None when it is absent."""
        self._asked.append(name)
        return self._data.pop(name, None)

    def done(self) -> None:
        """Reject any parameter nobody asked for (a typo must not pass silently)."""
        if self._data:
            from memtape.core.spelling import did_you_mean  # noqa: PLC0415 (a refusal only)

            names = ", ".join(sorted(self._data))
            noun = noun_for(len(self._data), "parameter")
            hint = did_you_mean(names, self._asked, quote=False) if len(self._data) == 1 else ""
            raise BadInput(f"{self._where}: unknown {noun} {names}{hint}")

    def error(self, name: str, problem: str) -> BadInput:
        """An error naming this table and the parameter."""
        return BadInput(f"{self._where}: {name} {problem}")

    def _take(self, name: str, default: Any) -> Any:
        self._asked.append(name)
        if name in self._data:
            return self._data.pop(name)
        if default is None:
            raise BadInput(f"{self._where}: missing parameter {name}")
        return default


def _finite(value: Any) -> bool:
    """Whether ``value`` is a number that is finite as a float (not a bool, not 10**400)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False
