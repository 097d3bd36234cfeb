"""OpenTelemetry traces of LLM calls (GenAI conventions, or OpenInference's) as turns.

The file is OTLP JSON (``memtape.lab.importers.otlp``). Its spans are
sorted into what imports and what does not:

- an LLM call: a span whose ``gen_ai.operation.name`` is ``chat``,
  ``text_completion`` or ``generate_content``, or whose
  ``openinference.span.kind`` is ``LLM``, and which records its messages
  (``memtape.lab.importers.otel_messages``). One that records none (content
  capture was off) is left out, counted as ``LLM call without messages``.
- every other span is left out, counted by its ``gen_ai.operation.name``
  (``execute_tool span``, ``invoke_agent span``...), its OpenInference kind
  (``TOOL span``, ``AGENT span``...) or as ``other span``. A tool's
  execution span holds no call of its own: the call and its result are in
  the messages of the LLM calls around it.

A conversation is the LLM calls of one ``gen_ai.conversation.id`` (or
OpenInference ``session.id``; a span without one takes its nearest
ancestor's), else of one trace, in order of start time. Conversations import
one after the other, in order of their first call; each after the first
begins with a recorded compaction whose summary is empty (trigger ``new
conversation``): the agent's context began anew there, and ``recorded``
applies that.

Each call's input is the whole context it sent (its system instructions
first, then its input messages), its output the model's reply. What
imports of a call is what is new: the messages past the context the call
before it sent plus that call's reply, then its own reply (the first
choice; other choices are counted, not imported). So no message imports
twice, and tool calls and their results pair as they do in the chat.

When a call's input does not extend the context before it, the agent
compacted (it dropped or rewrote earlier messages). The two are lined up:
the messages they start with alike are kept, and so is the longest run of
the previous context's last messages found again after them; what the
input holds between the two replaced what was dropped. That is a recorded
``Compaction`` before the call's first new turn: its summary the texts of
what replaced the dropped part, one a line (empty when nothing replaced it:
the agent only dropped messages, as a sliding window does, and ``recorded``
sends the dropped turns COLD with nothing WARM for them); its ``preserved``
the turns of the kept run; its ``pre_tokens`` the previous call's input and
output tokens. When no message of the old context is found again, the
input's last message is taken for the new one, and those before it (after
the kept start) for the replacement.

A conversation whose calls never resend anything of the context before
them was recorded against a stateful API (``previous_response_id``): each
call's input is then new as a whole, its system instructions imported
when they change.

Messages become turns as Anthropic's do: an assistant message is one turn
(``text``, ``reasoning`` as ``[reasoning] TEXT``, each ``tool_call`` as
``call NAME(ARGUMENTS)`` among the turn's calls); each ``tool_call_response``
is a ``tool`` turn of its own, answering its id; a message's other parts
form a turn of its role (``developer`` is ``system``, ``model`` is
``assistant``, ``function`` is ``tool``). Media read as notes
(``[image: image/png]``), a provider's own tools as ``[server tool call]``
and ``[server tool result]``, a part of another type as ``[TYPE] CONTENT``.
A tool call without an id is given one (``call-without-id.N``), and a
result without one answers the oldest such call still waiting.

The usage each call reported is kept on its reply's turn:
``gen_ai.usage.input_tokens``, ``output_tokens``,
``cache_read.input_tokens`` and ``cache_creation.input_tokens`` (or
OpenInference's ``llm.token_count.prompt``, ``completion``,
``prompt_details.cache_read`` and ``cache_write``). The conventions count
cached tokens inside the input tokens, memtape's ``input`` is the uncached
part: the cached ones are taken off (unless they exceed the input, when the
instrumentation counted them apart).

The messages that do not import are counted in the notes: those repeating
the context, those that replaced a dropped part (now a summary), the other
choices.

The ledger counts the tool calls and results in from each span's own
messages, not from what the reader took of them as new (``_Ids``): a
message the reader wrongly took for resent is a call or result lost, and
refuses the import.
"""

from collections import Counter, deque
from collections.abc import Mapping, Sequence
from itertools import pairwise
from typing import Any

import attrs

