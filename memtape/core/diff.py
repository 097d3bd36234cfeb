"""What changed between two states: turns that moved between tiers, facts
added, read, retired or evicted, memory blocks edited, episodes, the clock and
the window's tokens."""

from collections.abc import Sequence
from typing import Literal, TypeVar

import attrs

from memtape.core.events import EpisodeRecorded, ProceduralRule, SemanticFact
from memtape.core.state import Block, Fact, State, Tier, Window

T = TypeVar("T")

FactChangeKind = Literal["added", "read", "retired", "evicted", "expired", "removed", "restored"]
"""How a fact changed: the most telling change wins (a fact added and then
evicted between the two points is ``evicted``, with ``before`` None).
``removed`` and ``restored`` appear only when ``after`` is the earlier point."""


@attrs.frozen
class TurnMove:
    """A turn whose tier differs between the two points (``None``: not arrived yet)."""

    turn: int
    before: Tier | None
    after: Tier | None


@attrs.frozen
class FactChange:
    """A fact that changed, with its fields at both points (``None``: not written yet)."""

    id: int
    kind: FactChangeKind
    before: Fact | None
    after: Fact | None


@attrs.frozen
class BlockChange:
    """A memory block that differs between the two points (``None``: not created yet)."""

    label: str
    before: Block | None
    after: Block | None


@attrs.frozen
class StateDiff:
    """Everything that differs between two states, ``before`` and ``after``."""

    clock: tuple[float, float]
    tokens: tuple[int, int]
    turns: tuple[TurnMove, ...]
    facts: tuple[FactChange, ...]
    episodes_recorded: tuple[EpisodeRecorded, ...]
    episodes_consumed: tuple[EpisodeRecorded, ...]
    semantic: tuple[SemanticFact, ...]
    procedural: tuple[ProceduralRule, ...]
    """Distilled facts and rules held at one point and not the other."""
    blocks: tuple[BlockChange, ...] = ()

    def is_empty(self) -> bool:
        """Whether the two states are the same in every respect the diff reports."""
        return (
            self.clock[0] == self.clock[1]
            and self.tokens[0] == self.tokens[1]
            and not (self.turns or self.facts or self.episodes_recorded)
            and not (self.episodes_consumed or self.semantic or self.procedural)
            and not self.blocks
        )


def diff_states(before: State, after: State) -> StateDiff:
    """Compare two states of one run (either may be the earlier one)."""
    old_tiers, new_tiers = _tiers(before.window), _tiers(after.window)
    last = max(before.window.turns, after.window.turns)
    moves = tuple(
        TurnMove(turn, old_tiers.get(turn), new_tiers.get(turn))
        for turn in range(1, last + 1)
        if old_tiers.get(turn) != new_tiers.get(turn)
    )
    changes: list[FactChange] = []
    for fact_id in sorted(set(before.store.facts) | set(after.store.facts)):
        old, new = before.store.facts.get(fact_id), after.store.facts.get(fact_id)
        if old != new:
            changes.append(FactChange(fact_id, _fact_kind(old, new), old, new))
    old_pending = {e.id for e in before.memory.episodes}
    new_pending = {e.id for e in after.memory.episodes}
    return StateDiff(
        clock=(before.clock, after.clock),
        tokens=(before.window.tokens, after.window.tokens),
        turns=moves,
        facts=tuple(changes),
        episodes_recorded=tuple(e for e in after.memory.episodes if e.id not in old_pending),
        episodes_consumed=tuple(e for e in before.memory.episodes if e.id not in new_pending),
        semantic=_distilled(before.memory.semantic, after.memory.semantic),
        procedural=_distilled(before.memory.procedural, after.memory.procedural),
        blocks=_blocks(before.window, after.window),
    )


def _blocks(before: Window, after: Window) -> tuple[BlockChange, ...]:
    """The memory blocks that differ, in the order they were created (either point's)."""
    labels = [b.label for b in before.blocks]
    labels += [b.label for b in after.blocks if b.label not in labels]
    changes = (BlockChange(label, before.block(label), after.block(label)) for label in labels)
    return tuple(change for change in changes if change.before != change.after)


def _distilled(before: Sequence[T], after: Sequence[T]) -> tuple[T, ...]:
    """What one point holds beyond the other (distilled lists only ever grow)."""
    longer, shorter = (after, before) if len(after) >= len(before) else (before, after)
    return tuple(longer[len(shorter) :])


def _tiers(window: Window) -> dict[int, Tier]:
    tiers: dict[int, Tier] = dict.fromkeys(window.dropped, "dropped")
    tiers.update(dict.fromkeys(window.cold, "cold"))
    tiers.update((item.turn, "warm") for item in window.warm)
    tiers.update((turn.turn, "hot") for turn in window.hot)
    return tiers


def _fact_kind(old: Fact | None, new: Fact | None) -> FactChangeKind:
    if new is None:
        return "removed"
    if old is None or old.status != new.status:
        if new.status != "active":
            return new.status
        return "added" if old is None else "restored"
    return "read"
