"""Gemini CLI chats (``~/.gemini/tmp/<project>/chats/session-*.json`` or ``.jsonl``) as turns.

Two shapes, both read:

- one JSON document ``{"sessionId", "projectHash", "startTime",
  "lastUpdated", "messages": [...]}`` (older releases);
- JSONL, as newer releases append it: the session's metadata first, then
  one message a line. A message written again under the same ``id`` (it
  grew: its tool calls finished, its tokens were counted) replaces the
  earlier version in its place; ``{"$rewindTo": ID}`` (the user rewound)
  drops that message and every one after it (an ID no earlier message has
  is refused, named); ``{"$set": {...}}`` updates the metadata. A ``$set``
  of ``messages`` (and the metadata's own ``messages``) sets the chat to
  them whole: read as the chat's messages when each message read before is
  among them (their earlier versions superseded), refused, named, when it
  drops some (a rollback or a compression, not read here).

Each message has an ``id``, a ``type`` and ``content`` (a string, or parts:
``text``, a thought ``text`` with ``thought: true`` as ``[thinking] TEXT``,
``inlineData`` and ``fileData`` as notes of what they were). What each type
becomes:

- ``user``: a user turn.
- ``gemini``: an assistant turn: its ``thoughts`` (``[thinking] SUBJECT:
  DESCRIPTION``), its content, and its ``toolCalls`` as ``call
  NAME(ARGS)``, their ``id`` among the turn's calls; its ``tokens`` are the
  turn's usage (the uncached prompt, the output with the thoughts, the
  cached prompt), its ``model`` the model the import prices the scenario
  as (``[cost] model``). Each call's result
  follows as a tool turn answering its ``id``: the ``result`` parts (a
  ``functionResponse``'s ``response.output``, or its ``error`` as ``[error]
  ...``) or, when the file kept none, the ``resultDisplay`` it showed; a
  call whose ``status`` is ``error`` reads ``[error] ...``, ``cancelled``
  ``[cancelled] ...``. A call with neither has no result, and is said.
- ``info``, ``error`` and ``warning``: what the interface told the user,
  never sent to the model: left out and counted.

The metadata, ``$set`` and ``$rewindTo`` records, the earlier versions of a
message written again, and the messages a rewind dropped are left out,
counted by kind in the import's ledger (``memtape.lab.importers.ledger``);
a record of any other shape is refused, named.
"""

from collections.abc import Mapping
from typing import Any

import attrs

from memtape.core.errors import BadInput
from memtape.lab.importers.fields import inclusive_usage, listed, token_count
from memtape.lab.importers.ledger import Tally
from memtape.lab.importers.records import Record, Source
from memtape.lab.importers.texts import call_text, json_text, marked, noted
from memtape.lab.importers.transcript import Transcript, Turns
from memtape.scenarios.usage import Usage

FORMAT = "gemini-cli"
"""The name ``--format`` gives this format."""

SHOWN = ("info", "error", "warning")
"""The message types the interface showed the user and never sent to the model."""

TYPES = ("user", "gemini", *SHOWN)
"""Every message type."""


@attrs.frozen
class _Message:
    data: Mapping[str, Any]
    where: str


def read(source: Source) -> Transcript:
    """The turns of a Gemini CLI chat."""
    left: dict[str, str] = {}
    messages = _messages(source, left)
    turns = Turns(source.path)
    unanswered = 0
    for message in messages:
        data, where = message.data, message.where
        kind = data["type"]
        if kind in SHOWN:
            left[where] = kind
        elif kind == "user":
            turns.add("user", _content(data.get("content"), where), where)
        else:
            unanswered += _gemini(data, where, turns)
    tally = Tally(source)
    for record in source.records:
        entries = [(record.where, record.data)]
        if source.document is None:
            entries += list(_set_messages(record.data, record.where).items())
        for where, data in entries:
            calls, results = _ids(data)
            if where in left:
                tally.left_out(left[where], where, calls=calls, results=results)
            else:
                tally.took(where, calls=calls, results=results)
    notes = [f"{unanswered} tool calls have no result in the file"] if unanswered else []
    return turns.transcript(FORMAT, notes=notes, tally=tally)


