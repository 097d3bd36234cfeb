"""SWE-agent trajectories (``.traj``) as turns.

A ``.traj`` file is one JSON document: ``history`` (the messages the model
was sent and wrote, in order), ``trajectory`` (one step per action: its
thought, action, observation and the query that produced it), ``info``
(the exit status, the submission, the model's costs) and the run's
configuration. The ``history`` is the conversation; each of its messages
(``role``, ``content``, ``message_type``, ``agent``...) is one turn:

- ``system`` and ``user`` messages as they are (the demonstrations, marked
  ``is_demo``, included: the model was sent them);
- ``assistant`` messages: their ``thinking_blocks`` as ``[thinking] TEXT``,
  their content (the thought, and in text mode the action in a code block),
  and, in function-calling mode, their ``tool_calls`` (``call
  NAME(ARGUMENTS)``, the calls' ids among the turn's calls);
- ``tool`` messages (function-calling mode's observations) answer the ids in
  their ``tool_call_ids``.

In text mode the observations are ``user`` messages: with ``--observations``
``auto`` (no message of the file makes a tool call) or ``user-after-action``
each one that follows an action is a tool turn answering it (see
``memtape.lab.importers.observations``). The ``trajectory`` steps repeat the
history's actions and observations: they are not read, and a note says how
many there were.
"""

from collections.abc import Mapping
from typing import Any

from memtape.core.errors import BadInput
from memtape.lab.importers.fields import listed
from memtape.lab.importers.ledger import Tally
from memtape.lab.importers.observations import note, pairs
from memtape.lab.importers.openai_chat import content_parts, tool_call
from memtape.lab.importers.records import Source
from memtape.lab.importers.texts import marked, noted
from memtape.lab.importers.transcript import Transcript, Turns

FORMAT = "swe-agent"
"""The name ``--format`` gives this format."""

ROLES = ("system", "user", "assistant", "tool")
"""The roles of a history message (each the turn role it becomes)."""


def read(source: Source, *, observations: str = "auto") -> Transcript:
    """The turns of a SWE-agent trajectory's history."""
    messages = [record.data for record in source.records]
    found = pairs(messages, observations, text_mode_pairs=True)
    turns = Turns(source.path)
    tally = Tally(source)
    for index, record in enumerate(source.records):
        data, where = record.data, record.where
        if not isinstance(data, dict) or data.get("role") not in ROLES:
            role = data.get("role") if isinstance(data, dict) else None
            raise BadInput(
                f"{where}: a history message's role is one of {', '.join(ROLES)}, got {role!r}"
            )
        role = str(data["role"])
        parts = [_thinking(block, where) for block in listed(data, "thinking_blocks", where)]
        parts.extend(content_parts(data.get("content"), where))
        calls = []
        for number, call in enumerate(listed(data, "tool_calls", where), start=1):
            call_id, text = tool_call(call, f"{where}: tool call {number}")
            calls.append(call_id)
            parts.append(text)
        answers = _answers(data, where) if role == "tool" else []
        more_calls, more_answers = found.ids(index)
        if more_answers:
            role = "tool"
        turns.add(role, parts, where, calls=calls + more_calls, answers=answers + more_answers)
        raw_calls, raw_answers = _ids(data)
        tally.took(where, calls=raw_calls + more_calls, results=raw_answers + more_answers)
    return turns.transcript(FORMAT, notes=[*note(found), *_steps(source.document)], tally=tally)


def _ids(data: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """The ledger's count of one history message's ids, read from its raw data apart from
    the turn built of it: its ``tool_calls``' ids, and a tool message's ``tool_call_ids``
    (or ``tool_call_id``). The pairs the observations make are counted with them."""
    given = data.get("tool_calls")
    calls = (
        [str(c.get("id")) for c in given if isinstance(c, dict)] if isinstance(given, list) else []
    )
    if data.get("role") != "tool":
        return calls, []
    answered = data.get("tool_call_ids")
    if isinstance(answered, list):
        return calls, [str(call) for call in answered]
    single = data.get("tool_call_id")
    return calls, [] if single is None else [str(single)]


def _answers(data: Mapping[str, Any], where: str) -> list[str]:
    ids = data.get("tool_call_ids")
    if ids is None and data.get("tool_call_id") is not None:
        ids = [data["tool_call_id"]]
    if not isinstance(ids, list) or not ids:
        raise BadInput(f"{where}: a tool message needs the tool_call_ids it answers")
    return [str(call) for call in ids]


def _thinking(block: Any, where: str) -> str:
    kind = block.get("type") if isinstance(block, Mapping) else None
    if kind == "thinking" and isinstance(block.get("thinking"), str):
        return marked("thinking", block["thinking"])
    if kind == "redacted_thinking":
        return noted("redacted thinking")
    raise BadInput(f"{where}: a thinking block is thinking or redacted_thinking, got {kind!r}")


def _steps(document: Mapping[str, Any] | None) -> list[str]:
    """The note on the trajectory's steps, which repeat the history and are not read."""
    steps = document.get("trajectory") if document is not None else None
    if not isinstance(steps, list) or not steps:
        return []
    return [f"the trajectory's {len(steps)} steps repeat the history's messages: not read"]
