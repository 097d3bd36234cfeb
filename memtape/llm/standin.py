"""A stand-in for a model server, on loopback: the OpenAI wire format, an extractive answer.

``memtape llm-standin`` serves it, so that a newcomer can watch the whole path of a
model's answer (the request, the answer recorded into the run, a replay that asks
nothing) before pointing memtape at a real server. It is not a model: its answer to a
Chat Completions request is the first sentence of each of the last lines of the user
and tool messages it was sent (after their last heading, a line ending in a colon),
verbatim, the same for the same request. For memtape's summary prompts those lines are
the newest turns, so the "summary" is their openings.

Its answer to an embeddings request (``POST /v1/embeddings``) is a hashed bag of
words: each word of a text, lowercased and stripped of punctuation, adds 1 to one of
``DIMENSIONS`` numbers chosen by its hash, so texts that share words point alike (what
``recall = "embeddings"`` ranks by), and texts that mean the same in other words do not.

It answers ``POST /v1/chat/completions``, ``POST /v1/embeddings`` and ``GET /v1/models``
as an OpenAI-compatible server does, a request it cannot answer with an OpenAI-style
error, and listens on 127.0.0.1 only. It keeps nothing it is sent (the Authorization
header is never read).
"""

import hashlib
import json
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from memtape.core.errors import BadInput

MODEL = "memtape-standin"
"""The one model ``GET /v1/models`` lists; a request may name any model."""

LINES = 3
"""How many of the last lines of the user and tool messages the answer opens."""

MAX_BODY = 16 << 20
"""The largest request body read, in bytes."""

READ_TIMEOUT = 10.0
"""Seconds a connection may stay silent before it is dropped."""

COMPLETIONS = "/v1/chat/completions"
EMBEDDINGS = "/v1/embeddings"
MODELS = "/v1/models"

DIMENSIONS = 64
"""How many numbers a stand-in embedding holds."""

_SENTENCE_END = re.compile(r"(?<=[.!?])\s")
"""Where a sentence ends: after a full stop, a bang or a question mark, before a space
(so ``$200.00`` and ``e.g.`` inside a word do not end one)."""


class BadRequest(Exception):
    """A request the stand-in cannot answer: its status, and the reason it gives."""

    def __init__(self, message: str, status: HTTPStatus = HTTPStatus.BAD_REQUEST) -> None:
        super().__init__(message)
        self.status = status


def extract(messages: Sequence[Mapping[str, Any]], lines: int = LINES) -> str:
    """The stand-in's answer to ``messages``: the first sentence of each of the last
    ``lines`` non-blank lines of the user and tool messages, joined by spaces; only those
    after the last line that ends in a colon (a heading such as ``New turns:``), if any."""
    said = [
        line.strip()
        for message in messages
        if message.get("role") in {"user", "tool"}
        for line in _text(message.get("content")).splitlines()
        if line.strip()
    ]
    headings = [n for n, line in enumerate(said) if line.endswith(":")]
    section = said[headings[-1] + 1 :] if headings else said
    return " ".join(_SENTENCE_END.split(line, maxsplit=1)[0] for line in section[-lines:])


def _text(content: Any) -> str:
    """A message's text: its string, or the text parts of its list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [part.get("text") for part in content if isinstance(part, dict)]
        return "\n".join(part for part in parts if isinstance(part, str))
    return ""


def completion(body: Any) -> dict[str, Any]:
    """The Chat Completions response to a request ``body`` (its parsed JSON); a body that is
    not a request raises ``BadRequest`` naming what is wrong.

    Nothing in it varies but with the request: its id is a hash of the request, and its
    creation time 0.
    """
    if not isinstance(body, dict):
        raise BadRequest("the body must be a JSON object")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise BadRequest("'model' must be a non-empty string")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BadRequest("'messages' must be a non-empty array")
    for n, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise BadRequest(f"messages[{n}] must be an object with a 'role'")
    if body.get("stream"):
        raise BadRequest("'stream' is not supported by the stand-in: ask without it")
    text = extract(messages)
    asked = sum(len(_text(message.get("content")).split()) for message in messages)
    said = len(text.split())
    digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode("utf-8")).hexdigest()
    return {
        "id": f"chatcmpl-standin-{digest[:16]}",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "system_fingerprint": MODEL,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
                "logprobs": None,
            }
        ],
        "usage": {"prompt_tokens": asked, "completion_tokens": said, "total_tokens": asked + said},
    }


def vector(text: str) -> list[float]:
    """The stand-in's embedding of ``text``: a hashed bag of its words (not a model's)."""
    numbers = [0.0] * DIMENSIONS
    for word in text.lower().split():
        stripped = word.strip(".,;:!?()[]{}\"'")
        if stripped:
            digest = hashlib.sha256(stripped.encode("utf-8")).digest()
            numbers[int.from_bytes(digest[:8], "big") % DIMENSIONS] += 1.0
    return numbers


def embeddings(body: Any) -> dict[str, Any]:
    """The embeddings response to a request ``body`` (a model and a text or a list of
    them); a body that is not one raises ``BadRequest`` naming what is wrong."""
    if not isinstance(body, dict):
        raise BadRequest("the body must be a JSON object")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise BadRequest("'model' must be a non-empty string")
    given = body.get("input")
    texts = [given] if isinstance(given, str) else given
    if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
        raise BadRequest("'input' must be a string or a non-empty array of strings")
    if body.get("encoding_format", "float") != "float":
        raise BadRequest("the stand-in gives embeddings as floats only: encoding_format 'float'")
    words = sum(len(text.split()) for text in texts)
    return {
        "object": "list",
        "data": [
            {"object": "embedding", "index": n, "embedding": vector(text)}
            for n, text in enumerate(texts)
        ],
        "model": model,
        "usage": {"prompt_tokens": words, "total_tokens": words},
    }


def models() -> dict[str, Any]:
    """The response to ``GET /v1/models``: the stand-in's one model."""
    return {
        "object": "list",
        "data": [{"id": MODEL, "object": "model", "created": 0, "owned_by": "memtape"}],
    }


