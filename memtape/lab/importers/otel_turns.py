"""An OpenTelemetry trace's LLM calls as turns: what is new of each call's context, its
reply, and the compactions met where a call's input does not extend the context before it
(``memtape.lab.importers.otel`` says how)."""

from collections import Counter, deque
from collections.abc import Mapping
from typing import Any

import attrs

from memtape.core.errors import BadInput
from memtape.core.plural import counted
from memtape.lab.importers.compactions import Compactions
from memtape.lab.importers.ledger import Tally
from memtape.lab.importers.otel_calls import Call, call_usage, context_tokens
from memtape.lab.importers.otel_context import UNNAMED, Ids, kept_run, resends_context
from memtape.lab.importers.otel_messages import Message
from memtape.lab.importers.records import Source
from memtape.lab.importers.texts import call_text, json_text, marked, noted
from memtape.lab.importers.transcript import Transcript, Turns
from memtape.scenarios.usage import Usage

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
class _Entry:
    """A message of the context an agent sent, and the turns it became (None: none, a
    summary's message)."""

    key: str
    role: str
    turns: tuple[int, int] | None


class Reader:
    """One pass over the conversations' calls, turning what is new into turns."""

    def __init__(self, source: Source) -> None:
        self.path = source.path
        self.turns = Turns(source.path)
        self.compactions = Compactions(self.turns)
        self.notes: list[str] = []
        self.left: Counter[str] = Counter()
        self.waiting: deque[str] = deque()
        self.unnamed = 0

    def conversation(self, name: str, calls: list[Call], tally: Tally, *, first: bool) -> None:
        """Import one conversation's calls, after the compaction a new one begins with."""
        if not first:
            self.compactions.met("", calls[0].span.where, trigger="new conversation")
        start = len(self.turns) + 1
        resends = resends_context(calls)
        counted_ids = Ids(resends)
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
                context.append(_Entry(reply.key, reply.role, self._add(reply, call_usage(call))))
            calls_made, answered = counted_ids.new(call, taken)
            tally.took(call.span.where, calls=calls_made, results=answered)
            before = context_tokens(call)
        self.notes.append(
            f"conversation {name!r}: {len(calls)} LLM calls, turns {start} to {len(self.turns)}"
        )

    def _difference(
        self, context: list[_Entry], call: Call, pre_tokens: int | None
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
        tail, at = kept_run(old, keys, head)
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

    def finish(self, format: str, tally: Tally) -> Transcript:
        """The transcript of ``format`` read, its ledger closed."""
        compactions, notes = self.compactions.recorded()
        left = [
            f"not imported: {counted(self.left[kind], *NOT_IMPORTED[kind])}"
            for kind in NOT_IMPORTED
            if self.left[kind]
        ]
        return self.turns.transcript(format, compactions, [*self.notes, *notes, *left], tally)


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
