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

A message seen once is read once: each request resends the conversation,
so the entries of a message are kept by its canonical JSON, and a long
capture costs what its distinct messages cost.
"""

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs
import orjson

from memtape.capture.threads import ANTHROPIC, CHAT, RESPONSES
from memtape.core.errors import BadInput
from memtape.lab.importers import anthropic, openai_chat, openai_responses
from memtape.lab.importers.fields import anthropic_usage, inclusive_usage, token_count
from memtape.lab.importers.texts import call_text, marked, named, noted
from memtape.scenarios.usage import Usage

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


class Reader:
    """Reads the requests and responses of one endpoint into entries, each distinct message
    once."""

    def __init__(self, endpoint: str) -> None:
        if endpoint not in (ANTHROPIC, CHAT, RESPONSES):
            raise ValueError(endpoint)
        self.endpoint = endpoint
        self._read: dict[bytes, tuple[Entry, ...]] = {}
        self._ids: dict[bytes, tuple[list[str], list[str]]] = {}
        # A request's messages are read for their entries, then for the ledger's ids: the
        # canonical JSON is made once, under the message object's id (the source holds every
        # body while it is read, so no id is reused meanwhile).
        self._raw: dict[int, bytes] = {}

    def ids(self, body: Mapping[str, Any] | None) -> tuple[list[str], list[str]]:
        """``ids`` of a request or response body, each distinct message read once."""
        if not isinstance(body, Mapping):
            return [], []
        field = "input" if self.endpoint == RESPONSES else "messages"
        listed = body.get(field)
        if not isinstance(listed, list):
            return ids(self.endpoint, body)
        calls: list[str] = []
        results: list[str] = []
        for message in listed:
            raw = self._raw.get(id(message)) or orjson.dumps(message, option=orjson.OPT_SORT_KEYS)
            found = self._ids.get(raw)
            if found is None:
                found = self._ids[raw] = ids(self.endpoint, {field: [message]})
            calls.extend(found[0])
            results.extend(found[1])
        return calls, results

    def request(self, request: Mapping[str, Any], where: str) -> list[Placed]:
        """The entries of a request, in order: its system prompt (when given beside the
        messages), then its messages'."""
        placed: list[Placed] = []
        if self.endpoint == ANTHROPIC:
            if request.get("system") is not None:
                texts = anthropic.system_parts(request["system"], f"{where}: system")
                placed.append(Placed(Entry("system", tuple(texts), head=True), "system"))
            self._messages(request.get("messages"), "messages", where, placed)
        elif self.endpoint == CHAT:
            self._messages(request.get("messages"), "messages", where, placed)
        else:
            instructions = request.get("instructions")
            if instructions is not None:
                if not isinstance(instructions, str):
                    raise BadInput(f"{where}: instructions must be a string")
                placed.append(Placed(Entry("system", (instructions,), head=True), "instructions"))
            given = request.get("input")
            if isinstance(given, str):
                placed.append(Placed(Entry("user", (given,)), "input"))
            else:
                self._items(given, "input", where, placed)
        return placed

    def response(self, response: Mapping[str, Any], where: str) -> tuple[list[Placed], int]:
        """The entries of a response, and how many of its choices were not read (a Chat
        response's other choices)."""
        placed: list[Placed] = []
        if self.endpoint == ANTHROPIC:
            content = response.get("content")
            message = {"role": "assistant", "content": content if content is not None else []}
            self._message(message, "content", where, placed)
            return placed, 0
        if self.endpoint == CHAT:
            choices = response.get("choices")
            if not isinstance(choices, list) or not choices:
                raise BadInput(f"{where}: response: a chat completion needs its choices")
            first = choices[0]
            chosen = first.get("message") if isinstance(first, Mapping) else None
            if not isinstance(chosen, Mapping):
                raise BadInput(f"{where}: response: choices[0] needs its message")
            self._message(chosen, "choices[0].message", where, placed)
            return placed, len(choices) - 1
        self._items(response.get("output"), "output", where, placed)
        return placed, 0

    def _messages(self, given: Any, field: str, where: str, placed: list[Placed]) -> None:
        if given is None:
            return
        if not isinstance(given, list):
            raise BadInput(f"{where}: request: {field} must be a list")
        for index, message in enumerate(given):
            self._message(message, f"{field}[{index}]", where, placed)

    def _message(self, message: Any, at: str, where: str, placed: list[Placed]) -> None:
        raw = orjson.dumps(message, option=orjson.OPT_SORT_KEYS)
        self._raw[id(message)] = raw
        entries = self._read.get(raw)
        if entries is None:
            place = f"{where}: {at}"
            if self.endpoint == ANTHROPIC:
                entries = _anthropic(message, place)
            else:
                entries = (_chat(message, place),)
            self._read[raw] = entries
        placed.extend(Placed(entry, at) for entry in entries)

    def _items(self, given: Any, field: str, where: str, placed: list[Placed]) -> None:
        """Responses items: one response's consecutive assistant-side items are one entry."""
        if given is None:
            return
        if not isinstance(given, list):
            raise BadInput(f"{where}: {field} must be a list of items")
        run: list[Entry] = []
        run_at = ""
        for index, item in enumerate(given):
            at = f"{field}[{index}]"
            raw = orjson.dumps(item, option=orjson.OPT_SORT_KEYS)
            self._raw[id(item)] = raw
            entries = self._read.get(raw)
            if entries is None:
                entries = (_item(item, f"{where}: {at}"),)
                self._read[raw] = entries
            entry = entries[0]
            if entry.role == "assistant":
                if not run:
                    run_at = at
                run.append(entry)
                continue
            if run:
                placed.append(Placed(_joined(run), run_at))
                run = []
            placed.append(Placed(entry, at))
        if run:
            placed.append(Placed(_joined(run), run_at))


