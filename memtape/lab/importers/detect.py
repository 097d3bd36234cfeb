"""Telling a transcript's format from its content.

Each record is looked at for a mark that only one format makes:

- ``codex``: a rollout record, ``{"type", "payload"}`` with a type of
  Codex's (``session_meta``, ``response_item``, ``event_msg``...), a
  ``record_type`` line, or an older rollout's first line (``id``,
  ``timestamp``, ``instructions``); its bare Responses items are Codex's then.
- ``swe-agent``: a history message's ``message_type`` or ``tool_call_ids``;
  a document with ``history`` beside ``trajectory`` or ``info``.
- ``mini-swe-agent``: a document whose ``trajectory_format`` is
  mini-swe-agent's, or an ``exit`` message; and a file of messages no format
  marks (below) of which a ``user`` one opens as mini-swe-agent's command
  output does (``<returncode>``, after an ``<exception>`` if any): its
  messages saved without the document around them.
- ``gemini-cli``: a message of ``type: "gemini"`` or with ``toolCalls``, a
  session's metadata (``projectHash``), a ``$set`` or ``$rewindTo`` record;
  a document with ``projectHash``, or ``sessionId`` and messages typed
  ``user`` or ``gemini``.
- ``claude-code``: an entry's ``uuid``, ``parentUuid``, ``sessionId`` or
  ``leafUuid``, or a type only Claude Code writes (``file-history-snapshot``...).
- ``langchain``: a message ``type`` of LangChain's (``human``, ``ai``,
  ``tool``...) with its fields beside it or under ``data``, and no ``role``.
- ``openai-responses``: an item ``type`` of the Responses API (``message``,
  ``function_call``, ``reasoning``...), or ``input_text``/``output_text``
  parts; a document with ``input``, ``output`` or ``instructions``.
- ``anthropic``: ``tool_use``, ``tool_result``, ``thinking``, ``image``
  (with a ``source``), ``document`` or a server tool's blocks, a response (``type:
  "message"``) of ``text`` blocks; a document with ``system``.
- ``openai-chat``: ``tool_calls``, ``tool_call_id`` or ``function_call``, a
  ``tool`` or ``function`` role, a ``name``, or ``image_url``,
  ``input_audio`` or ``file`` parts.
- ``otel``: an OTLP JSON trace, ``{"resourceSpans": [...]}``.
- ``capture``: a capture's header line first, ``{"memtape_capture": 1, ...}``
  (``memtape record``'s file): told before anything else.

The file's format is the one its marks name; its reader then refuses, named,
any record it cannot read. A message no format marks (``{"role": "user",
"content": "hi"}``, a ``system`` or ``developer`` one with text) reads the
same in every format that has its role, so a file of only those is read as
``openai-chat``. Marks of two formats, or no mark and a record that is not
such a message, is refused in one line saying what was seen, and where.
"""

import re
from collections.abc import Mapping
from typing import Any

from memtape.core.errors import BadInput
from memtape.lab.importers.anthropic import server_tool
from memtape.lab.importers.capture import FORMAT as CAPTURE
from memtape.lab.importers.capture import is_capture
from memtape.lab.importers.records import Source

CLAUDE_CODE_KEYS = ("uuid", "parentUuid", "sessionId", "leafUuid")
"""Keys only Claude Code's entries carry."""

CODEX_RECORDS = ("session_meta", "response_item", "compacted", "turn_context", "event_msg")
"""The record types of a Codex rollout (each with its ``payload``)."""

GEMINI_KEYS = ("toolCalls", "projectHash", "$set", "$rewindTo")
"""Keys only Gemini CLI's records carry (its messages are ``type: "gemini"`` too)."""

SWE_AGENT_KEYS = ("message_type", "tool_call_ids")
"""Keys only SWE-agent's history messages carry."""

NAMED_BY_DOCUMENT = ("swe-agent", "mini-swe-agent", "gemini-cli")
"""The formats a document names whatever its records look like (a SWE-agent history holds
Chat Completions messages)."""

