"""What a policy is: the protocol each axis's deciders implement.

A policy is a decider: ``decide(state, command) -> events``. It may measure
or ask the outside world, but whatever it learns goes into the events, so a
replay never calls it again. A command it cannot honour raises ``Rejected``.

A compaction policy's promises ask for more than ``CompactionPolicy``: one
that promises BUDGET is also a ``BudgetedCompaction`` (``floor``), one that
promises RECENT_VERBATIM a ``VerbatimCompaction`` (``verbatim``). A policy
says its promises at run time, so the checks narrow with ``is_budgeted`` and
``is_verbatim``, and report a promise made without its member.
"""

from typing import Any, ClassVar, Protocol, TypeGuard

import attrs

from memtape.core.commands import AddTurn, Consolidate, Query, ReadFact, RecordEpisode, WriteFact
from memtape.core.events import Event
from memtape.core.state import Fact, State, Store, Window


@attrs.frozen
class Scored:
    """A fact's score under a policy, with each factor that went into it."""

    fact: Fact
    factors: dict[str, float]
    score: float


class CompactionPolicy(Protocol):
    """Keeps the window bounded: decides what each new turn does to it."""

    name: ClassVar[str]

    @property
    def budget(self) -> int:
        """The token budget the window is measured against."""
        ...

    @property
    def promises(self) -> frozenset[str]:
        """The invariants of ``memtape.policies.plumbing.promises`` this policy keeps."""
        ...

    def decide(self, state: State, command: AddTurn) -> tuple[Event, ...]:
        """The events of one turn: the turn, and any compaction it triggers."""
        ...

    def params(self) -> dict[str, Any]:
        """The parameters, as a scenario table would write them."""
        ...


class BudgetedCompaction(CompactionPolicy, Protocol):
    """A compaction policy that promises BUDGET: it says the least it may keep."""

    def floor(self, window: Window) -> int:
        """The fewest tokens this policy's own rules let it keep in ``window``.

        After a turn the window holds at most ``max(budget, floor(window))``.
        """
        ...


class VerbatimCompaction(CompactionPolicy, Protocol):
    """A compaction policy that promises RECENT_VERBATIM: it says how many turns stay."""

    @property
    def verbatim(self) -> int:
        """How many of the newest turns stay HOT exactly as they arrived (each with the rest
        of its unit, ``memtape.policies.window.units``)."""
        ...


class ExplainedCompaction(CompactionPolicy, Protocol):
    """A compaction policy that says in words why it compacted where it did (``recorded``
    names where the agent did it)."""

    def reason(self, turn: int) -> str | None:
        """Why the policy compacted as turn ``turn`` arrived, or None when it does not say."""
        ...


def is_explained(policy: CompactionPolicy) -> TypeGuard[ExplainedCompaction]:
    """Whether ``policy`` has the ``reason`` that ``memtape why`` shows."""
    return callable(getattr(policy, "reason", None))


def is_budgeted(policy: CompactionPolicy) -> TypeGuard[BudgetedCompaction]:
    """Whether ``policy`` has the ``floor`` that BUDGET needs."""
    return callable(getattr(policy, "floor", None))


def is_verbatim(policy: CompactionPolicy) -> TypeGuard[VerbatimCompaction]:
    """Whether ``policy`` has the ``verbatim`` count (an int) that RECENT_VERBATIM needs."""
    verbatim = getattr(policy, "verbatim", None)
    return isinstance(verbatim, int)


class ForgettingPolicy(Protocol):
    """Keeps the store sharp: scores facts, supersedes and evicts."""

    name: ClassVar[str]

    @property
    def capacity(self) -> int:
        """The most active facts the store holds after a command."""
        ...

    @property
    def promises(self) -> frozenset[str]:
        """The invariants of ``memtape.policies.plumbing.promises`` this policy keeps."""
        ...

    def decide(self, state: State, command: WriteFact | ReadFact | Query) -> tuple[Event, ...]:
        """The events of a write (supersessions, evictions), a read or a query."""
        ...

    def score(self, fact: Fact, now: float) -> Scored:
        """A fact's score at ``now``, with the factors behind it."""
        ...

    def rank(self, store: Store, now: float, query: str = "") -> list[Scored]:
        """The active facts by score, highest first; ``query`` is a query's text, if any.

        This is the authority for queries and evictions: a policy whose score
        depends on the other facts (normalized over the actives) ranks here.
        """
        ...

    def params(self) -> dict[str, Any]:
        """The parameters, as a scenario table would write them."""
        ...


class ConsolidationPolicy(Protocol):
    """Distills episodes into durable facts and rules in a sleep-time pass."""

    name: ClassVar[str]

    @property
    def promises(self) -> frozenset[str]:
        """The invariants of ``memtape.policies.plumbing.promises`` this policy keeps."""
        ...

    def decide(self, state: State, command: RecordEpisode | Consolidate) -> tuple[Event, ...]:
        """The events of recording an episode, or of one pass."""
        ...

    def makes_semantic_facts(self) -> bool:
        """Whether a pass may write facts to the store."""
        ...

    def params(self) -> dict[str, Any]:
        """The parameters, as a scenario table would write them."""
        ...
