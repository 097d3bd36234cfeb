"""What every importer produces: a transcript as turns, before any scenario text is written.

A ``Transcript`` is the data an importer read: each turn's role (one of
``memtape.core.commands.ROLES``), its text, the ids of the tool calls it
makes and of the calls whose results it carries, and where in the file it
came from; the compactions the transcript recorded (Claude Code's
boundaries); and notes saying what the file held that is not conversation
and was left out. ``Turns`` builds one and holds the pairing exact as it
goes: a call id is made once, a result answers a call made by an earlier
turn, and answers it once. Anything else is refused naming the place.
"""

from collections.abc import Sequence

import attrs

from memtape.core.commands import ROLES
from memtape.core.errors import BadInput


@attrs.frozen
class Turn:
    """One turn of a transcript, and ``where`` it came from (``FILE:LINE`` or an item index)."""

    role: str
    text: str
    where: str
    calls: tuple[str, ...] = ()
    answers: tuple[str, ...] = ()


@attrs.frozen
class Compaction:
    """A compaction the transcript recorded: before turn ``before`` (1-based), the agent's
    context became ``summary``; ``trigger`` (``auto`` or ``manual``) and ``pre_tokens`` (the
    agent's own count of its context just before) are what the transcript said of it."""

    before: int
    summary: str
    where: str
    trigger: str | None = None
    pre_tokens: int | None = None


@attrs.frozen
class Transcript:
    """A transcript read from a file in ``format``: its turns, its compactions, its notes."""

    format: str
    turns: tuple[Turn, ...]
    compactions: tuple[Compaction, ...] = ()
    notes: tuple[str, ...] = ()
    """What the file held that is not a turn, and was left out (each one line)."""

    @property
    def calls(self) -> int:
        """How many tool calls the turns make."""
        return sum(len(turn.calls) for turn in self.turns)

    @property
    def answers(self) -> int:
        """How many tool results the turns carry."""
        return sum(len(turn.answers) for turn in self.turns)


class Turns:
    """A transcript's turns as an importer reads them, with the call/result pairing checked."""

    def __init__(self, path: object) -> None:
        self.path = path
        self.turns: list[Turn] = []
        self._called: dict[str, str] = {}
        self._answered: dict[str, str] = {}

    def __len__(self) -> int:
        return len(self.turns)

    def add(
        self,
        role: str,
        parts: Sequence[str],
        where: str,
        *,
        calls: Sequence[str] = (),
        answers: Sequence[str] = (),
        head: str = "",
    ) -> None:
        """Add a turn whose text is ``head`` and its non-empty ``parts``, one a line.

        A call id made twice, a result for a call no earlier turn made, or a
        second result for one call is refused naming ``where``.
        """
        if role not in ROLES:
            raise BadInput(f"{where}: a turn's role is one of {', '.join(ROLES)}, got {role!r}")
        for call in calls:
            _check_id(call, "tool call", where)
            if call in self._called:
                raise BadInput(
                    f"{where}: tool call id {call!r} is made twice (first at {self._called[call]})"
                )
            self._called[call] = where
        for answer in answers:
            _check_id(answer, "tool result's call", where)
            if answer not in self._called:
                raise BadInput(
                    f"{where}: a tool result for call {answer!r}, which no earlier message made"
                )
            if answer in self._answered:
                raise BadInput(
                    f"{where}: a second tool result for call {answer!r} "
                    f"(the first at {self._answered[answer]})"
                )
            self._answered[answer] = where
        text = head + "\n".join(part for part in parts if part)
        self.turns.append(Turn(role, text, where, tuple(calls), tuple(answers)))

    def transcript(
        self,
        format: str,
        compactions: Sequence[Compaction] = (),
        notes: Sequence[str] = (),
    ) -> Transcript:
        """The transcript read; a file without a single turn is refused."""
        if not self.turns:
            raise BadInput(f"{self.path}: no messages to import")
        return Transcript(format, tuple(self.turns), tuple(compactions), tuple(notes))


def _check_id(value: object, what: str, where: str) -> None:
    if not isinstance(value, str) or not value:
        raise BadInput(f"{where}: a {what} id must be a non-empty string, got {value!r}")