CLAUDE_CODE_TYPES = ("summary", "file-history-snapshot", "queue-operation", "progress")
"""Entry types only Claude Code writes."""

LANGCHAIN_TYPES = (
    "human",
    "ai",
    "system",
    "tool",
    "function",
    "chat",
    "remove",
    "HumanMessageChunk",
    "AIMessageChunk",
    "SystemMessageChunk",
    "ToolMessageChunk",
    "FunctionMessageChunk",
    "ChatMessageChunk",
)
"""LangChain's message types."""

RESPONSES_TYPES = (
    "message",
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
    "reasoning",
    "compaction",
    "item_reference",
    "web_search_call",
    "file_search_call",
    "computer_call",
    "computer_call_output",
    "code_interpreter_call",
    "image_generation_call",
    "local_shell_call",
    "local_shell_call_output",
    "mcp_call",
    "mcp_list_tools",
    "mcp_approval_request",
    "mcp_approval_response",
)
"""The Responses API's item types (those that do not import are refused by name once told)."""

RESPONSES_PARTS = ("input_text", "output_text", "input_image", "input_file")
"""Content part types only the Responses API uses."""

ANTHROPIC_BLOCKS = (
    "tool_use",
    "tool_result",
    "thinking",
    "redacted_thinking",
    "document",
    "compaction",
)
"""Content block types only Anthropic's Messages use (an ``image`` with a ``source`` too)."""

CHAT_PARTS = ("image_url", "input_audio", "file")
"""Content part types only OpenAI's Chat Completions use."""

CHAT_KEYS = ("tool_calls", "tool_call_id", "function_call", "name")
"""Message keys only OpenAI's Chat Completions use."""

CHAT_ROLES = ("tool", "function")
"""Roles only a Chat Completions message has."""

PLAIN_ROLES = ("user", "assistant", "system", "developer")
"""The roles of a message that marks no format (Anthropic's reader refuses the last two)."""

NEUTRAL = "openai-chat"
"""The format of a file of messages no format marks: every reader reads them alike."""

OBSERVED = re.compile(r"\s*(?:<exception>.*?</exception>\s*)?<returncode>", re.DOTALL)
"""How mini-swe-agent's harness opens the user message holding a command's output."""


def detect(source: Source) -> str:
    """The format of the transcript ``source``; a file that cannot be told is refused."""
    if source.records and is_capture(source.records[0].data):
        return CAPTURE
    seen: dict[str, str] = {}
    unread = None
    document = source.document
    if document is not None:
        mark = _document_mark(document)
        if mark in NAMED_BY_DOCUMENT:
            return mark
        if mark is not None:
            seen[mark] = f"{source.path}: the document"
    for record in source.records:
        mark = record_mark(record.data)
        if mark is not None:
            seen.setdefault(mark, record.where)
        elif unread is None and not _plain_message(record.data):
            unread = record
    if "codex" in seen:
        # A rollout written before the envelope holds bare Responses items.
        seen.pop("openai-responses", None)
    if len(seen) > 1:
        found = " and ".join(f"{name} (at {where})" for name, where in seen.items())
        raise BadInput(f"{source.path}: cannot tell the format: it looks like {found}")
    if seen:
        return next(iter(seen))
    if unread is not None:
        raise BadInput(f"{unread.where}: cannot tell the format: {_seen(unread.data)}")
    if not source.records:
        raise BadInput(f"{source.path}: no messages to import")
    if any(_observed(record.data) for record in source.records):
        return "mini-swe-agent"
    return NEUTRAL


