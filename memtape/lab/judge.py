"""Questions judged by a model: ``bench --judge MODEL``.

A probe that carries a ``question`` and its ``answer`` is asked at its turn
(``from``): after the turn's command, the bench gives its session an ``Ask``
command, which the session decides as it decides any other
(``memtape.policies.text.answering``: the window as a chat request, the
question, the reply scored, a judge model asked when the reply and the answer
differ), each call through the response cache. The decision is an
``Answered`` event of the cell's run, with its model calls, so the run's
answers and their counts are read from its events
(``memtape.projections.answers``), and ``memtape check`` decides them again
from the recorded calls, asking nothing.
"""

from collections.abc import Iterable
from typing import Protocol

from memtape.core.commands import Ask


class Asked(Protocol):
    """A probe that may carry a question: its ``start`` turn, and a ``question`` with its
    ``answer`` (both None on a probe that asks nothing)."""

    @property
    def start(self) -> int:
        """The turn it is asked at."""
        ...


def question_of(probe: object) -> tuple[str, str] | None:
    """A probe's question and answer, or None when it carries none (a probe of the
    loader's schema before questions has neither field)."""
    question = getattr(probe, "question", None)
    answer = getattr(probe, "answer", None)
    if isinstance(question, str) and isinstance(answer, str):
        return question, answer
    return None


def asks(probes: Iterable[Asked], turn: int, model: str, seed: int | None) -> list[Ask]:
    """The ``Ask`` command of each question of ``probes`` due at ``turn``, put to ``model``
    (with ``seed``, when given), in the probes' order."""
    found = []
    for probe in probes:
        pair = question_of(probe)
        if pair is not None and probe.start == turn:
            found.append(Ask(*pair, model, seed))
    return found
