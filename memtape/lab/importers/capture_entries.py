"""A captured request's messages and its response as entries: what becomes a turn.

An entry is one turn's worth of a request or a response, read as the
format's own reader reads it (``anthropic``, ``openai_chat``,
``openai_responses``): an assistant message (a Responses response's run of
reasoning, messages and calls) is one entry; each tool result is an entry of
its own (an Anthropic user message's ``tool_result`` blocks too, its other
blocks one ``user`` entry); a system prompt given beside the messages
(Anthropic's ``system``, Responses' ``instructions``) is a ``system`` entry
at the head. A provider's compaction (Anthropic's ``compaction`` block, a
Responses ``compaction`` item) is an entry of the role ``compaction``, which
is no turn: its text is the summary the provider went on from.

An entry's identity is its ``key``: the role, the texts, the ids of the
calls it makes and answers, so that a message the agent sends again (in
another request, maybe spelled otherwise: a string or text parts) is the
same entry. Its ``slot`` is what stays the same when the agent rewrites a
message in place: a tool result's call id, an assistant message's call ids.

The requests and responses of a capture are read into entries by
``memtape.lab.importers.capture_reader``.
"""

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from memtape.core.errors import BadInput
from memtape.lab.importers import anthropic, openai_chat, openai_responses
from memtape.lab.importers.texts import call_text, marked, named, noted

COMPACTION = "compaction"
"""The role of a provider's compaction among the entries (no turn)."""

Key = tuple[str, tuple[str, ...], tuple[str, ...], tuple[str, ...]]
"""An entry's identity: role, texts, calls made, calls answered."""


def _said(parts: Iterable[str]) -> tuple[str, ...]:
    """The parts of an entry that say something."""
    return tuple(part for part in parts if part)


@attrs.frozen
class Entry:
    """One turn's worth of a request or response (or a provider's compaction)."""

    role: str
    parts: tuple[str, ...] = attrs.field(converter=_said)
    """Its texts, the empty ones left out (``""`` content and null content say the same)."""
    calls: tuple[str, ...] = ()
    answers: tuple[str, ...] = ()
    head: bool = False
    """A system prompt given beside the messages, which no compaction of the messages
    takes away."""
    key: Key = attrs.field(init=False, eq=False)
    slot: tuple[str, ...] = attrs.field(init=False, eq=False)

    def __attrs_post_init__(self) -> None:
        key = (self.role, self.parts, self.calls, self.answers)
        object.__setattr__(self, "key", key)
        if self.role == "tool" and self.answers:
            slot: tuple[str, ...] = ("tool", *self.answers)
        elif self.calls:
            slot = (self.role, "calls", *self.calls)
        else:
            slot = ("whole", *self.parts, self.role)
        object.__setattr__(self, "slot", slot)

    @property
    def text(self) -> str:
        """The entry's text as its turn reads it: its parts, one a line."""
        return "\n".join(self.parts)


@attrs.frozen
class Placed:
    """An entry where it is in a request or response: ``at`` names the message
    (``messages[3]``, ``output[0]``...)."""

    entry: Entry
    at: str


def joined(run: Sequence[Entry]) -> Entry:
    """A run of one response's assistant-side entries (Responses items) as one entry."""
    if len(run) == 1:
        return run[0]
    parts = tuple(part for entry in run for part in entry.parts)
    calls = tuple(call for entry in run for call in entry.calls)
    return Entry("assistant", parts, calls)


def anthropic_entries(message: Any, where: str) -> tuple[Entry, ...]:
    """An Anthropic message's entries (see the module's docstring)."""
    if not isinstance(message, Mapping):
        raise BadInput(f"{where}: a message is an object with role and content")
    role = message.get("role")
    if role not in ("user", "assistant"):
        raise BadInput(f"{where}: role must be user or assistant, got {role!r}")
    content = message.get("content")
    if isinstance(content, str):
        return (Entry(str(role), (content,)),)
    if not isinstance(content, list):
        raise BadInput(f"{where}: content must be a string or a list of blocks")
    entries: list[Entry] = []
    parts: list[str] = []
    calls: list[str] = []
    for number, block in enumerate(content, start=1):
        place = f"{where}: block {number}"
        kind = block.get("type") if isinstance(block, Mapping) else None
        if role == "assistant" and kind == anthropic.COMPACTION:
            if parts:
                entries.append(Entry("assistant", tuple(parts), tuple(calls)))
                parts, calls = [], []
            summary = block.get("content")
            if isinstance(summary, str):
                entries.append(Entry(COMPACTION, (summary,)))
            elif summary is not None:
                raise BadInput(f"{place}: a compaction block's content is a string or null")
            continue
        if role == "assistant" and kind not in anthropic.ASSISTANT_BLOCKS:
            # A server tool's call or result (anthropic.server_tool), or a block type newer
            # than this reader: a capture of a live agent is never refused for it, a note.
            parts.append(
                noted(str(kind), block.get("name") if isinstance(block, Mapping) else None)
            )
        elif role == "assistant":
            text, call = anthropic.assistant_block(block, place)
            parts.append(text)
            if call is not None:
                calls.append(call)
        elif kind == "tool_result":
            if parts:
                entries.append(Entry("user", tuple(parts)))
                parts = []
            answer, text = anthropic.tool_result(block, place)
            entries.append(Entry("tool", (text,), answers=(answer,)))
        else:
            parts.append(anthropic.user_block(block, place))
    if parts or not entries:
        entries.append(Entry(str(role), tuple(parts), tuple(calls)))
    return tuple(entries)


