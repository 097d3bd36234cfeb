"""Deliberately broken policies: the kit must catch each with a small counterexample."""

import time
from collections.abc import Mapping
from typing import Any, ClassVar

import attrs

from memtape.core.commands import ROLES, AddTurn, Query, ReadFact, WriteFact
from memtape.core.errors import Rejected
from memtape.core.events import CompactionTriggered, Event, Evicted, TurnAdded
from memtape.core.state import State, Store, Window
from memtape.policies.plumbing.params import Params
from memtape.policies.plumbing.promises import BUDGET, WELL_FORMED
from memtape.policies.plumbing.protocols import Scored
from memtape.policies.store.forgetting import ImportanceRecencyAccess
from memtape.policies.window.no_compaction import NoCompaction
from memtape.policies.window.sliding_window import SlidingWindow
from memtape.policies.window.tiered import TieredCompaction
from memtape.policies.window.turns import arriving
from memtape.reducers import fold


@attrs.frozen
class NeverCompacts:
    """Promises the budget, claims it could keep nothing, and never compacts."""

    name: ClassVar[str] = "never-compacts"
    axis: ClassVar[str] = "compaction"
    budget: int

    @classmethod
    def from_params(cls, data: Mapping[str, Any], where: str) -> "NeverCompacts":
        """Only a budget."""
        params = Params(data, where)
        budget = params.integer("budget", minimum=1)
        params.done()
        return cls(budget)

    @property
    def promises(self) -> frozenset[str]:
        """The budget bound, which it does not keep."""
        return frozenset({BUDGET})

    def floor(self, window: Window) -> int:
        """Nothing: it claims it could drop every turn."""
        return 0

    def params(self) -> dict[str, Any]:
        """The budget."""
        return {"policy": self.name, "budget": self.budget}

    def decide(self, state: State, command: AddTurn) -> tuple[Event, ...]:
        """The turn, and never a compaction."""
        tokens = len(f"{command.role}: {command.text}".split())
        return (TurnAdded(state.window.turns + 1, command.role, command.text, tokens, False),)


@attrs.frozen
class EvictsStrongest(ImportanceRecencyAccess):
    """Over capacity, evicts the highest score instead of the lowest."""

    axis: ClassVar[str] = "forgetting"

    def decide(self, state: State, command: WriteFact | ReadFact | Query) -> tuple[Event, ...]:
        """The seed's events, with each eviction moved to the strongest fact."""
        events = super().decide(state, command)
        kept = [e for e in events if not isinstance(e, Evicted)]
        evictions = len(events) - len(kept)
        if not evictions:
            return events
        after = fold(kept, state)
        strongest = self.rank(after.store, after.clock)[:evictions]
        return (*kept, *(Evicted(s.fact.id, s.score) for s in strongest))


@attrs.frozen
class RanksRetired(ImportanceRecencyAccess):
    """Resurrects retired and evicted facts: its ranking holds every fact ever written."""

    axis: ClassVar[str] = "forgetting"

    def rank(self, store: Store, now: float, query: str = "") -> list[Scored]:
        """Every fact, active or not, highest score first."""
        scored = [self.score(fact, now) for fact in store.facts.values()]
        scored.sort(key=lambda s: (-s.score, s.fact.written_at, s.fact.id))
        return scored


@attrs.frozen
class StampsTurns(TieredCompaction):
    """Stamps each turn with the wall-clock time it arrived."""

    axis: ClassVar[str] = "compaction"

    def decide(self, state: State, command: AddTurn) -> tuple[Event, ...]:
        """The seed's events for the turn, its text stamped with ``time.time()``."""
        stamped = attrs.evolve(command, text=f"{command.text} @{time.time():.0f}")
        return super().decide(state, stamped)


