"""OpenAI Responses items as turns.

The file is JSONL of items, a JSON array of them, a request object
(``{"instructions": ..., "input": [...]}``, ``input`` a list or one string)
or a response object (``{"output": [...]}``). ``instructions`` is the first
turn, a ``system`` one.

The items and what they become:

- ``message`` (``type`` may be left out, as the API allows for input):
  ``user``, ``system`` and ``developer`` (``system``) messages are one turn
  each; content is a string or parts: ``input_text`` and ``output_text``
  verbatim, ``refusal`` as ``[refusal] TEXT``, ``input_image``,
  ``input_file`` and ``input_audio`` as notes of what they were.
- ``function_call`` (``call_id``, ``name``, ``arguments``) and
  ``custom_tool_call`` (``call_id``, ``name``, ``input``) are calls:
  ``call NAME(ARGUMENTS)``, their ``call_id`` among the turn's ``calls``.
- ``reasoning``: its summary texts (or, without a summary, its
  ``reasoning_text`` content) as ``[reasoning] TEXT``; only ``[reasoning]``
  when its content is encrypted.
- ``function_call_output`` and ``custom_tool_call_output`` (``call_id``,
  ``output``: a string or parts) are one ``tool`` turn each, answering
  their ``call_id``.

How items group into turns: one model response is one ``assistant`` turn.
A response's output is a run of consecutive assistant-side items (its
``reasoning``, its ``assistant`` messages, its calls), so such a run is one
turn, its parts in order, one a line, and its calls the ids of its
``function_call`` items in order: a response that calls two tools in
parallel is one turn with two calls, as in the Chat format. Any other item
(a tool's output, a user's message) ends the run.

A ``compaction`` item (server-side compaction, or what ``/responses/compact``
returned: the API replaced every item before it with it) is no turn: it is a
``Compaction`` before the next turn, applied there by the ``recorded``
policy. It ends the response before it, as any item that is not the
assistant's does. Its summary is what the provider kept: the texts of its
``summary`` (``summary_text`` parts) when it has them; usually it has only
``encrypted_content``, which is opaque, and then the summary is a
placeholder saying so, with the item's id and the encrypted content's size
(``[encrypted compaction cmp_1: 1,204 characters, opaque]``), and a note
says the compaction is opaque.

Other item types (built-in tools' calls such as ``web_search_call``, an
``item_reference`` whose content the file does not hold) are refused,
named by their index and type.
"""

from collections.abc import Mapping
from typing import Any

from memtape.core.errors import BadInput
from memtape.lab.importers.compactions import Compactions
from memtape.lab.importers.ledger import every_record
from memtape.lab.importers.records import Source
from memtape.lab.importers.texts import call_text, image_note, marked, noted
from memtape.lab.importers.transcript import Transcript, Turns

FORMAT = "openai-responses"
"""The name ``--format`` gives this format."""

ROLES = {"user": "user", "system": "system", "developer": "system", "assistant": "assistant"}
"""Each Responses message role and the turn role it becomes."""

CALLS = {"function_call": "arguments", "custom_tool_call": "input"}
"""The call items, and the field that holds each one's arguments."""

OUTPUTS = ("function_call_output", "custom_tool_call_output")
"""The items that carry a call's result."""

COMPACTION = "compaction"
"""The item a compaction leaves in place of the items before it."""

ITEMS = ("message", "reasoning", *CALLS, *OUTPUTS, COMPACTION)
"""The item types that import."""

REASONING_PARTS = ("reasoning_text", "text")
"""The part types of a reasoning item's content (Codex writes ``text``)."""


