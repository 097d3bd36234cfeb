"""Checking a run file: its integrity and chain, the kernel's invariants, and a re-decision.

This is what ``memtape check RUN`` does. A file that cannot be opened or
read as a run at all raises ``BadInput``; everything wrong in a run that
could be read is a problem in the ``CheckReport``, with its position.
"""

from collections.abc import Callable, Sequence
from pathlib import Path

import attrs

from memtape.checking.dangling import OpenCall, open_calls
from memtape.checking.invariants import (
    PROGRESS_EVERY,
    Violation,
    check_run,
    reask,
    redecide_twice,
)
from memtape.core.chain import KEY_VARIABLE, Signature, Verdict, signing_key
from memtape.core.errors import BadInput, CorruptLog
from memtape.core.events import Event
from memtape.core.plural import counted
from memtape.core.run import Run
from memtape.policies.plumbing.imports import Unimportable
from memtape.policies.plumbing.model_settings import model_settings
from memtape.policies.session import Epoch, Policies, Session
from memtape.reducers import evolve, fold
from memtape.runs.files import epochs_from_header, require_code
from memtape.runs.signed import UNCHAINED, UNKEYED, UNSIGNED
from memtape.storage import read_address, verify_address


@attrs.frozen
class CheckReport:
    """What checking one run file found: its size, and each problem by position.

    ``events`` and ``steps`` count what the file holds. ``redecided`` says
    whether the commands were decided again (not when the header's policies
    cannot be rebuilt, nor for a redacted run). ``problems`` are in order of
    position: the first is the first bad position in the run. ``redacted``
    says the header marks the run redacted (``memtape.runs.redact``): its texts
    and rules are placeholders, so its commands cannot be decided again.
    ``chained`` says the run carries a hash chain (runs written before memtape
    chained its logs do not), ``signature`` what its signature says, and
    ``keyed`` whether a signing key was set to verify it with. ``reasked``
    counts the recorded model answers asked again (``--live``; None when
    the model was not asked). ``stopped`` are the calls the session stopped
    on (``memtape.checking.dangling``): said, not problems; a call the
    session went on without is a problem (``dangling``).
    """

    path: Path
    scenario: str
    events: int
    steps: int
    redecided: bool
    problems: tuple[Violation, ...]
    redacted: bool = False
    chained: bool = True
    signature: Signature = Signature.NONE
    keyed: bool = False
    reasked: int | None = None
    stopped: tuple[OpenCall, ...] = ()

    @property
    def ok(self) -> bool:
        """Whether the run is clean: it folds, keeps every invariant and re-decides to itself."""
        return not self.problems

    @property
    def first(self) -> Violation | None:
        """The problem at the earliest position, if any."""
        return self.problems[0] if self.problems else None

    def lines(self) -> list[str]:
        """One line per problem naming the file, or one line saying the run is clean; then
        one line per call the session stopped on.

        The clean line also says what the run's chain and signature showed. A
        redacted run also says that it cannot be re-decided (on its clean
        line, or on a last line after its problems).
        """
        stopped = [f"{self.path}: {call}" for call in self.stopped]
        return [*self._verdict(), *stopped]

    def _verdict(self) -> list[str]:
        cannot = "redacted, so it cannot be re-decided (its texts and rules are placeholders)"
        if self.ok:
            redecided = ", re-decides to itself" if self.redecided else ""
            if self.reasked is not None:
                redecided += (
                    f", and the model gives the {counted(self.reasked, 'recorded answer')} again"
                    if self.reasked
                    else ", and it recorded no model answer to ask again"
                )
            redacted = f"; {cannot}" if self.redacted else ""
            return [
                f"{self.path}: ok: {self.events} events in {self.steps} steps fold "
                f"and keep every invariant{redecided}; {self._seal()}{redacted}"
            ]
        lines = [f"{self.path}: {problem}" for problem in self.problems]
        return [*lines, f"{self.path}: {cannot}"] if self.redacted else lines

    def _seal(self) -> str:
        """What the chain and signature of a clean run showed."""
        removed = (
            f" (though {KEY_VARIABLE} is set: a removed signature looks the same, "
            "and --require-signed fails it)"
        )
        if not self.chained:
            unchained = "unchained (written before memtape chained its logs)"
            return unchained + (removed if self.keyed else "")
        if self.signature is Signature.VALID:
            return "its chain holds, signed with a valid signature"
        if self.signature is Signature.UNVERIFIED:
            return f"its chain holds, signed but not verified ({KEY_VARIABLE} is not set)"
        return "its chain holds, unsigned" + (removed if self.keyed else "")


