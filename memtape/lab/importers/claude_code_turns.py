"""The entries of a Claude Code session's thread as turns and compactions: one turn per
response, the tool results after it, a compact boundary before the turn that follows it
(``memtape.lab.importers.claude_code`` says what imports and how)."""

from collections.abc import Mapping
from typing import Any

import attrs

from memtape.core.errors import BadInput
from memtape.lab.importers import anthropic
from memtape.lab.importers.claude_code_thread import BOUNDARY, MESSAGES, Graph
from memtape.lab.importers.fields import anthropic_usage, token_count
from memtape.lab.importers.ledger import Tally
from memtape.lab.importers.records import Record, Source
from memtape.lab.importers.transcript import Compaction, Transcript, Turns
from memtape.scenarios.usage import Usage

CLEARED = "context cleared"
"""The trigger of the compaction standing for a context cleared within the session's file."""

SYNTHETIC = "<synthetic>"
"""The model Claude Code names on a response it wrote itself, without asking one."""


@attrs.define
class _Boundary:
    """A compact boundary seen, waiting for the turn it comes before."""

    where: str
    turns: int
    trigger: str | None
    pre_tokens: int | None
    post_tokens: int | None
    segment: "Kept | None"
    summary: str | None = None


@attrs.frozen
class Kept:
    """The messages a partial compaction kept verbatim: the segment walked from ``tail`` back
    to ``head``, or the ``listed`` uuids."""

    head: str = ""
    tail: str = ""
    listed: tuple[str, ...] = ()


@attrs.define
class _Response:
    """The entries of one assistant response (one ``message.id``), gathered into one turn,
    and the tool results written while it was being gathered."""

    id: object
    where: str
    parts: list[str]
    calls: list[str]
    entries: list[int]
    usage: Usage | None = None
    results: list[tuple[int, Any, str]] = attrs.field(factory=list)


