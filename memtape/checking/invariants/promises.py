"""A policy's promises, checked against the step that should keep them (``BUDGET``,
``RECENT_VERBATIM``, ``WELL_FORMED``, ``PINNED``, ``CAPACITY``...)."""

from collections.abc import Mapping

from memtape.checking.invariants.store import (
    check_capacity,
    check_expiry,
    check_ranking,
    check_supersedes,
)
from memtape.checking.invariants.violation import Violation
from memtape.checking.invariants.window import (
    budget_bound,
    check_budget,
    check_gist,
    check_hot,
    check_verbatim,
)
from memtape.core.events import (
    TurnAdded,
)
from memtape.core.state import State, Window
from memtape.policies.plumbing.promises import (
    BUDGET,
    CAPACITY,
    EXPIRES,
    RECENT_VERBATIM,
    SUPERSEDES,
)
from memtape.policies.plumbing.protocols import (
    CompactionPolicy,
    ForgettingPolicy,
    is_budgeted,
    is_verbatim,
)
from memtape.policies.window.tiered import TieredCompaction


def check_compaction(
    compaction: CompactionPolicy,
    window: Window,
    turns: Mapping[int, TurnAdded],
    *,
    compacted: bool,
    at: int,
    arrived: int | None = None,
) -> list[Violation]:
    """What ``compaction`` promises of the window after a command that added a turn.

    BUDGET: within ``max(budget, floor(window))``; RECENT_VERBATIM: the last
    ``verbatim`` turns HOT as they arrived, with their units. The seed's
    tiered policy is also held to its own design: HOT exactly its last
    ``hot_n`` turns (with their units, and the pinned turns) after a
    compaction, and the gist. WELL_FORMED and PINNED, which follow each
    turn's moves, are ``StepChecker``'s.

    ``arrived``, when given, is how many turns the command added to a window
    checked after the command before: without a compaction HOT only grew by
    them, so only they need checking against RECENT_VERBATIM (under ``none``,
    which keeps every turn verbatim, the whole HOT would cost each command
    the length of the run).
    """
    promises = compaction.promises
    violations: list[Violation] = []
    if BUDGET in promises:
        if is_budgeted(compaction):
            floor = compaction.floor(window) + sum(item.tokens for item in window.recalled)
            bound = budget_bound(compaction, compacted=compacted)
            if bound is not None:
                violations.extend(check_budget(window, bound, floor=floor, at=at))
        else:
            violations.append(_unkept(compaction, BUDGET, "floor(window)", at))
    if RECENT_VERBATIM in promises:
        if is_verbatim(compaction):
            verbatim, fresh = compaction.verbatim, None
            if arrived is not None and not compacted:
                verbatim = fresh = min(verbatim, arrived)
            violations.extend(check_verbatim(window, verbatim, turns, at=at, fresh=fresh))
        else:
            violations.append(_unkept(compaction, RECENT_VERBATIM, "verbatim (an int)", at))
    if isinstance(compaction, TieredCompaction):
        violations.extend(check_hot(window, compaction.hot_n, turns, compacted=compacted, at=at))
        if compacted:
            violations.extend(check_gist(window, compaction, at=at))
    return violations


def check_forgetting(
    forgetting: ForgettingPolicy, state: State, *, at: int, before: int = 0
) -> list[Violation]:
    """What ``forgetting`` promises of the store after a command that touched it (CAPACITY,
    SUPERSEDES), and the ranking every forgetting policy owes; ``before`` is how many facts
    were active before the command."""
    promises = forgetting.promises
    store = state.store
    violations: list[Violation] = []
    if CAPACITY in promises:
        violations.extend(check_capacity(store, forgetting.capacity, at=at, before=before))
    if SUPERSEDES in promises:
        violations.extend(check_supersedes(store, at=at))
    if EXPIRES in promises:
        violations.extend(check_expiry(store, state.clock, at=at))
    violations.extend(check_ranking(forgetting, store, state.clock, at=at))
    return violations


def _unkept(policy: object, promise: str, member: str, at: int) -> Violation:
    message = f"{type(policy).__name__} promises {promise} but has no {member}"
    return Violation(at, "promise", message)