def _messages(source: Source, left: dict[str, str]) -> list[_Message]:
    """The chat's messages in order: the last version of each, rewinds applied; each record
    left out is put in ``left`` (its place: its kind)."""
    kept: dict[str, _Message] = {}
    for record in source.records:
        data, where = record.data, record.where
        if not isinstance(data, dict):
            raise BadInput(f"{where}: a Gemini CLI record is an object")
        if "$rewindTo" in data:
            left[where] = "$rewindTo"
            _rewind(kept, data["$rewindTo"], where, left)
        elif "$set" in data:
            left[where] = "$set"
            _replace(kept, _set_messages(data, where), where, left)
        elif isinstance(data.get("id"), str) and "type" in data:
            if data["type"] not in TYPES:
                raise BadInput(
                    f"{where}: a message's type is one of {', '.join(TYPES)}, got {data['type']!r}"
                )
            # Only the JSONL log writes a message again; a document's list is the chat as is.
            identity = data["id"] if source.document is None else where
            if identity in kept:
                left[kept[identity].where] = "superseded message"
            kept[identity] = _Message(data, where)
        elif "sessionId" in data:
            left[where] = "session metadata"
            if source.document is None:
                _replace(kept, _set_messages(data, where), where, left)
        else:
            raise BadInput(_unread(record))
    return list(kept.values())


def _set_messages(data: Any, where: str) -> dict[str, Any]:
    """The messages a JSONL record sets the chat to (a ``$set`` of ``messages``, or the
    metadata's own), each by its place (``WHERE: messages[I]``); none for any other."""
    patch = data.get("$set") if isinstance(data, dict) and "$set" in data else data
    messages = patch.get("messages") if isinstance(patch, dict) else None
    if not messages:
        return {}
    if not isinstance(messages, list):
        raise BadInput(f"{where}: messages must be a list, got {messages!r}")
    return {f"{where}: messages[{i}]": message for i, message in enumerate(messages)}


def _replace(
    kept: dict[str, _Message], messages: Mapping[str, Any], where: str, left: dict[str, str]
) -> None:
    """Set the chat to ``messages`` (by place), as a record setting them whole does: each
    message read before is in them again (its earlier version superseded), or the record is
    refused: one that drops messages (a rollback, or a compression) is not read here, and
    reading past it would keep what the agent let go or lose what it kept."""
    if not messages:
        return
    for place, data in messages.items():
        if not isinstance(data, dict) or not isinstance(data.get("id"), str):
            raise BadInput(f"{place}: a message is an object with an id")
        if data.get("type") not in TYPES:
            raise BadInput(
                f"{place}: a message's type is one of {', '.join(TYPES)}, got {data.get('type')!r}"
            )
    listed = {data["id"] for data in messages.values()}
    dropped = [identity for identity in kept if identity not in listed]
    if dropped:
        raise BadInput(
            f"{where}: $set replaces the chat's messages and drops {len(dropped)} read before "
            f"it (the first, {dropped[0]!r}, at {kept[dropped[0]].where}): a rollback or a "
            "compression, which is not read here"
        )
    for message in kept.values():
        left[message.where] = "superseded message"
    kept.clear()
    for place, data in messages.items():
        if data["id"] in kept:
            left[kept[data["id"]].where] = "superseded message"
        kept[data["id"]] = _Message(data, place)


def _rewind(kept: dict[str, _Message], target: Any, where: str, left: dict[str, str]) -> None:
    """Drop the message ``target`` and every one after it. A target no message before it
    has is refused: dropping every message (as a missing target would) loses the whole
    chat without a word, and ignoring the rewind keeps what the user took back."""
    if not isinstance(target, str):
        raise BadInput(f"{where}: $rewindTo must be a message id, got {target!r}")
    ids = list(kept)
    if target not in kept:
        raise BadInput(
            f"{where}: $rewindTo names message {target!r}, which no message before it has: "
            "the rewind cannot be applied (it would drop the whole chat)"
        )
    for identity in ids[ids.index(target) :]:
        left[kept.pop(identity).where] = "rewound message"


def _ids(data: Any) -> tuple[list[str], list[str]]:
    """The ids of a gemini message's tool calls, and of those whose result the file kept,
    read from the raw record (the ledger's count)."""
    if not isinstance(data, dict) or data.get("type") != "gemini":
        return [], []
    listed = data.get("toolCalls")
    calls = [c for c in listed if isinstance(c, Mapping)] if isinstance(listed, list) else []
    answered = [
        c
        for c in calls
        if c.get("result") is not None or isinstance(c.get("resultDisplay"), str | Mapping)
    ]
    return [str(c.get("id")) for c in calls], [str(c.get("id")) for c in answered]


def _unread(record: Record) -> str:
    keys = ", ".join(sorted(map(str, record.data))[:8]) or "no keys"
    return (
        f"{record.where}: a Gemini CLI record is a message (id, type), $set, $rewindTo or the "
        f"session's metadata; got an object with {keys}"
    )


