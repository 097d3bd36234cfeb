"""Deciding a recorded run again: ``redecide`` reports the first event the log does not
agree with, ``redecide_in_worlds`` the first command decided differently under another
wall clock and random state, ``reask`` a model's answers asked again."""

from collections.abc import Callable, Sequence
from typing import Any

import attrs

from memtape.checking.determinism import made_up_worlds
from memtape.checking.invariants.replay import check_determinism
from memtape.checking.invariants.violation import Violation
from memtape.core.commands import Command
from memtape.core.errors import CorruptLog, Rejected
from memtape.core.events import (
    Event,
)
from memtape.core.run import Run
from memtape.core.state import State
from memtape.llm.answers import Reask, Replay, Unanswered, answering, recorded_calls
from memtape.llm.client import ModelUnavailable, NotChosen
from memtape.policies.session import Policies
from memtape.reducers import fold


def redecide(run: Run, policies: Policies | Callable[[int], Policies]) -> Violation | None:
    """Decide every recorded command again, from the state before its batch, under
    ``policies`` (or, for a forked run, the policies in force at each step);
    the first event the log does not agree with, or None.

    A log edited by hand (a turn's tokens changed, and still folding) or a
    policy whose behaviour changed since the run was recorded shows here.
    Each command's questions to a model get the answers its batch recorded
    (``memtape.llm.answers.Replay``): what is checked is the policy's logic
    given the same model outputs, and nothing is asked.
    """
    return _each_decision(run, policies, [_agrees])[0]


def redecide_in_worlds(
    run: Run, policies: Policies | Callable[[int], Policies]
) -> Violation | None:
    """``check_determinism`` for every recorded command, from the state before its batch:
    the first command the policies decide differently under another wall clock and random
    state, or None. (A policy that reads the clock may still re-decide to its own log when
    the clock has not moved far enough; this check does not depend on luck.)"""
    with made_up_worlds():
        return _each_decision(run, policies, [_alike])[0]


def redecide_twice(
    run: Run,
    policies: Policies | Callable[[int], Policies],
    *,
    progress: Callable[[int], None] | None = None,
    live: bool = False,
) -> tuple[Violation | None, Violation | None]:
    """``redecide`` and ``redecide_in_worlds`` in one pass, folding the run once: what
    each finds, the same as each alone would. ``progress(steps)`` hears how many
    commands are done, every ``PROGRESS_EVERY`` and at the end. With ``live``, what the
    run does not record (an embedding's vector not cached) may be asked."""
    with made_up_worlds():
        plain, worlds = _each_decision(
            run, policies, [_agrees, _alike], progress=progress, live=live
        )
    return plain, worlds


PROGRESS_EVERY = 512
"""How many commands a pass decides between two calls of its ``progress``."""


@attrs.frozen
class _Decision:
    """A recorded command, its batch ``events[start:end]``, the policies in force and the state
    before the batch."""

    step: int
    command: Command
    start: int
    recorded: Sequence[Event]
    policies: Policies
    state: State
    live: bool = False
    """Whether what the run does not record may be asked (``Replay``'s ``asking``)."""


def _each_decision(
    run: Run,
    policies: Policies | Callable[[int], Policies],
    checks: Sequence[Callable[[_Decision], Violation | None]],
    *,
    progress: Callable[[int], None] | None = None,
    live: bool = False,
) -> list[Violation | None]:
    """Each of ``checks`` on every recorded command in turn, until it finds something: the
    first violation each finds, or an integrity one where the log stops folding (for each
    that had found nothing before)."""
    policies_at = _policies_at(policies)
    events = run.events
    state = run.state_at(0)
    found: list[Violation | None] = [None] * len(checks)
    pending = list(range(len(checks)))
    for step, command in enumerate(run.commands, start=1):
        if progress is not None and step % PROGRESS_EVERY == 0:
            progress(step)
        start, end = run.batch(step)
        recorded = events[start:end]
        decision = _Decision(step, command, start, recorded, policies_at(end), state, live)
        for index in list(pending):
            violation = checks[index](decision)
            if violation is not None:
                found[index] = violation
                pending.remove(index)
        if not pending:
            break
        try:
            state = fold(recorded, state)
        except CorruptLog as error:
            broken = Violation(start + 1, "integrity", f"{_step(step, command)}: {error}")
            for index in pending:
                found[index] = broken
            break
    if progress is not None:
        progress(run.steps)
    return found


