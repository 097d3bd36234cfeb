"""The questions a run's ``Ask`` commands put to the window, read back from its events.

Each ``Answered`` event is one question asked (``bench --judge``), at the turn
the window had reached: what a bench counts of the answers
(``answers_correct``, ``answers_judged``) is read from these events, so a
recorded run gives its counts again with no model to ask.
"""

from collections.abc import Iterable, Sequence
from typing import Any

import attrs

from memtape.core.events import Answered, Event, ModelCall, TurnAdded


@attrs.frozen
class Verdict:
    """One question asked at ``turn``: the reply, whether it was correct, whether a judge
    had to say so, and the model calls that decided it (the reply's, then the judge's)."""

    question: str
    answer: str
    turn: int
    reply: str
    correct: bool
    judged: bool
    asked: tuple[ModelCall, ...]

    def data(self) -> dict[str, Any]:
        """The verdict as ``bench --json`` writes it (with ``--judge``)."""
        return {
            "question": self.question,
            "answer": self.answer,
            "turn": self.turn,
            "reply": self.reply,
            "correct": self.correct,
            "judged": self.judged,
            "asked": [attrs.asdict(call) for call in self.asked],
        }


def verdicts(events: Iterable[Event]) -> tuple[Verdict, ...]:
    """Each ``Answered`` event of ``events`` as a verdict, at the turn the window had
    reached then, in order."""
    found = []
    turn = 0
    for event in events:
        if isinstance(event, TurnAdded):
            turn = event.turn
        elif isinstance(event, Answered):
            found.append(
                Verdict(
                    event.question,
                    event.answer,
                    turn,
                    event.reply,
                    event.correct,
                    event.judged,
                    event.asked,
                )
            )
    return tuple(found)


def answer_metrics(found: Sequence[Verdict]) -> dict[str, int]:
    """``answers_correct`` and ``answers_judged``: how many questions were answered
    correctly, and how many of all needed the judge."""
    return {
        "answers_correct": sum(verdict.correct for verdict in found),
        "answers_judged": sum(verdict.judged for verdict in found),
    }
