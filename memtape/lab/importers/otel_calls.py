"""The spans of an OpenTelemetry trace that are LLM calls, their conversations, and the usage
each reported (``memtape.lab.importers.otel`` says how a trace imports)."""

from collections.abc import Mapping
from typing import Any

import attrs

from memtape.lab.importers import otel_openllmetry
from memtape.lab.importers.fields import inclusive_usage, token_count
from memtape.lab.importers.otel_messages import Message, recorded
from memtape.lab.importers.otlp import Span
from memtape.scenarios.usage import Usage

LLM_OPERATIONS = ("chat", "text_completion", "generate_content")
"""The ``gen_ai.operation.name`` values of a call to a model."""

OPERATION = "gen_ai.operation.name"
OPENINFERENCE_KIND = "openinference.span.kind"
TRACELOOP_KIND = "traceloop.span.kind"
CONVERSATION_KEYS = ("gen_ai.conversation.id", "session.id")
"""The attributes naming a span's conversation: GenAI's, then OpenInference's."""

USAGE_KEYS = (
    ("gen_ai.usage.input_tokens", "llm.token_count.prompt", "gen_ai.usage.prompt_tokens"),
    ("gen_ai.usage.output_tokens", "llm.token_count.completion", "gen_ai.usage.completion_tokens"),
    (
        "gen_ai.usage.cache_read.input_tokens",
        "llm.token_count.prompt_details.cache_read",
        "gen_ai.usage.cache_read_input_tokens",
    ),
    (
        "gen_ai.usage.cache_creation.input_tokens",
        "llm.token_count.prompt_details.cache_write",
        "gen_ai.usage.cache_creation_input_tokens",
    ),
)
"""The usage attributes of input, output, cache read, cache write: GenAI's, OpenInference's,
then OpenLLMetry's older names."""


@attrs.frozen
class Call:
    """One LLM call's span and what it sent and got."""

    span: Span
    instructions: Message | None
    inputs: list[Message]
    outputs: list[Message]

    @property
    def sent(self) -> list[Message]:
        """The whole context the call sent: its instructions, then its input messages."""
        return ([self.instructions] if self.instructions else []) + self.inputs


def span_kind(span: Span) -> str | None:
    """What a span is left out as, or None for an LLM call that records its messages."""
    attributes = span.attributes
    operation = attributes.get(OPERATION)
    kind = attributes.get(OPENINFERENCE_KIND)
    if operation in LLM_OPERATIONS or kind == "LLM" or otel_openllmetry.is_call(attributes):
        said = recorded(attributes) or otel_openllmetry.recorded(attributes)
        return None if said else "LLM call without messages"
    if isinstance(operation, str) and operation:
        return f"{operation} span"
    if isinstance(kind, str) and kind:
        return f"{kind} span"
    traceloop = attributes.get(TRACELOOP_KIND)
    if isinstance(traceloop, str) and traceloop:
        return f"{traceloop} span"
    return "other span"


def conversations(calls: list[Call], found: list[Span]) -> list[tuple[str, list[Call]]]:
    """The calls by conversation, each in order of start time, the conversations in order of
    their first call."""
    by_id = {(span.trace, span.id): span for span in found}
    order = {span.where: index for index, span in enumerate(found)}
    groups: dict[str, list[Call]] = {}
    for call in calls:
        groups.setdefault(_conversation(call.span, by_id), []).append(call)
    for group in groups.values():
        group.sort(key=lambda call: (call.span.start, order[call.span.where]))
    return sorted(
        groups.items(), key=lambda item: (item[1][0].span.start, order[item[1][0].span.where])
    )


def recorded_twice(calls: list[Call], found: list[Span]) -> set[str]:
    """The places of the LLM-call spans that record the same call as the nearest LLM-call
    span nested in them (the same context sent, the same reply): a framework's span around
    the provider's, both instrumented. The innermost is the call; the others repeat it."""
    by_id = {(span.trace, span.id): span for span in found}
    by_span = {call.span.where: call for call in calls}
    twice: set[str] = set()
    for call in calls:
        seen: set[str] = set()
        parent = call.span.parent
        while parent is not None and parent not in seen:
            seen.add(parent)
            outer = by_id.get((call.span.trace, parent))
            if outer is None:
                break
            if outer.where in by_span:
                if _said(by_span[outer.where]) == _said(call):
                    twice.add(outer.where)
                break
            parent = outer.parent
    return twice


def _said(call: Call) -> tuple[tuple[str, ...], str | None]:
    """What a call sent and its first reply, as they are compared."""
    reply = call.outputs[0].key if call.outputs else None
    return tuple(message.key for message in call.sent), reply


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


def _count(attributes: Mapping[str, Any], keys: tuple[str, ...], where: str) -> int | None:
    """The first token count under ``keys`` (GenAI's name, then the others'), of the span at
    ``where``."""
    for key in keys:
        given = token_count(attributes.get(key), f"{where}: {key}")
        if given is not None:
            return given
    return None


def call_usage(call: Call) -> Usage | None:
    """The usage a call reported, its input counted without the cached tokens."""
    given, output, read, written = (
        _count(call.span.attributes, keys, call.span.where) for keys in USAGE_KEYS
    )
    return inclusive_usage(given, output, read, written)


def context_tokens(call: Call) -> int | None:
    """What a call's context came to, by its own count: its input and output tokens."""
    given = _count(call.span.attributes, USAGE_KEYS[0], call.span.where)
    output = _count(call.span.attributes, USAGE_KEYS[1], call.span.where)
    return given + output if given is not None and output is not None else None
