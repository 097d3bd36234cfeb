"""Thread keys: which conversation a captured exchange belongs to.

A pure function of the request (its body and headers), its endpoint, and the
responses seen before (``known``: a Responses ``id`` to the thread it was in). The
recorder writes each exchange's key; the importer groups by the same rules. In order:

1. a Responses request's ``previous_response_id`` names a response already seen:
   that response's thread;
2. the agent sends a session key (Anthropic ``metadata.user_id``, an ``x-session-id``
   or ``session_id`` header, a ``session_id`` body field): ``"s-"`` and a hash of it
   with the system prompt, so a compaction keeps the thread and a subagent (its own
   system prompt) gets its own;
3. otherwise ``"f-"`` and a hash of the system prompt and the first user message.
"""

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

SESSION_HEADERS = ("x-session-id", "session_id")
"""The request headers (lower case) whose value is a session key."""


def thread_key(
    endpoint: str,
    request: Mapping[str, Any] | None,
    headers: Mapping[str, str],
    known: Mapping[str, str],
) -> str:
    """The thread of an exchange: ``request`` its JSON body (None when it had none),
    ``headers`` its request headers with lower-case names, ``known`` each Responses id
    seen so far to its thread."""
    body: Mapping[str, Any] = request if isinstance(request, Mapping) else {}
    previous = body.get("previous_response_id")
    if endpoint == "openai.responses" and isinstance(previous, str) and previous in known:
        return known[previous]
    system = system_text(endpoint, body)
    session = session_key(body, headers)
    if session is not None:
        return "s-" + _digest(session + "\x00" + system)
    return "f-" + _digest(system + "\x00" + first_user_text(endpoint, body))


def session_key(body: Mapping[str, Any], headers: Mapping[str, str]) -> str | None:
    """The session key the agent sent, if any: Anthropic's ``metadata.user_id``, a
    session header, or a ``session_id`` field of the body."""
    metadata = body.get("metadata")
    if isinstance(metadata, Mapping) and isinstance(metadata.get("user_id"), str):
        user_id: str = metadata["user_id"]
        return user_id
    for name in SESSION_HEADERS:
        if headers.get(name):
            return headers[name]
    field = body.get("session_id")
    return field if isinstance(field, str) and field else None


def system_text(endpoint: str, body: Mapping[str, Any]) -> str:
    """The system prompt's text: Anthropic's ``system``, a Responses request's
    ``instructions`` (else its first system or developer item), a chat's first
    ``system`` or ``developer`` message; ``""`` when there is none."""
    if endpoint == "anthropic.messages":
        return content_text(body.get("system"))
    if endpoint == "openai.responses" and isinstance(body.get("instructions"), str):
        instructions: str = body["instructions"]
        return instructions
    for message in _messages(endpoint, body):
        if message.get("role") in ("system", "developer"):
            return content_text(message.get("content"))
    return ""


def first_user_text(endpoint: str, body: Mapping[str, Any]) -> str:
    """The text of the request's first user message (``""`` when there is none); a
    Responses request whose ``input`` is a string is that message."""
    if endpoint == "openai.responses" and isinstance(body.get("input"), str):
        text: str = body["input"]
        return text
    for message in _messages(endpoint, body):
        if message.get("role") == "user":
            return content_text(message.get("content"))
    return ""


def content_text(content: object) -> str:
    """A message content's text: the string itself, or its text parts (``text``,
    ``input_text``; a tool result's is not the user's) joined by newlines."""
    if isinstance(content, str):
        return content
    if not isinstance(content, Sequence):
        return ""
    texts = [
        part["text"]
        for part in content
        if isinstance(part, Mapping)
        and part.get("type", "text") in ("text", "input_text")
        and isinstance(part.get("text"), str)
    ]
    return "\n".join(texts)


def _messages(endpoint: str, body: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    field = "input" if endpoint == "openai.responses" else "messages"
    items = body.get(field)
    if not isinstance(items, Sequence) or isinstance(items, str):
        return []
    return [item for item in items if isinstance(item, Mapping)]


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
