"""The messages of an LLM-call span as OpenLLMetry (Traceloop) flattens them.

Before the GenAI conventions settled on ``gen_ai.input.messages``,
OpenLLMetry's instrumentations wrote a call's messages one attribute a
field, and many traces still carry them:

- ``gen_ai.prompt.N.role`` and ``gen_ai.prompt.N.content``: the context
  sent, in order (the system prompt first, when given apart);
  ``gen_ai.prompt.N.tool_call_id`` on a tool message (the result of that
  call); ``gen_ai.prompt.N.tool_calls.M.id`` / ``.name`` / ``.arguments`` on
  an assistant message that made calls;
- ``gen_ai.completion.N.*`` likewise: the reply, one per choice, with its
  ``finish_reason``. A completion whose role is ``thinking`` (Anthropic's
  instrumentation writes the model's thinking so, before its answer) is the
  reasoning of the completion after it, not a choice of its own;
- a text completion (``llm.request.type`` ``completion``) writes its prompt
  as ``gen_ai.prompt.0.user`` and its completions without a role: that is a
  user message, and the completions the assistant's;
- ``llm.request.type`` (``chat``, ``completion``) marks the span an LLM
  call; ``llm.request.functions.N.*`` are the tools offered (not messages:
  left as they are).

A content is the message's text, or, when the message's content was a list,
that list as a JSON string: OpenAI's parts (``text``, ``image_url``) or
Anthropic's blocks (``text``, ``image``, ``thinking``, ``tool_use``,
``tool_result``). Those are read into GenAI parts: a ``tool_use`` block is a
``tool_call`` (unless the message's ``tool_calls`` attributes say the calls
already), a ``tool_result`` block a ``tool_call_response`` answering its
``tool_use_id``. A string that is no such list is text.
"""

import json
from collections.abc import Mapping
from typing import Any

from memtape.core.errors import BadInput
from memtape.lab.importers.otel_messages import Message, indexed

PROMPT = "gen_ai.prompt"
COMPLETION = "gen_ai.completion"
REQUEST_TYPE = "llm.request.type"
REQUEST_TYPES = ("chat", "completion")
"""The ``llm.request.type`` values of a call to a model."""

THINKING = "thinking"
"""The role of a completion that is the reasoning of the one after it."""


def is_call(attributes: Mapping[str, Any]) -> bool:
    """Whether a span is an LLM call as OpenLLMetry marks one (its request type, or its
    flattened messages)."""
    return attributes.get(REQUEST_TYPE) in REQUEST_TYPES or recorded(attributes)


def recorded(attributes: Mapping[str, Any]) -> bool:
    """Whether a span records its messages as OpenLLMetry flattens them."""
    return any(key.startswith((f"{PROMPT}.", f"{COMPLETION}.")) for key in attributes)


def span_messages(attributes: Mapping[str, Any], where: str) -> tuple[list[Message], list[Message]]:
    """A span's input messages and its output messages (one per choice)."""
    inputs = _messages(attributes, PROMPT, where)
    outputs: list[Message] = []
    thought: list[dict[str, Any]] = []
    for message in _messages(attributes, COMPLETION, where):
        if message.role == THINKING:
            thought.extend(_as_reasoning(part) for part in message.parts)
            continue
        outputs.append(Message(message.role, (*thought, *message.parts), message.where))
        thought = []
    if thought:
        outputs.append(Message("assistant", tuple(thought), f"{where}: {COMPLETION}"))
    return inputs, outputs


def _messages(attributes: Mapping[str, Any], prefix: str, where: str) -> list[Message]:
    found = []
    for index, given in indexed(attributes, prefix).items():
        place = f"{where}: {prefix}.{index}"
        fields, role = given, given.get("role")
        if role is None and isinstance(given.get("user"), str):
            role, fields = "user", {**given, "content": given["user"]}
        elif role is None and prefix == COMPLETION and "content" in fields:
            role = "assistant"
        if not isinstance(role, str) or not role:
            raise BadInput(f"{place}.role: a message needs a role string, got {role!r}")
        calls = [
            _call(call, f"{place}.tool_calls.{number}")
            for number, call in indexed(fields, "tool_calls").items()
        ]
        parts = _content(fields, place, calls_said=bool(calls))
        found.append(Message(role, (*parts, *calls), place))
    return found


