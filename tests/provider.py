"""A fake model provider for the capture tests, on 127.0.0.1: OpenAI Chat Completions,
OpenAI Responses and Anthropic Messages, streamed (chunked server-sent events) and
not, with a tool call when the request offers tools.

The request's ``model`` chooses trouble: ``fail`` is answered 500, ``drop`` gets the
start of a stream and then a closed connection, ``slow`` a stream with a pause before
each piece (streams in flight at once overlap); a message asked of ``compact`` begins
with a compaction block, and one whose request configures ``context_management`` edits
says it applied one (``CLEARED``). A chat's ``user`` field, when sent,
names its completion (``chatcmpl-USER``). Every body it sends is kept
(``sent``), with each request's headers and body (``received``), so a test compares
what the agent got with what was sent. Written for these tests from the providers'
public API references.
"""

import json
import socket
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import attrs

from tests.serving import KeepingServer

USAGE_CHAT = {
    "prompt_tokens": 12,
    "completion_tokens": 3,
    "total_tokens": 15,
    "prompt_tokens_details": {"cached_tokens": 8},
}
USAGE_ANTHROPIC = {
    "input_tokens": 12,
    "cache_creation_input_tokens": 4,
    "cache_read_input_tokens": 6,
    "output_tokens": 3,
}


@attrs.frozen
class Received:
    """A request as the provider got it."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]


class Provider:
    """The fake provider; ``start`` it, ``stop`` it."""

    def __init__(self) -> None:
        self.sent: list[bytes] = []
        self.received: list[Received] = []
        self.lock = threading.Lock()
        self._httpd: KeepingServer | None = None
        self._tls = False

    @property
    def url(self) -> str:
        """The origin (``http://127.0.0.1:PORT``, or ``https://`` over TLS)."""
        assert self._httpd is not None
        scheme = "https" if self._tls else "http"
        return f"{scheme}://127.0.0.1:{self._httpd.server_address[1]}"

    def start(self, tls: tuple[Path, Path] | None = None) -> "Provider":
        """Listen on a free port, answering on a thread of its own; over TLS with
        ``tls``, a certificate file and its key's."""
        provider = self

        class Handler(_Handler):
            owner = provider

        self._httpd = KeepingServer(("127.0.0.1", 0), Handler)
        self._tls = tls is not None
        if tls is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*tls)
            self._httpd.socket = context.wrap_socket(self._httpd.socket, server_side=True)
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        """Stop answering and close the socket; what went wrong in a request, if
        anything did, fails the test that stops it."""
        assert self._httpd is not None
        self._httpd.shutdown()
        self._httpd.server_close()
        assert [] == self._httpd.errors


def _sse(events: list[tuple[str | None, Any]]) -> list[bytes]:
    return [
        ((f"event: {name}\n" if name else "") + f"data: {json.dumps(data)}\n\n").encode()
        for name, data in events
    ]


def chat_answer(body: dict[str, Any]) -> tuple[bytes, list[bytes]]:
    """A chat completion (its JSON) and the stream of chunks that tells the same."""
    tool = bool(body.get("tools"))
    message: dict[str, Any] = {"role": "assistant", "content": None if tool else "Paris."}
    if tool:
        message["tool_calls"] = [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "lookup", "arguments": '{"city": "Paris"}'},
            }
        ]
    finish = "tool_calls" if tool else "stop"
    base = {
        "id": f"chatcmpl-{body.get('user', '7')}",
        "created": 1700000000,
        "model": body.get("model", "m"),
    }
    whole = {
        **base,
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        "usage": USAGE_CHAT,
    }

    def chunk(delta: dict[str, Any], reason: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": reason, "logprobs": None}
        return {**base, "object": "chat.completion.chunk", "choices": [choice]}

    deltas: list[dict[str, Any]]
    if tool:
        deltas = [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "lookup", "arguments": ""},
                    }
                ],
            },
            {"tool_calls": [{"index": 0, "function": {"arguments": '{"city": '}}]},
            {"tool_calls": [{"index": 0, "function": {"arguments": '"Paris"}'}}]},
        ]
    else:
        deltas = [{"role": "assistant", "content": ""}, {"content": "Par"}, {"content": "is."}]
    chunks = [chunk(delta) for delta in deltas] + [chunk({}, finish)]
    if (body.get("stream_options") or {}).get("include_usage"):
        chunks.append(
            {**base, "object": "chat.completion.chunk", "choices": [], "usage": USAGE_CHAT}
        )
    stream = [*_sse([(None, c) for c in chunks]), b"data: [DONE]\n\n"]
    return json.dumps(whole).encode(), stream


