"""The kernel's invariants as plain functions, and the checks of a whole run.

Each ``check_*`` function states one invariant of the state a run reaches
(or of one event and the state before it) and returns the ``Violation``\\ s
it finds, empty when it holds. The property tests assert that the lists are
empty; ``StepChecker`` applies the per-command ones to one command's batch
at a time (the kit's state machine feeds it as it goes); ``check_run``
drives it over a recorded run in one pass, adding checkpoints; ``redecide``
asks the policies to decide every recorded command again and reports the
first event the log does not agree with, and ``redecide_in_worlds`` the
first command they decide differently under another wall clock and random
state.

A violation's ``position`` counts events: the state after the first
``position`` events (what ``memtape show RUN --at POSITION`` shows) is the
first that breaks the invariant; 0 stands for the initial state or the
run's header.

The invariants live in one module a promise (or a family of them): ``window``,
``store``, ``replay``, ``promises``, with ``steps`` (``StepChecker``), ``runs``
(``check_run``) and ``redeciding`` on top, and every name is importable from here,
as it always was.
"""

from memtape.checking.invariants.promises import check_compaction, check_forgetting
from memtape.checking.invariants.redeciding import (
    PROGRESS_EVERY,
    reask,
    redecide,
    redecide_in_worlds,
    redecide_twice,
)
from memtape.checking.invariants.replay import check_codec, check_determinism, check_replay
from memtape.checking.invariants.runs import check_run
from memtape.checking.invariants.steps import HotByNumber, StepChecker
from memtape.checking.invariants.store import (
    check_capacity,
    check_eviction,
    check_evictions,
    check_expiry,
    check_judged,
    check_query,
    check_ranking,
    check_status,
    check_supersedes,
)
from memtape.checking.invariants.violation import Violation
from memtape.checking.invariants.window import (
    budget_bound,
    check_blocks,
    check_budget,
    check_gist,
    check_hot,
    check_pinned,
    check_recall,
    check_tiers,
    check_token_total,
    check_verbatim,
    check_well_formed,
)

__all__ = [
    "PROGRESS_EVERY",
    "HotByNumber",
    "StepChecker",
    "Violation",
    "budget_bound",
    "check_blocks",
    "check_budget",
    "check_capacity",
    "check_codec",
    "check_compaction",
    "check_determinism",
    "check_eviction",
    "check_evictions",
    "check_expiry",
    "check_forgetting",
    "check_gist",
    "check_hot",
    "check_judged",
    "check_pinned",
    "check_query",
    "check_ranking",
    "check_recall",
    "check_replay",
    "check_run",
    "check_status",
    "check_supersedes",
    "check_tiers",
    "check_token_total",
    "check_verbatim",
    "check_well_formed",
    "reask",
    "redecide",
    "redecide_in_worlds",
    "redecide_twice",
]