def _content(fields: Mapping[str, Any], place: str, *, calls_said: bool) -> list[dict[str, Any]]:
    """The parts of a message's content (none when it has none)."""
    content = fields.get("content")
    if content is None:
        return []
    if not isinstance(content, str):
        raise BadInput(f"{place}.content: a content is a string, got {content!r}")
    answer = fields.get("tool_call_id")
    if answer is not None and not isinstance(answer, str):
        raise BadInput(f"{place}.tool_call_id: a tool call id is a string, got {answer!r}")
    if answer:
        return [{"type": "tool_call_response", "id": answer, "response": content}]
    blocks = _blocks(content)
    if blocks is None:
        return [{"type": "text", "content": content}]
    parts = []
    for number, block in enumerate(blocks):
        if block["type"] == "tool_use" and calls_said:
            continue
        parts.append(_part(block, f"{place}.content[{number}]"))
    return parts


def _blocks(content: str) -> list[dict[str, Any]] | None:
    """A content that is a list of typed parts or blocks written as JSON, else None."""
    if not content.startswith("["):
        return None
    try:
        given = json.loads(content)
    except json.JSONDecodeError:
        return None
    if not isinstance(given, list) or not given:
        return None
    if not all(isinstance(block, dict) and isinstance(block.get("type"), str) for block in given):
        return None
    return given


def _part(block: Mapping[str, Any], where: str) -> dict[str, Any]:
    """An OpenAI content part or an Anthropic block as a GenAI part."""
    kind = block["type"]
    if kind == "text":
        return {"type": "text", "content": _string(block, "text", where)}
    if kind == THINKING:
        return {"type": "reasoning", "content": _string(block, THINKING, where)}
    if kind == "image_url":
        url = block.get("image_url")
        return {"type": "uri", "modality": "image", "uri": _url(url)}
    if kind == "image":
        source = block.get("source")
        return {"type": "uri", "modality": "image", "uri": _url(source)}
    if kind == "tool_use":
        name = block.get("name")
        if not isinstance(name, str) or not name:
            raise BadInput(f"{where}: a tool_use block needs a name")
        return {
            "type": "tool_call",
            "id": block.get("id"),
            "name": name,
            "arguments": block.get("input"),
        }
    if kind == "tool_result":
        answer = block.get("tool_use_id")
        if not isinstance(answer, str) or not answer:
            raise BadInput(f"{where}: a tool_result block needs its tool_use_id")
        return {"type": "tool_call_response", "id": answer, "response": block.get("content")}
    content = block.get(kind) if isinstance(block.get(kind), str) else block.get("text")
    return {"type": kind, "content": content} if isinstance(content, str) else {"type": kind}


def _string(block: Mapping[str, Any], key: str, where: str) -> str:
    given = block.get(key)
    if not isinstance(given, str):
        raise BadInput(f"{where}: a {block['type']} block needs a {key} string")
    return given


def _url(given: Any) -> str | None:
    """An image's url, or its media type when it was sent inline."""
    if isinstance(given, Mapping):
        found = given.get("url") or given.get("media_type")
        return found if isinstance(found, str) else None
    return given if isinstance(given, str) else None


def _call(fields: Mapping[str, Any], where: str) -> dict[str, Any]:
    name = fields.get("name")
    if not isinstance(name, str) or not name:
        raise BadInput(f"{where}.name: a tool call needs a name string, got {name!r}")
    identity = fields.get("id")
    if identity is not None and not isinstance(identity, str):
        raise BadInput(f"{where}.id: a tool call id is a string, got {identity!r}")
    return {"type": "tool_call", "id": identity, "name": name, "arguments": fields.get("arguments")}


def _as_reasoning(part: Mapping[str, Any]) -> dict[str, Any]:
    """A thinking completion's part as reasoning."""
    if part["type"] == "text":
        return {"type": "reasoning", "content": part["content"]}
    return dict(part)
