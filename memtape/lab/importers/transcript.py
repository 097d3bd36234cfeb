"""What every importer produces: a transcript as turns, before any scenario text is written.

A ``Transcript`` is the data an importer read: each turn's role (one of
``memtape.core.commands.ROLES``), its text, the ids of the tool calls it
makes and of the calls whose results it carries, and where in the file it
came from; the compactions the transcript recorded (Claude Code's
boundaries); notes saying what the file held that is not conversation and
was left out; and the ``Ledger`` of the import (``memtape.lab.importers.
ledger``: what came in, what went out). ``Turns`` builds one and holds the
pairing exact as it goes: a result answers a call made by an earlier turn,
and answers it once. A call id made again once its first call was answered
is a new call (OpenAI reuses ids so): inside memtape it is made unique,
``ID#2``, ``ID#3``..., and the ledger keeps the file's id beside it. A call
id made again while its first call still waits, or anything else, is
refused naming the place.
"""

from collections.abc import Sequence
from typing import Any

import attrs

from memtape.core.commands import ROLES
from memtape.core.errors import BadInput
from memtape.lab.importers.ledger import Ledger, Tally
from memtape.scenarios.usage import Usage


@attrs.frozen
class Turn:
    """One turn of a transcript, and ``where`` it came from (``FILE:LINE`` or an item index)."""

    role: str
    text: str
    where: str
    calls: tuple[str, ...] = ()
    answers: tuple[str, ...] = ()
    usage: Usage | None = None
    """What the provider billed for the response this turn is (an assistant turn), when the
    transcript says."""


@attrs.frozen
class Compaction:
    """A compaction the transcript recorded: before turn ``before`` (1-based), the agent's
    context became ``summary``; ``trigger`` (``auto`` or ``manual``), ``pre_tokens`` and
    ``post_tokens`` (the agent's own count of its context just before and just after) are
    what the transcript said of it. ``preserved`` is the first and last turn the agent kept
    verbatim (a partial compaction), None when it folded every turn before.

    What a capture saw the agent do is said exactly (``memtape.policies.window.recorded``):
    ``folded``, the turns the summary stands for (None: every turn before but the
    ``preserved``); ``dropped``, turns let go with nothing standing for them; ``cleared``,
    turns kept in place reading another text; ``label``, where it happened."""

    before: int
    summary: str
    where: str
    trigger: str | None = None
    pre_tokens: int | None = None
    post_tokens: int | None = None
    preserved: tuple[int, int] | None = None
    folded: tuple[tuple[int, int], ...] | None = None
    dropped: tuple[tuple[int, int], ...] = ()
    cleared: tuple[tuple[int, str], ...] = ()
    label: str | None = None


@attrs.frozen
class Transcript:
    """A transcript read from a file in ``format``: its turns, its compactions, its notes."""

    format: str
    turns: tuple[Turn, ...]
    compactions: tuple[Compaction, ...] = ()
    notes: tuple[str, ...] = ()
    """What the reader has to say of the file beyond its turns, each one line (a compaction
    it could not apply, where the thread starts, the sidechains left out...)."""
    ledger: Ledger | None = None
    """What the import read and wrote (``memtape.lab.importers.ledger``); every shipped
    reader keeps one, None only for a transcript built without a ``Tally``."""
    model: str | None = None
    """The model the agent asked (the last the transcript names), or None when it names
    none: the import prices the scenario as it (``[cost] model``)."""

    @property
    def calls(self) -> int:
        """How many tool calls the turns make."""
        return sum(len(turn.calls) for turn in self.turns)

    @property
    def answers(self) -> int:
        """How many tool results the turns carry."""
        return sum(len(turn.answers) for turn in self.turns)

    def left_waiting(self) -> tuple[tuple[str, int], ...]:
        """Each call no turn answers though a user or assistant turn came after its own (the
        conversation went on without it), with the number of the turn that made it, in the
        order they were made. A call of the last such turn is one the session stopped on,
        not among them (as ``memtape check`` tells the two apart)."""
        waiting: dict[str, int] = {}
        last_spoken = 0
        for number, turn in enumerate(self.turns, start=1):
            if turn.role != "tool":
                last_spoken = number
            for answer in turn.answers:
                waiting.pop(answer, None)
            for call in turn.calls:
                waiting[call] = number
        return tuple((call, number) for call, number in waiting.items() if number < last_spoken)


