"""Stand-ins for the policies a run file names by import path: run files are data.

Anyone may open a run file, and opening one runs nothing. A header that names
a policy by import path (``policy = "mypkg.module:Policy"``) is therefore not
imported by the commands that read a run: each such policy is stood in for by
one that knows only its recorded table. That is enough to fold the recorded
events, to measure the window against its budget and to list the store; it is
not enough to decide a command or to score a fact, and a stand-in asked to
refuses in one line that says how to proceed (``--trust``).
"""

from collections.abc import Mapping
from typing import Any, ClassVar

import attrs

from memtape.core.commands import AddTurn, Consolidate, Query, ReadFact, RecordEpisode, WriteFact
from memtape.core.errors import BadInput, Rejected
from memtape.core.events import Event
from memtape.core.state import Fact, State, Store
from memtape.policies.plumbing.protocols import Scored
from memtape.policies.plumbing.trust import TRUST_HINT, NotImported, not_imported
from memtape.policies.text.tokenizers import TOKENIZERS, Tokenizer


def _positive(table: Mapping[str, Any], name: str, path: str, where: str) -> int:
    value = table.get(name)
    if type(value) is not int or value < 1:
        raise BadInput(
            f"{where}: policy {path!r} is not imported (run files are data), and its "
            f"table has no positive whole {name} to measure by, got {value!r}"
        )
    return value


def _table(table: Mapping[str, Any], path: str) -> dict[str, Any]:
    return {"policy": path, **{k: v for k, v in table.items() if k != "policy"}}


@attrs.frozen
class UnimportedCompaction:
    """A compaction policy known by its import path and recorded table only.

    It measures the window against the table's ``budget`` and promises
    nothing; a tokenizer the table names by a shipped name is known too (the
    redacted copy of a run keeps each text's token count with it).
    """

    name: ClassVar[str] = "unimported"
    path: str
    table: dict[str, Any] = attrs.field(hash=False)
    budget: int
    tokenizer: Tokenizer | None = None

    @classmethod
    def from_table(cls, path: str, table: Mapping[str, Any], where: str) -> "UnimportedCompaction":
        """The stand-in for ``path`` with the rest of its ``table``."""
        budget = _positive(table, "budget", path, where)
        named = table.get("tokenizer")
        tokenizer = TOKENIZERS.get(named) if isinstance(named, str) else None
        return cls(path, _table(table, path), budget, tokenizer)

    @property
    def promises(self) -> frozenset[str]:
        """None: whatever the real policy promised, its code is not here to keep it."""
        return frozenset()

    def decide(self, state: State, command: AddTurn) -> tuple[Event, ...]:
        """Refused: deciding a turn needs the real policy."""
        raise Rejected(not_imported(self.path, "deciding a turn"))

    def params(self) -> dict[str, Any]:
        """The recorded table, as the run's header wrote it."""
        return dict(self.table)


@attrs.frozen
class UnimportedForgetting:
    """A forgetting policy known by its import path and recorded table only.

    It knows the store's ``capacity``; scoring a fact needs the real policy,
    so ``score`` and ``rank`` raise ``NotImported``.
    """

    name: ClassVar[str] = "unimported"
    path: str
    table: dict[str, Any] = attrs.field(hash=False)
    capacity: int

    @classmethod
    def from_table(cls, path: str, table: Mapping[str, Any], where: str) -> "UnimportedForgetting":
        """The stand-in for ``path`` with the rest of its ``table``."""
        return cls(path, _table(table, path), _positive(table, "capacity", path, where))

    @property
    def promises(self) -> frozenset[str]:
        """None: whatever the real policy promised, its code is not here to keep it."""
        return frozenset()

    def decide(self, state: State, command: WriteFact | ReadFact | Query) -> tuple[Event, ...]:
        """Refused: deciding a write, a read or a query needs the real policy."""
        raise Rejected(not_imported(self.path, "deciding a fact's command"))

    def score(self, fact: Fact, now: float) -> Scored:
        """Refused: a score needs the real policy."""
        raise NotImported(not_imported(self.path, "scoring a fact"))

    def rank(self, store: Store, now: float, query: str = "") -> list[Scored]:
        """Refused: a ranking needs the real policy."""
        raise NotImported(not_imported(self.path, "ranking the store"))

    def params(self) -> dict[str, Any]:
        """The recorded table, as the run's header wrote it."""
        return dict(self.table)


@attrs.frozen
class UnimportedConsolidation:
    """A consolidation policy known by its import path and recorded table only."""

    name: ClassVar[str] = "unimported"
    path: str
    table: dict[str, Any] = attrs.field(hash=False)

    @classmethod
    def from_table(
        cls, path: str, table: Mapping[str, Any], where: str
    ) -> "UnimportedConsolidation":
        """The stand-in for ``path`` with the rest of its ``table``."""
        return cls(path, _table(table, path))

    @property
    def promises(self) -> frozenset[str]:
        """None: whatever the real policy promised, its code is not here to keep it."""
        return frozenset()

    def decide(self, state: State, command: RecordEpisode | Consolidate) -> tuple[Event, ...]:
        """Refused: deciding an episode or a pass needs the real policy."""
        raise Rejected(not_imported(self.path, "deciding a consolidation command"))

    def makes_semantic_facts(self) -> bool:
        """False: it writes nothing (the facts a pass wrote are in the recorded events)."""
        return False

    def params(self) -> dict[str, Any]:
        """The recorded table, as the run's header wrote it."""
        return dict(self.table)


Unimported = UnimportedCompaction | UnimportedForgetting | UnimportedConsolidation
"""Any stand-in."""

STAND_INS: dict[str, Any] = {
    "compaction": UnimportedCompaction,
    "forgetting": UnimportedForgetting,
    "consolidation": UnimportedConsolidation,
}
"""The stand-in of each axis."""

__all__ = [
    "STAND_INS",
    "TRUST_HINT",
    "NotImported",
    "Unimported",
    "UnimportedCompaction",
    "UnimportedConsolidation",
    "UnimportedForgetting",
    "not_imported",
]
