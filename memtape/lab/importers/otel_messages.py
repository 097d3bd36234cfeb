"""The messages an LLM-call span records, in either convention, as one shape.

OpenTelemetry's GenAI conventions record a call's context as
``gen_ai.input.messages`` (the chat history sent, in order),
``gen_ai.output.messages`` (the model's reply: one message per choice) and
``gen_ai.system_instructions`` (instructions given apart from the history),
each structured or a JSON string. A message is ``{"role", "parts": [...],
"name"?}``; its parts are ``text`` (``content``), ``reasoning``
(``content``), ``tool_call`` (``id``, ``name``, ``arguments``),
``tool_call_response`` (``id``, ``response``), ``blob``, ``file`` and
``uri`` (media, by ``mime_type`` or ``modality``), ``server_tool_call`` and
``server_tool_call_response`` (a provider's own tools), or any other
``type`` (a generic part). Several SDKs' samples write a message chat-style
instead, ``{"role", "content": "TEXT"}``: its string content is one text
part (a ``tool_call_response`` answering its ``tool_call_id`` when it has one),
and an assistant's OpenAI-style ``tool_calls`` (``id``, ``function.name``,
``function.arguments``) its ``tool_call`` parts.

OpenInference flattens the same into attributes:
``llm.input_messages.N.message.role``, ``...message.content`` or
``...message.contents.M.message_content.type``/``.text``/``.image.image.url``,
``...message.tool_calls.M.tool_call.id``/``.function.name``/``.function.arguments``,
and a tool message's ``...message.tool_call_id``; ``llm.output_messages.N...``
likewise. Those are read into the GenAI shape: a tool message's content is a
``tool_call_response`` part answering its ``tool_call_id``.

A ``Message`` is a role, its parts and where it is; its ``key`` is what
two messages are compared by (role and parts, arguments given as a JSON
string read as the value they encode), so that a span's input is matched
against the context the call before it sent.
"""

import json
import re
from collections.abc import Mapping
from typing import Any

import attrs

from memtape.core.errors import BadInput


@attrs.frozen
class Message:
    """One message of a span's context or reply: its role, its GenAI-shaped parts, its place."""

    role: str
    parts: tuple[dict[str, Any], ...]
    where: str

    @property
    def key(self) -> str:
        """What the message is compared by: its role and its parts."""
        return json.dumps([self.role, [_comparable(part) for part in self.parts]], sort_keys=True)


INPUT = "gen_ai.input.messages"
OUTPUT = "gen_ai.output.messages"
INSTRUCTIONS = "gen_ai.system_instructions"
OI_INPUT = "llm.input_messages"
OI_OUTPUT = "llm.output_messages"


def recorded(attributes: Mapping[str, Any]) -> bool:
    """Whether a span records its messages in either convention."""
    return any(key in attributes for key in (INPUT, OUTPUT)) or any(
        key.startswith((f"{OI_INPUT}.", f"{OI_OUTPUT}.")) for key in attributes
    )


def span_messages(
    attributes: Mapping[str, Any], where: str
) -> tuple[Message | None, list[Message], list[Message]]:
    """A span's system instructions (None for none), its input messages and its output
    messages (one per choice)."""
    if INPUT in attributes or OUTPUT in attributes or INSTRUCTIONS in attributes:
        instructions = None
        if attributes.get(INSTRUCTIONS) is not None:
            place = f"{where}: {INSTRUCTIONS}"
            parts = _structured(attributes[INSTRUCTIONS], place)
            if not isinstance(parts, list):
                raise BadInput(f"{place}: system instructions are a list of parts")
            instructions = Message("system", tuple(_parts(parts, place)), place)
        return (
            instructions,
            _genai(attributes.get(INPUT), f"{where}: {INPUT}"),
            _genai(attributes.get(OUTPUT), f"{where}: {OUTPUT}"),
        )
    return (
        None,
        _openinference(attributes, OI_INPUT, where),
        _openinference(attributes, OI_OUTPUT, where),
    )


def _structured(given: Any, where: str) -> Any:
    """An attribute recorded structured, or as the JSON string the convention allows."""
    if isinstance(given, str):
        try:
            return json.loads(given)
        except json.JSONDecodeError as error:
            raise BadInput(f"{where}: not JSON: {error}") from None
    return given


def _genai(given: Any, where: str) -> list[Message]:
    if given is None:
        return []
    messages = _structured(given, where)
    if not isinstance(messages, list):
        raise BadInput(f"{where}: messages are a list")
    found = []
    for index, data in enumerate(messages):
        place = f"{where}[{index}]"
        if not isinstance(data, dict) or not isinstance(data.get("role"), str):
            raise BadInput(f"{place}: a message is an object with a role and parts")
        parts = data.get("parts")
        if parts is None:
            parts = _chat_parts(data, place)
        if not isinstance(parts, list):
            raise BadInput(
                f"{place}: a message's parts must be a list (or its content a string, or its "
                "tool_calls a list)"
            )
        found.append(Message(data["role"], tuple(_parts(parts, place)), place))
    return found


