"""Answering a question against the window: the decision an ``Ask`` command gets.

The model is given the window as it stands, rendered as the chat request a
policy would send (``memtape.policies.text.request``), then the question.
Its reply is scored against the reference answer: equal as written, or
equal once both are ``normalized``, is correct without further ado; when
they differ, the same model is asked to judge whether the reply gives the
answer (``JUDGE_PROMPT``), and its yes or no decides. Each call is a
``Question`` to the answers in force (``memtape.llm.answers``): live, it
goes through the response cache; when ``memtape check`` decides the command
again, the run's recorded calls answer it, and nothing is asked. What was
decided is an ``Answered`` event.
"""

import json
import re
import unicodedata
from collections.abc import Sequence
from functools import partial

from memtape.core.commands import Ask
from memtape.core.events import Answered, ModelCall
from memtape.core.state import State
from memtape.llm.answers import Question, answer
from memtape.llm.asking import ask, prompt_hash
from memtape.llm.client import NotChosen
from memtape.llm.config import ModelConfig
from memtape.policies.text.request import Message, chat_messages

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


def decide_ask(state: State, command: Ask, *, chosen: bool = True) -> tuple[Answered]:
    """Ask the command's question against ``state``'s window and score the reply. When the
    user has not ``chosen`` the model (an ``Ask`` read from an untrusted run file names its
    own), only recorded answers answer it (``memtape.llm.answers.Replay``), and a live
    question is refused before anything is sent."""
    config = ModelConfig(command.model, seed=command.seed)
    asking = [
        *chat_messages(state.window),
        {"role": "user", "content": QUESTION_PROMPT.format(question=command.question)},
    ]
    replied = _ask(config, asking, chosen)
    reply = replied.output
    if matches(reply, command.answer):
        return (Answered(command.question, command.answer, reply, True, False, (replied,)),)
    grading = JUDGE_PROMPT.format(question=command.question, answer=command.answer, reply=reply)
    judged = _ask(config, [{"role": "user", "content": grading}], chosen)
    correct = normalized(judged.output).startswith("yes")
    return (Answered(command.question, command.answer, reply, correct, True, (replied, judged)),)


def _ask(config: ModelConfig, messages: Sequence[Message], chosen: bool) -> ModelCall:
    """One call, put to the answers in force, recorded with the hash of its messages."""
    prompt = prompt_hash(json.dumps(list(messages), ensure_ascii=False, sort_keys=True))
    live = partial(ask, config, messages, prompt) if chosen else partial(_refused, config)
    return answer(Question(config.model, prompt, live))


def _refused(config: ModelConfig) -> ModelCall:
    """What a live question of a model a file named gets: a refusal, nothing sent."""
    raise NotChosen(
        f"the run's ask steps name model {config.model!r}; a file never chooses the model "
        "your key goes to, so nothing was sent: trust the run (--trust, or MEMTAPE_TRUST=1)"
    )
