"""A Claude Code session's entries as the tree their ``parentUuid`` links make, and which of
them are the main thread (``memtape.lab.importers.claude_code`` says how it is walked)."""

from collections.abc import Mapping, Sequence
from typing import Any

from memtape.core.errors import BadInput
from memtape.lab.importers.records import Record

MESSAGES = ("user", "assistant")
"""The entry types that carry a message."""

BOUNDARY = "compact_boundary"
"""The ``subtype`` of the ``system`` entry that marks a compaction."""


class Graph:
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

    def spine(self) -> tuple[list[int], list[str], set[int]]:
        """The main thread's entries from the last one back, in ``parentUuid`` order, and a
        note for each parent the walk did not find in the file: an entry whose parent was
        never written (a hook's progress hanging off an entry Claude Code did not keep) goes
        on from the message before it in the file, as a compact boundary without its logical
        parent does; the first entry's is where the thread starts. And the entries where a
        chain of the thread begins (no ``parentUuid``, no compact boundary) after messages of
        the main thread: the context was cleared there (accepting a plan with a fresh
        context starts such a chain in the same file), and the walk goes on from the message
        before it."""
        records = self.records
        index = next(
            (
                i
                for i in range(len(records) - 1, -1, -1)
                if on_thread(records[i].data) and not records[i].data.get("isSidechain")
            ),
            None,
        )
        spine: list[int] = []
        notes: list[str] = []
        cleared: set[int] = set()
        seen: set[int] = set()
        while index is not None:
            if index in seen:
                raise BadInput(f"{records[index].where}: the parentUuid chain loops back here")
            seen.add(index)
            spine.append(index)
            data = records[index].data
            parent = data.get("parentUuid")
            if parent is None and data.get("subtype") == BOUNDARY:
                index = self._across(index)
                continue
            if parent is None:
                index = self._before(index)
                if index is not None:
                    cleared.add(spine[-1])
                continue
            if parent not in self.by_uuid:
                before = self._before(index)
                if before is None:
                    notes.append(
                        f"the thread starts at {records[index].where}: its parent {parent!r} is "
                        "not in this file"
                    )
                    return spine, notes, cleared
                notes.append(
                    f"{records[index].where}: its parent {parent!r} is not in this file: the "
                    "thread goes on from the message before it"
                )
                index = before
                continue
            index = self.by_uuid[parent]
        return spine, notes, cleared

    def thread(self, spine: list[int]) -> set[int]:
        """The spine and every side branch of it that belongs to the thread: the other
        entries of a response it holds, the results hanging off them, and what passes
        between (progress and other entries that are not messages)."""
        records = self.records
        thread = set(spine)
        responses = {
            response_id(records[i].data)
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
                    identity = response_id(data)
                    if identity is None or identity not in responses:
                        continue
                elif kind == "user":
                    if not holds_results(message_content(data)):
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
            data = self.records[index].data
            parent = data.get("parentUuid")
            if parent is None and data.get("subtype") == BOUNDARY:
                index = self._across(index)
            else:
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
            and holds_results(message_content(self.records[child].data))
        ]

    def _across(self, index: int) -> int | None:
        """Where the thread goes on before the compact boundary at ``index``: its
        ``logicalParentUuid``, or, when the file does not hold that entry before the
        boundary (none, or a kept message written again after the summary), the message
        before the boundary in file order."""
        logical = self.records[index].data.get("logicalParentUuid")
        parent = self.by_uuid.get(logical) if isinstance(logical, str) else None
        return parent if parent is not None and parent < index else self._before(index)

    def _before(self, index: int) -> int | None:
        """The main-thread message before ``index`` in file order (a boundary without its
        logical parent in the file links to it)."""
        for i in range(index - 1, -1, -1):
            data = self.records[i].data
            if (
                is_message(data)
                and not data.get("isSidechain")
                and isinstance(data.get("uuid"), str)
            ):
                return i
        return None


def message_content(data: Mapping[str, Any]) -> Any:
    """The content of a message entry's message, None for an entry without one."""
    message = data.get("message")
    return message.get("content") if isinstance(message, dict) else None


def holds_results(content: Any) -> bool:
    """Whether a user message's content holds a tool result (a branch holding one is the
    thread's: Claude Code hangs each result off the entry that made its call)."""
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )


def response_id(data: Mapping[str, Any]) -> object:
    """The ``message.id`` of an entry: the response it is a part of (None for none)."""
    message = data.get("message")
    return message.get("id") if isinstance(message, dict) else None


def is_message(data: Mapping[str, Any]) -> bool:
    """Whether an entry is a ``user`` or ``assistant`` message."""
    return data.get("type") in MESSAGES


def on_thread(data: Mapping[str, Any]) -> bool:
    """Whether an entry can end the main thread: a message or a session event with a uuid."""
    return data.get("type") in (*MESSAGES, "system") and isinstance(data.get("uuid"), str)
