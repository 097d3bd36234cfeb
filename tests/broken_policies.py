"""Deliberately broken policies: the kit must catch each with a small counterexample."""

import time
from collections.abc import Mapping
from typing import Any, ClassVar

import attrs

from memtape.core.commands import AddTurn, Query, ReadFact, WriteFact
from memtape.core.events import Event, Evicted, TurnAdded
from memtape.core.state import State, Store, Window
from memtape.policies.compaction import TieredCompaction
from memtape.policies.forgetting import ImportanceRecencyAccess
from memtape.policies.params import Params
from memtape.policies.promises import BUDGET
from memtape.policies.protocols import Scored
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
