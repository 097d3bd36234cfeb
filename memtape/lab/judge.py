"""Questions judged by a model: ``bench --judge MODEL``.

A probe that carries a ``question`` and its ``answer`` is asked at its turn
(``from``): the model gets the window as it stands after that turn, rendered
as the chat request a policy would send (``memtape.projections.request``),
then the question. Its reply is scored against the answer: equal as written,
or equal once both are ``normalized``, is correct without further ado; when
they differ, the same model is asked to judge whether the reply gives the
answer (``JUDGE_PROMPT``), and its yes or no decides. Every call goes through
``memtape.llm.asking.ask``, so it is cached under its content: a bench run
again asks nothing, and its replies are the same bytes.
"""

import json
import re
import unicodedata
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

import attrs

from memtape.core.events import ModelCall
from memtape.core.state import Window
from memtape.llm.asking import ask, prompt_hash
from memtape.llm.config import ModelConfig
from memtape.projections.request import Message, chat_messages

QUESTION_PROMPT = (
    "Answer the question from the conversation above, in as few words as the answer "
    "needs.\nQuestion: {question}"
)
"""The last message of an asking request, after the window."""

JUDGE_PROMPT = (
    "You grade answers. Question: {question}\nReference answer: {answer}\n"
    "Reply to grade: {reply}\n"
    "Does the reply give the reference answer (the same fact, however worded)? "
    "Answer yes or no."
)
"""What the judge is asked when a reply and its answer differ."""

_ARTICLES = re.compile(r"\b(?:a|an|the)\b")
_PUNCTUATION = re.compile(r"[^\w\s]")


class Asked(Protocol):
    """A probe that may carry a question: its ``start`` turn, and a ``question`` with its
    ``answer`` (both None on a probe that asks nothing)."""

    @property
    def start(self) -> int:
        """The turn it is asked at."""
        ...


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


def question_of(probe: object) -> tuple[str, str] | None:
    """A probe's question and answer, or None when it carries none (a probe of the
    loader's schema before questions has neither field)."""
    question = getattr(probe, "question", None)
    answer = getattr(probe, "answer", None)
    if isinstance(question, str) and isinstance(answer, str):
        return question, answer
    return None


def normalized(text: str) -> str:
    """``text`` as answers are compared: Unicode-normalized (NFKC), lower case, without
    punctuation or the articles a, an and the, its spaces collapsed."""
    text = unicodedata.normalize("NFKC", text).lower()
    text = _PUNCTUATION.sub(" ", text)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def matches(reply: str, answer: str) -> bool:
    """Whether ``reply`` gives ``answer`` as written, or once both are normalized."""
    return reply.strip() == answer.strip() or normalized(reply) == normalized(answer)


@attrs.frozen
class Judge:
    """Asks ``config``'s model the questions, and judges the replies that differ."""

    config: ModelConfig

    def verdicts(self, window: Window, turn: int, probes: Iterable[Asked]) -> list[Verdict]:
        """The verdict on each question of ``probes`` due at ``turn``, against ``window``."""
        found = []
        for probe in probes:
            pair = question_of(probe)
            if pair is not None and probe.start == turn:
                found.append(self.verdict(window, turn, *pair))
        return found

    def verdict(self, window: Window, turn: int, question: str, answer: str) -> Verdict:
        """Ask ``question`` against ``window`` and score the reply against ``answer``."""
        asking = [
            *chat_messages(window),
            {"role": "user", "content": QUESTION_PROMPT.format(question=question)},
        ]
        replied = self._ask(asking)
        reply = replied.output
        if matches(reply, answer):
            return Verdict(question, answer, turn, reply, True, False, (replied,))
        grading = JUDGE_PROMPT.format(question=question, answer=answer, reply=reply)
        judged = self._ask([{"role": "user", "content": grading}])
        correct = normalized(judged.output).startswith("yes")
        return Verdict(question, answer, turn, reply, correct, True, (replied, judged))

    def _ask(self, messages: Sequence[Message]) -> ModelCall:
        """One call through the cache, recorded with the hash of its messages."""
        prompt = prompt_hash(json.dumps(list(messages), ensure_ascii=False, sort_keys=True))
        return ask(self.config, messages, prompt)


def answer_metrics(verdicts: Sequence[Verdict]) -> dict[str, int]:
    """``answers_correct`` and ``answers_judged``: how many questions were answered
    correctly, and how many of all needed the judge."""
    return {
        "answers_correct": sum(verdict.correct for verdict in verdicts),
        "answers_judged": sum(verdict.judged for verdict in verdicts),
    }
