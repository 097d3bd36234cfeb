"""Streamed responses put back together (memtape.capture.reassembly), without a network."""

import json
from typing import Any

from memtape.capture.reassembly import (
    anthropic_message,
    chat_completion,
    reassembled,
    responses_response,
    stream_ended,
)
from memtape.capture.sse import ServerSentEvent


def _events(*objects: Any, named: bool = False) -> list[ServerSentEvent]:
    return [ServerSentEvent(o["type"] if named else "message", json.dumps(o)) for o in objects]


def _chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 7,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
        **extra,
    }


class TestChatCompletion:
    def test_content_deltas_join_into_one_message(self) -> None:
        events = _events(
            _chunk({"role": "assistant", "content": ""}),
            _chunk({"content": "Hel"}),
            _chunk({"content": "lo"}),
            _chunk({}, finish="stop"),
        )
        expected = {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 7,
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": "Hello"},
                    "finish_reason": "stop",
                    "logprobs": None,
                }
            ],
            "usage": None,
        }
        assert expected == chat_completion([*events, ServerSentEvent("message", "[DONE]")])

    def test_tool_call_arguments_join_by_index(self) -> None:
        events = _events(
            _chunk(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "call_a",
                            "type": "function",
                            "function": {"name": "look", "arguments": ""},
                        }
                    ],
                }
            ),
            _chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"q": '}}]}),
            _chunk(
                {
                    "tool_calls": [
                        {
                            "index": 1,
                            "id": "call_b",
                            "type": "function",
                            "function": {"name": "add", "arguments": "{}"},
                        }
                    ]
                }
            ),
            _chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"x"}'}}]}),
            _chunk({}, finish="tool_calls"),
        )
        message = chat_completion(events)["choices"][0]["message"]  # type: ignore[index]
        expected = [
            {
                "id": "call_a",
                "type": "function",
                "function": {"name": "look", "arguments": '{"q": "x"}'},
            },
            {
                "id": "call_b",
                "type": "function",
                "function": {"name": "add", "arguments": "{}"},
            },
        ]
        assert expected == message["tool_calls"]

    def test_the_usage_chunk_with_cached_tokens_is_the_usage(self) -> None:
        usage = {
            "prompt_tokens": 9,
            "completion_tokens": 2,
            "total_tokens": 11,
            "prompt_tokens_details": {"cached_tokens": 4},
        }
        events = _events(
            _chunk({"content": "a"}, usage=None),
            {**_chunk({}), "choices": [], "usage": usage},
        )
        assert usage == chat_completion(events)["usage"]  # type: ignore[index]

    def test_no_chunk_is_no_completion(self) -> None:
        assert chat_completion([ServerSentEvent("message", "[DONE]")]) is None