def _gemini(data: Mapping[str, Any], where: str, turns: Turns) -> int:
    """Add a gemini message's turn and its calls' results; how many calls have none."""
    parts = [_thought(thought, where) for thought in listed(data, "thoughts", where)]
    parts.extend(_content(data.get("content"), where))
    calls = listed(data, "toolCalls", where)
    ids = []
    for number, call in enumerate(calls, start=1):
        place = f"{where}: toolCalls[{number - 1}]"
        if not isinstance(call, Mapping):
            raise BadInput(f"{place}: a tool call is an object")
        identity = call.get("id")
        if not isinstance(identity, str) or not identity:
            raise BadInput(f"{place}: a tool call needs an id, got {identity!r}")
        ids.append(identity)
        parts.append(call_text(call.get("name"), call.get("args"), place))
    turns.add("assistant", parts, where, calls=ids, usage=_usage(data.get("tokens"), where))
    turns.asked(data.get("model"))
    unanswered = 0
    for number, call in enumerate(calls):
        place = f"{where}: toolCalls[{number}]"
        result = _result(call, place)
        if result is None:
            unanswered += 1
        else:
            turns.add("tool", [result], place, answers=(call["id"],))
    return unanswered


def _result(call: Mapping[str, Any], where: str) -> str | None:
    """A tool call's result as its turn's text; None when the file kept none."""
    result = call.get("result")
    display = call.get("resultDisplay")
    if result is not None:
        text = "\n".join(_parts(result, where, "result"))
    elif isinstance(display, str):
        text = display
    elif isinstance(display, Mapping):
        diff = display.get("fileDiff")
        text = diff if isinstance(diff, str) else json_text(display)
    else:
        return None
    status = call.get("status")
    if status == "error" and not text.startswith("[error]"):
        return marked("error", text)
    if status == "cancelled":
        return marked("cancelled", text.removeprefix("[error] "))
    return text


def _usage(tokens: Any, where: str) -> Usage | None:
    """What a gemini message's response was billed for: its ``tokens`` (``input`` counts the
    cached prompt too, and the thoughts are billed as output); None when it says nothing."""
    if not isinstance(tokens, Mapping):
        return None
    prompt, output, cached, thoughts = (
        token_count(tokens.get(key), f"{where}: tokens.{key}")
        for key in ("input", "output", "cached", "thoughts")
    )
    if prompt is None and output is None:
        return None
    billed = output + (thoughts or 0) if output is not None else None
    return inclusive_usage(prompt, billed, cached)


def _thought(thought: Any, where: str) -> str:
    if not isinstance(thought, Mapping):
        raise BadInput(f"{where}: a thought is an object with a subject and a description")
    subject = thought.get("subject")
    description = thought.get("description")
    said = [text for text in (subject, description) if isinstance(text, str) and text]
    return marked("thinking", ": ".join(said))


def _content(content: Any, where: str) -> list[str]:
    """A message's content: a string, one part, or a list of strings and parts."""
    if content is None:
        return []
    return _parts(content, where, "content")


def _parts(value: Any, where: str, field: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        return [_part(value, f"{where}: {field}")]
    if not isinstance(value, list):
        raise BadInput(f"{where}: {field} must be a string or parts, got {value!r}")
    return [
        part if isinstance(part, str) else _part(part, f"{where}: {field} part {n}")
        for n, part in enumerate(value, start=1)
    ]


def _part(part: Any, where: str) -> str:
    if not isinstance(part, Mapping):
        raise BadInput(f"{where} is {part!r}; a part is a string or an object")
    if isinstance(part.get("text"), str):
        return marked("thinking", part["text"]) if part.get("thought") is True else part["text"]
    if isinstance(part.get("functionResponse"), Mapping):
        return _response(part["functionResponse"].get("response"))
    if isinstance(part.get("functionCall"), Mapping):
        call = part["functionCall"]
        return call_text(call.get("name"), call.get("args"), where)
    for key, kind, detail in (
        ("inlineData", "inline data", "mimeType"),
        ("fileData", "file", "fileUri"),
        ("executableCode", "code", "language"),
    ):
        if isinstance(part.get(key), Mapping):
            return noted(kind, part[key].get(detail))
    if isinstance(part.get("codeExecutionResult"), Mapping):
        return json_text(part["codeExecutionResult"].get("output"))
    keys = ", ".join(sorted(map(str, part))) or "no keys"
    raise BadInput(
        f"{where} has {keys}; a part is text, functionCall, functionResponse, inlineData, "
        "fileData, executableCode or codeExecutionResult"
    )


def _response(response: Any) -> str:
    """A function response's text: its ``output``, its ``error`` marked, or the whole as JSON."""
    if isinstance(response, Mapping):
        if isinstance(response.get("output"), str):
            return str(response["output"])
        if isinstance(response.get("error"), str):
            return marked("error", response["error"])
    return json_text(response)