def _chat_parts(data: Mapping[str, Any], where: str) -> list[dict[str, Any]] | None:
    """A chat-style message's parts: its string content, then its OpenAI-style
    ``tool_calls``; None when it has neither."""
    content, calls = data.get("content"), data.get("tool_calls")
    if not isinstance(content, str | None) or (content is None and not isinstance(calls, list)):
        return None
    if calls is not None and not isinstance(calls, list):
        return None
    parts = [_chat_content(data)] if isinstance(content, str) and (content or not calls) else []
    for number, call in enumerate(calls or []):
        function = call.get("function") if isinstance(call, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        if not isinstance(function, dict) or not isinstance(name, str) or not name:
            raise BadInput(f"{where}: tool_calls[{number}] needs a function with a name")
        arguments = function.get("arguments")
        parts.append(
            {"type": "tool_call", "id": call.get("id"), "name": name, "arguments": arguments}
        )
    return parts


def _chat_content(data: Mapping[str, Any]) -> dict[str, Any]:
    """A chat-style message's string content as its one part: the result of the call it
    names by ``tool_call_id``, else text."""
    answer = data.get("tool_call_id")
    if isinstance(answer, str) and answer:
        return {"type": "tool_call_response", "id": answer, "response": data["content"]}
    return {"type": "text", "content": data["content"]}


def _parts(parts: list[Any], where: str) -> list[dict[str, Any]]:
    for number, part in enumerate(parts, start=1):
        if not isinstance(part, dict) or not isinstance(part.get("type"), str):
            raise BadInput(f"{where}: part {number} is not an object with a type")
    return [dict(part) for part in parts]


_FLAT = re.compile(r"(\d+)\.(.+)")


def indexed(attributes: Mapping[str, Any], prefix: str) -> dict[int, dict[str, Any]]:
    """The attributes under ``PREFIX.N.`` by N, each with the rest of its key."""
    found: dict[int, dict[str, Any]] = {}
    for key, given in attributes.items():
        if key.startswith(f"{prefix}."):
            match = _FLAT.fullmatch(key[len(prefix) + 1 :])
            if match is not None:
                found.setdefault(int(match.group(1)), {})[match.group(2)] = given
    return dict(sorted(found.items()))


def _openinference(attributes: Mapping[str, Any], prefix: str, where: str) -> list[Message]:
    found = []
    for index, fields in indexed(attributes, prefix).items():
        place = f"{where}: {prefix}.{index}"
        role = fields.get("message.role")
        if not isinstance(role, str):
            raise BadInput(f"{place}: a message needs message.role")
        parts: list[dict[str, Any]] = []
        ordered = False
        for content in indexed(fields, "message.contents").values():
            kind = content.get("message_content.type")
            text = content.get("message_content.text")
            if kind == "text" and isinstance(text, str):
                parts.append({"type": "text", "content": text})
            elif kind == "reasoning":
                reasoning = text if isinstance(text, str) else ""
                parts.append({"type": "reasoning", "content": reasoning})
            elif kind == "image":
                url = content.get("message_content.image.image.url")
                parts.append({"type": "uri", "modality": "image", "uri": url})
            elif kind == "tool_use":
                parts.append(_oi_call(content, place))
                ordered = True
            else:
                raise BadInput(f"{place}: a message content of type {kind!r} does not import")
        text = fields.get("message.content")
        if isinstance(text, str) and not parts:
            answer = fields.get("message.tool_call_id")
            if isinstance(answer, str) and answer:
                parts.append({"type": "tool_call_response", "id": answer, "response": text})
            else:
                parts.append({"type": "text", "content": text})
        if not ordered:
            # The ordered contents, when they hold the calls, say them already.
            parts.extend(
                _oi_call(call, place) for call in indexed(fields, "message.tool_calls").values()
            )
        found.append(Message(role, tuple(parts), place))
    return found


def _oi_call(fields: Mapping[str, Any], where: str) -> dict[str, Any]:
    name = fields.get("tool_call.function.name")
    if not isinstance(name, str) or not name:
        raise BadInput(f"{where}: a tool call needs tool_call.function.name")
    return {
        "type": "tool_call",
        "id": fields.get("tool_call.id"),
        "name": name,
        "arguments": fields.get("tool_call.function.arguments"),
    }


def _comparable(part: Mapping[str, Any]) -> dict[str, Any]:
    """A part as it is compared: arguments given as a JSON string read as their value."""
    arguments = part.get("arguments")
    if isinstance(arguments, str):
        try:
            return {**part, "arguments": json.loads(arguments)}
        except json.JSONDecodeError:
            return dict(part)
    return dict(part)
