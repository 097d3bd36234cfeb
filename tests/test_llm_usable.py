"""memtape.llm.usable: a model asked until its answer reads, each call kept, one line when
none does."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import json

import pytest

from memtape.core.errors import Rejected
from memtape.core.events import ModelCall
from memtape.llm.answers import Question, answering
from memtape.llm.asking import prompt_hash
from memtape.llm.config import ModelConfig
from memtape.llm.usable import RETRY, Refused, ask_until_usable, json_object


class Scripted:
    """A model that gives ``outputs`` in turn, and keeps each question it was put."""

    def __init__(self, outputs: list[str]) -> None:
        self.outputs = iter(outputs)
        self.questions: list[Question] = []

    def answer(self, question: Question) -> ModelCall:
        """The next scripted output, as a call to the question's model."""
        self.questions.append(question)
        return ModelCall(next(self.outputs), question.model, question.prompt, 1, 1, 0.0, False)


def _count(output: str) -> int:
    """The ``count`` a JSON answer gives, or ``Refused``."""
    count = json_object(output).get("count")
    if type(count) is not int:
        raise Refused(f"its count is {count!r}, not a whole number")
    return count


def _ask(outputs: list[str], retries: int) -> tuple[Scripted, tuple[int, tuple[ModelCall, ...]]]:
    model = Scripted(outputs)
    with answering(model):
        got = ask_until_usable(ModelConfig("m", max_retries=retries), "Count.", _count, "count")
    return model, got


class TestJsonObject:
    def test_a_bare_object_is_read(self) -> None:
        assert {"a": 1} == json_object('{"a": 1}')

    def test_an_object_in_a_json_fence_is_read(self) -> None:
        assert {"a": 1} == json_object('```json\n{"a": 1}\n```')

    def test_text_that_is_not_json_is_refused_with_why(self) -> None:
        with pytest.raises(Refused, match=r"^it is not JSON "):
            json_object("no")

    def test_json_that_is_not_an_object_is_refused_with_why(self) -> None:
        with pytest.raises(Refused, match=r"^it is not a JSON object$"):
            json_object("[1]")


class TestAskUntilUsable:
    def test_a_usable_first_answer_is_read_and_its_call_kept(self) -> None:
        _, (count, asked) = _ask(['{"count": 3}'], retries=2)

        assert (3, ['{"count": 3}']) == (count, [call.output for call in asked])

    def test_a_refused_answer_is_asked_again_with_the_reason(self) -> None:
        model, _ = _ask(["[]", '{"count": "x"}', '{"count": 1}'], retries=2)
        first = "it is not a JSON object"
        second = "its count is 'x', not a whole number"

        assert [
            prompt_hash("Count."),
            prompt_hash("Count." + RETRY.format(tries=1, reason=first)),
            prompt_hash("Count." + RETRY.format(tries=2, reason=second)),
        ] == [question.prompt for question in model.questions]

    def test_every_call_refused_ones_included_is_kept(self) -> None:
        _, (count, asked) = _ask(["no", '{"count": 1}'], retries=2)

        assert (1, ["no", '{"count": 1}']) == (count, [call.output for call in asked])

    def test_no_usable_answer_rejects_in_one_line_with_the_last_reason(self) -> None:
        with pytest.raises(Rejected) as caught:
            _ask(["no", json.dumps({"count": None})], retries=1)

        assert (
            "model 'm' gave no usable count in 2 tries: the last answer was refused: "
            "its count is None, not a whole number"
        ) == str(caught.value)

    def test_one_try_is_said_in_the_singular(self) -> None:
        with pytest.raises(Rejected, match=" in 1 try: "):
            _ask(["[]"], retries=0)
