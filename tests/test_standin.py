"""memtape.llm.standin and ``memtape llm-standin``: a stand-in for a model server.

Driven through the real ``openai`` SDK against the stand-in on 127.0.0.1, which each
test starts and stops; the whole path is a run recorded against it, whose answers are
in its events, and a replay that asks it nothing.
"""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

from memtape.cli import main
from memtape.core.errors import BadInput
from memtape.llm.standin import (
    DIMENSIONS,
    MODEL,
    BadRequest,
    StandInServer,
    completion,
    embeddings,
    extract,
    make_server,
)
from tests.chained import lines_of
from tests.conftest import SECRET_KEY
from tests.llm_runs import scenario
from tests.serving import serving

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def standin() -> Iterator[StandInServer]:
    """The stand-in on a free port of 127.0.0.1, stopped after the test."""
    with serving(make_server(0)) as server:
        yield server


def _client(server: StandInServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.url, api_key="standin", max_retries=0, timeout=10)


def _ask(server: StandInServer, *messages: dict[str, Any]) -> Any:
    return _client(server).chat.completions.create(model="any-model", messages=messages)  # type: ignore[arg-type]


class TestExtract:
    def test_the_first_sentence_of_each_of_the_last_three_lines(self) -> None:
        said = "Old line. Gone.\n[1] user: A refund of $180.00 is due. Thanks!\n\nB? C.\nD! E."

        assert "[1] user: A refund of $180.00 is due. B? D!" == extract(
            [{"role": "user", "content": said}]
        )

    def test_only_user_and_tool_messages_are_read(self) -> None:
        messages = [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Order ORD-3300."},
            {"role": "assistant", "content": "Looking."},
            {"role": "tool", "content": "Refund issued. Done."},
        ]

        assert "Order ORD-3300. Refund issued." == extract(messages)

    def test_only_the_lines_after_the_last_heading_are_read(self) -> None:
        said = "Summary so far:\n(none yet)\nNew turns, oldest first:\n[1] user: Hi. Yes."

        assert "[1] user: Hi." == extract([{"role": "user", "content": said}])

    def test_text_parts_are_read(self) -> None:
        content = [{"type": "text", "text": "One. Two."}, {"type": "image_url"}]

        assert "One." == extract([{"role": "user", "content": content}])


class TestCompletion:
    def test_the_same_request_gets_the_same_response(self) -> None:
        body = {"model": "m", "messages": [{"role": "user", "content": "Hello there."}]}

        assert completion(body) == completion(json.loads(json.dumps(body)))
        assert 0 == completion(body)["created"]

    @pytest.mark.parametrize(
        ("body", "reason"),
        [
            ([], "the body must be a JSON object"),
            ({"messages": [{"role": "user"}]}, "'model' must be a non-empty string"),
            ({"model": "m", "messages": []}, "'messages' must be a non-empty array"),
            ({"model": "m", "messages": ["hi"]}, "messages[0] must be an object with a 'role'"),
        ],
    )
    def test_a_body_that_is_not_a_request_is_refused_with_why(self, body: Any, reason: str) -> None:
        with pytest.raises(BadRequest) as refused:
            completion(body)

        assert reason == str(refused.value)


class TestServer:
    def test_the_sdk_gets_the_answer_and_its_usage(self, standin: StandInServer) -> None:
        reply = _ask(standin, {"role": "user", "content": "Refund $180.00 today. Thanks."})

        assert ("Refund $180.00 today.", "stop", "any-model") == (
            reply.choices[0].message.content,
            reply.choices[0].finish_reason,
            reply.model,
        )
        assert (4, 3, 7) == (
            reply.usage.prompt_tokens,
            reply.usage.completion_tokens,
            reply.usage.total_tokens,
        )
        assert 1 == standin.answered

    def test_the_models_list_names_the_stand_in(self, standin: StandInServer) -> None:
        assert [MODEL] == [model.id for model in _client(standin).models.list()]

    def test_a_bad_request_is_a_400_with_an_openai_error(self, standin: StandInServer) -> None:
        with pytest.raises(openai.BadRequestError) as refused:
            _ask(standin)

        assert (400, "'messages' must be a non-empty array") == (
            refused.value.status_code,
            refused.value.body["message"],  # type: ignore[index]
        )
        assert 0 == standin.answered

    def test_a_stream_is_refused(self, standin: StandInServer) -> None:
        with pytest.raises(openai.BadRequestError, match="'stream' is not supported"):
            _client(standin).chat.completions.create(
                model="m", messages=[{"role": "user", "content": "hi"}], stream=True
            )

    def test_another_path_is_a_404(self, standin: StandInServer) -> None:
        with pytest.raises(openai.NotFoundError):
            _client(standin).completions.create(model="m", prompt="hi")

    def test_the_sdk_gets_embeddings_as_floats(self, standin: StandInServer) -> None:
        reply = _client(standin).embeddings.create(
            model="m", input=["hi there"], encoding_format="float"
        )

        assert (DIMENSIONS, 2.0) == (len(reply.data[0].embedding), sum(reply.data[0].embedding))

    def test_it_listens_on_loopback_only(self, standin: StandInServer) -> None:
        assert "127.0.0.1" == standin.server_address[0]

    def test_a_port_in_use_is_one_line_naming_it(self, standin: StandInServer) -> None:
        port = standin.server_address[1]
        with pytest.raises(BadInput, match=rf"^cannot listen on 127\.0\.0\.1:{port}: .*--port"):
            make_server(port)

    def test_a_port_out_of_range_is_refused(self) -> None:
        with pytest.raises(BadInput, match=r"^--port 70000 is not a port \(0\.\.65535\)$"):
            make_server(70000)


