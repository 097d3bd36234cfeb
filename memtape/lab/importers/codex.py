"""Codex CLI rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``) as turns.

Each line is a record ``{"timestamp", "type", "payload"}``. What each type
becomes:

- ``response_item``: what the model saw and said, a Responses API item in
  ``payload``, read as ``openai-responses`` reads it: a ``user`` message is
  a user turn, a ``developer`` or ``system`` one a system turn; one
  response's consecutive ``reasoning``, ``assistant`` messages and calls
  are one assistant turn. The calls are ``function_call``,
  ``custom_tool_call`` (``apply_patch``...) and ``local_shell_call`` (its
  ``call_id``, or its ``id`` when it has none; its ``action`` as the
  arguments); each ``function_call_output`` or ``custom_tool_call_output``
  is a tool turn answering its ``call_id`` (an output
  ``{"content", "success": false}`` reads ``[error] CONTENT``); a
  ``tool_search_call`` and its ``tool_search_output`` (the names of the
  tools found) pair the same way when they have a ``call_id``. A
  ``web_search_call`` is part of its response's turn, ``[web search]
  QUERY`` (the search's results are not in the file), and so is an
  ``image_generation_call``, ``[image generation: PROMPT]``. A ``ghost_snapshot``
  (the harness's undo point, a git commit), a ``compaction`` (an encrypted
  summary) and any type not named here are left out and counted.
- ``compacted``: a compaction the agent made. ``replacement_history`` (the
  items its context became: the summary, the user messages it kept) or,
  without one, ``message`` (the summary) becomes a ``Compaction`` before the
  turn that follows, which the ``recorded`` policy applies, never a turn;
  its ``pre_tokens`` is the agent's own count of its context before it, from
  the last ``token_count`` event (the prompt and the reply of its last
  request). A compaction before the first turn is the context the file
  starts from: it imports as the first (user) turn. A ``token_count``
  event's ``last_token_usage`` is the usage of the response it follows (the
  turn's ``usage``); one that counts no request (every part zero, as Codex
  writes around a compaction, beside a total no context has) is neither.
- ``session_meta`` (the session's id, directory, base instructions),
  ``turn_context`` (each turn's model and settings) and ``event_msg`` (what
  the interface showed, repeating the items, and token counts) are left out
  and counted, ``event_msg`` by its payload's ``type``.

Rollouts written until September 2025 have no envelope: their first line
is the session's metadata (``{"id", "timestamp", "instructions"}``), each
other line a response item as it is, read the same way; a
``{"record_type": "state"}`` line (in those and some later files) is
bookkeeping, left out and counted.

Nothing is dropped silently: every record imports or is left out, counted
by kind in the import's ledger (``memtape.lab.importers.ledger``); a record
that is not an object with a type and a payload object, or an item that
cannot be read, is refused, named.
"""

from collections.abc import Mapping
from typing import Any

import attrs

from memtape.core.errors import BadInput
from memtape.lab.importers.codex_items import (
    CALLS,
    OUTPUTS,
    ROLES,
    UNNAMED,
    call_id,
    call_name,
    history_text,
    message_role,
    output_texts,
    tools_found,
    web_search,
)
from memtape.lab.importers.fields import inclusive_usage, token_count
from memtape.lab.importers.ledger import Tally
from memtape.lab.importers.openai_responses import content_texts, reasoning_text
from memtape.lab.importers.records import Source
from memtape.lab.importers.texts import call_text, noted
from memtape.lab.importers.transcript import Compaction, Transcript, Turns
from memtape.scenarios.usage import Usage

FORMAT = "codex"
"""The name ``--format`` gives this format."""

RECORDS = ("session_meta", "response_item", "compacted", "turn_context", "event_msg")
"""The record types a rollout holds (others, newer, are left out and counted)."""


@attrs.define
class _Response:
    """The assistant-side items of one response, gathered into one turn."""

    where: str
    parts: list[str] = attrs.Factory(list)
    calls: list[str] = attrs.Factory(list)
    usage: Usage | None = None


@attrs.define
class _Pending:
    """A compaction read, waiting for the turn it comes before."""

    where: str
    turns: int
    summary: str
    pre_tokens: int | None