def responses_answer(body: dict[str, Any]) -> tuple[bytes, list[bytes]]:
    """A Responses ``response`` (its JSON) and the events that stream it: a function call
    when the request offers tools, else a message."""
    text = "Paris."
    item: dict[str, Any] = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }
    if body.get("tools"):
        item = {
            "id": "fc_1",
            "type": "function_call",
            "status": "completed",
            "call_id": f"call_{len(str(body.get('input')))}",
            "name": "lookup",
            "arguments": '{"city": "Paris"}',
        }
    number = len(str(body.get("input")))
    response = {
        "id": f"resp_{number}",
        "object": "response",
        "created_at": 1700000000,
        "status": "completed",
        "model": body.get("model", "m"),
        "output": [item],
        "usage": {
            "input_tokens": 9,
            "output_tokens": 2,
            "total_tokens": 11,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }
    started = {**response, "status": "in_progress", "output": [], "usage": None}
    events = [
        (
            "response.created",
            {"type": "response.created", "sequence_number": 0, "response": started},
        ),
        (
            "response.output_text.delta",
            {
                "type": "response.output_text.delta",
                "sequence_number": 1,
                "item_id": "msg_1",
                "output_index": 0,
                "content_index": 0,
                "delta": text,
            },
        ),
        (
            "response.output_item.done",
            {
                "type": "response.output_item.done",
                "sequence_number": 2,
                "output_index": 0,
                "item": item,
            },
        ),
        (
            "response.completed",
            {"type": "response.completed", "sequence_number": 3, "response": response},
        ),
    ]
    if item["type"] != "message":
        del events[1]
    return json.dumps(response).encode(), _sse(list(events))


COMPACTION_BLOCK = {"type": "compaction", "content": "Summary: ORD-9 refunded, ORD-10 pending."}
"""The block a message asked of model ``compact`` starts with (not streamed)."""

CLEARED = {"type": "clear_tool_uses_20250919", "cleared_tool_uses": 1, "cleared_input_tokens": 40}
"""The edit a message says it applied when its request's ``context_management`` has
edits: the oldest tool result cleared."""


def messages_answer(body: dict[str, Any]) -> tuple[bytes, list[bytes]]:
    """An Anthropic ``message`` (its JSON) and the events that stream it."""
    tool = bool(body.get("tools"))
    # Each call of a conversation its own id, as a provider's are.
    call_id = f"toolu_{len(body.get('messages') or [])}"
    block: dict[str, Any] = (
        {"type": "tool_use", "id": call_id, "name": "lookup", "input": {"city": "Paris"}}
        if tool
        else {"type": "text", "text": "Paris."}
    )
    stop = "tool_use" if tool else "end_turn"
    # As Anthropic's server-side compaction answers: a compaction block before the reply.
    compacted = [COMPACTION_BLOCK] if body.get("model") == "compact" else []
    # As its context management answers a request that configured edits: one applied.
    applied = [CLEARED] if (body.get("context_management") or {}).get("edits") else []
    message = {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "c"),
        "content": [*compacted, block],
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": USAGE_ANTHROPIC,
        "context_management": {"applied_edits": applied},
    }
    start_usage = {**USAGE_ANTHROPIC, "output_tokens": 1}
    started = {**message, "content": [], "stop_reason": None, "usage": start_usage}
    del started["context_management"]
    if tool:
        first = {"type": "tool_use", "id": call_id, "name": "lookup", "input": {}}
        deltas = [
            {"type": "input_json_delta", "partial_json": '{"city": '},
            {"type": "input_json_delta", "partial_json": '"Paris"}'},
        ]
    else:
        first = {"type": "text", "text": ""}
        deltas = [{"type": "text_delta", "text": "Par"}, {"type": "text_delta", "text": "is."}]
    events: list[tuple[str | None, Any]] = [
        ("message_start", {"type": "message_start", "message": started}),
        (
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": first},
        ),
        ("ping", {"type": "ping"}),
        *[
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": d})
            for d in deltas
        ],
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 3},
                "context_management": {"applied_edits": applied},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return json.dumps(message).encode(), _sse(events)


ANSWERS = {
    "/v1/chat/completions": chat_answer,
    "/v1/responses": responses_answer,
    "/v1/messages": messages_answer,
}


class _Handler(BaseHTTPRequestHandler):
    owner: Provider
    protocol_version = "HTTP/1.1"
    # As a provider's servers do: a head and the first chunk written apart are not held
    # back for an acknowledgement (Nagle's algorithm against a delayed ACK: 40 ms).
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._send(200, json.dumps({"object": "list", "data": []}).encode())

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        with self.owner.lock:
            self.owner.received.append(
                Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            )
        model = body.get("model")
        if model == "fail":
            error = {"error": {"type": "server_error", "message": "the fake provider failed"}}
            self._send(500, json.dumps(error).encode())
            return
        answer = ANSWERS.get(self.path.split("?")[0])
        if answer is None:
            self._send(404, b'{"error": "no such path"}')
            return
        whole, stream = answer(body)
        if not body.get("stream"):
            self._send(200, whole, request_id=True)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("request-id", "req_fake")
        self.end_headers()
        if model == "drop":
            stream = stream[:2]
        # Kept before it is sent: the client may read it all before this thread runs on.
        with self.owner.lock:
            self.owner.sent.append(b"".join(stream))
        for piece in stream:
            if model == "slow":
                time.sleep(0.005)
            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            self.wfile.flush()
        if model == "drop":
            self.connection.shutdown(socket.SHUT_RDWR)
            self.close_connection = True
        else:
            self.wfile.write(b"0\r\n\r\n")

    def _send(self, status: int, body: bytes, *, request_id: bool = False) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Set-Cookie", "session=secret-cookie")
        self.send_header("anthropic-ratelimit-requests-remaining", "99")
        if request_id:
            self.send_header("x-request-id", "req_fake")
        self.end_headers()
        with self.owner.lock:
            self.owner.sent.append(body)
        self.wfile.write(body)
