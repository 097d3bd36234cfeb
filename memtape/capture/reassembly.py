"""A streamed response put back together: the object the same endpoint returns
unstreamed, built from the events it streamed instead. Pure functions, one an
endpoint; no network (the proxy and the SDK wrappers call them once a stream ends).

Each reads what the providers' streaming references describe and keeps any field it
does not know as it came, so a new field is carried rather than lost.
"""

from collections.abc import Callable, Sequence
from typing import Any

import orjson

from memtape.capture.sse import ServerSentEvent, sse_events

JsonObject = dict[str, Any]
"""A JSON object as ``orjson`` reads one."""


def chat_completion(events: Sequence[ServerSentEvent]) -> JsonObject | None:
    """The ``chat.completion`` an OpenAI Chat Completions stream of
    ``chat.completion.chunk`` events adds up to: each choice's message (role, content,
    refusal, tool calls with their arguments joined), its finish reason, and the
    ``usage`` of the last chunk (sent when ``stream_options.include_usage``); None when
    the stream held no chunk."""
    completion: JsonObject | None = None
    choices: dict[int, JsonObject] = {}
    for chunk in _json_data(events):
        if completion is None:
            completion = {
                key: value for key, value in chunk.items() if key not in ("choices", "usage")
            }
            completion["object"] = "chat.completion"
        if chunk.get("usage") is not None:
            completion["usage"] = chunk["usage"]
        for delta_choice in chunk.get("choices") or ():
            index = delta_choice.get("index", 0)
            choice = choices.setdefault(
                index,
                {"index": index, "message": {"role": "assistant", "content": None}},
            )
            _add_chat_delta(choice["message"], delta_choice.get("delta") or {})
            for key, value in delta_choice.items():
                if key not in ("index", "delta") and (value is not None or key not in choice):
                    choice[key] = value
    if completion is None:
        return None
    completion["choices"] = [choices[index] for index in sorted(choices)]
    for choice in completion["choices"]:
        # A call's index orders the stream's deltas; an unstreamed call has none.
        for call in choice["message"].get("tool_calls") or ():
            call.pop("index", None)
    completion.setdefault("usage", None)
    return completion


def _add_chat_delta(message: JsonObject, delta: JsonObject) -> None:
    for key, value in delta.items():
        if key == "tool_calls":
            _add_tool_call_deltas(message.setdefault("tool_calls", []), value or ())
        elif isinstance(value, str) and isinstance(message.get(key), str) and key != "role":
            message[key] += value
        elif value is not None or key not in message:
            message[key] = value


def _add_tool_call_deltas(calls: list[JsonObject], deltas: Sequence[JsonObject]) -> None:
    by_index = {call["index"]: call for call in calls}
    for delta in deltas:
        index = delta.get("index", len(calls))
        call = by_index.get(index)
        if call is None:
            call = {"index": index, "id": None, "type": "function"}
            call["function"] = {"name": "", "arguments": ""}
            by_index[index] = call
            calls.append(call)
        for key, value in delta.items():
            if key == "function":
                for part, text in (value or {}).items():
                    if isinstance(text, str):
                        call["function"][part] = call["function"].get(part, "") + text
            elif value is not None:
                call[key] = value
    calls.sort(key=lambda call: call["index"])


def responses_response(events: Sequence[ServerSentEvent]) -> JsonObject | None:
    """The ``response`` object an OpenAI Responses stream ends with: the one its
    ``response.completed`` (or ``.failed``, ``.incomplete``) event carries; a stream cut
    before that gives the last ``response`` it named, its ``output`` the items whose
    ``response.output_item.done`` arrived. None when no event named a response."""
    last: JsonObject | None = None
    done_items: dict[int, JsonObject] = {}
    for event in _json_data(events):
        kind = event.get("type", "")
        if kind in ("response.completed", "response.failed", "response.incomplete"):
            final: JsonObject = event["response"]
            return final
        if isinstance(event.get("response"), dict):
            last = event["response"]
        if kind == "response.output_item.done" and isinstance(event.get("item"), dict):
            done_items[event.get("output_index", len(done_items))] = event["item"]
    if last is None:
        return None
    return {**last, "output": [done_items[index] for index in sorted(done_items)]}


_DELTA_FIELDS = {
    "text_delta": "text",
    "thinking_delta": "thinking",
    "signature_delta": "signature",
}
"""An Anthropic content delta's type, and the block's field its text is added to."""