def record_mark(data: Any) -> str | None:
    """The format only ``data`` could come from, or None when it marks none."""
    if not isinstance(data, dict):
        return None
    kind = data.get("type")
    if kind in CODEX_RECORDS and isinstance(data.get("payload"), Mapping):
        return "codex"
    if "record_type" in data or _codex_meta(data):
        return "codex"
    if kind == "gemini" or any(key in data for key in GEMINI_KEYS):
        return "gemini-cli"
    if "role" in data and any(key in data for key in SWE_AGENT_KEYS):
        return "swe-agent"
    if data.get("role") == "exit":
        return "mini-swe-agent"
    if any(key in data for key in CLAUDE_CODE_KEYS) or kind in CLAUDE_CODE_TYPES:
        return "claude-code"
    if "role" not in data and kind in LANGCHAIN_TYPES:
        fields = data.get("data")
        if "content" in data or (isinstance(fields, Mapping) and "content" in fields):
            return "langchain"
    content = data.get("content")
    if "role" in data and isinstance(content, list):
        for part in content:
            mark = _part_mark(part)
            if mark is not None:
                return mark
        if kind == "message" and content and all(_is_text(part) for part in content):
            # An Anthropic response is a "message" too; a Responses message has no text parts.
            return "anthropic"
    if kind in RESPONSES_TYPES:
        return "openai-responses"
    if "resourceSpans" in data:
        return "otel"
    if "role" not in data:
        return None
    if any(key in data for key in CHAT_KEYS) or data.get("role") in CHAT_ROLES:
        return "openai-chat"
    return None


def _gemini_messages(document: Mapping[str, Any]) -> bool:
    """Whether a document's messages are Gemini CLI's: typed ``user`` or ``gemini``, with
    no role."""
    messages = document.get("messages")
    return isinstance(messages, list) and any(
        isinstance(m, Mapping) and m.get("type") in ("user", "gemini") and "role" not in m
        for m in messages
    )


def _codex_meta(data: Mapping[str, Any]) -> bool:
    """Whether a record is the first line of a rollout written before the envelope: the
    session's id, timestamp and instructions, and no type or role."""
    return (
        "type" not in data
        and "role" not in data
        and all(key in data for key in ("id", "timestamp", "instructions"))
    )


def _part_mark(part: Any) -> str | None:
    kind = part.get("type") if isinstance(part, Mapping) else None
    if kind in RESPONSES_PARTS:
        return "openai-responses"
    if kind in ANTHROPIC_BLOCKS or server_tool(kind) or (kind == "image" and "source" in part):
        return "anthropic"
    if kind in CHAT_PARTS:
        return "openai-chat"
    return None


def _is_text(part: Any) -> bool:
    return isinstance(part, Mapping) and part.get("type") == "text"


def _document_mark(document: Mapping[str, Any]) -> str | None:
    if "projectHash" in document or ("sessionId" in document and _gemini_messages(document)):
        return "gemini-cli"
    if "history" in document and ("trajectory" in document or "info" in document):
        return "swe-agent"
    trajectory_format = document.get("trajectory_format")
    if isinstance(trajectory_format, str) and trajectory_format.startswith("mini-swe-agent"):
        return "mini-swe-agent"
    if any(key in document for key in ("input", "output", "instructions")):
        return "openai-responses"
    if "system" in document:
        return "anthropic"
    return None


def _observed(data: Any) -> bool:
    """Whether ``data`` is a user message opening as mini-swe-agent's command output."""
    content = data.get("content") if isinstance(data, dict) else None
    if isinstance(content, list):
        content = content[0].get("text") if content and _is_text(content[0]) else None
    return (
        data.get("role") == "user"
        and isinstance(content, str)
        and OBSERVED.match(content) is not None
    )


def _plain_message(data: Any) -> bool:
    """Whether ``data`` is a message that marks no format: a plain role, and a string or
    text parts."""
    if not isinstance(data, dict) or data.get("role") not in PLAIN_ROLES:
        return False
    content = data.get("content")
    if isinstance(content, str):
        return True
    return isinstance(content, list) and all(_is_text(part) for part in content)


def _seen(data: Any) -> str:
    """What a record that no format reads looks like, for the refusal."""
    if not isinstance(data, dict):
        return f"a JSON {type(data).__name__}, not an object"
    keys = ", ".join(sorted(map(str, data))[:8]) or "no keys"
    kind = data.get("type")
    role = data.get("role")
    said = f"type {kind!r}" if kind is not None else f"role {role!r}" if role is not None else None
    return f"an object with {keys}" + (f" ({said})" if said else "")
