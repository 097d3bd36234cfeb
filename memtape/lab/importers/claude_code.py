"""Claude Code session files (``~/.claude/projects/<project>/<session>.jsonl``) as turns.

Each line is an entry with a ``type``. ``user`` and ``assistant`` entries
carry an Anthropic-style ``message`` (its content as ``anthropic`` reads
it), a ``uuid`` and the ``parentUuid`` of the entry before it. ``system``
entries are the session's own events; one of them, ``subtype:
"compact_boundary"``, marks a compaction: it starts a new chain
(``parentUuid`` null) whose ``logicalParentUuid`` is the last entry before
it, with ``compactMetadata`` (``trigger``, ``preTokens``), and the next entry
is a ``user`` one with ``isCompactSummary`` whose content is the summary
the agent continued from.

What imports:

- The main thread, in ``parentUuid`` order: walked back from the last
  entry that is not on a sidechain, across each compact boundary to its
  ``logicalParentUuid`` (or, in a file without one, the entry before it).
  Entries on a sidechain (``isSidechain``: a subagent's own conversation)
  are left out unless ``sidechains`` is set: then each takes its place in
  file order among the main thread's.
- ``user`` and ``assistant`` entries as ``anthropic`` reads their
  messages: a tool result is a ``tool`` turn of its own. Claude Code writes
  one entry per content block of a response; consecutive ``assistant``
  entries of one ``message.id`` are that one response, so they are one turn
  (a response calling two tools in parallel is one turn with two calls).
- Each compact boundary becomes a ``Compaction`` (the summary, the
  trigger, the tokens before) before the turn that follows it, never a
  turn: the summary is not conversation but what the agent kept of it, and
  a policy benched on the session must not see it. The ``recorded``
  compaction policy applies it. A boundary before the first turn has
  nothing to fold: its summary is the context the file starts from, and
  imports as the first (user) turn.

What does not import, said in the scenario's comment: entries that are not
messages (``summary`` titles, ``file-history-snapshot``, ``progress``,
``system`` events other than a compact boundary), sidechain entries, and
``user``/``assistant`` entries off the main thread (a branch the session
left, after a rewind or a retry).
"""

from collections import Counter
from collections.abc import Mapping
from typing import Any

import attrs

from memtape.core.errors import BadInput
from memtape.lab.importers import anthropic
from memtape.lab.importers.records import Record, Source
from memtape.lab.importers.transcript import Compaction, Transcript, Turns

FORMAT = "claude-code"
"""The name ``--format`` gives this format."""

MESSAGES = ("user", "assistant")
"""The entry types that carry a message."""

BOUNDARY = "compact_boundary"
"""The ``subtype`` of the ``system`` entry that marks a compaction."""


@attrs.define
class _Boundary:
    """A compact boundary seen, waiting for the turn it comes before."""

    where: str
    turns: int
    trigger: str | None
    pre_tokens: int | None
    summary: str | None = None


@attrs.define
class _Response:
    """The entries of one assistant response (one ``message.id``), gathered into one turn."""

    id: object
    where: str
    parts: list[str]
    calls: list[str]