def _joined(run: Sequence[Entry]) -> Entry:
    if len(run) == 1:
        return run[0]
    parts = tuple(part for entry in run for part in entry.parts)
    calls = tuple(call for entry in run for call in entry.calls)
    return Entry("assistant", parts, calls)


def _anthropic(message: Any, where: str) -> tuple[Entry, ...]:
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
            # A server tool's call or result (web search, code execution...) is the model's
            # act, done by the provider: a note in its turn, its name when it has one.
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


def _chat(message: Any, where: str) -> Entry:
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


def _item(item: Any, where: str) -> Entry:
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


def usage(endpoint: str, response: Mapping[str, Any], where: str) -> Usage | None:
    """What a response (of the exchange at ``where``) says it was billed, as a turn's usage
    (``input`` the uncached prompt); None when it says nothing. A count that is no count
    is warned of (``fields.token_count``)."""
    where = f"{where}: response.usage"
    given = response.get("usage")
    if not isinstance(given, Mapping):
        return None
    if endpoint == ANTHROPIC:
        return anthropic_usage(given, where)
    prompt_key, output_key, details = (
        ("prompt_tokens", "completion_tokens", "prompt_tokens_details")
        if endpoint == CHAT
        else ("input_tokens", "output_tokens", "input_tokens_details")
    )
    prompt = token_count(given.get(prompt_key), f"{where}.{prompt_key}")
    output = token_count(given.get(output_key), f"{where}.{output_key}")
    detail = given.get(details)
    cached = (
        token_count(detail.get("cached_tokens"), f"{where}.{details}.cached_tokens")
        if isinstance(detail, Mapping)
        else None
    )
    if prompt is None and output is None:
        return None
    return inclusive_usage(prompt, output, cached)


def ids(endpoint: str, body: Mapping[str, Any] | None) -> tuple[list[str], list[str]]:
    """The ids of the tool calls a request or response body holds, and of the calls its
    results answer, read from the raw body (the ledger's count, apart from the entries)."""
    calls: list[str] = []
    results: list[str] = []
    if not isinstance(body, Mapping):
        return calls, results
    if endpoint == RESPONSES:
        for field in ("input", "output"):
            items = body.get(field)
            for item in items if isinstance(items, list) else ():
                kind = item.get("type") if isinstance(item, Mapping) else None
                if not isinstance(kind, str):
                    continue
                if kind in openai_responses.CALLS:
                    calls.append(str(item.get("call_id")))
                elif kind in openai_responses.OUTPUTS:
                    results.append(str(item.get("call_id")))
        return calls, results
    if endpoint == CHAT:
        messages = body.get("messages")
        if not isinstance(messages, list):
            choices = body.get("choices")
            first = choices[0] if isinstance(choices, list) and choices else None
            message = first.get("message") if isinstance(first, Mapping) else None
            messages = [message] if isinstance(message, Mapping) else []
        for message in messages:
            if not isinstance(message, Mapping):
                continue
            for call in message.get("tool_calls") or ():
                if isinstance(call, Mapping):
                    calls.append(str(call.get("id")))
            if message.get("role") == "tool":
                results.append(str(message.get("tool_call_id")))
        return calls, results
    messages = body.get("messages")
    if not isinstance(messages, list):
        messages = [{"content": body.get("content")}]
    for message in messages:
        found_calls, found_results = anthropic.ids(message)
        calls.extend(found_calls)
        results.extend(found_results)
    return calls, results
