"""LangChain messages as turns.

The file holds LangChain message dicts: ``messages_to_dict`` output
(``{"type": "human", "data": {"content": ..., ...}}``) or ``model_dump()``
ones (``{"type": "human", "content": ..., ...}``), as a JSON array, JSONL,
or a graph state ``{"messages": [...]}``. Each message is one turn:

- ``type``: ``human`` is ``user``, ``ai`` is ``assistant``, ``system`` is
  ``system``, ``tool`` and ``function`` are ``tool``; a ``chat`` message's
  ``role`` maps as OpenAI's does; the ``...MessageChunk`` types as their
  messages.
- ``content``: a string, or a list of strings and blocks: ``text``
  verbatim, ``thinking`` and ``reasoning`` as ``[thinking] TEXT`` and
  ``[reasoning] TEXT``, ``image_url``, ``image``, ``file`` and ``audio`` as
  notes of what they were, one part a line.
- an ``ai`` message's ``tool_calls`` (``id``, ``name``, ``args``) are its
  calls, each ``call NAME(ARGS)`` after the content; a provider's own
  ``tool_use`` or ``tool_call`` block in the content for the same id is the
  same call and shows once. ``invalid_tool_calls`` (arguments that did not
  parse) are calls too, headed ``[invalid]``. A message serialized before
  ``tool_calls`` existed keeps them in ``additional_kwargs`` (OpenAI's form),
  read when ``tool_calls`` is empty.
- a ``tool`` message answers its ``tool_call_id``; ``status: "error"``
  heads its text ``[error]``. ``name`` heads any message's text as ``NAME: ``.

Other fields (``id``, ``response_metadata``, ``usage_metadata``,
``artifact``, the rest of ``additional_kwargs``) are metadata and do not
import; a block of another type, or a ``remove`` message, is refused, named.
"""

from collections.abc import Mapping
from typing import Any

from memtape.core.errors import BadInput
from memtape.lab.importers import openai_chat
from memtape.lab.importers.ledger import every_record
from memtape.lab.importers.records import Source
from memtape.lab.importers.texts import call_text, image_note, json_text, marked, named, noted
from memtape.lab.importers.transcript import Transcript, Turns

FORMAT = "langchain"
"""The name ``--format`` gives this format."""

TYPES = {
    "human": "user",
    "ai": "assistant",
    "system": "system",
    "tool": "tool",
    "function": "tool",
    "chat": "chat",
    "HumanMessageChunk": "user",
    "AIMessageChunk": "assistant",
    "SystemMessageChunk": "system",
    "ToolMessageChunk": "tool",
    "FunctionMessageChunk": "tool",
    "ChatMessageChunk": "chat",
}
"""Each LangChain message type and the turn role it becomes (``chat``: by its ``role``)."""

CALL_BLOCKS = {"tool_use": "input", "tool_call": "args"}
"""The content blocks that are tool calls, and the field holding each one's arguments."""

BLOCKS = (
    "text",
    "thinking",
    "redacted_thinking",
    "reasoning",
    "image_url",
    "image",
    "file",
    "audio",
)
"""The other content block types that import."""


def read(source: Source) -> Transcript:
    """The turns of a list of LangChain messages, one per message."""
    turns = Turns(source.path)
    for record in source.records:
        kind, fields = fields_of(record.data, record.where)
        message(kind, fields, record.where, turns)
    return turns.transcript(FORMAT, tally=every_record(source, ids))


def ids(data: Any) -> tuple[list[str], list[str]]:
    """A message's call ids (distinct, from ``tool_calls``, ``invalid_tool_calls`` and
    content blocks; else from ``additional_kwargs``) and the id a tool message answers,
    read from the raw record (the ledger's count)."""
    inner = data.get("data")
    fields: Mapping[str, Any] = inner if isinstance(inner, dict) else data
    found: list[Any] = []
    for field in ("tool_calls", "invalid_tool_calls"):
        found.extend(call.get("id") for call in fields.get(field) or () if isinstance(call, dict))
    content = fields.get("content")
    if isinstance(content, list):
        found.extend(
            block.get("id")
            for block in content
            if isinstance(block, dict) and block.get("type") in CALL_BLOCKS
        )
    extra = fields.get("additional_kwargs")
    if not any(isinstance(call, str) for call in found) and isinstance(extra, Mapping):
        found.extend(
            call.get("id") for call in extra.get("tool_calls") or () if isinstance(call, dict)
        )
    calls = list(dict.fromkeys(call for call in found if isinstance(call, str) and call))
    tool = data.get("type") == "tool" or (
        data.get("type") == "chat" and fields.get("role") in ("tool", "function")
    )
    return calls, [str(fields.get("tool_call_id"))] if tool else []


def fields_of(data: Any, where: str) -> tuple[str, Mapping[str, Any]]:
    """A record's message type and its fields, in either serialized form."""
    if not isinstance(data, dict):
        raise BadInput(f"{where}: a message is an object with a type")
    kind = data.get("type")
    inner = data.get("data")
    fields: dict[str, Any] = inner if isinstance(inner, dict) else data
    if kind == "remove":
        raise BadInput(f"{where}: a remove message is an instruction to a graph, not a message")
    if kind not in TYPES:
        raise BadInput(f"{where}: type must be one of {', '.join(TYPES)}, got {kind!r}")
    if "content" not in fields:
        raise BadInput(f"{where}: a {kind} message needs content (a string or a list)")
    return str(kind), fields