def anthropic_message(events: Sequence[ServerSentEvent]) -> JsonObject | None:
    """The ``message`` an Anthropic Messages stream adds up to: ``message_start``'s
    message, its content blocks with their deltas applied (text, thinking and its
    signature, a tool use's ``input`` parsed from its ``input_json_delta`` parts,
    citations), and ``message_delta``'s stop reason, usage (cache creation and read
    counts included) and ``context_management``. None when the stream never started a
    message."""
    message: JsonObject | None = None
    blocks: dict[int, JsonObject] = {}
    partial_json: dict[int, list[str]] = {}
    for event in _json_data(events):
        kind = event.get("type")
        if kind == "message_start":
            message = dict(event.get("message") or {})
            blocks = dict(enumerate(message.get("content") or ()))
        elif message is None:
            continue
        elif kind == "content_block_start":
            blocks[event["index"]] = dict(event.get("content_block") or {})
        elif kind == "content_block_delta":
            block = blocks.setdefault(event["index"], {})
            _add_anthropic_delta(block, event.get("delta") or {}, partial_json, event["index"])
        elif kind == "content_block_stop":
            _close_json_input(blocks.get(event["index"]), partial_json.pop(event["index"], None))
        elif kind == "message_delta":
            for key, value in (event.get("delta") or {}).items():
                message[key] = value
            message["usage"] = {**(message.get("usage") or {}), **(event.get("usage") or {})}
            for key, value in event.items():
                if key not in ("type", "delta", "usage"):
                    message[key] = value
    if message is None:
        return None
    for index, parts in partial_json.items():
        _close_json_input(blocks.get(index), parts)
    message["content"] = [blocks[index] for index in sorted(blocks)]
    return message


def _add_anthropic_delta(
    block: JsonObject, delta: JsonObject, partial_json: dict[int, list[str]], index: int
) -> None:
    kind = delta.get("type", "")
    if kind == "input_json_delta":
        partial_json.setdefault(index, []).append(delta.get("partial_json", ""))
    elif kind in _DELTA_FIELDS:
        field = _DELTA_FIELDS[kind]
        block[field] = block.get(field, "") + delta.get(field, "")
    elif kind == "citations_delta":
        block.setdefault("citations", []).append(delta.get("citation"))
    else:
        # A delta this module does not know: its text fields extend the block's, the
        # rest replace them, so nothing it carried is lost.
        for key, value in delta.items():
            if key == "type":
                continue
            if isinstance(value, str) and isinstance(block.get(key), str):
                block[key] += value
            else:
                block[key] = value


def _close_json_input(block: JsonObject | None, parts: list[str] | None) -> None:
    """A tool use's ``input``, parsed once its JSON parts are all in (``{}`` when the
    tool took no arguments and sent none; the text as sent when it does not parse)."""
    if block is None or parts is None:
        return
    text = "".join(parts)
    if not text:
        block.setdefault("input", {})
        return
    try:
        block["input"] = orjson.loads(text)
    except orjson.JSONDecodeError:
        block["input"] = text


def _json_data(events: Sequence[ServerSentEvent]) -> list[JsonObject]:
    """Each event's data read as a JSON object; ``[DONE]`` and anything else not an
    object left out."""
    objects: list[JsonObject] = []
    for event in events:
        try:
            value = orjson.loads(event.data)
        except orjson.JSONDecodeError:
            continue
        if isinstance(value, dict):
            objects.append(value)
    return objects


_LAST_EVENTS = {
    "openai.chat": ("message", "[DONE]"),
    "anthropic.messages": ("message_stop", None),
}
"""The event that ends a stream of each endpoint: its name, and its data when that says."""
_RESPONSES_ENDS = frozenset({"response.completed", "response.failed", "response.incomplete"})


def stream_ended(endpoint: str, body: bytes) -> bool:
    """Whether ``body`` holds the event that ends ``endpoint``'s stream (a client may
    stop reading there, before the connection's own end)."""
    events = sse_events(body)
    if endpoint == "openai.responses":
        return any(event.event in _RESPONSES_ENDS for event in events)
    if endpoint not in _LAST_EVENTS:
        return False
    name, data = _LAST_EVENTS[endpoint]
    return any(event.event == name and data in (None, event.data) for event in events)


REASSEMBLERS: dict[str, Callable[[Sequence[ServerSentEvent]], JsonObject | None]] = {
    "openai.chat": chat_completion,
    "openai.responses": responses_response,
    "anthropic.messages": anthropic_message,
}
"""The reassembly of each endpoint the capture knows, by its name in the capture file."""


def reassembled(endpoint: str, body: bytes) -> JsonObject | None:
    """The unstreamed shape of ``endpoint``'s streamed ``body``; None for an endpoint
    with no reassembly, a body that holds none of its events, or one whose events are not
    of the shapes the endpoint's reference gives (a compatible server's own): the capture
    then keeps the body raw, and the agent, or the SDK a wrapper tees, never sees an error
    of the recording's."""
    reassemble = REASSEMBLERS.get(endpoint)
    if reassemble is None:
        return None
    try:
        whole = reassemble(sse_events(body))
    except (TypeError, AttributeError, KeyError, IndexError, ValueError):
        return None
    return whole if isinstance(whole, dict) else None