class _Response:
    """The assistant-side items of one response, gathered into one turn."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.parts: list[str] = []
        self.calls: list[str] = []


def read(source: Source) -> Transcript:
    """The turns of an OpenAI Responses transcript."""
    turns = Turns(source.path)
    compactions = Compactions(turns)
    document = source.document
    if document is not None and document.get("instructions") is not None:
        where = f"{source.path}: instructions"
        instructions = document["instructions"]
        if not isinstance(instructions, str):
            raise BadInput(f"{where}: instructions must be a string, got {instructions!r}")
        turns.add("system", [instructions], where)
    response: _Response | None = None
    for record in source.records:
        data, where = record.data, record.where
        kind = _kind(data, where)
        if _assistant_side(kind, data):
            if response is None:
                response = _Response(where)
            _gather(response, kind, data, where)
            continue
        if response is not None:
            turns.add("assistant", response.parts, response.where, calls=response.calls)
            response = None
        if kind == COMPACTION:
            _compaction(data, where, compactions)
        elif kind in OUTPUTS:
            answer = _call_id(data, where)
            turns.add(
                "tool", content_texts(data.get("output"), where, "output"), where, answers=(answer,)
            )
        else:
            role = ROLES[_role(data, where)]
            turns.add(role, content_texts(data.get("content"), where, "content"), where)
    if response is not None:
        turns.add("assistant", response.parts, response.where, calls=response.calls)
    recorded, notes = compactions.recorded()
    return turns.transcript(FORMAT, recorded, notes, tally=every_record(source, ids))


def ids(data: Any) -> tuple[list[str], list[str]]:
    """An item's call id when it is a call, or the id its output answers (the ledger's
    count, read from the raw item)."""
    kind = data.get("type")
    if kind in CALLS:
        return [str(data.get("call_id"))], []
    if kind in OUTPUTS:
        return [], [str(data.get("call_id"))]
    return [], []


def _compaction(data: Mapping[str, Any], where: str, compactions: Compactions) -> None:
    """Meet a compaction item: its readable summary, or a placeholder for an encrypted one."""
    summary = data.get("summary")
    if summary:
        if not isinstance(summary, list):
            raise BadInput(f"{where}: a compaction item's summary must be a list of parts")
        texts = []
        for number, part in enumerate(summary, start=1):
            if not isinstance(part, dict) or not isinstance(part.get("text"), str):
                raise BadInput(f"{where}: summary part {number} has no text string")
            texts.append(part["text"])
        compactions.met("\n".join(texts), where)
        return
    encrypted = data.get("encrypted_content")
    if not isinstance(encrypted, str):
        raise BadInput(
            f"{where}: a compaction item needs its encrypted_content (or summary parts), "
            f"got {encrypted!r}"
        )
    identity = data.get("id")
    named = f" {identity}" if isinstance(identity, str) and identity else ""
    compactions.met(f"[encrypted compaction{named}: {len(encrypted):,} characters, opaque]", where)
    compactions.notes.append(
        f"the compaction at {where} is encrypted: what it kept is opaque, and its summary is a "
        "placeholder of what is known"
    )


def _kind(data: Any, where: str) -> str:
    if not isinstance(data, dict):
        raise BadInput(f"{where}: an item is an object with a type")
    kind = data.get("type", "message" if "role" in data else None)
    if kind not in ITEMS:
        raise BadInput(
            f"{where}: an item of type {kind!r} does not import (items: {', '.join(ITEMS)})"
        )
    return str(kind)


def _assistant_side(kind: str, data: Mapping[str, Any]) -> bool:
    return (
        kind == "reasoning"
        or kind in CALLS
        or (kind == "message" and data.get("role") == "assistant")
    )


def _gather(response: _Response, kind: str, data: Mapping[str, Any], where: str) -> None:
    if kind in CALLS:
        response.calls.append(_call_id(data, where))
        response.parts.append(call_text(data.get("name"), data.get(CALLS[kind]), where))
    elif kind == "reasoning":
        response.parts.append(reasoning_text(data, where))
    else:
        response.parts.extend(content_texts(data.get("content"), where, "content"))


def _role(data: Mapping[str, Any], where: str) -> str:
    role = data.get("role")
    if role not in ROLES:
        raise BadInput(f"{where}: a message's role is one of {', '.join(ROLES)}, got {role!r}")
    return str(role)


def _call_id(data: Mapping[str, Any], where: str) -> str:
    call = data.get("call_id")
    if not isinstance(call, str) or not call:
        raise BadInput(f"{where}: a {data.get('type')} item needs a call_id, got {call!r}")
    return call


def reasoning_text(data: Mapping[str, Any], where: str) -> str:
    """A reasoning item as ``[reasoning] TEXT``: its summary texts or, without a summary,
    its content's texts (``reasoning_text`` parts, or ``text`` ones as Codex writes them)."""
    texts = []
    for field, part_types in (("summary", ("summary_text",)), ("content", REASONING_PARTS)):
        parts = data.get(field) or []
        if not isinstance(parts, list):
            raise BadInput(f"{where}: a reasoning item's {field} must be a list")
        for number, part in enumerate(parts, start=1):
            if not isinstance(part, dict) or part.get("type") not in part_types:
                raise BadInput(f"{where}: {field} part {number} is not a {part_types[0]} part")
            if not isinstance(part.get("text"), str):
                raise BadInput(f"{where}: {field} part {number} has no text string")
            texts.append(part["text"])
        if texts:
            break
    return marked("reasoning", "\n".join(texts))


def content_texts(content: Any, where: str, field: str) -> list[str]:
    """The texts of a message's content or a call's output (``field`` names it): a string or
    a list of parts."""
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        raise BadInput(f"{where}: {field} must be a string or a list of parts, got {content!r}")
    return [_part(part, f"{where}: {field} part {n}") for n, part in enumerate(content, start=1)]


def _part(part: Any, where: str) -> str:
    kind = part.get("type") if isinstance(part, dict) else None
    if kind in ("input_text", "output_text"):
        text = part.get("text")
        if not isinstance(text, str):
            raise BadInput(f"{where}: a {kind} part needs a text string")
        return text
    if kind == "refusal":
        refusal = part.get("refusal")
        if not isinstance(refusal, str):
            raise BadInput(f"{where}: a refusal part needs a refusal string")
        return marked("refusal", refusal)
    if kind == "input_image":
        return image_note(part.get("image_url") or part.get("file_id"))
    if kind == "input_file":
        return noted("file", part.get("filename") or part.get("file_id") or part.get("file_url"))
    if kind == "input_audio":
        audio = part.get("input_audio")
        return noted("audio", audio.get("format") if isinstance(audio, Mapping) else None)
    shown = kind if kind is not None else part
    raise BadInput(
        f"{where} is {shown!r}; a part is input_text, output_text, refusal, input_image, "
        "input_file or input_audio"
    )