def message(kind: str, fields: Mapping[str, Any], where: str, turns: Turns) -> None:
    """Add the turn of one message."""
    role = TYPES[kind]
    if role == "chat":
        given = fields.get("role")
        mapped = openai_chat.ROLES.get(given) if isinstance(given, str) else None
        if mapped is None:
            known = ", ".join(openai_chat.ROLES)
            raise BadInput(f"{where}: a chat message's role is one of {known}, got {given!r}")
        role = mapped
    calls, call_parts = _calls(fields, where) if role == "assistant" else ([], [])
    parts: list[str] = []
    content = fields["content"]
    if isinstance(content, str):
        parts.append(content)
    elif isinstance(content, list):
        for number, block in enumerate(content, start=1):
            text, call = _block(block, f"{where}: content block {number}", calls)
            if call is not None:
                calls.append(call)
            parts.append(text)
    else:
        raise BadInput(f"{where}: content must be a string or a list, got {content!r}")
    parts.extend(call_parts)
    answers: tuple[str, ...] = ()
    if role == "tool":
        answer = fields.get("tool_call_id")
        if not isinstance(answer, str) or not answer:
            raise BadInput(f"{where}: a tool message needs the tool_call_id it answers")
        answers = (answer,)
        if fields.get("status") == "error":
            parts = [marked("error", "\n".join(part for part in parts if part))]
    turns.add(
        role, parts, where, calls=calls, answers=answers, head=named(fields.get("name"), where)
    )


def _calls(fields: Mapping[str, Any], where: str) -> tuple[list[str], list[str]]:
    """An ``ai`` message's call ids and their texts: ``tool_calls``, then
    ``invalid_tool_calls`` (or the OpenAI form in ``additional_kwargs``)."""
    ids: list[str] = []
    texts: list[str] = []
    for field, mark in (("tool_calls", None), ("invalid_tool_calls", "invalid")):
        given = fields.get(field) or []
        if not isinstance(given, list):
            raise BadInput(f"{where}: {field} must be a list, got {given!r}")
        for number, call in enumerate(given, start=1):
            place = f"{where}: {field} {number}"
            if not isinstance(call, dict):
                raise BadInput(f"{place}: a tool call is an object with id, name and args")
            call_id = call.get("id")
            text = call_text(call.get("name"), call.get("args"), place)
            if mark is not None:
                error = call.get("error")
                text = marked(mark, f"{text} {json_text(error)}".rstrip())
            if call_id is None and mark is not None:
                texts.append(text)
                continue
            if not isinstance(call_id, str) or not call_id:
                raise BadInput(f"{place}: a tool call needs an id, got {call_id!r}")
            ids.append(call_id)
            texts.append(text)
    extra = fields.get("additional_kwargs")
    if not ids and isinstance(extra, Mapping) and isinstance(extra.get("tool_calls"), list):
        for number, call in enumerate(extra["tool_calls"], start=1):
            call_id, text = openai_chat.tool_call(
                call, f"{where}: additional_kwargs.tool_calls {number}"
            )
            ids.append(call_id)
            texts.append(text)
    return ids, texts


def _block(block: Any, where: str, calls: list[str]) -> tuple[str, str | None]:
    """A content block's text, and the id of a call it makes that ``calls`` lacks."""
    if isinstance(block, str):
        return block, None
    kind = block.get("type") if isinstance(block, dict) else None
    if kind in CALL_BLOCKS:
        call_id = block.get("id")
        if isinstance(call_id, str) and call_id in calls:
            return "", None
        if not isinstance(call_id, str) or not call_id:
            raise BadInput(f"{where}: a {kind} block needs an id, got {call_id!r}")
        return call_text(block.get("name"), block.get(CALL_BLOCKS[kind]), where), call_id
    if kind not in BLOCKS:
        shown = kind if kind is not None else block
        known = ", ".join((*BLOCKS, *CALL_BLOCKS))
        raise BadInput(f"{where} is {shown!r}; a block is a string or one of {known}")
    return _plain(kind, block, where), None


def _plain(kind: str, block: Mapping[str, Any], where: str) -> str:
    if kind == "text":
        return _string(block, "text", where)
    if kind == "thinking":
        return marked("thinking", _string(block, "thinking", where))
    if kind == "redacted_thinking":
        return noted("redacted thinking")
    if kind == "reasoning":
        return marked("reasoning", _reasoning(block, where))
    if kind == "image_url":
        image = block.get("image_url")
        return image_note(image.get("url") if isinstance(image, Mapping) else image)
    if kind == "image":
        source = block.get("source")
        if isinstance(source, Mapping):
            return noted("image", source.get("media_type") or source.get("url"))
        return noted("image", block.get("mime_type") or block.get("url"))
    return noted(kind, block.get("mime_type") or block.get("url") or block.get("id"))


def _reasoning(block: Mapping[str, Any], where: str) -> str:
    """A reasoning block's text: ``reasoning`` (LangChain's own blocks) or its summary texts
    (OpenAI's, as LangChain keeps them)."""
    if isinstance(block.get("reasoning"), str):
        return str(block["reasoning"])
    summary = block.get("summary") or []
    if not isinstance(summary, list):
        raise BadInput(f"{where}: a reasoning block's summary must be a list")
    texts = [part.get("text") for part in summary if isinstance(part, dict)]
    if not all(isinstance(text, str) for text in texts) or len(texts) != len(summary):
        raise BadInput(f"{where}: a reasoning block's summary parts need text strings")
    return "\n".join(str(text) for text in texts)


def _string(block: Mapping[str, Any], key: str, where: str) -> str:
    value = block.get(key)
    if not isinstance(value, str):
        raise BadInput(f"{where}: a {block.get('type')} block needs a {key} string")
    return value