class _Reader:
    """One pass over a session's thread, turning entries into turns and compactions."""

    def __init__(self, source: Source) -> None:
        self.turns = Turns(source.path)
        self.compactions: list[Compaction] = []
        self.notes: list[str] = []
        self.boundary: _Boundary | None = None
        self.response: _Response | None = None

    def entry(self, record: Record) -> bool:
        """Import one entry of the thread; whether it was a message or a boundary."""
        data, where = record.data, record.where
        kind = data.get("type")
        if kind == "system" and data.get("subtype") == BOUNDARY and not data.get("isSidechain"):
            self._boundary(data, where)
            return True
        if kind not in MESSAGES:
            return False
        message = data.get("message")
        if not isinstance(message, dict) or "content" not in message:
            raise BadInput(f"{where}: a {kind} entry needs a message with content")
        content = message["content"]
        if data.get("isCompactSummary") is True and kind == "user":
            self._summary(content, where)
            return True
        if kind == "assistant":
            self._assistant(message, content, where)
            return True
        self._flush()
        self._settle()
        anthropic.message("user", content, where, self.turns)
        return True

    def _boundary(self, data: Mapping[str, Any], where: str) -> None:
        self._flush()
        if self.boundary is not None:
            raise BadInput(
                f"{where}: a second compact boundary with no turn since the one at "
                f"{self.boundary.where}"
            )
        metadata = data.get("compactMetadata")
        metadata = metadata if isinstance(metadata, Mapping) else {}
        trigger = metadata.get("trigger")
        pre = metadata.get("preTokens")
        pre_tokens = (
            pre if isinstance(pre, int) and not isinstance(pre, bool) and pre >= 0 else None
        )
        if any(key.startswith("preserved") for key in metadata):
            self.notes.append(
                f"the compaction at {where} kept some messages verbatim; recorded folds every "
                "turn before it"
            )
        self.boundary = _Boundary(
            where, len(self.turns), trigger if isinstance(trigger, str) else None, pre_tokens
        )

    def _summary(self, content: Any, where: str) -> None:
        self._flush()
        text = "\n".join(_texts(content, where))
        boundary = self.boundary
        if boundary is not None and boundary.summary is None:
            boundary.summary = text
            return
        self._settle()
        self.notes.append(f"the compact summary at {where} follows no boundary: it is a user turn")
        self.turns.add("user", [text], where)

    def _assistant(self, message: Mapping[str, Any], content: Any, where: str) -> None:
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not isinstance(content, list):
            raise BadInput(f"{where}: content must be a string or a list of blocks")
        identity = message.get("id")
        response = self.response
        if response is None or identity is None or response.id != identity:
            self._flush()
            response = self.response = _Response(identity, where, [], [])
        for number, block in enumerate(content, start=1):
            text, call = anthropic.assistant_block(block, f"{where}: block {number}")
            response.parts.append(text)
            if call is not None:
                response.calls.append(call)

    def _flush(self) -> None:
        """Add the assistant response gathered so far as one turn."""
        response, self.response = self.response, None
        if response is not None:
            self._settle()
            self.turns.add("assistant", response.parts, response.where, calls=response.calls)

    def _settle(self) -> None:
        """A turn is about to be added: the waiting boundary, if any, comes before it."""
        boundary, self.boundary = self.boundary, None
        if boundary is None:
            return
        summary = boundary.summary
        if summary is None:
            self.notes.append(f"the compact boundary at {boundary.where} has no summary after it")
            summary = ""
        if boundary.turns == 0:
            self.notes.append(
                f"the compact boundary at {boundary.where} precedes every turn: its summary is "
                "the first turn"
            )
            self.turns.add("user", [summary], boundary.where)
            return
        self.compactions.append(
            Compaction(
                boundary.turns + 1, summary, boundary.where, boundary.trigger, boundary.pre_tokens
            )
        )

    def finish(self) -> Transcript:
        """The transcript read, once every entry of the thread went through ``entry``."""
        self._flush()
        if self.boundary is not None:
            self.notes.append(
                f"the compaction at {self.boundary.where} is followed by no turn: nothing to "
                "apply it at"
            )
        return self.turns.transcript(FORMAT, self.compactions, self.notes)


def read(source: Source, *, sidechains: bool = False) -> Transcript:
    """The turns and compactions of a Claude Code session's main thread (and, with
    ``sidechains``, its sidechains')."""
    records = source.records
    for record in records:
        if not isinstance(record.data, dict) or not isinstance(record.data.get("type"), str):
            raise BadInput(f"{record.where}: a Claude Code entry is an object with a type")
    thread, start = _thread(records)
    side = [i for i, r in enumerate(records) if _is_message(r.data) and r.data.get("isSidechain")]
    if not thread and side and not sidechains:
        raise BadInput(
            f"{source.path}: every message is on a sidechain (a subagent's own file): "
            "--sidechains imports them"
        )
    order = _merged(thread, side) if sidechains else thread
    reader = _Reader(source)
    if start is not None:
        reader.notes.append(start)
    imported = {index for index in order if reader.entry(records[index])}
    transcript = reader.finish()
    notes = [*transcript.notes, *_left_out(records, imported, set(side), sidechains)]
    return attrs.evolve(transcript, notes=tuple(notes))