class _Reader:
    """One pass over a rollout's records."""

    def __init__(self, source: Source) -> None:
        self.turns = Turns(source.path)
        self.compactions: list[Compaction] = []
        self.notes: list[str] = []
        self.response: _Response | None = None
        self.pending: _Pending | None = None
        self.context_tokens: int | None = None
        self.unbilled: int | None = None
        """The index of the last assistant turn added since the last token count."""

    def record(self, data: Any, where: str) -> str | None:
        """Import one record; None when it imported, else the kind it is left out as."""
        if not isinstance(data, dict):
            raise BadInput(f"{where}: a Codex rollout record is an object with a type")
        if "type" not in data:
            if "record_type" in data:
                return _kind("record_type", data["record_type"])
            if "id" in data and "timestamp" in data:
                return "session_meta"
            raise BadInput(f"{where}: a Codex rollout record is an object with a type")
        if not isinstance(data["type"], str):
            raise BadInput(f"{where}: a record's type must be a string, got {data['type']!r}")
        if _bare(data):
            return self._item(data, where)
        kind = str(data["type"])
        payload = data.get("payload")
        if not isinstance(payload, dict):
            raise BadInput(f"{where}: a {kind} record needs a payload object")
        if kind == "response_item":
            return self._item(payload, where)
        if kind == "compacted":
            self._compacted(payload, where)
            return None
        if kind == "event_msg":
            return self._event(payload, where)
        if kind == "turn_context":
            self.turns.asked(payload.get("model"))
        return kind

    def _event(self, payload: Mapping[str, Any], where: str) -> str:
        event = payload.get("type")
        if event == "token_count":
            info = payload.get("info")
            counts = info.get("last_token_usage") if isinstance(info, Mapping) else None
            usage = _usage(counts, where)
            if usage is None:
                total = counts.get("total_tokens") if isinstance(counts, Mapping) else None
                if token_count(total, f"{where}: total_tokens") is not None:
                    self.context_tokens = total
                return _kind("event_msg", event)
            measured = sum(n or 0 for n in (usage.input, usage.cache_read, usage.output))
            # Around a compaction Codex counts no request: every part zero, beside a total
            # that is no context's size. It is neither the context nor a response's bill.
            if measured > 0:
                self.context_tokens = measured
                self._bill(usage)
        return _kind("event_msg", event)

    def _bill(self, usage: Usage | None) -> None:
        """A response's token count: the usage of the response it follows (the one being
        gathered, or the last one added since the previous count)."""
        if usage is None:
            return
        if self.response is not None:
            self.response.usage = usage
        elif self.unbilled is not None:
            turn = self.turns.turns[self.unbilled]
            self.turns.turns[self.unbilled] = attrs.evolve(turn, usage=usage)
        self.unbilled = None

    def _item(self, item: Mapping[str, Any], where: str) -> str | None:
        kind = item.get("type", "message" if "role" in item else None)
        if not isinstance(kind, str):
            raise BadInput(f"{where}: an item's type must be a string, got {kind!r}")
        if kind == "message" and message_role(item, where) == "assistant":
            self._gather(where).parts.extend(content_texts(item.get("content"), where, "content"))
        elif kind == "reasoning":
            self._gather(where).parts.append(reasoning_text(item, where))
        elif kind in UNNAMED and item.get("call_id") is None:
            return _kind("response_item", kind)
        elif kind in CALLS:
            response = self._gather(where)
            response.calls.append(call_id(item, where))
            response.parts.append(call_text(call_name(item), item.get(CALLS[kind]), where))
        elif kind == "web_search_call":
            self._gather(where).parts.append(web_search(item))
        elif kind == "image_generation_call":
            self._gather(where).parts.append(noted("image generation", item.get("revised_prompt")))
        elif kind == "tool_search_output":
            found = tools_found(item.get("tools"))
            self._turn("tool", [found], where, (call_id(item, where),))
        elif kind in OUTPUTS:
            self._turn(
                "tool", output_texts(item.get("output"), where), where, (call_id(item, where),)
            )
        elif kind == "message":
            role = ROLES[message_role(item, where)]
            self._turn(role, content_texts(item.get("content"), where, "content"), where)
        else:
            return _kind("response_item", kind)
        return None

    def _gather(self, where: str) -> _Response:
        if self.response is None:
            self.response = _Response(where)
        return self.response

    def _turn(self, role: str, parts: list[str], where: str, answers: tuple[str, ...] = ()) -> None:
        self._flush()
        self._settle()
        self.turns.add(role, parts, where, answers=answers)

    def _flush(self) -> None:
        """Add the response gathered so far as one assistant turn."""
        response, self.response = self.response, None
        if response is not None:
            self._settle()
            self.turns.add(
                "assistant",
                response.parts,
                response.where,
                calls=response.calls,
                usage=response.usage,
            )
            self.unbilled = None if response.usage is not None else len(self.turns) - 1

    def _compacted(self, payload: Mapping[str, Any], where: str) -> None:
        self._flush()
        message = payload.get("message", "")
        if not isinstance(message, str):
            raise BadInput(f"{where}: a compacted record's message must be a string")
        history = payload.get("replacement_history")
        if history is None:
            summary = message
        elif isinstance(history, list):
            summary = "\n".join(
                history_text(item, f"{where}: replacement_history[{i}]")
                for i, item in enumerate(history)
            )
        else:
            raise BadInput(f"{where}: a compacted record's replacement_history must be a list")
        if self.pending is not None:
            self.notes.append(
                f"the compaction at {self.pending.where} was followed by another at {where} "
                "with no turn between: the later one is kept"
            )
        self.pending = _Pending(where, len(self.turns), summary, self.context_tokens)

    def _settle(self) -> None:
        """A turn is about to be added: the waiting compaction, if any, comes before it."""
        pending, self.pending = self.pending, None
        if pending is None:
            return
        if pending.turns == 0:
            self.notes.append(
                f"the compaction at {pending.where} precedes every turn: its summary is the "
                "first turn"
            )
            self.turns.add("user", [pending.summary], pending.where)
            return
        self.compactions.append(
            Compaction(pending.turns + 1, pending.summary, pending.where, None, pending.pre_tokens)
        )

    def finish(self, tally: Tally) -> Transcript:
        """The transcript read, once every record went through ``record``."""
        self._flush()
        if self.pending is not None:
            self.notes.append(
                f"the compaction at {self.pending.where} is followed by no turn: nothing to "
                "apply it at"
            )
        return self.turns.transcript(FORMAT, self.compactions, self.notes, tally)


