"""A Chat Completions server for the tests, on 127.0.0.1: the wire format, and nothing more.

It answers ``POST /v1/chat/completions`` as an OpenAI-compatible server does
(``{"choices": [{"message": {"role": "assistant", "content": ...}}], "usage":
...}``), with an answer derived from the prompt alone: the model's name in
brackets, then each word of the last message that holds a digit or a ``$``
(a figure, an id; a bare whole number, such as a turn's number or a token
limit, is not one), each once, in the order they first appear, then the
server's ``salt`` if it has one. So the same prompt gets the same answer,
and a summary made of answers keeps the figures a probe looks for.

It answers ``POST /v1/embeddings`` too (``{"data": [{"embedding": [...]}],
"usage": ...}``), with a hashed bag of words (``vector_for``): each word of
a text, lowercased and stripped of punctuation, adds 1 to one of ``DIMENSIONS``
places chosen by its hash, so texts that share words point the same way; the
embeddings requests are counted apart (``embedded``).

A test may set an ``answerer`` of its own (a consolidation test answers
JSON). It counts the requests it gets and keeps their bodies and Authorization
headers; it can be told to fail the next requests with a status (401, 429,
500...), to stall them, or to answer them with malformed JSON. Written for
these tests from the Chat Completions API's public reference.
"""

import hashlib
import json
import re
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import attrs

from tests.serving import POLL, KeepingServer

PATH = "/v1/chat/completions"

EMBEDDINGS_PATH = "/v1/embeddings"

DIMENSIONS = 64
"""How many numbers an embedding of the test server holds."""


def vector_for(text: str) -> list[float]:
    """The embedding the server gives ``text``: a hashed bag of its words."""
    vector = [0.0] * DIMENSIONS
    for word in text.lower().split():
        stripped = word.strip(".,;:!?()[]{}\"'")
        if stripped:
            vector[int(hashlib.sha256(stripped.encode("utf-8")).hexdigest(), 16) % DIMENSIONS] += 1
    return vector


_FIGURE = re.compile(r"[$\d]")


def answer_for(model: str, prompt: str, salt: str = "") -> str:
    """The answer the server gives ``prompt`` asked of ``model``."""
    stripped = (word.strip(".,;:()[]{}\"'") for word in prompt.split())
    words = dict.fromkeys(w for w in stripped if _FIGURE.search(w) and not w.isdigit())
    return " ".join([f"[{model}]", *words, *([salt] if salt else [])])


@attrs.define
class Trouble:
    """What the server does to the next ``times`` requests instead of answering."""

    kind: str  # "status", "stall" or "malformed"
    times: int
    status: int = 500
    seconds: float = 0.0
    body: str = ""


class ChatServer:
    """The server, its counters and its troubles; ``start`` it, ``stop`` it."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.embedded: list[dict[str, Any]] = []
        """The bodies of the embeddings requests, apart from the chats'."""
        self.authorizations: list[str | None] = []
        self.salt = ""
        self.answerer: Callable[[str, str], str] | None = None
        """Answers ``(model, prompt)`` instead of ``answer_for``, when set."""
        self._troubles: list[Trouble] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: KeepingServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The base URL a client is given (``.../v1``)."""
        assert self._httpd is not None, "the server is not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    @property
    def requests(self) -> int:
        """How many requests reached the completions path."""
        with self._lock:
            return len(self.bodies)

    def fail(self, status: int, times: int = 1, body: str = "") -> None:
        """Answer the next ``times`` requests with ``status`` (and an error ``body``)."""
        self._troubles.append(Trouble("status", times, status=status, body=body))

    def stall(self, seconds: float, times: int = 1) -> None:
        """Wait ``seconds`` before answering each of the next ``times`` requests."""
        self._troubles.append(Trouble("stall", times, seconds=seconds))

    def malformed(self, times: int = 1, body: str = '{"choices": [{"message": ') -> None:
        """Answer the next ``times`` requests 200 with ``body``, which is not what was asked."""
        self._troubles.append(Trouble("malformed", times, body=body))

    def start(self) -> "ChatServer":
        """Listen on a free port of 127.0.0.1, in a thread."""
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                server._handle(self)

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet: the tests read the counters, not a log."""

        self._httpd = KeepingServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": POLL}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop listening (a stalled request is let go at once)."""
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(5)
        if self._httpd is not None:
            assert [] == self._httpd.errors

    def _trouble(self) -> Trouble | None:
        with self._lock:
            if not self._troubles:
                return None
            trouble = self._troubles[0]
            trouble.times -= 1
            if trouble.times <= 0:
                self._troubles.pop(0)
            return trouble

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length)
        if handler.path == EMBEDDINGS_PATH:
            self._embed(handler, json.loads(raw))
            return
        if handler.path != PATH:
            _send(handler, 404, {"error": {"message": f"no route {handler.path}"}})
            return
        body = json.loads(raw)
        with self._lock:
            self.bodies.append(body)
            self.authorizations.append(handler.headers.get("Authorization"))
        trouble = self._trouble()
        if trouble is not None and trouble.kind == "stall":
            self._stopping.wait(trouble.seconds)
        elif trouble is not None and trouble.kind == "status":
            message = trouble.body or f"told to fail with {trouble.status}"
            error = {"error": {"message": message, "type": "test", "code": trouble.status}}
            _send(handler, trouble.status, error, {"retry-after-ms": "1"})
            return
        elif trouble is not None:
            _send_raw(handler, 200, trouble.body.encode("utf-8"))
            return
        prompt = str(body["messages"][-1]["content"])
        if self.answerer is not None:
            text = self.answerer(body["model"], prompt)
        else:
            text = answer_for(body["model"], prompt, self.salt)
        reply = {
            "id": f"chatcmpl-{len(self.bodies)}",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": len(prompt.split()),
                "completion_tokens": len(text.split()),
                "total_tokens": len(prompt.split()) + len(text.split()),
            },
        }
        _send(handler, 200, reply)

    def _embed(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        """An embeddings request: each input's hashed bag of words (or the trouble told)."""
        with self._lock:
            self.embedded.append(body)
        trouble = self._trouble()
        if trouble is not None and trouble.kind == "status":
            message = trouble.body or f"told to fail with {trouble.status}"
            error = {"error": {"message": message, "type": "test", "code": trouble.status}}
            _send(handler, trouble.status, error, {"retry-after-ms": "1"})
            return
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        data = [
            {"object": "embedding", "index": n, "embedding": vector_for(text)}
            for n, text in enumerate(texts)
        ]
        words = sum(len(text.split()) for text in texts)
        usage = {"prompt_tokens": words, "total_tokens": words}
        _send(
            handler, 200, {"object": "list", "data": data, "model": body["model"], "usage": usage}
        )


def _send(
    handler: BaseHTTPRequestHandler,
    status: int,
    data: Any,
    headers: dict[str, str] | None = None,
) -> None:
    _send_raw(handler, status, json.dumps(data).encode("utf-8"), headers)


def _send_raw(
    handler: BaseHTTPRequestHandler,
    status: int,
    raw: bytes,
    headers: dict[str, str] | None = None,
) -> None:
    try:
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(raw)))
        for name, value in (headers or {}).items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(raw)
    except (BrokenPipeError, ConnectionResetError):
        pass  # the client gave up (a timeout): nobody is left to answer


def serving() -> Iterator[ChatServer]:
    """A started server, stopped when the generator is closed (a fixture's body)."""
    server = ChatServer().start()
    try:
        yield server
    finally:
        server.stop()