def _thread(records: tuple[Record, ...]) -> tuple[list[int], str | None]:
    """The indices of the main thread's entries in ``parentUuid`` order, and a note when the
    thread's first parent is not in the file."""
    by_uuid = {
        r.data["uuid"]: i for i, r in enumerate(records) if isinstance(r.data.get("uuid"), str)
    }
    leaf = next(
        (
            i
            for i in range(len(records) - 1, -1, -1)
            if _on_thread(records[i].data) and not records[i].data.get("isSidechain")
        ),
        None,
    )
    thread: list[int] = []
    seen: set[int] = set()
    index = leaf
    while index is not None:
        if index in seen:
            raise BadInput(f"{records[index].where}: the parentUuid chain loops back here")
        seen.add(index)
        thread.append(index)
        data = records[index].data
        parent = data.get("parentUuid")
        if parent is None and data.get("subtype") == BOUNDARY:
            parent = data.get("logicalParentUuid")
            if parent is None:
                index = _before(records, index)
                continue
        if parent is None:
            break
        if parent not in by_uuid:
            thread.reverse()
            note = (
                f"the thread starts at {records[index].where}: its parent {parent!r} is not "
                "in this file"
            )
            return thread, note
        index = by_uuid[parent]
    thread.reverse()
    return thread, None


def _before(records: tuple[Record, ...], index: int) -> int | None:
    """The main-thread message before ``index`` in file order (a boundary without its
    ``logicalParentUuid`` links to it)."""
    for i in range(index - 1, -1, -1):
        data = records[i].data
        if _is_message(data) and not data.get("isSidechain") and isinstance(data.get("uuid"), str):
            return i
    return None


def _merged(thread: list[int], side: list[int]) -> list[int]:
    """The thread with each sidechain entry placed before the first thread entry after it in
    the file."""
    merged: list[int] = []
    pending = iter(side)
    waiting = next(pending, None)
    for index in thread:
        while waiting is not None and waiting < index:
            merged.append(waiting)
            waiting = next(pending, None)
        merged.append(index)
    while waiting is not None:
        merged.append(waiting)
        waiting = next(pending, None)
    return merged


def _left_out(
    records: tuple[Record, ...], imported: set[int], side: set[int], sidechains: bool
) -> list[str]:
    """One note per kind of entry that did not import."""
    sidechain = off = 0
    others: Counter[str] = Counter()
    for index, record in enumerate(records):
        if index in imported:
            continue
        data = record.data
        if _is_message(data) and index in side and not sidechains:
            sidechain += 1
        elif _is_message(data):
            off += 1
        elif data.get("type") == "system" and isinstance(data.get("subtype"), str):
            others[f"system ({data['subtype']})"] += 1
        else:
            others[str(data["type"])] += 1
    notes = []
    if sidechain:
        notes.append(f"left out: {sidechain} sidechain entries (--sidechains imports them)")
    if off:
        notes.append(f"left out: {off} user/assistant entries off the main thread")
    if others:
        kinds = ", ".join(f"{count} {kind}" for kind, count in sorted(others.items()))
        notes.append(f"left out, not messages: {kinds}")
    return notes


def _is_message(data: Mapping[str, Any]) -> bool:
    return data.get("type") in MESSAGES


def _on_thread(data: Mapping[str, Any]) -> bool:
    """Whether an entry can end the main thread: a message or a session event with a uuid."""
    return data.get("type") in (*MESSAGES, "system") and isinstance(data.get("uuid"), str)


def _texts(content: Any, where: str) -> list[str]:
    """The texts of a compact summary's content: a string or text blocks."""
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [
            anthropic.user_block(block, f"{where}: block {n}") for n, block in enumerate(content, 1)
        ]
    raise BadInput(f"{where}: content must be a string or a list of blocks")
