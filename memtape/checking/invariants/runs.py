"""``check_run``: every invariant over a recorded run in one pass, with checkpoints."""

from collections.abc import Callable, Mapping

from memtape.checking.invariants.redeciding import PROGRESS_EVERY, _policies_at
from memtape.checking.invariants.replay import check_replay
from memtape.checking.invariants.steps import StepChecker
from memtape.checking.invariants.store import check_status
from memtape.checking.invariants.violation import Violation
from memtape.checking.invariants.window import (
    check_pinned,
    check_tiers,
    check_token_total,
    check_well_formed,
)
from memtape.core.errors import BadInput
from memtape.core.events import (
    TurnAdded,
)
from memtape.core.run import DEFAULT_SNAPSHOT_EVERY, Run
from memtape.core.state import State
from memtape.policies.plumbing.promises import (
    PINNED,
    WELL_FORMED,
)
from memtape.policies.session import Policies


def check_run(
    run: Run,
    policies: Policies | Callable[[int], Policies],
    *,
    checkpoint: int = DEFAULT_SNAPSHOT_EVERY,
    own_texts: bool = True,
    progress: Callable[[int], None] | None = None,
) -> list[Violation]:
    """Every invariant over a whole run, in one pass that folds the log event by event.

    Each command's batch goes through ``StepChecker``: what every policy
    owes (the fold, the codec, the token total, the ranking) and what each
    policy in force promises, no more (``own_texts``: see ``StepChecker``).
    At positions ``checkpoint``, twice that, four times, ... and at the end,
    the checks whose cost is the size of the state: replay equality with
    ``run.state_at``, the tiers and the statuses (so those report the
    checkpoint where they first show, and the whole check stays linear in
    the length of the run). Checks that need a
    policy the run lacks are skipped. Each invariant reports its first
    violation only. ``policies`` may be a function of the position
    (``Session.policies_at``), for a forked run. ``progress(steps)`` hears how
    many commands are checked, every ``PROGRESS_EVERY`` and at the end.
    """
    policies_at = _policies_at(policies)
    if checkpoint < 1:
        raise BadInput(f"checkpoint must be at least 1, got {checkpoint}")
    found: dict[str, Violation] = {}
    events = run.events
    checker = StepChecker(run.state_at(0), own_texts=own_texts)
    next_checkpoint, checked = checkpoint, -1

    def at_checkpoint(position: int, state: State) -> list[Violation]:
        nonlocal next_checkpoint, checked
        if position != next_checkpoint:
            return []
        next_checkpoint, checked = 2 * position, position
        return _checkpoint(run, state, position, policies_at(position), checker.pinned)

    for step in range(1, run.steps + 1):
        if progress is not None and step % PROGRESS_EVERY == 0:
            progress(step)
        start, end = run.batch(step)
        violations = checker.check(
            policies_at(end), events[start:end], start=start, after_event=at_checkpoint
        )
        for violation in violations:
            found.setdefault(violation.invariant, violation)
        if checker.broken:
            return sorted(found.values(), key=lambda v: v.position)
    if progress is not None:
        progress(run.steps)
    state = checker.state
    for violation in [
        *(
            _checkpoint(run, state, len(run), policies_at(len(run)), checker.pinned)
            if checked != len(run)
            else []
        ),
        *check_replay(state, run.state, at=len(run)),
    ]:
        found.setdefault(violation.invariant, violation)
    return sorted(found.values(), key=lambda v: v.position)


def _checkpoint(
    run: Run,
    state: State,
    position: int,
    policies: Policies,
    pinned: Mapping[int, TurnAdded],
) -> list[Violation]:
    """The checks whose cost grows with the state, at one position (the whole of HOT under
    WELL_FORMED and PINNED when the compaction in force there promises them)."""
    promised = policies.compaction.promises if policies.compaction is not None else frozenset()
    window = state.window
    return [
        *check_replay(state, run.state_at(position), at=position),
        *check_tiers(window, at=position),
        *check_token_total(window, at=position),
        *check_status(state.store, at=position),
        *(check_well_formed(window, at=position) if WELL_FORMED in promised else []),
        *(check_pinned(window, pinned, at=position) if PINNED in promised else []),
    ]