class Reader:
    """One pass over a session's thread, turning entries into turns and compactions."""

    def __init__(self, source: Source) -> None:
        self.turns = Turns(source.path)
        self.compactions: list[Compaction] = []
        self.segments: list[tuple[int, Kept, str]] = []
        self.notes: list[str] = []
        self.boundary: _Boundary | None = None
        self.response: _Response | None = None
        self.origin: dict[int, list[int]] = {}
        """The turns (their numbers) each entry, by index, became."""

    def entry(self, index: int, record: Record) -> bool:
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
            self._assistant(index, message, content, where)
            return True
        if self.response is not None and _only_results(content):
            self.response.results.append((index, content, where))
            return True
        self._flush()
        self._settle()
        self._user(index, content, where)
        return True

    def _user(self, index: int, content: Any, where: str) -> None:
        first = len(self.turns)
        anthropic.message("user", content, where, self.turns)
        self.origin.setdefault(index, []).extend(range(first + 1, len(self.turns) + 1))

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
        kept = _kept(metadata)
        if kept is None and any(key.startswith("preserved") for key in metadata):
            self.notes.append(
                f"the compaction at {where} kept messages verbatim but names them in no form "
                "read here: recorded folds every turn before it"
            )
        self.boundary = _Boundary(
            where,
            len(self.turns),
            trigger if isinstance(trigger, str) else None,
            token_count(metadata.get("preTokens"), f"{where}: preTokens"),
            token_count(metadata.get("postTokens"), f"{where}: postTokens"),
            kept,
        )

    def cleared(self, where: str) -> None:
        """A chain of the thread begins at ``where`` after turns of it: the context was
        cleared, a compaction to nothing before the turn that follows."""
        self._flush()
        if not self.turns or self.boundary is not None:
            return
        self.notes.append(
            f"{where}: a chain begins here (no parentUuid) after the session's earlier "
            "messages: the context was cleared, a compaction to nothing before the next turn"
        )
        self.boundary = _Boundary(where, len(self.turns), CLEARED, None, None, None, "")

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

    def _assistant(self, index: int, message: Mapping[str, Any], content: Any, where: str) -> None:
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not isinstance(content, list):
            raise BadInput(f"{where}: content must be a string or a list of blocks")
        identity = message.get("id")
        response = self.response
        if response is None or identity is None or response.id != identity:
            self._flush()
            response = self.response = _Response(identity, where, [], [], [])
        response.entries.append(index)
        # Claude Code writes some responses itself (an API error, "No response requested."):
        # model <synthetic>, every count zero. No request was made: no model, no usage.
        if message.get("model") != SYNTHETIC:
            self.turns.asked(message.get("model"))
        usage = anthropic_usage(message.get("usage"), f"{where}: usage")
        if usage is not None and any(attrs.astuple(usage)):
            response.usage = usage
        for number, block in enumerate(content, start=1):
            text, call = anthropic.assistant_block(block, f"{where}: block {number}")
            response.parts.append(text)
            if call is not None:
                response.calls.append(call)

    def _flush(self) -> None:
        """Add the assistant response gathered so far as one turn, then its results."""
        response, self.response = self.response, None
        if response is None:
            return
        self._settle()
        self.turns.add(
            "assistant", response.parts, response.where, calls=response.calls, usage=response.usage
        )
        for index in response.entries:
            self.origin.setdefault(index, []).append(len(self.turns))
        for index, content, where in response.results:
            self._user(index, content, where)

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
        if boundary.segment is not None:
            self.segments.append((len(self.compactions), boundary.segment, boundary.where))
        self.compactions.append(
            Compaction(
                boundary.turns + 1,
                summary,
                boundary.where,
                boundary.trigger,
                boundary.pre_tokens,
                boundary.post_tokens,
            )
        )

    def finish(self, format: str, tally: Tally, graph: Graph) -> Transcript:
        """The transcript of ``format`` read, once every entry of the thread went through
        ``entry``."""
        self._flush()
        if self.boundary is not None:
            self.notes.append(
                f"the compaction at {self.boundary.where} is followed by no turn: nothing to "
                "apply it at"
            )
        for number, segment, where in self.segments:
            compaction = self.compactions[number]
            kept = self._kept_turns(graph, segment)
            earlier = [turn for turn in kept or () if turn < compaction.before]
            preserved = (min(earlier), max(earlier)) if earlier else None
            if preserved is None:
                found = (
                    "are written again after its summary: they are turns after it, and"
                    if kept
                    else "cannot be found in this file:"
                )
                self.notes.append(
                    f"the messages the compaction at {where} kept verbatim {found} recorded "
                    "folds every turn before it"
                )
            self.compactions[number] = attrs.evolve(compaction, preserved=preserved)
        return self.turns.transcript(format, self.compactions, self.notes, tally)

    def _kept_turns(self, graph: Graph, kept: Kept) -> list[int] | None:
        """The turns the kept entries (and their results) became, wherever they are in the
        file; None when they cannot be found."""
        entries = graph.listed(kept.listed) if kept.listed else graph.segment(kept.head, kept.tail)
        if entries is None:
            return None
        return [
            turn
            for index in entries
            for side in (index, *graph.results_of(index))
            for turn in self.origin.get(side, ())
        ]


def _kept(metadata: Mapping[str, Any]) -> Kept | None:
    """What a boundary's metadata says the compaction kept verbatim: ``preservedSegment``'s
    head and tail, else the uuids ``preservedMessages`` lists (``allUuids``, or ``uuids``,
    which may name the ends alone: the turns between the first and the last are kept);
    None when it says neither."""
    segment = metadata.get("preservedSegment")
    if isinstance(segment, Mapping):
        head, tail = segment.get("headUuid"), segment.get("tailUuid")
        if isinstance(head, str) and isinstance(tail, str):
            return Kept(head, tail)
    listed = metadata.get("preservedMessages")
    if isinstance(listed, Mapping):
        for key in ("allUuids", "uuids"):
            uuids = listed.get(key)
            if isinstance(uuids, list) and uuids and all(isinstance(u, str) for u in uuids):
                return Kept(listed=tuple(uuids))
    return None


def _only_results(content: Any) -> bool:
    """Whether a user message's content is tool results and nothing else."""
    return (
        isinstance(content, list)
        and bool(content)
        and all(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)
    )


def _texts(content: Any, where: str) -> list[str]:
    """The texts of a compact summary's content: a string or text blocks."""
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [
            anthropic.user_block(block, f"{where}: block {n}") for n, block in enumerate(content, 1)
        ]
    raise BadInput(f"{where}: content must be a string or a list of blocks")
