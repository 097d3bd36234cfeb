"""The answers in force: who answers a policy's question to a model.

A policy never calls a model directly: it puts a ``Question`` (the model,
the hash of the prompt, and how to ask it live) to ``answer``, which hands
it to the answers in force. They are live by default (``Live``: ask, through
the cache). ``memtape check`` decides each recorded command again under
``Replay``, which gives back the answers the run recorded for that command,
in order, after checking that the policy asked the same prompt; with
``--live`` it uses ``Reask``, which also asks the model again and notes
each answer that differs, while the check goes on with the recorded one.
What a run does not record (an embedding's vector) comes from the cache
while recorded answers only are in force (``recorded_only``): one not
cached is ``Unanswered``, never a request.
"""

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Protocol

import attrs

from memtape.core.errors import Rejected
from memtape.core.events import ModelCall
from memtape.llm.cache import caching


@attrs.frozen
class Question:
    """What a decision asks: of which model, the hash of the prompt, and how to ask it live."""

    model: str
    prompt: str
    ask: Callable[[], ModelCall] = attrs.field(eq=False)


class Answers(Protocol):
    """Whoever answers the questions of the decisions made within ``answering``."""

    def answer(self, question: Question) -> ModelCall:
        """The model call that answers ``question``."""
        ...


class Live:
    """Ask each question (through the cache in force)."""

    def answer(self, question: Question) -> ModelCall:
        """The question asked now."""
        return question.ask()


class NotRecorded(Rejected):
    """A re-decision asked a model something its run did not record (another prompt, or
    one more question): the policy decided differently from the run."""


class Unanswered(Rejected):
    """A re-decision needs what its run does not record and the cache does not hold (an
    embedding's vector), and recorded answers only are in force: nothing was asked, so the
    command cannot be re-decided."""


class Replay:
    """The answers one recorded command got, given back in order; nothing is asked, unless
    ``asking``: then what a run does not record (an embedding's vector) may be asked."""

    def __init__(self, recorded: Sequence[ModelCall], *, asking: bool = False) -> None:
        self.recorded = tuple(recorded)
        self.used = 0
        self.asking = asking

    def answer(self, question: Question) -> ModelCall:
        """The next recorded answer, if the policy asked the prompt it answered."""
        if self.used >= len(self.recorded):
            raise NotRecorded(
                f"the policy asks model {question.model!r} a question the run did not "
                f"record ({len(self.recorded)} recorded for this command)"
            )
        recorded = self.recorded[self.used]
        if recorded.prompt != question.prompt:
            raise NotRecorded(
                f"the policy asks model {question.model!r} prompt {question.prompt}, where the "
                f"run recorded an answer to prompt {recorded.prompt}"
            )
        self.used += 1
        return recorded


@attrs.frozen
class Differing:
    """A recorded answer the model, asked again, no longer gives."""

    index: int
    """Which of the command's recorded answers (0: its first)."""
    recorded: ModelCall
    now: ModelCall


class Reask(Replay):
    """``Replay``, and each question asked again of the model (the cache bypassed); the
    answers that differ from the recorded ones are kept in ``differing``."""

    def __init__(self, recorded: Sequence[ModelCall]) -> None:
        super().__init__(recorded, asking=True)
        self.differing: list[Differing] = []

    def answer(self, question: Question) -> ModelCall:
        """The recorded answer, after asking the model again and noting a difference."""
        index = self.used
        recorded = super().answer(question)
        with caching(None):
            now = question.ask()
        if now.output != recorded.output:
            self.differing.append(Differing(index, recorded, now))
        return recorded


def recorded_calls(events: Iterable[object]) -> tuple[ModelCall, ...]:
    """The model calls ``events`` recorded, in order (what a ``Replay`` gives back)."""
    return tuple(call for event in events for call in getattr(event, "asked", ()))


_in_force: ContextVar[Answers] = ContextVar("answers", default=Live())  # noqa: B039 (stateless)


def answer(question: Question) -> ModelCall:
    """The answers in force answer ``question``."""
    return _in_force.get().answer(question)


def recorded_only() -> bool:
    """Whether the answers in force are recorded ones only (a ``Replay`` not ``asking``):
    then nothing a run does not record may be asked of a model."""
    answers = _in_force.get()
    return isinstance(answers, Replay) and not answers.asking


@contextmanager
def answering(answers: Answers) -> Iterator[None]:
    """Within the block, ``answers`` answer every question a decision asks."""
    token = _in_force.set(answers)
    try:
        yield
    finally:
        _in_force.reset(token)
