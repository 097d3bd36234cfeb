"""Helpers of the capture tests: capture files written by hand, as ``memtape record`` writes
them (one exchange a line after a header line)."""

import json
from pathlib import Path
from typing import Any

from memtape.capture.threads import ANTHROPIC, CHAT, RESPONSES, Threads

HEADER = {"memtape_capture": 1, "started": "2026-12-03T15:40:00.123Z", "recorder": "memtape 0.2.0"}
"""A capture's header line."""

PATHS = {CHAT: "/v1/chat/completions", RESPONSES: "/v1/responses", ANTHROPIC: "/v1/messages"}

SYSTEM = "You are a support agent."


def exchange(
    number: int,
    endpoint: str,
    request: dict[str, Any] | None,
    response: dict[str, Any] | None,
    *,
    status: int | None = 200,
    **fields: Any,
) -> dict[str, Any]:
    """One exchange line; its ``thread`` is computed when written, unless given."""
    line: dict[str, Any] = {
        "exchange": number,
        "endpoint": endpoint,
        "method": "POST",
        "path": PATHS.get(endpoint, "/v1/models"),
        "status": status,
        "error": None,
        "stream": False,
        "timings": {"start": 1764776400.0 + number, "first_byte": None, "end": 1764776401.0},
        "request_headers": {"content-type": "application/json"},
        "response_headers": {"content-type": "application/json"},
        "request": request,
        "response": response,
    }
    line.update(fields)
    return line


def write_capture(path: Path, *lines: dict[str, Any], header: bool = True) -> Path:
    """A capture file of ``lines`` (after a header), each exchange keyed as the recorder
    keys it."""
    threads = Threads()
    written = [HEADER] if header else []
    for given in lines:
        line = given
        if "endpoint" in line and "thread" not in line:
            key = threads.key(line["endpoint"], line["request"], line["response"])
            line = {**line, "thread": key}
        written.append(line)
    path.write_text("".join(json.dumps(line) + "\n" for line in written), "utf-8")
    return path


def chat(*messages: dict[str, Any]) -> dict[str, Any]:
    """A Chat Completions request body."""
    return {"model": "gpt-test", "messages": list(messages)}


def chat_reply(message: dict[str, Any], prompt: int = 100, output: int = 10) -> dict[str, Any]:
    """A chat.completion whose first choice is ``message``."""
    return {
        "id": f"chatcmpl-{prompt}",
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "refusal": None, **message},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": output,
            "prompt_tokens_details": {"cached_tokens": prompt // 2},
        },
    }


def said(role: str, text: str) -> dict[str, Any]:
    """A message of ``role`` saying ``text``."""
    return {"role": role, "content": text}


def calling(call: str, text: str = "looking it up") -> dict[str, Any]:
    """A chat assistant message calling ``lookup``."""
    function = {"name": "lookup", "arguments": json.dumps({"q": call})}
    return {
        "role": "assistant",
        "content": text,
        "tool_calls": [{"id": call, "type": "function", "function": function}],
    }


def result(call: str, text: str) -> dict[str, Any]:
    """A chat tool message answering ``call``."""
    return {"role": "tool", "tool_call_id": call, "content": text}


def messages(*messages: dict[str, Any], system: str = SYSTEM, **more: Any) -> dict[str, Any]:
    """An Anthropic Messages request body."""
    return {"model": "claude-test", "system": system, "messages": list(messages), **more}


def message_reply(*blocks: dict[str, Any], identity: str = "msg_1", **more: Any) -> dict[str, Any]:
    """An Anthropic ``message`` response of ``blocks``."""
    return {
        "id": identity,
        "type": "message",
        "role": "assistant",
        "content": list(blocks),
        "stop_reason": "end_turn",
        "usage": {
            "input_tokens": 20,
            "output_tokens": 30,
            "cache_read_input_tokens": 400,
            "cache_creation_input_tokens": 50,
        },
        **more,
    }


def text(value: str) -> dict[str, Any]:
    """An Anthropic text block."""
    return {"type": "text", "text": value}


def use(call: str) -> dict[str, Any]:
    """An Anthropic tool_use block."""
    return {"type": "tool_use", "id": call, "name": "Read", "input": {"path": call}}


def answer(call: str, value: str) -> dict[str, Any]:
    """An Anthropic user message holding one tool_result."""
    return {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": call, "content": value}],
    }


def responses(*items: Any, **more: Any) -> dict[str, Any]:
    """A Responses request body."""
    return {"model": "gpt-test", "instructions": SYSTEM, "input": list(items), **more}


def response(identity: str, *output: dict[str, Any]) -> dict[str, Any]:
    """A Responses ``response`` object of ``output`` items."""
    return {
        "id": identity,
        "object": "response",
        "output": list(output),
        "usage": {
            "input_tokens": 80,
            "output_tokens": 5,
            "input_tokens_details": {"cached_tokens": 0},
        },
    }


def item(role: str, value: str) -> dict[str, Any]:
    """A Responses message item."""
    kind = "output_text" if role == "assistant" else "input_text"
    return {"type": "message", "role": role, "content": [{"type": kind, "text": value}]}
