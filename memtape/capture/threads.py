"""Which conversation an exchange belongs to: its thread key.

A capture holds the requests of every conversation an agent had, in the
order they were sent: the main conversation, its subagents', a title
generator's. The key groups them, by the first rule that applies:

1. a Responses request that names a ``previous_response_id`` this capture
   has seen belongs to that response's thread;
2. a request carrying a session key (Anthropic's ``metadata.user_id``, a
   ``session_id`` field, an ``x-session-id`` or ``session_id`` header) is
   ``s-`` and the first 12 hex digits of the SHA-256 of the key, a NUL, and
   the system prompt: a compaction that rewrites the messages keeps the
   thread (the system prompt stays), and a subagent, whose system prompt is
   its own, gets its own;
3. else ``f-`` and the first 12 hex digits of the SHA-256 of the system
   prompt, a NUL, and the first user message's text.

The system prompt is Anthropic's ``system``, a Chat request's first
``system`` or ``developer`` message, a Responses request's ``instructions``
(else its first ``system`` or ``developer`` item); texts of parts are joined
one a line. An exchange with another endpoint, or with no request body, is
in the thread ``OTHER``.

``thread_key`` is pure; ``Threads`` keeps what was seen (each response's
id and its thread) for a recorder that keys exchanges as they complete.
"""

import hashlib
from collections.abc import Mapping
from typing import Any

ANTHROPIC = "anthropic.messages"
CHAT = "openai.chat"
RESPONSES = "openai.responses"
ENDPOINTS = (CHAT, RESPONSES, ANTHROPIC)
"""The endpoints whose conversations are grouped (every other one is ``other``)."""

OTHER = "other"
"""The thread of an exchange that is no conversation's (another endpoint, no JSON body)."""

SESSION_HEADERS = ("x-session-id", "session_id")
"""The request headers that carry a session key (compared without case)."""

DIGITS = 12
"""How many hex digits of the hash a key keeps."""


def thread_key(
    endpoint: str,
    request: Mapping[str, Any] | None,
    *,
    headers: Mapping[str, str] | None = None,
    seen: Mapping[str, str] | None = None,
) -> str:
    """The thread of an exchange whose ``request`` went to ``endpoint`` with ``headers``;
    ``seen`` maps the id of each response seen before to its thread."""
    if endpoint not in ENDPOINTS or not isinstance(request, Mapping):
        return OTHER
    system = system_text(endpoint, request)
    previous = request.get("previous_response_id")
    if endpoint == RESPONSES and isinstance(previous, str) and seen and previous in seen:
        return seen[previous]
    session = session_key(request, headers or {})
    if session is not None:
        return "s-" + _digest(session, system)
    return "f-" + _digest(system, first_user_text(endpoint, request))


class Threads:
    """The thread keys of one capture's exchanges, in the order they complete."""

    def __init__(self) -> None:
        self.seen: dict[str, str] = {}
        """Each response id seen, and its thread."""

    def key(
        self,
        endpoint: str,
        request: Mapping[str, Any] | None,
        response: Mapping[str, Any] | None,
        headers: Mapping[str, str] | None = None,
    ) -> str:
        """The exchange's thread (``thread_key``); its response's id is remembered."""
        key = thread_key(endpoint, request, headers=headers, seen=self.seen)
        identity = response_id(response)
        if identity is not None and key != OTHER:
            self.seen[identity] = key
        return key


def response_id(response: Mapping[str, Any] | None) -> str | None:
    """A response's ``id`` (what a later ``previous_response_id`` names), or None."""
    identity = response.get("id") if isinstance(response, Mapping) else None
    return identity if isinstance(identity, str) and identity else None


def session_key(request: Mapping[str, Any], headers: Mapping[str, str]) -> str | None:
    """The session key the agent sent: ``metadata.user_id``, a ``session_id`` field, or a
    session header; None when it sent none."""
    metadata = request.get("metadata")
    if isinstance(metadata, Mapping) and isinstance(metadata.get("user_id"), str):
        return str(metadata["user_id"])
    if isinstance(request.get("session_id"), str):
        return str(request["session_id"])
    for name, value in headers.items():
        if name.lower() in SESSION_HEADERS and isinstance(value, str) and value:
            return value
    return None


def system_text(endpoint: str, request: Mapping[str, Any]) -> str:
    """The system prompt of a request, its texts one a line (``""`` when it has none)."""
    if endpoint == ANTHROPIC:
        return content_text(request.get("system"))
    if endpoint == RESPONSES and isinstance(request.get("instructions"), str):
        return str(request["instructions"])
    for message in _messages(endpoint, request):
        if message.get("role") in ("system", "developer"):
            return content_text(message.get("content"))
    return ""


def first_user_text(endpoint: str, request: Mapping[str, Any]) -> str:
    """The text of a request's first user message (``""`` when it has none)."""
    if endpoint == RESPONSES and isinstance(request.get("input"), str):
        return str(request["input"])
    for message in _messages(endpoint, request):
        if message.get("role") == "user":
            return content_text(message.get("content"))
    return ""


def _messages(endpoint: str, request: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    given = request.get("input" if endpoint == RESPONSES else "messages")
    if not isinstance(given, list):
        return []
    return [message for message in given if isinstance(message, Mapping)]


def content_text(content: Any) -> str:
    """A content's texts, one a line: a string, or the ``text`` of each part that has one
    (a tool's result is no text of the conversation's start)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(
        part["text"]
        for part in content
        if isinstance(part, Mapping) and isinstance(part.get("text"), str)
    )


def _digest(first: str, second: str) -> str:
    joined = f"{first}\x00{second}".encode("utf-8", "surrogatepass")
    return hashlib.sha256(joined).hexdigest()[:DIGITS]