def reask(
    run: Run,
    policies: Policies | Callable[[int], Policies],
    *,
    progress: Callable[[int], None] | None = None,
) -> tuple[list[Violation], int]:
    """Ask the model again each question every recorded command asked (the cache bypassed):
    a finding for each answer that differs from the recorded one, and how many were asked.

    Each command is decided again with the recorded answers (``Reask``), so
    the run goes on as recorded whatever the model says now; a question the
    run did not record is ``redecide``'s to report. A model that cannot be
    asked raises ``ModelUnavailable``. ``progress``: as ``redecide_twice``'s.
    """
    findings: list[Violation] = []
    asked = 0

    def ask_again(decision: _Decision) -> None:
        nonlocal asked
        positions = [
            decision.start + index + 1
            for index, event in enumerate(decision.recorded)
            for _ in getattr(event, "asked", ())
        ]
        if not positions:
            return
        reasker = Reask(recorded_calls(decision.recorded))
        with answering(reasker):
            try:
                decision.policies.decide(decision.state, decision.command)
            except ModelUnavailable:
                raise
            except Rejected:
                pass  # the re-decision reports it
        asked += reasker.used
        where = _step(decision.step, decision.command)
        for differing in reasker.differing:
            was, now = differing.recorded, differing.now
            message = (
                f"{where}: model {now.model!r} now answers {_quoted(now.output)}, where the "
                f"run recorded {_quoted(was.output)}"
            )
            findings.append(Violation(positions[differing.index], "live", message))

    _each_decision(run, policies, [ask_again], progress=progress)
    return findings, asked


def _quoted(text: str) -> str:
    """``text`` quoted, cut short if long."""
    return repr(text) if len(text) <= _QUOTED else f"{text[: _QUOTED - 3]!r}..."


_QUOTED = 80


def _agrees(decision: _Decision) -> Violation | None:
    """The command decided again, with the answers its batch recorded, gives the recorded
    events."""
    step, command, start = decision.step, decision.command, decision.start
    try:
        with answering(Replay(recorded_calls(decision.recorded), asking=decision.live)):
            expected = decision.policies.decide(decision.state, command)
    except (Unanswered, NotChosen) as error:
        # Nothing the log says is contradicted: what deciding needs is not at hand.
        return Violation(
            start + 1, "re-decide", f"{_step(step, command)} cannot be re-decided: {error}"
        )
    except Rejected as error:
        message = f"{_step(step, command)}: the policies reject the command: {error}"
        return Violation(start + 1, "re-decide", message)
    if expected != decision.recorded:
        return _divergence(step, command, start, expected, decision.recorded)
    return None


def _alike(decision: _Decision) -> Violation | None:
    """The command decided in two made-up worlds gives the same outcome."""
    recorded = recorded_calls(decision.recorded)
    found = check_determinism(
        decision.policies,
        decision.state,
        decision.command,
        at=decision.start + 1,
        answers=lambda: Replay(recorded, asking=decision.live),
    )
    return found[0] if found else None


def _policies_at(policies: Policies | Callable[[int], Policies]) -> Callable[[int], Policies]:
    if isinstance(policies, Policies):
        return lambda _: policies
    return policies


def _step(step: int, command: Command) -> str:
    return f"step {step} ({type(command).__name__})"


def _divergence(
    step: int,
    command: Command,
    start: int,
    expected: Sequence[Event],
    recorded: Sequence[Event],
) -> Violation:
    """Where and how a recorded batch departs from the one the policies decide."""
    where = _step(step, command)
    for index, (mine, theirs) in enumerate(zip(expected, recorded, strict=False)):
        if mine == theirs:
            continue
        if type(mine) is type(theirs):
            fields = _fields(mine, theirs)
            message = f"{where}: the log's {type(theirs).__name__} has {fields}"
        else:
            message = f"{where}: the log has {theirs!r}, the policies decide {mine!r}"
        return Violation(start + index + 1, "re-decide", message)
    if len(recorded) > len(expected):
        extra = recorded[len(expected)]
        message = f"{where}: the log has {extra!r}, which the policies do not decide"
        return Violation(start + len(expected) + 1, "re-decide", message)
    missing = expected[len(recorded)]
    message = f"{where}: the policies also decide {missing!r}, which the log lacks"
    return Violation(start + len(recorded), "re-decide", message)


def _fields(expected: Event, recorded: Event) -> str:
    """Each field on which two events of one type differ: the log's value, then the policies'."""
    mine: dict[str, Any] = attrs.asdict(expected, recurse=False)
    theirs: dict[str, Any] = attrs.asdict(recorded, recurse=False)
    return ", ".join(
        f"{name} {theirs[name]!r} where the policies decide {value!r}"
        for name, value in mine.items()
        if theirs[name] != value
    )