class Turns:
    """A transcript's turns as an importer reads them, with the call/result pairing checked."""

    def __init__(self, path: object) -> None:
        self.path = path
        self.model: str | None = None
        self.turns: list[Turn] = []
        self._called: dict[str, str] = {}
        self._answered: dict[str, str] = {}
        self._current: dict[str, str] = {}
        self._original: dict[str, str] = {}

    def __len__(self) -> int:
        return len(self.turns)

    @property
    def renamed(self) -> tuple[tuple[str, str], ...]:
        """Each call id made unique (a reused id's later call) and the file's id, in order."""
        return tuple(self._original.items())

    def original(self, call: str) -> str:
        """The file's id of the call memtape knows as ``call``."""
        return self._original.get(call, call)

    def add(
        self,
        role: str,
        parts: Sequence[str],
        where: str,
        *,
        calls: Sequence[str] = (),
        answers: Sequence[str] = (),
        head: str = "",
        usage: Usage | None = None,
    ) -> None:
        """Add a turn whose text is ``head`` and its non-empty ``parts``, one a line.

        ``calls`` and ``answers`` are ids as the file writes them. A call id
        made again once its call was answered becomes a new, unique id (the
        ledger keeps the file's); one made again while its call waits, a
        result for a call no earlier turn made, or a second result for one
        call is refused naming ``where``.
        """
        if role not in ROLES:
            raise BadInput(f"{where}: a turn's role is one of {', '.join(ROLES)}, got {role!r}")
        made = []
        for call in calls:
            _check_id(call, "tool call", where)
            made.append(self._make(call, where))
        answered = []
        for answer in answers:
            _check_id(answer, "tool result's call", where)
            if answer not in self._current:
                raise BadInput(
                    f"{where}: a tool result for call {answer!r}, which no earlier message made"
                )
            unique = self._current[answer]
            if unique in self._answered:
                raise BadInput(
                    f"{where}: a second tool result for call {answer!r} "
                    f"(the first at {self._answered[unique]})"
                )
            self._answered[unique] = where
            answered.append(unique)
        text = head + "\n".join(part for part in parts if part)
        self.turns.append(Turn(role, text, where, tuple(made), tuple(answered), usage))

    def _make(self, call: str, where: str) -> str:
        """The id memtape gives a call the file makes as ``call``: ``call`` itself, or the
        first of ``call#2``, ``call#3``... not taken, for a call made again."""
        if call in self._current and self._current[call] not in self._answered:
            raise BadInput(
                f"{where}: tool call id {call!r} is made twice (first at "
                f"{self._called[self._current[call]]}, which still waits for its result)"
            )
        unique, number = call, 1
        while unique in self._called:
            number += 1
            unique = f"{call}#{number}"
        if unique != call:
            self._original[unique] = call
        self._called[unique] = where
        self._current[call] = unique
        return unique

    def transcript(
        self,
        format: str,
        compactions: Sequence[Compaction] = (),
        notes: Sequence[str] = (),
        tally: Tally | None = None,
    ) -> Transcript:
        """The transcript read, with its ledger closed from ``tally`` (when given); a file
        without a single turn is refused."""
        if not self.turns:
            raise BadInput(f"{self.path}: no messages to import")
        ledger = tally.close(self) if tally is not None else None
        return Transcript(
            format, tuple(self.turns), tuple(compactions), tuple(notes), ledger, self.model
        )

    def asked(self, model: Any) -> None:
        """The transcript names the model a response came from (a later one wins); a value
        that is no name is ignored."""
        if isinstance(model, str) and model.strip():
            self.model = model.strip()


def _check_id(value: object, what: str, where: str) -> None:
    if not isinstance(value, str) or not value:
        raise BadInput(f"{where}: a {what} id must be a non-empty string, got {value!r}")