from memtape.core.errors import BadInput
from memtape.core.plural import counted
from memtape.lab.importers.compactions import Compactions
from memtape.lab.importers.fields import inclusive_usage, token_count
from memtape.lab.importers.ledger import Tally
from memtape.lab.importers.otel_messages import Message, recorded, span_messages
from memtape.lab.importers.otlp import Span, spans
from memtape.lab.importers.records import Record, Source
from memtape.lab.importers.texts import call_text, json_text, marked, noted
from memtape.lab.importers.transcript import Transcript, Turns
from memtape.scenarios.usage import Usage

FORMAT = "otel"
"""The name ``--format`` gives this format."""

LLM_OPERATIONS = ("chat", "text_completion", "generate_content")
"""The ``gen_ai.operation.name`` values of a call to a model."""

OPERATION = "gen_ai.operation.name"
OPENINFERENCE_KIND = "openinference.span.kind"
CONVERSATION_KEYS = ("gen_ai.conversation.id", "session.id")
"""The attributes naming a span's conversation: GenAI's, then OpenInference's."""

ROLES = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "assistant": "assistant",
    "model": "assistant",
    "tool": "tool",
    "function": "tool",
}
"""Each message role and the turn role it becomes."""

USAGE_KEYS = (
    ("gen_ai.usage.input_tokens", "llm.token_count.prompt"),
    ("gen_ai.usage.output_tokens", "llm.token_count.completion"),
    ("gen_ai.usage.cache_read.input_tokens", "llm.token_count.prompt_details.cache_read"),
    ("gen_ai.usage.cache_creation.input_tokens", "llm.token_count.prompt_details.cache_write"),
)
"""The usage attributes (GenAI's, OpenInference's) of input, output, cache read, cache write."""


NOT_IMPORTED = {
    "resent": ("message resent with the context", "messages resent with the context"),
    "summary": (
        "message standing for what a compaction dropped (its summary)",
        "messages standing for what a compaction dropped (its summary)",
    ),
    "choice": ("other choice of a reply", "other choices of a reply"),
}
"""The messages that do not import, by kind, as the notes count them."""


@attrs.frozen
class _Call:
    """One LLM call's span and what it sent and got."""

    span: Span
    instructions: Message | None
    inputs: list[Message]
    outputs: list[Message]

    @property
    def sent(self) -> list[Message]:
        """The whole context the call sent: its instructions, then its input messages."""
        return ([self.instructions] if self.instructions else []) + self.inputs


@attrs.frozen
class _Entry:
    """A message of the context an agent sent, and the turns it became (None: none, a
    summary's message)."""

    key: str
    role: str
    turns: tuple[int, int] | None


def read(source: Source) -> Transcript:
    """The turns and compactions of an OpenTelemetry trace of LLM calls."""
    found = spans(source)
    records = tuple(Record(span, span.where) for span in found)
    tally = Tally(Source(source.path, records, None, source.skipped))
    calls: list[_Call] = []
    for span in found:
        kind = _kind(span)
        if kind is not None:
            tally.left_out(kind, span.where)
            continue
        instructions, inputs, outputs = span_messages(span.attributes, span.where)
        calls.append(_Call(span, instructions, inputs, outputs))
    if not calls:
        raise BadInput(
            f"{source.path}: no LLM call span records its messages (gen_ai.input.messages, "
            "llm.input_messages...): was the instrumentation's content capture on?"
        )
    reader = _Reader(source)
    for number, (name, conversation) in enumerate(_conversations(calls, found)):
        reader.conversation(name, conversation, tally, first=number == 0)
    return reader.finish(tally)


def _kind(span: Span) -> str | None:
    """What a span is left out as, or None for an LLM call that records its messages."""
    attributes = span.attributes
    operation = attributes.get(OPERATION)
    kind = attributes.get(OPENINFERENCE_KIND)
    if operation in LLM_OPERATIONS or kind == "LLM":
        return None if recorded(attributes) else "LLM call without messages"
    if isinstance(operation, str) and operation:
        return f"{operation} span"
    if isinstance(kind, str) and kind:
        return f"{kind} span"
    return "other span"