def error(message: str, status: int) -> dict[str, Any]:
    """An error body as OpenAI's API writes one."""
    kind = "invalid_request_error" if status < HTTPStatus.INTERNAL_SERVER_ERROR else "server_error"
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


Heard = Callable[[dict[str, Any]], None]
"""Told of each completion the stand-in gives (the response), as it gives it."""


class StandInServer(ThreadingHTTPServer):
    """The stand-in on 127.0.0.1: ``serve_forever`` it, ``url`` is its base URL, and
    ``answered`` counts the completions it gave (each told to ``heard``, if given)."""

    daemon_threads = True

    def __init__(
        self, port: int = 0, read_timeout: float = READ_TIMEOUT, heard: Heard | None = None
    ) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.read_timeout = read_timeout
        self.heard = heard
        self._answered = 0
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        """The base URL a client is given (``http://127.0.0.1:PORT/v1``)."""
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    @property
    def answered(self) -> int:
        """How many completions it has given."""
        with self._lock:
            return self._answered

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Quiet: a client that vanished mid-request harms nobody else."""

    def gave(self, reply: dict[str, Any]) -> None:
        """Count one completion given, and tell ``heard`` of it."""
        with self._lock:
            self._answered += 1
            if self.heard is not None:
                self.heard(reply)


def make_server(
    port: int = 0, read_timeout: float = READ_TIMEOUT, heard: Heard | None = None
) -> StandInServer:
    """The stand-in bound to 127.0.0.1 (a free port when ``port`` is 0), not yet serving;
    ``heard`` is told of each completion it gives."""
    if not 0 <= port <= 65535:
        raise BadInput(f"--port {port} is not a port (0..65535)")
    try:
        return StandInServer(port, read_timeout, heard)
    except OSError as failure:
        raise BadInput(
            f"cannot listen on 127.0.0.1:{port}: {failure.strerror} (--port another)"
        ) from None


class _Handler(BaseHTTPRequestHandler):
    """One connection to the stand-in."""

    server: StandInServer
    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        """The connection, with its read timeout."""
        super().setup()
        self.connection.settimeout(self.server.read_timeout)

    def do_GET(self) -> None:
        """The models, or 404."""
        if self.path.split("?")[0] == MODELS:
            self._send(HTTPStatus.OK, models())
        else:
            missing = HTTPStatus.NOT_FOUND
            self._send(missing, error(f"no route GET {self.path}", missing))

    def do_POST(self) -> None:
        """A completion, an embedding, or an error saying why not."""
        try:
            body = self._body()
            route = self.path.split("?")[0]
            if route not in (COMPLETIONS, EMBEDDINGS):
                raise BadRequest(f"no route POST {self.path}", HTTPStatus.NOT_FOUND)
            if route == EMBEDDINGS:
                self._send(HTTPStatus.OK, embeddings(body))
                return
            reply = completion(body)
        except BadRequest as refused:
            # What is left of a refused body would read as the next request.
            self.close_connection = True
            self._send(refused.status, error(str(refused), refused.status))
            return
        self.server.gave(reply)
        self._send(HTTPStatus.OK, reply)

    def _body(self) -> Any:
        """The request's JSON body, read whole; ``BadRequest`` if it is not JSON."""
        length = self.headers.get("Content-Length", "")
        if not (length.isascii() and length.isdigit()):
            raise BadRequest("a body with a Content-Length is needed", HTTPStatus.LENGTH_REQUIRED)
        if len(length) > len(str(MAX_BODY)) or int(length) > MAX_BODY:
            raise BadRequest(
                f"the body is over {MAX_BODY} bytes", HTTPStatus.REQUEST_ENTITY_TOO_LARGE
            )
        try:
            raw = self.rfile.read(int(length))
        except TimeoutError:
            late = HTTPStatus.REQUEST_TIMEOUT
            raise BadRequest("the body did not arrive in time", late) from None
        try:
            return json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError) as failure:
            raise BadRequest(f"the body is not JSON: {failure}") from None

    def _send(self, status: int, data: Any) -> None:
        raw = json.dumps(data, ensure_ascii=False).encode("utf-8")
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client left: nobody to answer

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the command prints a line per answer itself."""
