"""The values an event may hold: a decoded event with an impossible one is refused.

The codec checks each field's type; this checks what no policy writes and the
fold does not catch (the fold refuses a turn or fact out of sequence): a
negative or astronomical token count, a role outside ``ROLES``, an importance
outside [0, 1], a clock before 0. A reader would otherwise show them as they
are, with exit 0. It runs once per event where a log is decoded, never in the
fold.
"""

import math
from collections.abc import Callable, Iterable
from typing import Any

from memtape.core.commands import ROLES, role_error
from memtape.core.events import (
    ClockAdvanced,
    CompactionTriggered,
    Consolidated,
    EpisodeRecorded,
    Event,
    Evicted,
    FactRead,
    FactWritten,
    Queried,
    Superseded,
    TurnAdded,
    WarmItem,
)
from memtape.core.integers import LARGEST

MAX_TOKENS = 2**40
"""The most tokens one text may count (a trillion, past any text a model reads): so the
tokens of millions of turns still sum within 64 bits, which JSON readers and SQLite hold."""


def impossible(event: Event) -> str | None:
    """What is impossible in ``event`` (``TurnAdded.tokens must be ...``), or None."""
    check = _CHECKS.get(type(event))
    return None if check is None else check(event)


def _within(name: str, value: float, low: float, high: float) -> str | None:
    if low <= value <= high:
        return None
    bound = f"at least {low}" if high == math.inf else f"within {low}..{high}"
    return f"{name} must be {bound}, got {value!r}"


def _each(name: str, values: Iterable[int], low: int = 1, high: int = LARGEST) -> str | None:
    for index, value in enumerate(values):
        if not low <= value <= high:
            return f"{name}[{index}] must be within {low}..{high}, got {value!r}"
    return None


def _first(*problems: str | None) -> str | None:
    return next((problem for problem in problems if problem is not None), None)


def _turn_added(event: TurnAdded) -> str | None:
    if event.role not in _ROLES:
        return f"TurnAdded.role: {role_error(event.role)}"
    if 0 <= event.tokens <= MAX_TOKENS and event.turn >= 1:
        return None  # the common case, in one test
    return _first(
        _within("TurnAdded.turn", event.turn, 1, LARGEST),
        _within("TurnAdded.tokens", event.tokens, 0, MAX_TOKENS),
    )


def _items(name: str, items: tuple[WarmItem, ...]) -> str | None:
    for index, item in enumerate(items):
        problem = _first(
            _within(f"{name}[{index}].turn", item.turn, 1, LARGEST),
            _within(f"{name}[{index}].tokens", item.tokens, 0, MAX_TOKENS),
        )
        if problem is not None:
            return problem
    return None


def _compaction(event: CompactionTriggered) -> str | None:
    if (
        0 <= event.budget <= LARGEST
        and 0 <= event.cold <= LARGEST
        and 0 <= event.gist_tokens <= MAX_TOKENS
        and (not event.dropped or min(event.dropped) >= 1)
        and not event.cleared
        and not event.kept
    ):
        for item in event.warm:
            if not (0 <= item.tokens <= MAX_TOKENS and item.turn >= 1):
                break
        else:
            return None  # the common case, in a few tests
    return _first(
        _within("CompactionTriggered.budget", event.budget, 0, LARGEST),
        _items("CompactionTriggered.warm", event.warm),
        _each("CompactionTriggered.dropped", event.dropped),
        _within("CompactionTriggered.cold", event.cold, 0, LARGEST),
        _within("CompactionTriggered.gist_tokens", event.gist_tokens, 0, MAX_TOKENS),
        _items("CompactionTriggered.cleared", event.cleared),
        _each("CompactionTriggered.kept", event.kept or ()),
    )


def _clock(event: ClockAdvanced) -> str | None:
    return _within("ClockAdvanced.to", event.to, 0, math.inf)


def _written(event: FactWritten) -> str | None:
    return _first(
        _within("FactWritten.id", event.id, 1, LARGEST),
        _within("FactWritten.importance", event.importance, 0, 1),
    )


def _queried(event: Queried) -> str | None:
    return _first(
        _within("Queried.k", event.k, 1, LARGEST), _each("Queried.results", event.results)
    )


def _consolidated(event: Consolidated) -> str | None:
    problem = _each("Consolidated.episodes", event.episodes)
    for index, fact in enumerate(event.semantic):
        problem = problem or _first(
            _within(f"Consolidated.semantic[{index}].importance", fact.importance, 0, 1),
            _within(f"Consolidated.semantic[{index}].episode", fact.episode, 1, LARGEST),
        )
    for index, rule in enumerate(event.procedural):
        problem = problem or _within(
            f"Consolidated.procedural[{index}].episode", rule.episode, 1, LARGEST
        )
    return problem


def _ids(name: str, *fields: str) -> Callable[[Any], str | None]:
    """The check of an event whose ``fields`` are ids (1 and up)."""

    def check(event: Any) -> str | None:
        return _first(
            *(_within(f"{name}.{field}", getattr(event, field), 1, LARGEST) for field in fields)
        )

    return check


_ROLES = frozenset(ROLES)

_CHECKS: dict[type, Callable[[Any], str | None]] = {
    TurnAdded: _turn_added,
    CompactionTriggered: _compaction,
    ClockAdvanced: _clock,
    FactWritten: _written,
    FactRead: _ids("FactRead", "id"),
    Queried: _queried,
    Superseded: _ids("Superseded", "id", "by"),
    Evicted: _ids("Evicted", "id"),
    EpisodeRecorded: _ids("EpisodeRecorded", "id"),
    Consolidated: _consolidated,
}
"""The check of each event type with values to check."""