def _conversations(calls: list[_Call], found: list[Span]) -> list[tuple[str, list[_Call]]]:
    """The calls by conversation, each in order of start time, the conversations in order of
    their first call."""
    by_id = {(span.trace, span.id): span for span in found}
    order = {span.where: index for index, span in enumerate(found)}
    groups: dict[str, list[_Call]] = {}
    for call in calls:
        groups.setdefault(_conversation(call.span, by_id), []).append(call)
    for group in groups.values():
        group.sort(key=lambda call: (call.span.start, order[call.span.where]))
    return sorted(
        groups.items(), key=lambda item: (item[1][0].span.start, order[item[1][0].span.where])
    )


def _conversation(span: Span, by_id: Mapping[tuple[str, str], Span]) -> str:
    """A span's conversation id, its nearest ancestor's, or its trace's."""
    seen: set[str] = set()
    current: Span | None = span
    while current is not None and current.id not in seen:
        seen.add(current.id)
        for key in CONVERSATION_KEYS:
            given = current.attributes.get(key)
            if isinstance(given, str) and given:
                return given
        parent = current.parent
        current = by_id.get((span.trace, parent)) if parent is not None else None
    return f"trace {span.trace}"


UNNAMED = "call-without-id."
"""How the reader names a tool call without an id: this and its number."""

_TOOL_PARTS = ("tool_call", "tool_call_response")
"""The parts that carry a tool call's id: the call, and its result."""


class _Ids:
    """The ledger's count of one conversation's tool calls and results, read from each
    call's own messages (all it sent, and its first reply) apart from what the reader took
    of them as new: when the calls resend the context, an id is in as often as the most
    any one call holds it (a resent message is the same call again); when each sends
    only what is new, every time it occurs. A call or result without an id is counted
    as the reader names it (``call-without-id.N``): the file gives it no other name."""

    def __init__(self, resends: bool) -> None:
        self.resends = resends
        self.most: Counter[tuple[str, str]] = Counter()

    def new(self, call: _Call, taken: Sequence[Message]) -> tuple[list[str], list[str]]:
        """The calls and results ``call``'s messages bring in that earlier calls did not."""
        found: Counter[tuple[str, str]] = Counter()
        for message in [*call.sent, *call.outputs[:1]]:
            for part in message.parts:
                if part["type"] in _TOOL_PARTS and part.get("id"):
                    found[(part["type"], str(part["id"]))] += 1
        came: list[tuple[str, str]] = []
        for key, count in found.items():
            extra = count - self.most[key] if self.resends else count
            if extra > 0:
                came.extend([key] * extra)
                self.most[key] = max(self.most[key], count)
        came.extend(
            (part["type"], str(part["id"]))
            for message in taken
            for part in message.parts
            if part["type"] in _TOOL_PARTS and str(part["id"]).startswith(UNNAMED)
        )
        return (
            [identity for kind, identity in came if kind == "tool_call"],
            [identity for kind, identity in came if kind == "tool_call_response"],
        )