Heard = Callable[[str, int, int], None]
"""How far a check got: ``(stage, done, total)``, the stage one of ``STAGES``."""

STAGES = ("reading", "invariants", "re-deciding", "re-asking")
"""The stages of a check, in order, each counted in commands (steps)."""


def check_file(
    path: Path,
    *,
    trust: bool = False,
    live: bool = False,
    require_signed: bool = False,
    progress: Heard | None = None,
    settings: Sequence[str] = (),
) -> CheckReport:
    """Check the run file at ``path``: integrity, invariants, then a re-decision (plain,
    and in two made-up worlds, which catches a policy that reads the clock or randomness).

    Raises ``BadInput`` (one line naming the file and place) when the file
    cannot be opened or read as a run: missing, not JSON, an unknown event
    type or version, a gap in positions, a cut-short tail, or a header
    naming a policy by an import path that does not import here. A header whose
    policies cannot otherwise be rebuilt, an event that does not fold onto the state
    before it, a broken invariant or a recorded event the policies no longer
    decide is a problem in the report instead. Events after one that does
    not fold are not checked. A run whose header says ``"redacted": true``
    is checked for integrity and invariants but not re-decided, nor are its
    queries ranked again (their texts are placeholders).

    The run's hash chain is verified, and its signature when
    ``MEMTAPE_SIGNING_KEY`` is set: the first event whose link breaks, a
    head that is not the last link, or a signature that does not match is a
    problem; a run written before the chain is reported unchained. With
    ``require_signed`` (``--require-signed``), a run that is not signed under
    the key is a problem too, one line each: unsigned (a removed signature
    leaves a run so), unchained, or no key set to verify it with.

    Checking re-decides, which runs the policies' code: a header naming a policy
    by import path is refused (``BadInput``) unless ``trust`` says the run's
    code is the user's to run (run files are data).

    A re-decision gets the model answers the run recorded, so it asks no model
    (and a summarizer named by import path need not be imported); what a run does
    not record (a recall's embeddings) comes from the cache, and a vector not
    cached is a step that cannot be re-decided, never a request. With ``live``,
    such a vector is asked, and each recorded question is also asked of the model
    again (the cache bypassed), and each answer that differs from the recorded one is a
    problem (``live``); a model that cannot be asked is ``ModelUnavailable``.
    An untrusted run's recorded model is never asked (``NotChosen``): ``settings``
    (``llm.model=NAME``, ``llm.base_url=URL``; only ``llm.*``) name the model
    every epoch asks instead.

    ``progress``, when given, hears how many commands each stage has done of
    its total (``Heard``), every few hundred and at the end of each.
    """
    model_settings(settings, str(path))
    recorded = read_address(str(path))
    header = recorded.header
    problems: list[Violation] = []
    key = signing_key()
    verdict = verify_address(str(path), key)
    if verdict.broken is not None:
        problems.append(Violation(verdict.broken.position, "chain", verdict.broken.problem))
    if verdict.signature is Signature.INVALID:
        problems.append(Violation(0, "signature", _FORGED))
    elif require_signed:
        problems.extend(_unsigned(verdict, key is not None))
    policies = _policies(header.get("policies"), path, problems, trust)
    run = Run(fold)
    total = len(recorded.batches)
    for done, batch in enumerate(recorded.batches, start=1):
        try:
            run.append(batch.command, batch.events)
        except CorruptLog:
            problems.append(_unfolded(run, batch.events, batch.step, batch.line))
            break
        if progress is not None and done % PROGRESS_EVERY == 0:
            progress(STAGES[0], done, total)
    if progress is not None:
        progress(STAGES[0], total, total)
    if recorded.torn is not None:
        problems.append(Violation(len(run), "integrity", recorded.torn))
    opened = open_calls(event for batch in recorded.batches for event in batch.events)
    problems.extend(
        Violation(call.position, "dangling", str(call)) for call in opened if not call.stopped
    )
    epochs = _epochs(header, path, policies, run, problems, trust=trust)
    require_code(path, epochs, "check")
    if settings and policies is not None:
        epochs = tuple(Epoch(e.start, e.policies.with_settings(settings)) for e in epochs)
        policies = epochs[-1].policies if epochs else policies.with_settings(settings)
    session = Session(policies or Policies(), run=run, epochs=epochs)
    redacted = header.get("redacted") is True
    problems.extend(
        check_run(
            run, session.policies_at, own_texts=not redacted, progress=_stage(progress, 1, run)
        )
    )
    if policies is not None and not redacted:
        divergence, chance = redecide_twice(
            run, session.policies_at, progress=_stage(progress, 2, run), live=live
        )
        problems.extend(found for found in (divergence, chance) if found is not None)
    reasked = None
    if live and policies is not None and not redacted:
        differing, reasked = reask(run, session.policies_at, progress=_stage(progress, 3, run))
        problems.extend(differing)
    scenario = header.get("scenario")
    return CheckReport(
        path=path,
        scenario=str(scenario or path.stem),
        events=sum(len(batch.events) for batch in recorded.batches),
        steps=len(recorded.batches),
        redecided=policies is not None and not redacted,
        problems=tuple(sorted(problems, key=lambda p: p.position)),
        redacted=redacted,
        chained=verdict.chained,
        signature=verdict.signature,
        keyed=key is not None,
        reasked=reasked,
        stopped=tuple(call for call in opened if call.stopped),
    )


