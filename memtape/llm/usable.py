"""Asking until an answer is usable: a model's JSON answer read, refused with a reason, and
asked again with that reason until it reads or the ``[llm]`` table's ``max_retries`` run out.

A policy that needs a structured answer from a model (LLM consolidation, judged
supersession) gives its prompt and a reader: the reader turns the model's output into what
the policy decides with, or raises ``Refused`` saying why it cannot. Every call made,
refused ones included, comes back with the answer, for the event to record; when no try is
usable the decision is rejected in one line naming the model, the tries and the last reason.
"""

import json
import re
from collections.abc import Callable
from typing import Any, TypeVar

from memtape.core.errors import Rejected
from memtape.core.events import ModelCall
from memtape.llm.answers import Question, answer
from memtape.llm.asking import ask, prompt_hash
from memtape.llm.config import ModelConfig

RETRY = "\n\nYour answer {tries} was refused: {reason}. Answer again, with the JSON object only."
"""What a retry adds to the prompt: why the last answer was refused, and how many came
before (so that each retry is a new prompt, which no cache answers with the refused one)."""

_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)

Read = TypeVar("Read")


class Refused(ValueError):
    """A model's answer that does not parse or breaks the contract, and why."""


def json_object(output: str) -> dict[str, Any]:
    """The JSON object a model's ``output`` holds (a fence around it allowed), or
    ``Refused`` saying why it holds none."""
    match = _FENCE.match(output)
    text = match.group(1) if match else output
    try:
        data = json.loads(text)
    except ValueError as error:
        raise Refused(f"it is not JSON ({error})") from None
    if not isinstance(data, dict):
        raise Refused("it is not a JSON object")
    return data


def ask_until_usable(
    config: ModelConfig, prompt: str, read: Callable[[str], Read], what: str
) -> tuple[Read, tuple[ModelCall, ...]]:
    """What ``read`` makes of the first usable answer of ``config``'s model to ``prompt``
    (asked for a JSON object, through the answers in force), and every call made.

    An answer ``read`` refuses is asked again with the reason added to the prompt, up to
    ``config.max_retries`` times; then ``Rejected`` says that the model gave no usable
    ``what`` (``"consolidation"``) in so many tries, and the last reason.
    """
    asked: list[ModelCall] = []
    reason = ""
    for tries in range(config.max_retries + 1):
        text = prompt + (RETRY.format(tries=tries, reason=reason) if reason else "")
        call = _ask(config, text)
        asked.append(call)
        try:
            return read(call.output), tuple(asked)
        except Refused as refused:
            reason = str(refused)
    tries = len(asked)
    raise Rejected(
        f"model {config.model!r} gave no usable {what} in {tries} "
        f"{'try' if tries == 1 else 'tries'}: the last answer was refused: {reason}"
    )


def _ask(config: ModelConfig, text: str) -> ModelCall:
    messages = ({"role": "user", "content": text},)
    hashed = prompt_hash(text)
    return answer(
        Question(config.model, hashed, lambda: ask(config, messages, hashed, json_object=True))
    )