class _Reader:
    """One pass over the conversations' calls, turning what is new into turns."""

    def __init__(self, source: Source) -> None:
        self.path = source.path
        self.turns = Turns(source.path)
        self.compactions = Compactions(self.turns)
        self.notes: list[str] = []
        self.left: Counter[str] = Counter()
        self.waiting: deque[str] = deque()
        self.unnamed = 0

    def conversation(self, name: str, calls: list[_Call], tally: Tally, *, first: bool) -> None:
        """Import one conversation's calls, after the compaction a new one begins with."""
        if not first:
            self.compactions.met("", calls[0].span.where, trigger="new conversation")
        start = len(self.turns) + 1
        resends = _resends(calls)
        counted_ids = _Ids(resends)
        context: list[_Entry] = []
        instructions: str | None = None
        before: int | None = None
        for number, call in enumerate(calls):
            attributes = call.span.attributes
            self.turns.asked(
                attributes.get("gen_ai.response.model") or attributes.get("gen_ai.request.model")
            )
            if number == 0:
                new = call.sent
            elif resends:
                new, context = self._difference(context, call, before)
            else:
                key = call.instructions.key if call.instructions else None
                if key is not None and key == instructions:
                    self.left["resent"] += 1
                    new = call.inputs
                else:
                    new = call.sent
            if call.instructions is not None:
                instructions = call.instructions.key
            taken = [self._resolved(message) for message in new]
            for message in taken:
                context.append(_Entry(message.key, message.role, self._add(message)))
            reply = call.outputs[0] if call.outputs else None
            if len(call.outputs) > 1:
                self.left["choice"] += len(call.outputs) - 1
            if reply is None:
                self.notes.append(f"the LLM call at {call.span.where} recorded no reply")
            else:
                reply = self._resolved(reply)
                taken.append(reply)
                context.append(_Entry(reply.key, reply.role, self._add(reply, _usage(call))))
            calls_made, answered = counted_ids.new(call, taken)
            tally.took(call.span.where, calls=calls_made, results=answered)
            before = _context_tokens(call)
        self.notes.append(
            f"conversation {name!r}: {len(calls)} LLM calls, turns {start} to {len(self.turns)}"
        )

    def _difference(
        self, context: list[_Entry], call: _Call, pre_tokens: int | None
    ) -> tuple[list[Message], list[_Entry]]:
        """What of ``call``'s input is new, and the context it keeps of the one before; a
        compaction met when the input does not extend that context."""
        sent = call.sent
        keys = [message.key for message in sent]
        old = [entry.key for entry in context]
        if keys[: len(old)] == old:
            self.left["resent"] += len(old)
            return sent[len(old) :], list(context)
        head = 0
        while head < min(len(old), len(keys)) and old[head] == keys[head]:
            head += 1
        tail, at = _kept_run(old, keys, head)
        if tail < len(old):
            kept = len(old) - tail
            replaced, new = sent[head:at], sent[at + kept :]
        else:
            kept = 0
            replaced, new = sent[head:-1], sent[-1:] if len(sent) > head else []
        dropped = tail - head
        self.left["resent"] += head + kept
        self.left["summary"] += len(replaced)
        where = call.span.where
        if not replaced:
            self.notes.append(
                f"the compaction at {where} dropped {dropped} messages and nothing replaced "
                "them: its summary is empty"
            )
        heads = [e.turns for e in context[:head] if e.turns is not None and e.role != "system"]
        if heads:
            self.notes.append(
                f"the compaction at {where} kept {head} messages at the head verbatim; "
                "recorded folds those that are not pinned"
            )
        spans = [entry.turns for entry in context[tail:] if entry.turns is not None]
        preserved = (spans[0][0], spans[-1][1]) if spans else None
        summary = "\n".join(_message_text(message) for message in replaced)
        self.compactions.met(summary, where, pre_tokens=pre_tokens, preserved=preserved)
        kept_context = [
            *context[:head],
            *(_Entry(message.key, message.role, None) for message in replaced),
            *context[tail:],
        ]
        return new, kept_context

    def _resolved(self, message: Message) -> Message:
        """The message with an id given to each tool call without one, and each result
        without one answering the oldest such call still waiting."""
        parts = []
        for given in message.parts:
            part = given
            if part["type"] == "tool_call" and not part.get("id"):
                self.unnamed += 1
                part = {**part, "id": f"{UNNAMED}{self.unnamed}"}
                self.waiting.append(part["id"])
            elif part["type"] == "tool_call_response" and not part.get("id"):
                if not self.waiting:
                    raise BadInput(
                        f"{message.where}: a tool result without an id, and no call without "
                        "one is waiting"
                    )
                part = {**part, "id": self.waiting.popleft()}
            parts.append(part)
        return attrs.evolve(message, parts=tuple(parts))

    def _add(self, message: Message, usage: Usage | None = None) -> tuple[int, int]:
        """Add the turns of one message; the first and last turn it became."""
        role = ROLES.get(message.role)
        where = message.where
        if role is None:
            raise BadInput(
                f"{where}: a message's role is one of {', '.join(ROLES)}, got {message.role!r}"
            )
        first = len(self.turns) + 1
        if role == "assistant":
            texts, calls = [], []
            for number, part in enumerate(message.parts, start=1):
                texts.append(_part_text(part, f"{where}: part {number}"))
                if part["type"] == "tool_call":
                    calls.append(part["id"])
            self.turns.add("assistant", texts, where, calls=calls, usage=usage)
            return first, len(self.turns)
        pending: list[str] = []
        for number, part in enumerate(message.parts, start=1):
            place = f"{where}: part {number}"
            if part["type"] == "tool_call":
                raise BadInput(f"{place}: a tool call in a {message.role} message")
            if part["type"] == "tool_call_response":
                if pending:
                    self.turns.add(role, pending, where)
                    pending = []
                answer = str(part["id"])
                self.turns.add("tool", [_part_text(part, place)], place, answers=(answer,))
            else:
                pending.append(_part_text(part, place))
        if pending or len(self.turns) < first:
            self.turns.add(role, pending, where)
        return first, len(self.turns)

    def finish(self, tally: Tally) -> Transcript:
        """The transcript read, its ledger closed."""
        compactions, notes = self.compactions.recorded()
        left = [
            f"not imported: {counted(self.left[kind], *NOT_IMPORTED[kind])}"
            for kind in NOT_IMPORTED
            if self.left[kind]
        ]
        return self.turns.transcript(FORMAT, compactions, [*self.notes, *notes, *left], tally)