def chat_entry(message: Any, where: str) -> Entry:
    """A Chat Completions message's entry."""
    if not isinstance(message, Mapping):
        raise BadInput(f"{where}: a message is an object with role and content")
    given = message.get("role")
    role = openai_chat.ROLES.get(given) if isinstance(given, str) else None
    if role is None or given == "function" or message.get("function_call") is not None:
        raise BadInput(
            f"{where}: role must be one of system, developer, user, assistant, tool, got "
            f"{given!r} (legacy function calls are not read from a capture)"
        )
    parts = openai_chat.content_parts(message.get("content"), where)
    refusal = message.get("refusal")
    if isinstance(refusal, str) and refusal:
        parts.append(marked("refusal", refusal))
    calls = []
    tool_calls = message.get("tool_calls") or []
    if not isinstance(tool_calls, list):
        raise BadInput(f"{where}: tool_calls must be a list")
    for number, call in enumerate(tool_calls, start=1):
        call_id, text = openai_chat.tool_call(call, f"{where}: tool call {number}")
        calls.append(call_id)
        parts.append(text)
    answers: tuple[str, ...] = ()
    if given == "tool":
        answer = message.get("tool_call_id")
        if not isinstance(answer, str) or not answer:
            raise BadInput(f"{where}: a tool message needs the tool_call_id it answers")
        answers = (answer,)
    head = named(message.get("name"), where)
    if head:
        parts = [head + (parts[0] if parts else ""), *parts[1:]]
    return Entry(role, tuple(parts), tuple(calls), answers)


def responses_entry(item: Any, where: str) -> Entry:
    """A Responses item's entry (an assistant-side one is joined with its run's)."""
    if not isinstance(item, Mapping):
        raise BadInput(f"{where}: an item is an object with a type")
    kind = item.get("type", "message" if "role" in item else None)
    if not isinstance(kind, str):
        raise BadInput(f"{where}: an item needs a type, got {kind!r}")
    if kind == "message":
        role = item.get("role")
        if not isinstance(role, str) or role not in openai_responses.ROLES:
            raise BadInput(
                f"{where}: a message's role is one of user, system, developer, "
                f"assistant, got {role!r}"
            )
        texts = openai_responses.content_texts(item.get("content"), where, "content")
        return Entry(openai_responses.ROLES[str(role)], tuple(texts))
    if kind in openai_responses.CALLS:
        call = _call_id(item, where)
        field = openai_responses.CALLS[str(kind)]
        return Entry("assistant", (call_text(item.get("name"), item.get(field), where),), (call,))
    if kind in openai_responses.OUTPUTS:
        call = _call_id(item, where)
        texts = openai_responses.content_texts(item.get("output"), where, "output")
        return Entry("tool", tuple(texts), answers=(call,))
    if kind == "reasoning":
        return Entry("assistant", (openai_responses.reasoning_text(item, where),))
    if kind == openai_responses.COMPACTION:
        return Entry(COMPACTION, (_compaction_summary(item, where),))
    if kind == "item_reference":
        raise BadInput(f"{where}: an item_reference: the item it names is not in the capture")
    # A built-in tool's call (web_search_call...) is the model's act: a note in its turn.
    return Entry("assistant", (noted(kind, item.get("id")),))


def _compaction_summary(item: Mapping[str, Any], where: str) -> str:
    """A compaction item's readable summary, or a placeholder of what is known of an
    encrypted one."""
    summary = item.get("summary")
    if isinstance(summary, list) and summary:
        texts = [part.get("text") for part in summary if isinstance(part, Mapping)]
        if all(isinstance(text, str) for text in texts):
            return "\n".join(str(text) for text in texts)
    encrypted = item.get("encrypted_content")
    if not isinstance(encrypted, str):
        raise BadInput(f"{where}: a compaction item needs its encrypted_content or summary")
    identity = item.get("id")
    name = f" {identity}" if isinstance(identity, str) and identity else ""
    return f"[encrypted compaction{name}: {len(encrypted):,} characters, opaque]"


def _call_id(item: Mapping[str, Any], where: str) -> str:
    call = item.get("call_id")
    if not isinstance(call, str) or not call:
        raise BadInput(f"{where}: a {item.get('type')} item needs a call_id, got {call!r}")
    return call
