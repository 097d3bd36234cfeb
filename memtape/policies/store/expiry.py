"""Expiry: when a fact leaves the store because its time ran out.

A write may name its own ``expires_at``; otherwise a forgetting policy's
``ttl`` may give it one: a number (seconds of the clock, for every key) or a
table of key patterns (``fnmatch`` globs, ``{"session.*" = 3600, "*" =
86400}``), the first pattern in the table's order that matches the key
deciding. The time is written into the fact's ``FactWritten``; when a command
moves the clock to or past it, the fact leaves as ``Expired``, with its
reason, in that command's events (``due``), so nothing ranks or returns it
after its time. The clock itself moves forward only, to a finite time (``advance``).
"""

import math
from collections.abc import Iterable, Mapping
from fnmatch import fnmatchcase
from typing import Any

import attrs

from memtape.core.commands import AdvanceClock
from memtape.core.errors import BadInput, Rejected
from memtape.core.events import ClockAdvanced, Expired
from memtape.core.state import Fact, State
from memtape.policies.plumbing.params import Params

DEFAULT_PATTERN = "*"
"""The pattern a bare ``ttl = N`` stands for: every key."""


@attrs.frozen
class Ttl:
    """A forgetting policy's TTL rules: (key pattern, seconds) pairs, first match wins."""

    rules: tuple[tuple[str, float], ...] = ()

    def __attrs_post_init__(self) -> None:
        for pattern, seconds in self.rules:
            problem = _seconds_problem(seconds)
            if not isinstance(pattern, str) or not pattern:
                raise BadInput(f"ttl: a key pattern is a non-empty string, got {pattern!r}")
            if problem is not None:
                raise BadInput(f"ttl {pattern!r} {problem}")

    def rule_for(self, key: str) -> tuple[str, float] | None:
        """The first rule whose pattern matches ``key``, or None."""
        return next(((p, s) for p, s in self.rules if fnmatchcase(key, p)), None)

    def table(self) -> float | dict[str, float] | None:
        """The rules as a scenario table writes them (None: no TTL; a number: one for all)."""
        if not self.rules:
            return None
        if len(self.rules) == 1 and self.rules[0][0] == DEFAULT_PATTERN:
            return self.rules[0][1]
        return dict(self.rules)


NO_TTL = Ttl()
"""No fact expires unless its write says when."""


def _seconds_problem(seconds: object) -> str | None:
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):
        return f"must be a positive number of clock units, got {seconds!r}"
    if not (math.isfinite(seconds) and seconds > 0):
        return f"must be a positive number of clock units, got {seconds!r}"
    return None


def read_ttl(params: Params) -> Ttl:
    """The ``ttl`` parameter of a ``[forgetting]`` table (default: none), checked."""
    value = params.optional("ttl")
    if value is None:
        return NO_TTL
    if isinstance(value, Mapping):
        rules: list[tuple[str, float]] = []
        for pattern, seconds in value.items():
            problem = _seconds_problem(seconds)
            if problem is not None:
                raise params.error("ttl", f"{pattern!r} {problem}")
            rules.append((str(pattern), float(seconds)))
        if not rules:
            raise params.error("ttl", "is an empty table: give a pattern and its seconds")
        return Ttl(tuple(rules))
    problem = _seconds_problem(value)
    if problem is not None:
        raise params.error("ttl", f"{problem}, or a table of key patterns")
    return Ttl(((DEFAULT_PATTERN, float(value)),))


def with_ttl(table: dict[str, Any], ttl: Ttl) -> dict[str, Any]:
    """``table`` with its ``ttl`` entry when the policy has one."""
    written = ttl.table()
    return table if written is None else {**table, "ttl": written}


def expiry_of(
    ttl: Ttl, key: str, expires_at: float | None, clock: float
) -> tuple[float | None, str]:
    """When a fact written now on ``key`` expires, and the TTL pattern that said so.

    A write's own ``expires_at`` wins (pattern ``""``); it must be later than
    the clock, or the write is ``Rejected``, as is one whose TTL would take it past the
    largest float.
    """
    if expires_at is not None:
        if (
            isinstance(expires_at, bool)
            or not isinstance(expires_at, int | float)
            or not math.isfinite(expires_at)
        ):
            raise Rejected(f"a fact's expires_at must be a finite number, got {expires_at!r}")
        if expires_at <= clock:
            raise Rejected(
                f"a fact cannot expire at t={expires_at:g}: the clock is already at t={clock:g}"
            )
        return float(expires_at), ""
    rule = ttl.rule_for(key)
    if rule is None:
        return None, ""
    pattern, seconds = rule
    expires_at = clock + seconds
    if not math.isfinite(expires_at):
        # A run file holds finite numbers only: inf would be written as Infinity, no JSON.
        raise Rejected(
            f"a fact written at t={clock:g} under ttl {seconds:g} for keys {pattern!r} "
            "would expire past the largest time there is"
        )
    return expires_at, pattern


def reason(fact: Fact) -> str:
    """Why ``fact`` expires, in words (its own time, or the TTL rule that set it)."""
    assert fact.expires_at is not None
    if not fact.ttl:
        return f"its own expires_at, due at t={fact.expires_at:g}"
    seconds = fact.expires_at - fact.written_at
    return (
        f"ttl {seconds:g} for keys {fact.ttl!r} from its write at t={fact.written_at:g}, "
        f"due at t={fact.expires_at:g}"
    )


def due(state: State) -> tuple[Expired, ...]:
    """An ``Expired`` for each active fact whose time is at or before the state's clock,
    soonest first (ties to the lowest id)."""
    store = state.store
    facts: Iterable[Fact] = (store.facts[i] for i in store.active)
    ripe = [f for f in facts if f.expires_at is not None and f.expires_at <= state.clock]
    ripe.sort(key=lambda f: (f.expires_at, f.id))
    return tuple(Expired(f.id, reason(f)) for f in ripe)


def advance(state: State, command: AdvanceClock) -> ClockAdvanced:
    """The clock's move to ``command.to``, or ``Rejected``: to a finite time, never back."""
    to = command.to
    if isinstance(to, bool) or not isinstance(to, int | float) or not math.isfinite(to):
        raise Rejected(f"the clock moves to a finite number, got {to!r}")
    if to < state.clock:
        raise Rejected(f"the clock cannot move backwards, from t={state.clock:g} to t={to:g}")
    return ClockAdvanced(float(to))
