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
  them whole: the chat's messages when each message read before is among
  them, a rollback (read as a rewind) when they are the first few read, a
  compression otherwise: a recorded compaction whose summary is the new
  leading messages (``memtape.lab.importers.gemini_cli_log`` says how).

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
message written again, the messages a rewind or a rollback dropped and
those a compression kept (imported before it) are left out,
counted by kind in the import's ledger (``memtape.lab.importers.ledger``);
a record of any other shape is refused, named.
"""

from collections.abc import Mapping
from typing import Any

from memtape.core.errors import BadInput
from memtape.lab.importers.compactions import Compactions
from memtape.lab.importers.fields import inclusive_usage, listed, token_count
from memtape.lab.importers.gemini_cli_log import SHOWN, Compressed, chat, set_messages
from memtape.lab.importers.ledger import Tally
from memtape.lab.importers.records import Source
from memtape.lab.importers.texts import call_text, json_text, marked, noted
from memtape.lab.importers.transcript import Transcript, Turns
from memtape.scenarios.usage import Usage

FORMAT = "gemini-cli"
"""The name ``--format`` gives this format."""


def read(source: Source) -> Transcript:
    """The turns of a Gemini CLI chat."""
    left: dict[str, str] = {}
    turns = Turns(source.path)
    compactions = Compactions(turns)
    made: dict[str, tuple[int, int]] = {}
    unanswered = 0
    for message in chat(source, left):
        if isinstance(message, Compressed):
            _compressed(message, made, compactions)
            continue
        data, where = message.data, message.where
        kind = data["type"]
        first = len(turns) + 1
        if kind in SHOWN:
            left[where] = kind
        elif kind == "user":
            turns.add("user", _content(data.get("content"), where), where)
        else:
            unanswered += _gemini(data, where, turns)
        if len(turns) >= first:
            made[data["id"]] = (first, len(turns))
    tally = Tally(source)
    for record in source.records:
        entries = [(record.where, record.data)]
        if source.document is None:
            entries += list(set_messages(record.data, record.where).items())
        for where, data in entries:
            calls, results = _ids(data)
            if where in left:
                tally.left_out(left[where], where, calls=calls, results=results)
            else:
                tally.took(where, calls=calls, results=results)
    placed, said = compactions.recorded()
    notes = [f"{unanswered} tool calls have no result in the file"] if unanswered else []
    return turns.transcript(FORMAT, placed, [*notes, *said], tally)


def _compressed(
    compression: Compressed, made: Mapping[str, tuple[int, int]], compactions: Compactions
) -> None:
    """A compression as a recorded compaction before the next turn: its summary the texts of
    the messages standing for what it dropped, its preserved turns those of the messages it
    kept."""
    texts = [
        "\n".join(_content(message.data.get("content"), message.where))
        for message in compression.summary
    ]
    spans = [made[identity] for identity in compression.preserved if identity in made]
    preserved = (spans[0][0], spans[-1][1]) if spans else None
    compactions.met("\n".join(texts), compression.where, preserved=preserved)


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
