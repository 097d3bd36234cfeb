"""An exchange's line in the capture (memtape.capture.exchanges): endpoints, the header
and query allow-lists, bodies."""

import json

import pytest

from memtape.capture.exchanges import (
    RAW_LIMIT,
    Exchange,
    allowed_headers,
    capture_line,
    endpoint_of,
    written_path,
)


def _exchange(endpoint: str = "openai.chat", **fields: object) -> Exchange:
    exchange = Exchange(
        method="POST",
        path="/v1/chat/completions",
        endpoint=endpoint,
        request_headers=[("Content-Type", "application/json")],
        request_body=b'{"model": "m", "messages": []}',
    )
    for name, value in fields.items():
        setattr(exchange, name, value)
    return exchange


class TestEndpointOf:
    def test_openai_paths_are_told_by_their_end(self) -> None:
        actual = [
            endpoint_of("POST", path, anthropic=False)
            for path in ("/v1/chat/completions", "/v1/responses?x=1", "/v1/embeddings")
        ]
        assert ["openai.chat", "openai.responses", "other"] == actual

    def test_anthropic_messages_and_the_rest(self) -> None:
        actual = [
            endpoint_of("POST", path, anthropic=True)
            for path in ("/v1/messages", "/v1/messages/count_tokens")
        ]
        assert ["anthropic.messages", "other"] == actual

    def test_a_get_is_other(self) -> None:
        assert "other" == endpoint_of("GET", "/v1/responses", anthropic=False)


class TestAllowedHeaders:
    def test_credentials_cookies_and_account_headers_are_not_written(self) -> None:
        headers = [
            ("Authorization", "Bearer k"),
            ("X-Api-Key", "k"),
            ("api-key", "k"),
            ("Cookie", "c"),
            ("Set-Cookie", "c"),
            ("Proxy-Authorization", "p"),
            ("OpenAI-Organization", "org"),
            ("anthropic-ratelimit-requests-remaining", "9"),
            ("X-Some-New-Header", "?"),
        ]
        assert {} == allowed_headers(headers)

    def test_versions_and_request_ids_are_written_in_lower_case(self) -> None:
        headers = [
            ("Anthropic-Version", "2023-06-01"),
            ("X-Stainless-Lang", "python"),
            ("request-id", "r"),
            ("anthropic-beta", "a"),
            ("anthropic-beta", "b"),
        ]
        expected = {
            "anthropic-version": "2023-06-01",
            "x-stainless-lang": "python",
            "request-id": "r",
            "anthropic-beta": "a, b",
        }
        assert expected == allowed_headers(headers)


class TestWrittenPath:
    def test_a_query_value_off_the_allow_list_is_redacted(self) -> None:
        expected = "/v1/models?key=REDACTED&api-version=2024-10-21"
        assert expected == written_path("/v1/models?key=sk-secret&api-version=2024-10-21")

    def test_a_path_without_a_query_is_as_sent(self) -> None:
        assert "/v1/chat/completions" == written_path("/v1/chat/completions")

    def test_a_bare_query_token_off_the_allow_list_is_redacted(self) -> None:
        assert "/v1/models?REDACTED&limit=2" == written_path("/v1/models?sk-secret&limit=2")

    def test_a_bare_allowed_parameter_is_kept(self) -> None:
        assert "/v1/models?beta" == written_path("/v1/models?beta")

    def test_a_fragment_is_never_written(self) -> None:
        assert "/v1/models" == written_path("/v1/models#key=sk-secret")


class TestCaptureLine:
    def test_a_json_response_is_read(self) -> None:
        exchange = _exchange(status=200, response_body=bytearray(b'{"id": "x"}'))
        line = capture_line(exchange)
        assert ({"model": "m", "messages": []}, {"id": "x"}, False) == (
            line["request"],
            line["response"],
            "raw_response" in line,
        )

    def test_a_non_json_body_is_kept_raw_and_cut(self) -> None:
        body = bytearray(b"<html>" + b"x" * RAW_LIMIT)
        line = capture_line(_exchange(status=502, response_body=body))
        assert (None, RAW_LIMIT) == (line["response"], len(line["raw_response"]))

    def test_another_endpoints_bodies_are_not_kept(self) -> None:
        exchange = _exchange("other", status=200, response_body=bytearray(b'{"secret": 1}'))
        line = capture_line(exchange)
        assert (None, None, False) == (line["request"], line["response"], "raw_response" in line)

    def test_a_stream_is_told_by_its_content_type_and_reassembled(self) -> None:
        chunk = {"id": "c", "choices": [{"index": 0, "delta": {"content": "hi"}}]}
        exchange = _exchange(
            status=200,
            response_headers=[("Content-Type", "text/event-stream; charset=utf-8")],
            response_body=bytearray(f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode()),
        )
        line = capture_line(exchange)
        assert (True, "hi") == (
            line["stream"],
            line["response"]["choices"][0]["message"]["content"],
        )

    @pytest.mark.parametrize(
        ("endpoint", "event"),
        [
            ("openai.chat", {"choices": 1}),
            ("openai.chat", {"choices": [{"index": 0, "delta": {"tool_calls": [1]}}]}),
            ("openai.responses", {"type": "response.completed", "response": 1}),
            ("anthropic.messages", {"type": "message_start", "message": {"content": 1}}),
        ],
    )
    def test_a_stream_of_another_shape_is_kept_raw(
        self, endpoint: str, event: dict[str, object]
    ) -> None:
        body = f"data: {json.dumps(event)}\n\n".encode()
        exchange = _exchange(
            endpoint,
            status=200,
            response_headers=[("Content-Type", "text/event-stream")],
            response_body=bytearray(body),
        )
        line = capture_line(exchange)
        assert (None, body.decode()) == (line["response"], line["raw_response"])

    def test_no_response_is_a_stream_when_the_request_asked_for_one(self) -> None:
        exchange = _exchange(request_body=b'{"stream": true}', error="upstream unreachable: x")
        line = capture_line(exchange)
        assert (True, None, None) == (line["stream"], line["status"], line["response"])


class TestWhoSentIt:
    def test_user_fields_are_kept_as_digests_the_same_for_the_same_value(self) -> None:
        body = {
            "model": "m",
            "user": "alice@example.com",
            "safety_identifier": "acct-42",
            "metadata": {"user_id": "user_9f_account_77_session_1", "other": "kept"},
            "messages": [],
        }
        lines = [capture_line(_exchange(request_body=json.dumps(body).encode())) for _ in range(2)]
        text = json.dumps(lines[0])
        request = lines[0]["request"]
        assert (False, False, False, "kept", True) == (
            "alice@example.com" in text,
            "acct-42" in text,
            "account_77" in text,
            request["metadata"]["other"],
            lines[0]["request"] == lines[1]["request"],
        )
        assert ("sha256:", 23) == (request["user"][:7], len(request["user"]))
