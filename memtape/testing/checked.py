"""A session checked after every command, and the shortening of a failing one.

``CheckedSession`` is what the kit's state machine drives: each command is
decided twice in made-up worlds (determinism), executed, and its batch
checked (``StepChecker``: what every policy owes, what this one promises); a
rejected command must leave no trace. ``shortest`` drops the steps a failure
does not need, so the scenario a user gets is as short as the bug allows.
"""

from collections.abc import Sequence

from memtape.checking.invariants import (
    StepChecker,
    Violation,
    check_determinism,
    check_replay,
    redecide,
)
from memtape.core.commands import Command
from memtape.core.errors import Rejected
from memtape.core.events import Event
from memtape.policies.session import Policies, Session
from memtape.reducers import fold


class CheckedSession:
    """A session under ``policies`` whose every command is checked as it executes.

    ``steps`` are the commands that shaped the run: every honoured one, and
    a command that crashed the policy; ``decided`` the events of the last
    command executed (none when it was rejected or crashed).
    """

    def __init__(self, policies: Policies) -> None:
        self.policies = policies
        self.session = Session(policies)
        self.checker = StepChecker(self.session.state)
        self.steps: list[Command] = []
        self.decided: tuple[Event, ...] = ()

    def execute(self, command: Command) -> list[Violation]:
        """Execute ``command``; what it breaks (empty when nothing, or when it is rightly
        rejected)."""
        run = self.session.run
        state, length, count = self.session.state, len(run), run.steps
        self.decided = ()
        try:
            violations = check_determinism(self.policies, state, command, at=length + 1)
            events = self.session.execute(command)
        except Rejected as error:
            if (len(run), run.steps) != (length, count) or self.session.state is not state:
                message = f"{type(command).__name__} was rejected ({error}) but left a trace"
                return [Violation(length + 1, "rejection", message)]
            return []
        except Exception as error:
            # A policy may fail in any way; the kit reports it like a broken invariant.
            self.steps.append(command)
            crash = f"{type(command).__name__} raised {type(error).__name__}: {error}"
            return [Violation(length + 1, "crash", crash)]
        self.steps.append(command)
        self.decided = events
        return [*violations, *self.checker.check(self.policies, events, start=length)]

    def replays(self) -> list[Violation]:
        """The log folded event by event equals the session's state."""
        return check_replay(self.checker.state, self.session.state, at=len(self.session.run))

    def finish(self) -> list[Violation]:
        """The whole log folds from scratch to the end state and re-decides to itself."""
        run = self.session.run
        violations = check_replay(fold(run.events), run.state, at=len(run))
        divergence = redecide(run, self.policies)
        return [*violations, *([divergence] if divergence is not None else [])]


def breaks(policies: Policies, commands: Sequence[Command], invariant: str) -> list[Command] | None:
    """The steps up to where ``commands`` break ``invariant`` under ``policies``, or None."""
    checked = CheckedSession(policies)
    for command in commands:
        found = [*checked.execute(command), *checked.replays()]
        if any(v.invariant == invariant for v in found):
            return checked.steps
        if any(v.invariant == "crash" for v in found):
            return None
    if any(v.invariant == invariant for v in checked.finish()):
        return checked.steps
    return None


def shortest(policies: Policies, steps: Sequence[Command], invariant: str) -> list[Command]:
    """``steps`` without every step whose removal still breaks ``invariant`` (from the last
    step back, one at a time, so no single step more can go)."""
    current = list(steps)
    index = len(current) - 1
    while index >= 0:
        shorter = breaks(policies, [*current[:index], *current[index + 1 :]], invariant)
        if shorter is not None and len(shorter) < len(current):
            current = shorter
            index = min(index, len(current))
        index -= 1
    return current
