"""An exchange (one request and its response) and its line in the capture file: which
endpoint it was, which headers may be written, and the bodies as JSON.

What is written is chosen by allow-lists, never deny-lists: a header, or a query
parameter's value, that no one has decided is safe is not written.
"""

import hashlib
import time
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote, unquote_plus, urlsplit

import attrs
import orjson

from memtape.capture.reassembly import JsonObject, reassembled

ALLOWED_HEADERS = frozenset(
    {
        "content-type",
        "anthropic-version",
        "anthropic-beta",
        "openai-beta",
        "user-agent",
        "request-id",
        "x-request-id",
        "openai-processing-ms",
    }
)
"""The headers a capture may hold, besides ``x-stainless-*`` (the SDKs' versions).

Versions, content types and request ids: what a reader needs to tell what was spoken.
Not credentials (Authorization, x-api-key, api-key, cookies), and not account
identifiers or quotas either (openai-organization, openai-project,
anthropic-ratelimit-*), which say who the user is.
"""

ALLOWED_HEADER_PREFIXES = ("x-stainless-",)
"""Header name prefixes a capture may hold: the SDKs' language, OS and version info."""

ALLOWED_QUERY = frozenset({"api-version", "beta", "limit", "after", "before", "order"})
"""Query parameters whose values a capture keeps; any other's value is written as
``REDACTED`` (some providers take a key in the query string, ``?key=...``)."""

IDENTIFYING_FIELDS = ("user", "safety_identifier")
"""Top-level request fields that name the person or account behind a request (OpenAI's
``user`` and ``safety_identifier``; Anthropic's is ``metadata.user_id``): a capture keeps a
digest of each, never the value."""

RAW_LIMIT = 64 * 1024
"""The most of a non-JSON body a capture keeps (``raw_response``), in bytes."""

ENDPOINTS = {
    "/chat/completions": "openai.chat",
    "/responses": "openai.responses",
}
"""OpenAI endpoints by the end of their path (the base URL before it is the agent's)."""


@attrs.define
class Exchange:
    """One request and its response as they passed: filled in while it is in flight,
    written to the capture once it ends."""

    method: str
    path: str
    """The path and query as the agent sent them."""
    endpoint: str
    request_headers: list[tuple[str, str]]
    request_body: bytes
    start: float = attrs.field(factory=time.time)
    status: int | None = None
    response_headers: list[tuple[str, str]] = attrs.field(factory=list)
    response_body: bytearray = attrs.field(factory=bytearray)
    first_byte: float | None = None
    end: float | None = None
    error: str | None = None

    def header(self, name: str) -> str | None:
        """The first request header of this (lower-case) name, if the agent sent it."""
        return next((value for key, value in self.request_headers if key.lower() == name), None)

    def response_header(self, name: str) -> str | None:
        """The first response header of this (lower-case) name, if there was one."""
        return next((value for key, value in self.response_headers if key.lower() == name), None)


def endpoint_of(method: str, path: str, *, anthropic: bool) -> str:
    """The capture's name for the endpoint a request went to: ``anthropic`` says it went
    to the Anthropic upstream."""
    route = urlsplit(path).path.rstrip("/")
    if method != "POST":
        return "other"
    if anthropic:
        return "anthropic.messages" if route.endswith("/v1/messages") else "other"
    return next((name for end, name in ENDPOINTS.items() if route.endswith(end)), "other")


def allowed_headers(headers: Iterable[tuple[str, str]]) -> dict[str, str]:
    """The headers on the allow-list, names in lower case, repeated ones joined."""
    kept: dict[str, str] = {}
    for name, value in headers:
        key = name.lower()
        if key in ALLOWED_HEADERS or key.startswith(ALLOWED_HEADER_PREFIXES):
            kept[key] = f"{kept[key]}, {value}" if key in kept else value
    return kept


def written_path(path: str) -> str:
    """The path and query to write: a query value kept only for a parameter on the
    allow-list, a bare token (``?sk-...``, no ``=``) only when it is on it, and never a
    fragment."""
    route, _, query = path.partition("#")[0].partition("?")
    if not query:
        return route
    fields = [_written_field(field) for field in query.split("&") if field]
    return f"{route}?{'&'.join(fields)}"


def _written_field(field: str) -> str:
    raw_name, equals, raw_value = field.partition("=")
    name = unquote_plus(raw_name)
    allowed = name in ALLOWED_QUERY
    if not equals:
        return quote(name, safe="[]") if allowed else "REDACTED"
    value = quote(unquote_plus(raw_value)) if allowed else "REDACTED"
    return f"{quote(name, safe='[]')}={value}"


def json_body(body: bytes | bytearray) -> Any:
    """A body read as JSON; None when it is empty or not JSON."""
    try:
        return orjson.loads(body) if body else None
    except orjson.JSONDecodeError:
        return None


def pseudonymous(request: Any) -> Any:
    """``request`` with each field that names a user or account (``IDENTIFYING_FIELDS``,
    ``metadata.user_id``) replaced by ``sha256:`` and the first 16 hex digits of its digest:
    the same value gives the same digest, so threads keyed by it stay together, and the
    capture says nothing of who sent it."""
    if not isinstance(request, dict):
        return request
    masked = dict(request)
    for name in IDENTIFYING_FIELDS:
        if isinstance(masked.get(name), str):
            masked[name] = _digest(masked[name])
    metadata = masked.get("metadata")
    if isinstance(metadata, dict) and isinstance(metadata.get("user_id"), str):
        masked["metadata"] = {**metadata, "user_id": _digest(metadata["user_id"])}
    return masked


def _digest(value: str) -> str:
    return "sha256:" + hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def is_stream(exchange: Exchange) -> bool:
    """Whether the response is (or, with none, the request asked for) a stream."""
    content_type = exchange.response_header("content-type")
    if content_type is not None:
        return content_type.split(";")[0].strip().lower() == "text/event-stream"
    request = json_body(exchange.request_body)
    return isinstance(request, dict) and request.get("stream") is True


def capture_line(exchange: Exchange) -> JsonObject:
    """The exchange as the capture file writes it (docs/reference/capture-format.md),
    but for its number and thread, which the writer gives it (0 and ``""`` here)."""
    known = exchange.endpoint != "other"
    stream = is_stream(exchange)
    line: JsonObject = {
        "exchange": 0,
        "endpoint": exchange.endpoint,
        "method": exchange.method,
        "path": written_path(exchange.path),
        "thread": "",
        "status": exchange.status,
        "error": exchange.error,
        "stream": stream,
        "timings": {
            "start": exchange.start,
            "first_byte": exchange.first_byte,
            "end": exchange.end,
        },
        "request_headers": allowed_headers(exchange.request_headers),
        "response_headers": allowed_headers(exchange.response_headers),
        "request": pseudonymous(json_body(exchange.request_body)) if known else None,
        "response": None,
    }
    if not known or not exchange.response_body:
        return line
    body = bytes(exchange.response_body)
    response = reassembled(exchange.endpoint, body) if stream else json_body(body)
    if response is None:
        line["raw_response"] = body[:RAW_LIMIT].decode("utf-8", "replace")
    line["response"] = response
    return line
