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

A call recorded twice, by an LLM-call span and the nearest LLM-call span
nested in it, with the same context sent and the same reply (a framework's
span around the provider's, when both are instrumented, as LangChain's
around OpenAI's), is one call: the innermost span imports, the outer is
left out, counted as ``LLM call recorded again around a nested span``.

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
messages, not from what the reader took of them as new
(``memtape.lab.importers.otel_context.Ids``): a message the reader wrongly
took for resent is a call or result lost, and refuses the import.
"""

from memtape.core.errors import BadInput
from memtape.lab.importers import otel_openllmetry
from memtape.lab.importers.ledger import Tally
from memtape.lab.importers.otel_calls import Call, conversations, recorded_twice, span_kind
from memtape.lab.importers.otel_messages import recorded, span_messages
from memtape.lab.importers.otel_turns import Reader
from memtape.lab.importers.otlp import Span, spans
from memtape.lab.importers.records import Record, Source
from memtape.lab.importers.transcript import Transcript

FORMAT = "otel"
"""The name ``--format`` gives this format."""


def read(source: Source) -> Transcript:
    """The turns and compactions of an OpenTelemetry trace of LLM calls."""
    found = spans(source)
    records = tuple(Record(span, span.where) for span in found)
    tally = Tally(Source(source.path, records, None, source.skipped))
    calls: list[Call] = []
    for span in found:
        kind = span_kind(span)
        if kind is not None:
            tally.left_out(kind, span.where)
            continue
        calls.append(_call(span))
    if not calls:
        raise BadInput(
            f"{source.path}: no LLM call span records its messages (gen_ai.input.messages, "
            "llm.input_messages, gen_ai.prompt...): was the instrumentation's content capture on?"
        )
    twice = recorded_twice(calls, found)
    for call in calls:
        if call.span.where in twice:
            tally.left_out("LLM call recorded again around a nested span", call.span.where)
    calls = [call for call in calls if call.span.where not in twice]
    reader = Reader(source)
    for number, (name, conversation) in enumerate(conversations(calls, found)):
        reader.conversation(name, conversation, tally, first=number == 0)
    return reader.finish(FORMAT, tally)


def _call(span: Span) -> Call:
    """An LLM call's span with its messages, in whichever convention it records them."""
    if otel_openllmetry.recorded(span.attributes) and not recorded(span.attributes):
        inputs, outputs = otel_openllmetry.span_messages(span.attributes, span.where)
        return Call(span, None, inputs, outputs)
    instructions, inputs, outputs = span_messages(span.attributes, span.where)
    return Call(span, instructions, inputs, outputs)
