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

- The main thread, as Claude Code's own resume rebuilds it: walked back
  along ``parentUuid`` from the last entry that is not on a sidechain,
  across each compact boundary to its ``logicalParentUuid`` (or, when the
  boundary has none or names an entry this file does not hold, to the entry
  before it in the file); then every side branch that belongs to that
  thread: the entries of a response the thread holds (one ``message.id``:
  parallel calls are written as one entry each, chained or side by side)
  and the tool results that hang off them (each result's ``parentUuid`` is
  the entry that made its call, so all but one sit off the walked line).
  Any other branch is one the session left (a rewind, a retry) and does not
  import. The thread's entries import in file order. Entries on a sidechain
  (``isSidechain``: a subagent's own conversation) are left out unless
  ``sidechains`` is set: then each takes its place in file order among the
  main thread's.
- ``user`` and ``assistant`` entries as ``anthropic`` reads their
  messages: a tool result is a ``tool`` turn of its own. Claude Code writes
  one entry per content block of a response; the entries of one
  ``message.id`` are that one response, so they are one turn (a response
  calling two tools in parallel is one turn with two calls), followed by
  the results written between them. Its ``usage`` (``input_tokens``,
  ``output_tokens``, ``cache_read_input_tokens``,
  ``cache_creation_input_tokens``, as the response's last entry says) is
  the turn's ``usage``.
- Each compact boundary becomes a ``Compaction`` (the summary, the
  trigger, ``preTokens`` and ``postTokens``) before the turn that follows
  it, never a turn: the summary is not conversation but what the agent kept
  of it, and a policy benched on the session must not see it. The
  ``recorded`` compaction policy applies it. A partial compaction's
  ``preservedSegment`` (``headUuid`` to ``tailUuid``: the messages the
  agent kept verbatim, still in the file before the boundary), or, without
  one, its ``preservedMessages`` (their uuids listed), becomes the
  compaction's ``preserved`` turns, which ``recorded`` keeps HOT. A
  boundary before the first turn has nothing to fold: its summary is the
  context the file starts from, and imports as the first (user) turn.

What does not import is counted in the ledger (``memtape.lab.importers.
ledger``), by kind: entries that are not messages (``summary`` titles,
``file-history-snapshot``, ``progress``, ``system`` events other than a
compact boundary), sidechain entries, and messages on a branch the session
left (``rewound branch``). The ledger counts every ``tool_use`` and
``tool_result`` block of every message entry, so a call or result that is
neither imported nor in an entry left out refuses the import, named.
"""

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from memtape.core.errors import BadInput
from memtape.lab.importers import anthropic
from memtape.lab.importers.fields import anthropic_usage, token_count
from memtape.lab.importers.ledger import Tally
from memtape.lab.importers.records import Record, Source
from memtape.lab.importers.transcript import Compaction, Transcript, Turns
from memtape.scenarios.usage import Usage

FORMAT = "claude-code"
"""The name ``--format`` gives this format."""

MESSAGES = ("user", "assistant")
"""The entry types that carry a message."""

BOUNDARY = "compact_boundary"
"""The ``subtype`` of the ``system`` entry that marks a compaction."""

SIDECHAIN = "sidechain"
"""The ledger's kind for a sidechain's entries left out."""

REWOUND = "rewound branch"
"""The ledger's kind for the messages of a branch the session left."""


@attrs.define
class _Boundary:
    """A compact boundary seen, waiting for the turn it comes before."""

    where: str
    turns: int
    trigger: str | None
    pre_tokens: int | None
    post_tokens: int | None
    segment: "_Kept | None"
    summary: str | None = None


@attrs.frozen
class _Kept:
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


class _Reader:
    """One pass over a session's thread, turning entries into turns and compactions."""

    def __init__(self, source: Source) -> None:
        self.turns = Turns(source.path)
        self.compactions: list[Compaction] = []
        self.segments: list[tuple[int, _Kept, str]] = []
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
        self.turns.asked(message.get("model"))
        usage = anthropic_usage(message.get("usage"), f"{where}: usage")
        if usage is not None:
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

    def finish(self, tally: Tally, graph: "_Graph") -> Transcript:
        """The transcript read, once every entry of the thread went through ``entry``."""
        self._flush()
        if self.boundary is not None:
            self.notes.append(
                f"the compaction at {self.boundary.where} is followed by no turn: nothing to "
                "apply it at"
            )
        for number, segment, where in self.segments:
            compaction = self.compactions[number]
            preserved = self._preserved(graph, segment, compaction.before)
            if preserved is None:
                self.notes.append(
                    f"the messages the compaction at {where} kept verbatim cannot be found "
                    "in this file: recorded folds every turn before it"
                )
            self.compactions[number] = attrs.evolve(compaction, preserved=preserved)
        return self.turns.transcript(FORMAT, self.compactions, self.notes, tally)

    def _preserved(self, graph: "_Graph", kept: _Kept, before: int) -> tuple[int, int] | None:
        """The first and last turn the kept entries became, before turn ``before``; None when
        they cannot be found."""
        entries = graph.listed(kept.listed) if kept.listed else graph.segment(kept.head, kept.tail)
        if entries is None:
            return None
        numbers = [
            turn
            for index in entries
            for side in (index, *graph.results_of(index))
            for turn in self.origin.get(side, ())
            if turn < before
        ]
        return (min(numbers), max(numbers)) if numbers else None


class _Graph:
    """A session's entries as the tree their ``parentUuid`` links make."""

    def __init__(self, records: Sequence[Record]) -> None:
        self.records = records
        self.by_uuid: dict[str, int] = {}
        self.children: dict[str, list[int]] = {}
        for index, record in enumerate(records):
            data = record.data
            if isinstance(data.get("uuid"), str):
                self.by_uuid.setdefault(data["uuid"], index)
            parent = data.get("parentUuid")
            if isinstance(parent, str):
                self.children.setdefault(parent, []).append(index)

    def spine(self) -> tuple[list[int], str | None]:
        """The main thread's entries from the last one back, in ``parentUuid`` order, and a
        note when the thread's first parent is not in the file."""
        records = self.records
        index = next(
            (
                i
                for i in range(len(records) - 1, -1, -1)
                if _on_thread(records[i].data) and not records[i].data.get("isSidechain")
            ),
            None,
        )
        spine: list[int] = []
        seen: set[int] = set()
        while index is not None:
            if index in seen:
                raise BadInput(f"{records[index].where}: the parentUuid chain loops back here")
            seen.add(index)
            spine.append(index)
            data = records[index].data
            parent = data.get("parentUuid")
            if parent is None and data.get("subtype") == BOUNDARY:
                logical = data.get("logicalParentUuid")
                if logical not in self.by_uuid:
                    index = self._before(index)
                    continue
                parent = logical
            if parent is None:
                break
            if parent not in self.by_uuid:
                note = (
                    f"the thread starts at {records[index].where}: its parent {parent!r} is not "
                    "in this file"
                )
                return spine, note
            index = self.by_uuid[parent]
        return spine, None

    def thread(self, spine: list[int]) -> set[int]:
        """The spine and every side branch of it that belongs to the thread: the other
        entries of a response it holds, the results hanging off them, and what passes
        between (progress and other entries that are not messages)."""
        records = self.records
        thread = set(spine)
        responses = {
            _response_id(records[i].data)
            for i in spine
            if records[i].data.get("type") == "assistant"
        }
        responses.discard(None)
        waiting = list(spine)
        while waiting:
            uuid = records[waiting.pop()].data.get("uuid")
            for child in self.children.get(uuid, ()) if isinstance(uuid, str) else ():
                data = records[child].data
                if child in thread or data.get("isSidechain"):
                    continue
                kind = data.get("type")
                if kind == "assistant":
                    identity = _response_id(data)
                    if identity is None or identity not in responses:
                        continue
                elif kind == "user":
                    if not _holds_results(_content(data)):
                        continue
                elif kind == "system":
                    continue
                thread.add(child)
                waiting.append(child)
        return thread

    def segment(self, head: str, tail: str) -> list[int] | None:
        """The entries from ``tail`` back to ``head`` along ``parentUuid``, or None when
        the walk does not reach ``head`` in this file."""
        index = self.by_uuid.get(tail)
        walked: list[int] = []
        while index is not None and index not in walked:
            walked.append(index)
            if self.records[index].data.get("uuid") == head:
                return walked
            parent = self.records[index].data.get("parentUuid")
            index = self.by_uuid.get(parent) if isinstance(parent, str) else None
        return None

    def listed(self, uuids: tuple[str, ...]) -> list[int] | None:
        """The entries of ``uuids``, or None when one is not in this file."""
        found = [self.by_uuid.get(uuid) for uuid in uuids]
        return [index for index in found if index is not None] if None not in found else None

    def results_of(self, index: int) -> list[int]:
        """The tool-result entries hanging off the entry at ``index``."""
        uuid = self.records[index].data.get("uuid")
        return [
            child
            for child in (self.children.get(uuid, ()) if isinstance(uuid, str) else ())
            if self.records[child].data.get("type") == "user"
            and _holds_results(_content(self.records[child].data))
        ]

    def _before(self, index: int) -> int | None:
        """The main-thread message before ``index`` in file order (a boundary without its
        logical parent in the file links to it)."""
        for i in range(index - 1, -1, -1):
            data = self.records[i].data
            if (
                _is_message(data)
                and not data.get("isSidechain")
                and isinstance(data.get("uuid"), str)
            ):
                return i
        return None


def read(source: Source, *, sidechains: bool = False) -> Transcript:
    """The turns and compactions of a Claude Code session's main thread (and, with
    ``sidechains``, its sidechains'), with the ledger of every entry."""
    records = source.records
    for record in records:
        if not isinstance(record.data, dict) or not isinstance(record.data.get("type"), str):
            raise BadInput(f"{record.where}: a Claude Code entry is an object with a type")
    graph = _Graph(records)
    spine, start = graph.spine()
    thread = graph.thread(spine)
    side = {i for i, r in enumerate(records) if _is_message(r.data) and r.data.get("isSidechain")}
    if not any(_is_message(records[i].data) for i in thread) and side and not sidechains:
        raise BadInput(
            f"{source.path}: every message is on a sidechain (a subagent's own file): "
            "--sidechains imports them"
        )
    order = sorted(thread | side) if sidechains else sorted(thread)
    reader = _Reader(source)
    if start is not None:
        reader.notes.append(start)
    tally = Tally(source)
    imported = {index for index in order if reader.entry(index, records[index])}
    for index, record in enumerate(records):
        calls, results = _blocks(record.data)
        if index in imported:
            tally.took(record.where, calls=calls, results=results)
        else:
            kind = _kind(record.data, index in side)
            tally.left_out(kind, record.where, calls=calls, results=results)
    if side and not sidechains:
        reader.notes.append(
            f"{len(side)} sidechain entries (subagents') left out: --sidechains imports them"
        )
    return reader.finish(tally, graph)


def _kept(metadata: Mapping[str, Any]) -> _Kept | None:
    """What a boundary's metadata says the compaction kept verbatim: ``preservedSegment``'s
    head and tail, else the uuids ``preservedMessages`` lists (``allUuids``, or ``uuids``,
    which may name the ends alone: the turns between the first and the last are kept);
    None when it says neither."""
    segment = metadata.get("preservedSegment")
    if isinstance(segment, Mapping):
        head, tail = segment.get("headUuid"), segment.get("tailUuid")
        if isinstance(head, str) and isinstance(tail, str):
            return _Kept(head, tail)
    listed = metadata.get("preservedMessages")
    if isinstance(listed, Mapping):
        for key in ("allUuids", "uuids"):
            uuids = listed.get(key)
            if isinstance(uuids, list) and uuids and all(isinstance(u, str) for u in uuids):
                return _Kept(listed=tuple(uuids))
    return None


def _kind(data: Mapping[str, Any], sidechain: bool) -> str:
    """What the ledger calls an entry left out."""
    if _is_message(data):
        return SIDECHAIN if sidechain else REWOUND
    if data.get("type") == "system" and isinstance(data.get("subtype"), str):
        return f"system ({data['subtype']})"
    return str(data["type"])


def _blocks(data: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """The ids of the ``tool_use`` and ``tool_result`` blocks of a message entry, read from
    its raw content (the ledger's count, apart from the turns)."""
    if not _is_message(data):
        return [], []
    content = _content(data)
    if not isinstance(content, list):
        return [], []
    calls = [
        str(b.get("id")) for b in content if isinstance(b, dict) and b.get("type") == "tool_use"
    ]
    results = [
        str(b.get("tool_use_id"))
        for b in content
        if isinstance(b, dict) and b.get("type") == "tool_result"
    ]
    return calls, results


def _content(data: Mapping[str, Any]) -> Any:
    message = data.get("message")
    return message.get("content") if isinstance(message, dict) else None


def _only_results(content: Any) -> bool:
    """Whether a user message's content is tool results and nothing else."""
    return (
        isinstance(content, list)
        and bool(content)
        and all(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)
    )


def _holds_results(content: Any) -> bool:
    """Whether a user message's content holds a tool result (a branch holding one is the
    thread's: Claude Code hangs each result off the entry that made its call)."""
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )


def _response_id(data: Mapping[str, Any]) -> object:
    message = data.get("message")
    return message.get("id") if isinstance(message, dict) else None


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
