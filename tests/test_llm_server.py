"""tests.llm_server: the test's Chat Completions server, driven through the real openai SDK."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import urllib.error
import urllib.request

import openai
import pytest

from tests.llm_server import ChatServer, answer_for


def _client(server: ChatServer, **options: object) -> openai.OpenAI:
    settings: dict[str, object] = {"max_retries": 0, "timeout": 5.0, **options}
    return openai.OpenAI(base_url=server.url, api_key="sk-x", **settings)  # type: ignore[arg-type]


def _ask(client: openai.OpenAI, prompt: str) -> str | None:
    completion = client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": prompt}]
    )
    return completion.choices[0].message.content


class TestAnswers:
    def test_an_answer_is_the_figures_of_the_prompt_after_the_model(self) -> None:
        assert "[m] $180.00 A-1001" == answer_for("m", "refund $180.00 on order A-1001, turn 3")

    def test_the_same_prompt_gets_the_same_answer(self, chat_server: ChatServer) -> None:
        client = _client(chat_server)

        assert _ask(client, "pay $5 and $6") == _ask(client, "pay $5 and $6")

    def test_the_answer_comes_over_the_wire_with_usage(self, chat_server: ChatServer) -> None:
        completion = _client(chat_server).chat.completions.create(
            model="m", messages=[{"role": "user", "content": "refund $180.00 now"}]
        )

        assert "[m] $180.00" == completion.choices[0].message.content
        assert completion.usage is not None
        assert (3, 2) == (completion.usage.prompt_tokens, completion.usage.completion_tokens)

    def test_a_salt_changes_every_answer(self, chat_server: ChatServer) -> None:
        chat_server.salt = "later"

        assert "[m] $1 later" == _ask(_client(chat_server), "pay $1")

    def test_it_counts_requests_and_keeps_what_they_sent(self, chat_server: ChatServer) -> None:
        client = _client(chat_server)
        _ask(client, "one")
        _ask(client, "two")

        assert 2 == chat_server.requests
        assert ["one", "two"] == [b["messages"][0]["content"] for b in chat_server.bodies]
        assert ["Bearer sk-x"] * 2 == chat_server.authorizations


class TestTrouble:
    def test_a_status_fails_the_next_requests_then_it_answers(
        self, chat_server: ChatServer
    ) -> None:
        chat_server.fail(401)
        client = _client(chat_server)

        with pytest.raises(openai.AuthenticationError):
            _ask(client, "x")
        assert "[m]" == _ask(client, "x")

    def test_a_429_is_retried_by_the_sdk_until_it_answers(self, chat_server: ChatServer) -> None:
        chat_server.fail(429, times=2)

        assert "[m]" == _ask(_client(chat_server, max_retries=2), "x")
        assert 3 == chat_server.requests

    def test_a_failure_asks_for_a_retry_after_one_millisecond(
        self, chat_server: ChatServer
    ) -> None:
        """The header the SDK reads for its backoff, so that a retried test does not wait."""
        chat_server.fail(429)
        request = urllib.request.Request(
            f"{chat_server.url}/chat/completions", data=b"{}", method="POST"
        )

        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=60)
        assert (429, "1") == (refused.value.code, refused.value.headers["retry-after-ms"])

    def test_a_stall_outlasts_a_short_timeout(self, chat_server: ChatServer) -> None:
        chat_server.stall(5)

        with pytest.raises(openai.APITimeoutError):
            _ask(_client(chat_server, timeout=0.2), "x")

    def test_malformed_json_is_not_an_answer(self, chat_server: ChatServer) -> None:
        chat_server.malformed()

        with pytest.raises(ValueError, match="Expecting value"):
            _ask(_client(chat_server), "x")

    def test_a_stopped_server_refuses_the_connection(self, chat_server: ChatServer) -> None:
        client = _client(chat_server)
        chat_server.stop()

        with pytest.raises(openai.APIConnectionError):
            _ask(client, "x")