@attrs.frozen
class SplitsCalls(SlidingWindow):
    """Drops the oldest turns one at a time, as if no turn answered another: a call leaves
    without its results. It promises well-formed windows all the same (and no budget: one
    turn at a time past memory blocks and pinned units, it may stop over it, which is not
    the bug it stands for)."""

    axis: ClassVar[str] = "compaction"

    @property
    def promises(self) -> frozenset[str]:
        """Well-formed windows, which it breaks."""
        return frozenset({WELL_FORMED})

    def decide(self, state: State, command: AddTurn) -> tuple[Event, ...]:
        """The turn, and, over budget, the oldest turns dropped one by one."""
        window = state.window
        turn = arriving(window, command, self.tokenizer)
        tokens = window.tokens + turn.tokens
        if tokens <= self.budget:
            return (turn,)
        hot = (*window.hot, turn)
        drop = 0
        while tokens > self.budget and drop < len(hot) - 1:
            tokens -= hot[drop].tokens
            drop += 1
        if not drop:
            return (turn,)
        dropped = tuple(t.turn for t in hot[:drop])
        return (turn, CompactionTriggered(self.budget, (), dropped, 0, "", 0))


@attrs.frozen
class MovesPinned(TieredCompaction):
    """Decides as if no turn were pinned, and records the pin all the same."""

    axis: ClassVar[str] = "compaction"

    def decide(self, state: State, command: AddTurn) -> tuple[Event, ...]:
        """The seed's events for the turn on a window whose turns are all unpinned, the
        turn then marked pinned as asked."""
        window = state.window
        unpinned = tuple(attrs.evolve(turn, pinned=False) for turn in window.hot)
        blind = state._replace(window=window._replace(hot=unpinned))
        events = super().decide(blind, attrs.evolve(command, pin=False))
        first = events[0]
        assert isinstance(first, TurnAdded)
        return (attrs.evolve(first, pinned=command.pin), *events[1:])


@attrs.frozen
class TakesAnyAnswer(NoCompaction):
    """Keeps every turn, checking nothing of what a turn answers: it records a result of a
    call no turn made, and promises well-formed windows."""

    axis: ClassVar[str] = "compaction"

    def decide(self, state: State, command: AddTurn) -> tuple[Event, ...]:
        """The turn, as asked."""
        number = state.window.turns + 1
        tokens = self.tokenizer.count(f"{command.role}: {command.text}")
        if command.role not in ROLES or not isinstance(command.text, str):
            raise Rejected(f"not a turn: {command!r}")
        return (
            TurnAdded(
                number,
                command.role,
                command.text,
                tokens,
                command.role == "tool",
                tuple(command.calls),
                tuple(command.answers),
                command.pin,
            ),
        )


@attrs.frozen
class OvershootsOnHugeTurns(TieredCompaction):
    """The seed's compaction, except that a single turn over three times the budget takes
    the window as it is, over budget: only such a turn shows it."""

    axis: ClassVar[str] = "compaction"

    def decide(self, state: State, command: AddTurn) -> tuple[Event, ...]:
        """The seed's events, or the turn alone when it is over three times the budget."""
        events = super().decide(state, command)
        first = events[0]
        assert isinstance(first, TurnAdded)
        return (first,) if first.tokens > 3 * self.budget else events


@attrs.frozen
class ToolsAsChatter(NoCompaction):
    """Keeps every turn, and marks a turn salient only when its command says so: a tool
    result left to it is chatter, so its salience rule never fires (the tutorial's old
    example did this)."""

    axis: ClassVar[str] = "compaction"

    def decide(self, state: State, command: AddTurn) -> tuple[Event, ...]:
        """The turn, salient only if asked."""
        turn = arriving(state.window, command, self.tokenizer)
        return (attrs.evolve(turn, salient=command.salient is True),)


@attrs.frozen
class AllSalient(NoCompaction):
    """Keeps every turn, and marks every turn left to it salient, tool result or not."""

    axis: ClassVar[str] = "compaction"

    def decide(self, state: State, command: AddTurn) -> tuple[Event, ...]:
        """The turn, salient unless asked otherwise."""
        turn = arriving(state.window, command, self.tokenizer)
        return (attrs.evolve(turn, salient=command.salient is not False),)


@attrs.frozen
class ChatterByDesign(ToolsAsChatter):
    """``ToolsAsChatter``, saying its salience is constant by design."""

    salience_may_be_constant: ClassVar[bool] = True


@attrs.frozen
class FloorWithoutBlocks(SlidingWindow):
    """The sliding window, with a floor that leaves the memory blocks out: once a block
    fills the window, the floor it claims is less than what it must keep."""

    axis: ClassVar[str] = "compaction"

    def floor(self, window: Window) -> int:
        """The sliding window's floor without the blocks' tokens."""
        return super().floor(window) - window.block_tokens