class TestResponsesResponse:
    def test_the_completed_event_carries_the_response(self) -> None:
        final = {
            "id": "resp_1",
            "object": "response",
            "status": "completed",
            "output": [{"type": "message", "content": [{"type": "output_text", "text": "hi"}]}],
        }
        events = _events(
            {"type": "response.created", "response": {"id": "resp_1", "status": "in_progress"}},
            {"type": "response.output_text.delta", "delta": "hi"},
            {"type": "response.completed", "response": final},
            named=True,
        )
        assert final == responses_response(events)

    def test_a_cut_stream_keeps_the_items_that_finished(self) -> None:
        item = {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"}
        events = _events(
            {"type": "response.created", "response": {"id": "r", "output": []}},
            {"type": "response.output_item.done", "output_index": 0, "item": item},
            {"type": "response.output_text.delta", "delta": "par"},
            named=True,
        )
        assert {"id": "r", "output": [item]} == responses_response(events)

    def test_a_stream_naming_no_response_gives_none(self) -> None:
        assert responses_response(_events({"type": "error", "code": "x"})) is None


def _anthropic_stream(
    *middle: dict[str, Any], delta: dict[str, Any] | None = None, tail: dict[str, Any] | None = None
) -> list[ServerSentEvent]:
    start = {
        "type": "message_start",
        "message": {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "c",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {
                "input_tokens": 10,
                "cache_creation_input_tokens": 3,
                "cache_read_input_tokens": 5,
                "output_tokens": 1,
            },
        },
    }
    end = {
        "type": "message_delta",
        "delta": {"stop_reason": "end_turn", "stop_sequence": None},
        "usage": {"output_tokens": 6},
        **(tail or {}),
    }
    if delta is not None:
        end["delta"] = delta
    return _events(start, {"type": "ping"}, *middle, end, {"type": "message_stop"}, named=True)


class TestAnthropicMessage:
    def test_text_blocks_join_and_usage_merges(self) -> None:
        events = _anthropic_stream(
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": "Hi "},
            },
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": "there"},
            },
            {"type": "content_block_stop", "index": 0},
        )
        expected = {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "c",
            "content": [{"type": "text", "text": "Hi there"}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {
                "input_tokens": 10,
                "cache_creation_input_tokens": 3,
                "cache_read_input_tokens": 5,
                "output_tokens": 6,
            },
        }
        assert expected == anthropic_message(events)

    def test_a_tool_use_input_is_parsed_from_its_json_deltas(self) -> None:
        events = _anthropic_stream(
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "tool_use", "id": "toolu_1", "name": "get", "input": {}},
            },
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": '{"city": "P'},
            },
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": 'aris"}'},
            },
            {"type": "content_block_stop", "index": 0},
            delta={"stop_reason": "tool_use", "stop_sequence": None},
        )
        message = anthropic_message(events)
        assert message is not None
        expected = [
            {"type": "tool_use", "id": "toolu_1", "name": "get", "input": {"city": "Paris"}}
        ]
        assert (expected, "tool_use") == (message["content"], message["stop_reason"])

    def test_a_tool_use_with_no_json_keeps_an_empty_input(self) -> None:
        events = _anthropic_stream(
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "tool_use", "id": "t", "name": "now", "input": {}},
            },
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": ""},
            },
            {"type": "content_block_stop", "index": 0},
        )
        assert {} == anthropic_message(events)["content"][0]["input"]  # type: ignore[index]

    def test_thinking_and_its_signature_join(self) -> None:
        events = _anthropic_stream(
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "thinking", "thinking": "", "signature": ""},
            },
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "thinking_delta", "thinking": "hmm, "},
            },
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "thinking_delta", "thinking": "yes"},
            },
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "signature_delta", "signature": "sig"},
            },
            {"type": "content_block_stop", "index": 0},
        )
        expected = [{"type": "thinking", "thinking": "hmm, yes", "signature": "sig"}]
        assert expected == anthropic_message(events)["content"]  # type: ignore[index]

    def test_context_management_is_kept(self) -> None:
        edits = {
            "applied_edits": [
                {
                    "type": "clear_tool_uses_20250919",
                    "cleared_tool_uses": 2,
                    "cleared_input_tokens": 900,
                }
            ]
        }
        events = _anthropic_stream(tail={"context_management": edits})
        assert edits == anthropic_message(events)["context_management"]  # type: ignore[index]

    def test_an_unknown_delta_extends_its_block(self) -> None:
        events = _anthropic_stream(
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "compaction", "content": ""},
            },
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "compaction_delta", "content": "summary"},
            },
            {"type": "content_block_stop", "index": 0},
        )
        expected = [{"type": "compaction", "content": "summary"}]
        assert expected == anthropic_message(events)["content"]  # type: ignore[index]

    def test_a_stream_that_never_started_a_message_gives_none(self) -> None:
        assert anthropic_message(_events({"type": "ping"}, named=True)) is None


class TestStreamEnded:
    def test_each_endpoints_last_event_ends_its_stream(self) -> None:
        bodies = {
            "openai.chat": b"data: {}\n\ndata: [DONE]\n\n",
            "openai.responses": b"event: response.completed\ndata: {}\n\n",
            "anthropic.messages": b"event: message_stop\ndata: {}\n\n",
        }
        assert [True] * 3 == [stream_ended(e, body) for e, body in bodies.items()]

    def test_a_stream_cut_before_its_last_event_has_not_ended(self) -> None:
        bodies = {
            "openai.chat": b"data: {}\n\n",
            "openai.responses": b"event: response.output_text.delta\ndata: {}\n\n",
            "anthropic.messages": b"event: message_delta\ndata: {}\n\n",
            "other": b"data: [DONE]\n\n",
        }
        assert [False] * 4 == [stream_ended(e, body) for e, body in bodies.items()]


class TestReassembled:
    def test_a_body_is_read_for_its_endpoint(self) -> None:
        body = b'data: {"choices": [{"index": 0, "delta": {"content": "x"}}]}\n\ndata: [DONE]\n\n'
        completion = reassembled("openai.chat", body)
        assert "x" == completion["choices"][0]["message"]["content"]  # type: ignore[index]

    def test_an_endpoint_with_no_reassembly_gives_none(self) -> None:
        assert reassembled("other", b"data: {}\n\n") is None