@pytest.mark.usefixtures("llm_env")
class TestTheWholePath:
    def test_a_run_records_the_answers_and_a_replay_asks_nothing(
        self, tmp_path: Path, standin: StandInServer, capsys: pytest.CaptureFixture[str]
    ) -> None:
        path = scenario(tmp_path / "desk.toml", standin.url)
        out = tmp_path / "desk.jsonl"
        assert 0 == main(["run", str(path), "--out", str(out)])
        asked = standin.answered
        calls = [
            call
            for line in lines_of(out)[1:]
            if line["type"] == "CompactionTriggered"
            for call in line["event"]["asked"]
        ]

        assert (3, 3) == (asked, len(calls))
        assert calls[0]["output"].startswith("[1] system: You are the refund desk. [2] user: ")
        capsys.readouterr()
        for command in (["show", str(out), "--json"], ["timeline", str(out)], ["check", str(out)]):
            assert 0 == main(command)
            if command[0] == "show":
                (summary,) = json.loads(capsys.readouterr().out)["window"]["warm"]
        assert asked == standin.answered
        assert calls[-1]["output"].endswith(summary["text"])


class TestCommand:
    def test_it_prints_the_url_answers_and_stops_on_ctrl_c(self, tmp_path: Path) -> None:
        env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "OPENAI_API_KEY": SECRET_KEY}
        child = subprocess.Popen(
            [sys.executable, "-m", "memtape.cli", "llm-standin", "--port", "0"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert child.stdout is not None
        first, export, stops = (child.stdout.readline() for _ in range(3))
        url = export.split()[1].removeprefix("OPENAI_BASE_URL=")
        client = openai.OpenAI(base_url=url, api_key="standin", max_retries=0, timeout=10)
        reply = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "Hello there."}]
        )
        heard = child.stdout.readline()
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=30)

        assert first.startswith("memtape llm-standin: a stand-in, not a model")
        assert ("export", "(Ctrl-C stops)\n") == (export.split()[0], stops)
        assert "Hello there." == reply.choices[0].message.content
        assert "answered m: 2 words in, 2 out\n" == heard
        assert (0, "memtape llm-standin: stopped after 1 answer\n") == (child.returncode, err)


class TestEmbeddings:
    def test_each_text_gets_a_hashed_bag_of_its_words(self) -> None:
        reply = embeddings({"model": "m", "input": ["Cracked screen.", "cracked SCREEN"]})

        first, second = (item["embedding"] for item in reply["data"])
        assert (DIMENSIONS, first, 2.0) == (len(first), second, sum(first))

    def test_a_single_text_is_one_embedding(self) -> None:
        assert 1 == len(embeddings({"model": "m", "input": "order"})["data"])

    @pytest.mark.parametrize(
        ("body", "reason"),
        [
            ({"model": "m", "input": []}, "'input' must be a string or a non-empty array"),
            ({"model": "m", "input": [3]}, "'input' must be a string or a non-empty array"),
            ({"input": "x"}, "'model' must be a non-empty string"),
            ({"model": "m", "input": "x", "encoding_format": "base64"}, "floats only"),
        ],
    )
    def test_a_body_that_is_no_request_is_refused_naming_why(
        self, body: dict[str, object], reason: str
    ) -> None:
        with pytest.raises(BadRequest, match=reason):
            embeddings(body)