def _stage(progress: Heard | None, stage: int, run: Run) -> Callable[[int], None] | None:
    """What a pass over ``run``'s commands tells ``progress`` of stage ``STAGES[stage]``."""
    if progress is None:
        return None
    heard, name, total = progress, STAGES[stage], run.steps
    return lambda done: heard(name, done, total)


_FORGED = (
    f"the signature does not match the chain head under {KEY_VARIABLE}: the run was "
    "changed and chained again by someone without the key, or signed with another key"
)


def _unsigned(verdict: Verdict, keyed: bool) -> list[Violation]:
    """The problem of a run that must be signed and is not, or cannot be shown to be."""
    required = "a signed run is required, but"
    if not verdict.chained:
        found = UNCHAINED
    elif verdict.signature is Signature.NONE:
        found = UNSIGNED
    elif not keyed:
        found = UNKEYED
    else:
        return []
    return [Violation(0, "signature", f"{required} {found}")]


def _policies(data: object, path: Path, problems: list[Violation], trust: bool) -> Policies | None:
    """The policies the header names, or None with a problem saying why there are none."""
    if not isinstance(data, dict):
        problems.append(Violation(0, "header", "the header names no policies"))
        return None
    try:
        recorded = None if trust else str(path)
        policies = Policies.from_params(data, "policies", imports=trust, recorded=recorded)
    except Unimportable as error:
        raise _uncheckable(path, error) from None
    except BadInput as error:
        problems.append(Violation(0, "header", str(error)))
        return None
    require_code(path, [Epoch(0, policies)], "check")
    return policies


def _epochs(
    header: dict[str, object],
    path: Path,
    policies: Policies | None,
    run: Run,
    problems: list[Violation],
    *,
    trust: bool,
) -> tuple[Epoch, ...]:
    """The policies in force from each point (one epoch unless the run was forked)."""
    if policies is None:
        return ()
    try:
        # The report's line names the file and the header: the epochs' own place is enough.
        recorded = None if trust else str(path)
        return epochs_from_header(
            header.get("epochs"), policies, "epochs", run, imports=trust, recorded=recorded
        )
    except Unimportable as error:
        raise _uncheckable(path, error) from None
    except BadInput as error:
        problems.append(Violation(0, "header", str(error)))
        return ()


def _uncheckable(path: Path, error: Unimportable) -> BadInput:
    """A header policy that cannot be built here is no problem of the run's: nothing
    can be re-decided or measured against it, so the run cannot be checked at all."""
    return BadInput(f"{path}: header: {error} (so the run cannot be checked here)")


def _unfolded(run: Run, events: tuple[Event, ...], step: int, line: int) -> Violation:
    """The integrity problem of the first event of a batch that does not fold onto ``run``."""
    state = run.state
    for position, event in enumerate(events, start=len(run) + 1):
        try:
            state = evolve(state, event)
        except CorruptLog as error:
            message = f"step {step} (from line {line}): {type(event).__name__}: {error}"
            return Violation(position, "integrity", message)
    message = f"step {step} (from line {line}) does not fold"  # pragma: no cover
    return Violation(len(run) + 1, "integrity", message)  # pragma: no cover