def _resends(calls: Sequence[_Call]) -> bool:
    """Whether the conversation's calls resend the context (any call's input holding a
    message of the context before it), or each sends only what is new."""
    for earlier, later in pairwise(calls):
        before = {m.key for m in earlier.inputs} | {m.key for m in earlier.outputs[:1]}
        if any(message.key in before for message in later.inputs):
            return True
    return False


def _kept_run(old: list[str], keys: list[str], head: int) -> tuple[int, int]:
    """The longest run of the old context's last messages found again in the input after
    ``head``: where it starts in the old context and in the input (``len(old)`` when none)."""
    best = (len(old), len(keys))
    if len(old) <= head:
        return best
    # Every such run ends with the old context's last message: extend back from each place the
    # input holds it (linear in the input unless it repeats that message).
    for end in range(head, len(keys)):
        if keys[end] != old[-1]:
            continue
        length = 1
        while (
            end - length >= head
            and len(old) - 1 - length >= head
            and keys[end - length] == old[-1 - length]
        ):
            length += 1
        if len(old) - length < best[0]:
            best = (len(old) - length, end - length + 1)
    return best


def _part_text(part: Mapping[str, Any], where: str) -> str:
    """A part as its turn's text shows it."""
    kind = part["type"]
    if kind in ("text", "reasoning"):
        content = part.get("content")
        if not isinstance(content, str):
            raise BadInput(f"{where}: a {kind} part needs a content string")
        return content if kind == "text" else marked("reasoning", content)
    if kind == "tool_call":
        return call_text(part.get("name"), part.get("arguments"), where)
    if kind == "tool_call_response":
        return json_text(part.get("response"))
    if kind in ("blob", "file", "uri"):
        what = part.get("modality") if isinstance(part.get("modality"), str) else kind
        detail = part.get("mime_type") or part.get("uri") or part.get("file_id")
        return noted(str(what), detail)
    if kind == "server_tool_call":
        name = part.get("name")
        return marked("server tool call", f"{name}({json_text(part.get('server_tool_call'))})")
    if kind == "server_tool_call_response":
        return marked("server tool result", json_text(part.get("server_tool_call_response")))
    content = part.get("content")
    return marked(kind, content) if isinstance(content, str) else noted(kind)


def _message_text(message: Message) -> str:
    """A message's parts as text, one a line (a summary's message)."""
    return "\n".join(
        _part_text(part, f"{message.where}: part {n}") for n, part in enumerate(message.parts, 1)
    )


def _count(attributes: Mapping[str, Any], keys: tuple[str, str], where: str) -> int | None:
    """The first token count under ``keys`` (GenAI's name, then OpenInference's), of the
    span at ``where``."""
    for key in keys:
        given = token_count(attributes.get(key), f"{where}: {key}")
        if given is not None:
            return given
    return None


def _usage(call: _Call) -> Usage | None:
    """The usage a call reported, its input counted without the cached tokens."""
    given, output, read, written = (
        _count(call.span.attributes, keys, call.span.where) for keys in USAGE_KEYS
    )
    return inclusive_usage(given, output, read, written)


def _context_tokens(call: _Call) -> int | None:
    """What a call's context came to, by its own count: its input and output tokens."""
    given = _count(call.span.attributes, USAGE_KEYS[0], call.span.where)
    output = _count(call.span.attributes, USAGE_KEYS[1], call.span.where)
    return given + output if given is not None and output is not None else None
