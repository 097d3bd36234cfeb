"""``memtape.capture.wrap``: the real SDK clients, sync and async, writing a capture
without a proxy, against the fake provider (memtape.capture.wrapping)."""

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from memtape.capture import wrap
from memtape.capture.writer import CaptureWriter
from memtape.core.errors import MemtapeError
from tests.capture_agent import CANARY
from tests.provider import Provider

openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")

CHAT: Any = [{"role": "user", "content": "Capital of France?"}]


@pytest.fixture(scope="module")
def provider() -> Iterator[Provider]:
    started = Provider().start()
    yield started
    started.stop()


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


class TestSync:
    def test_an_openai_client_records_a_call_and_a_stream(
        self, provider: Provider, tmp_path: Path
    ) -> None:
        out = tmp_path / "c.jsonl"
        client = wrap(
            openai.OpenAI(api_key=CANARY, base_url=provider.url + "/v1", max_retries=0), out=out
        )
        answer = client.chat.completions.create(model="m", messages=CHAT)
        stream = client.chat.completions.create(model="m", messages=CHAT, stream=True)
        streamed = "".join(chunk.choices[0].delta.content or "" for chunk in stream)
        lines = _lines(out)
        assert (
            ("Paris.", "Paris."),
            [(1, "openai.chat", False), (2, "openai.chat", True)],
            ["Paris.", "Paris."],
        ) == (
            (answer.choices[0].message.content, streamed),
            [(line["exchange"], line["endpoint"], line["stream"]) for line in lines[1:]],
            [line["response"]["choices"][0]["message"]["content"] for line in lines[1:]],
        )

    def test_a_stream_read_to_its_last_event_is_whole(
        self, provider: Provider, tmp_path: Path
    ) -> None:
        out = tmp_path / "c.jsonl"
        client = wrap(openai.OpenAI(api_key="k", base_url=provider.url + "/v1"), out=out)
        for _ in client.chat.completions.create(model="m", messages=CHAT, stream=True):
            pass
        assert [None] == [line["error"] for line in _lines(out)[1:]]

    def test_an_anthropic_stream_is_recorded_whole(
        self, provider: Provider, tmp_path: Path
    ) -> None:
        out = tmp_path / "c.jsonl"
        client = wrap(anthropic.Anthropic(api_key=CANARY, base_url=provider.url), out=out)
        with client.messages.stream(model="c", max_tokens=10, messages=CHAT) as stream:
            text = stream.get_final_text()
        line = _lines(out)[1]
        assert ("Paris.", "Paris.", True, None) == (
            text,
            line["response"]["content"][0]["text"],
            line["stream"],
            line["error"],
        )

    def test_a_body_closed_before_its_end_says_so(self, provider: Provider, tmp_path: Path) -> None:
        out = tmp_path / "c.jsonl"
        client = wrap(openai.OpenAI(api_key="k", base_url=provider.url + "/v1"), out=out)
        chat = client.chat.completions.with_streaming_response
        with chat.create(model="slow", messages=CHAT, stream=True) as response:
            first = next(response.iter_bytes())
        error = _lines(out)[1]["error"]
        assert f"the client closed the body after {len(first):,} bytes" == error

    def test_no_key_reaches_the_capture(self, provider: Provider, tmp_path: Path) -> None:
        out = tmp_path / "c.jsonl"
        client = wrap(anthropic.Anthropic(api_key=CANARY, base_url=provider.url), out=out)
        client.messages.create(model="c", max_tokens=10, messages=CHAT)
        assert (False, "anthropic.messages") == (
            CANARY in out.read_text(),
            _lines(out)[1]["endpoint"],
        )

    def test_an_upstream_error_is_recorded_and_raised_as_before(
        self, provider: Provider, tmp_path: Path
    ) -> None:
        out = tmp_path / "c.jsonl"
        client = wrap(
            openai.OpenAI(api_key=CANARY, base_url=provider.url + "/v1", max_retries=0), out=out
        )
        with pytest.raises(openai.InternalServerError):
            client.chat.completions.create(model="fail", messages=CHAT)
        assert 500 == _lines(out)[1]["status"]

    def test_two_clients_wrapped_to_one_file_share_its_numbering(
        self, provider: Provider, tmp_path: Path
    ) -> None:
        out = tmp_path / "c.jsonl"
        chat = wrap(openai.OpenAI(api_key="k", base_url=provider.url + "/v1"), out=out)
        messages = wrap(anthropic.Anthropic(api_key="k", base_url=provider.url), out=out)
        chat.chat.completions.create(model="m", messages=CHAT)
        messages.messages.create(model="c", max_tokens=10, messages=CHAT)
        assert [None, 1, 2] == [line.get("exchange") for line in _lines(out)]

    def test_a_client_wrapped_twice_to_one_file_records_each_exchange_once(
        self, provider: Provider, tmp_path: Path
    ) -> None:
        out = tmp_path / "c.jsonl"
        client = wrap(anthropic.Anthropic(api_key="k", base_url=provider.url), out=out)
        again = wrap(client, out=tmp_path / "." / "c.jsonl")
        again.messages.create(model="c", max_tokens=10, messages=CHAT)
        assert (True, [None, 1]) == (
            again is client,
            [line.get("exchange") for line in _lines(out)],
        )

    def test_clients_of_both_providers_sharing_one_http_client_record_each_endpoint(
        self, provider: Provider, tmp_path: Path
    ) -> None:
        """The second wrap finds the HTTP client wrapped already and leaves it so: the
        tee, made for the first client's provider, filed the other's requests under it
        (an Anthropic message as an OpenAI endpoint: ``other``, which no import reads)."""
        out, shared = tmp_path / "c.jsonl", httpx2.Client()
        chats = wrap(
            openai.OpenAI(api_key="k", base_url=provider.url + "/v1", http_client=shared),
            out=out,
        )
        messages = wrap(
            anthropic.Anthropic(api_key="k", base_url=provider.url, http_client=shared), out=out
        )
        chats.chat.completions.create(model="m", messages=CHAT)
        messages.messages.create(model="c", max_tokens=10, messages=CHAT)
        assert ["openai.chat", "anthropic.messages"] == [
            line["endpoint"] for line in _lines(out)[1:]
        ]

    def test_a_client_wrapped_to_another_file_is_refused(
        self, provider: Provider, tmp_path: Path
    ) -> None:
        out, other = tmp_path / "c.jsonl", tmp_path / "d.jsonl"
        client = wrap(openai.AsyncOpenAI(api_key="k", base_url=provider.url + "/v1"), out=out)
        with pytest.raises(MemtapeError) as refused:
            wrap(client, out=other)
        assert (
            f"wrap: this AsyncOpenAI already writes its exchanges to {out}: wrap it once",
            False,
        ) == (str(refused.value), other.exists())

    def test_a_capture_that_cannot_be_written_is_one_line_and_the_call_answers(
        self,
        provider: Provider,
        tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        client = wrap(openai.OpenAI(api_key="k", base_url=provider.url + "/v1"), out=tmp_path / "c")

        def full(self: CaptureWriter, line: dict[str, Any]) -> None:
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(CaptureWriter, "_write", full)
        stream = client.chat.completions.create(model="m", messages=CHAT, stream=True)
        streamed = "".join(chunk.choices[0].delta.content or "" for chunk in stream)
        assert ("Paris.", [f"memtape wrap: {tmp_path / 'c'}: No space left on device"]) == (
            streamed,
            capsys.readouterr().err.splitlines(),
        )

    def test_something_else_is_refused(self, tmp_path: Path) -> None:
        with pytest.raises(MemtapeError, match="not an openai or anthropic client"):
            wrap(object(), out=tmp_path / "c.jsonl")


class TestAsync:
    def test_an_async_anthropic_stream_is_recorded_whole(
        self, provider: Provider, tmp_path: Path
    ) -> None:
        out = tmp_path / "c.jsonl"

        async def ask() -> str:
            client = wrap(anthropic.AsyncAnthropic(api_key=CANARY, base_url=provider.url), out=out)
            async with client.messages.stream(
                model="c",
                max_tokens=10,
                messages=CHAT,
                tools=[{"name": "lookup", "input_schema": {"type": "object"}}],
            ) as stream:
                message = await stream.get_final_message()
            return str(message.content[0].input)

        asked = asyncio.run(ask())
        line = _lines(out)[1]
        assert (asked, {"city": "Paris"}, True) == (
            str({"city": "Paris"}),
            line["response"]["content"][0]["input"],
            line["stream"],
        )

    def test_an_async_openai_chat_stream_with_a_tool_call_is_recorded_whole(
        self, provider: Provider, tmp_path: Path
    ) -> None:
        out = tmp_path / "c.jsonl"
        tools: Any = [{"type": "function", "function": {"name": "lookup", "parameters": {}}}]

        async def ask() -> str:
            client = wrap(
                openai.AsyncOpenAI(api_key=CANARY, base_url=provider.url + "/v1"), out=out
            )
            stream = await client.chat.completions.create(
                model="m", messages=CHAT, tools=tools, stream=True
            )
            arguments = ""
            async for chunk in stream:
                for call in (chunk.choices[0].delta.tool_calls or []) if chunk.choices else []:
                    arguments += call.function.arguments or ""
            return arguments

        streamed = asyncio.run(ask())
        line = _lines(out)[1]
        call = line["response"]["choices"][0]["message"]["tool_calls"][0]
        assert ('{"city": "Paris"}', '{"city": "Paris"}', True, None) == (
            streamed,
            call["function"]["arguments"],
            line["stream"],
            line["error"],
        )

    def test_an_async_openai_responses_call_is_recorded(
        self, provider: Provider, tmp_path: Path
    ) -> None:
        out = tmp_path / "c.jsonl"

        async def ask() -> str:
            client = wrap(
                openai.AsyncOpenAI(api_key=CANARY, base_url=provider.url + "/v1"), out=out
            )
            response = await client.responses.create(model="m", input="Capital?")
            return str(response.id)

        response_id = asyncio.run(ask())
        assert (response_id, "openai.responses") == (
            _lines(out)[1]["response"]["id"],
            _lines(out)[1]["endpoint"],
        )