def read(source: Source) -> Transcript:
    """The turns and compactions of a Codex CLI rollout."""
    reader = _Reader(source)
    tally = Tally(source)
    for record in source.records:
        left = reader.record(record.data, record.where)
        calls, results = _ids(record.data)
        if left is None:
            tally.took(record.where, calls=calls, results=results)
        else:
            tally.left_out(left, record.where, calls=calls, results=results)
    return reader.finish(tally)


def _ids(data: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """The call a ``response_item`` makes or the call its output answers, read from the raw
    record (the ledger's count). A compaction's replacement history repeats items already
    counted where they were first written, so it counts none."""
    item = data if _bare(data) else data.get("payload")
    if not (_bare(data) or data.get("type") == "response_item") or not isinstance(item, Mapping):
        return [], []
    kind = item.get("type")
    if not isinstance(kind, str):
        return [], []
    if kind in UNNAMED and item.get("call_id") is None:
        return [], []
    if kind in CALLS:
        call = item.get("call_id")
        if call is None and kind == "local_shell_call":
            call = item.get("id")
        return [str(call)], []
    if kind in OUTPUTS:
        return [], [str(item.get("call_id"))]
    return [], []


def _bare(data: Mapping[str, Any]) -> bool:
    """Whether a record is a response item written bare, as rollouts did until September
    2025 (no ``payload``: the line is the item)."""
    return data.get("type") not in RECORDS and "payload" not in data


def _usage(usage: Any, where: str) -> Usage | None:
    """A token count's ``last_token_usage`` (at ``where``) as a turn's usage
    (``input_tokens`` counts the cached prompt too); None when it says nothing."""
    if not isinstance(usage, Mapping):
        return None
    prompt, cached, output = (
        token_count(usage.get(key), f"{where}: {key}")
        for key in ("input_tokens", "cached_input_tokens", "output_tokens")
    )
    if prompt is None and output is None:
        return None
    return inclusive_usage(prompt, output, cached)


def _kind(record: str, kind: Any) -> str:
    """The kind a left-out record is counted as: its record type, and its payload's type."""
    return f"{record} ({kind})" if isinstance(kind, str) else record
