"""Folding window events: a turn arrives, a compaction is applied."""

from pyrsistent import pvector

from memtape.core.errors import CorruptLog
from memtape.core.events import CompactionTriggered, TurnAdded
from memtape.core.state import Window


def turn_added(window: Window, event: TurnAdded) -> Window:
    """Append the turn to HOT and add its tokens to the running total."""
    if event.turn != window.turns + 1:
        raise CorruptLog(f"turn {event.turn} cannot follow turn {window.turns}")
    return Window(
        window.hot.append(event),
        window.warm,
        window.cold,
        window.gist,
        window.gist_tokens,
        window.dropped,
        window.tokens + event.tokens,
        window.turns + 1,
    )


def compaction_triggered(window: Window, event: CompactionTriggered) -> Window:
    """Apply a compaction decision: HOT to WARM or dropped, oldest WARM to COLD.

    The cost is proportional to the tiers the decision touches, never to the
    length of the run.
    """
    staying = set(event.hot)
    leaving = {item.turn for item in event.warm}
    leaving.update(event.dropped)
    hot_turns = [turn.turn for turn in window.hot]
    if len(staying) + len(leaving) != len(hot_turns) or not staying.union(leaving).issuperset(
        hot_turns
    ):
        raise CorruptLog(
            f"compaction names turns {sorted(staying | leaving)} but HOT holds {hot_turns}"
        )
    tokens = window.tokens
    for turn in window.hot:
        if turn.turn not in staying:
            tokens -= turn.tokens
    warm = window.warm.extend(event.warm)
    if not 0 <= event.cold <= len(warm):
        raise CorruptLog(
            f"compaction sends {event.cold} warm items cold but WARM holds {len(warm)}"
        )
    for item in event.warm:
        tokens += item.tokens
    cooled = warm[: event.cold]
    for item in cooled:
        tokens -= item.tokens
    tokens += event.gist_tokens - window.gist_tokens
    return Window(
        pvector(turn for turn in window.hot if turn.turn in staying),
        warm[event.cold :],
        window.cold.extend(item.turn for item in cooled),
        event.gist,
        event.gist_tokens,
        window.dropped.extend(event.dropped),
        tokens,
        window.turns,
    )
