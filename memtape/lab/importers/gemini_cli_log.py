"""The chat a Gemini CLI session file records, record by record: its messages in order, the
versions that replaced them, its rewinds, rollbacks and compressions
(``memtape.lab.importers.gemini_cli`` says what each message becomes).

The JSONL log appends a message each time it is written (a message written
again under its ``id`` replaces the earlier version in its place),
``{"$rewindTo": ID}`` when the user rewinds (that message and every one
after it dropped), and ``{"$set": {...}}`` to update the metadata. Gemini
CLI writes a ``$set`` of ``messages`` whenever it syncs its record with the
history it sends the model (``ChatRecordingService.updateMessagesFromHistory``):
the chat is then those messages, each kept under its id or new. Read so:

- every message read before is among them: their versions replace the
  earlier ones, the new ones join in their place;
- they are the first messages read before, in order, and nothing new: a
  **rollback** (a reply that failed or was cancelled is taken back, as
  ``GeminiChat`` rolls its history back to its length before the prompt):
  read as a ``$rewindTo`` of the first message dropped, the dropped ones
  counted as rewound;
- otherwise a **compression** (``/compress``, or the automatic one near the
  context limit: the history becomes a summary the model wrote, a ``Got it``
  from the model, and the turns kept, and the chat starts anew from them; or
  a history trimmed or masked, rewritten so): every message read before
  stays imported, and a compaction follows them. Its summary is the first
  run of messages the ``$set`` holds that were not read before (the summary
  and its acknowledgement); the messages read before that it holds again are
  its ``preserved`` turns (kept verbatim); new messages after those are the
  chat going on. A message imported before a compression that a later
  ``$set`` lists again (each sync lists the whole history) is not imported
  twice; a rewind to one is refused, named: it would take back what the
  compaction already folded.

The metadata's own ``messages`` (the first line of a log migrated from the
older JSON document) set the chat the same way.
"""

from collections.abc import Mapping
from typing import Any

import attrs

from memtape.core.errors import BadInput
from memtape.lab.importers.records import Record, Source

SHOWN = ("info", "error", "warning")
"""The message types the interface showed the user and never sent to the model."""

TYPES = ("user", "gemini", *SHOWN)
"""Every message type."""


@attrs.frozen
class Message:
    """One message of the chat and where it is; ``imported`` when it was imported before a
    compression (or is a compression's summary) and is in the chat again."""

    data: Mapping[str, Any]
    where: str
    imported: bool = False


@attrs.frozen
class Compressed:
    """A compression at ``where``: the messages standing for what it dropped (its summary),
    and the ids of those it kept verbatim."""

    summary: tuple[Message, ...]
    preserved: tuple[str, ...]
    where: str


def chat(source: Source, left: dict[str, str]) -> list[Message | Compressed]:
    """The chat's messages in order, with each compression between those before it and
    those after; each record left out is put in ``left`` (its place: its kind)."""
    log = _Log(source, left)
    for record in source.records:
        log.read(record)
    return [*log.done, *(message for message in log.kept.values() if not message.imported)]


def set_messages(data: Any, where: str) -> dict[str, Any]:
    """The messages a JSONL record sets the chat to (a ``$set`` of ``messages``, or the
    metadata's own), each by its place (``WHERE: messages[I]``); none for any other."""
    patch = data.get("$set") if isinstance(data, dict) and "$set" in data else data
    messages = patch.get("messages") if isinstance(patch, dict) else None
    if not messages:
        return {}
    if not isinstance(messages, list):
        raise BadInput(f"{where}: messages must be a list, got {messages!r}")
    return {f"{where}: messages[{i}]": message for i, message in enumerate(messages)}


class _Log:
    """The chat as the records read so far leave it."""

    def __init__(self, source: Source, left: dict[str, str]) -> None:
        self.lines = source.document is None
        self.left = left
        self.kept: dict[str, Message] = {}
        self.done: list[Message | Compressed] = []

    def read(self, record: Record) -> None:
        """Apply one record."""
        data, where = record.data, record.where
        if not isinstance(data, dict):
            raise BadInput(f"{where}: a Gemini CLI record is an object")
        if "$rewindTo" in data:
            self.left[where] = "$rewindTo"
            self._rewind(data["$rewindTo"], where)
        elif "$set" in data:
            self.left[where] = "$set"
            self._replace(set_messages(data, where), where)
        elif isinstance(data.get("id"), str) and "type" in data:
            if data["type"] not in TYPES:
                raise BadInput(
                    f"{where}: a message's type is one of {', '.join(TYPES)}, got {data['type']!r}"
                )
            # Only the JSONL log writes a message again; a document's list is the chat as is.
            self._write(data["id"] if self.lines else where, Message(data, where))
        elif "sessionId" in data:
            self.left[where] = "session metadata"
            if self.lines:
                self._replace(set_messages(data, where), where)
        else:
            raise BadInput(_unread(record))

    def _write(self, identity: str, message: Message) -> None:
        """A message written (again, when the chat has its id: the later version stands)."""
        earlier = self.kept.get(identity)
        if earlier is not None and earlier.imported:
            # Imported before a compression already: this version is not imported again.
            self.left[message.where] = "message a compression kept"
            message = attrs.evolve(message, imported=True)
        elif earlier is not None:
            self.left[earlier.where] = "superseded message"
        self.kept[identity] = message

    def _rewind(self, target: Any, where: str) -> None:
        """Drop the message ``target`` and every one after it. A target no message before it
        has is refused: dropping every message (as a missing target would) loses the whole
        chat without a word, and ignoring the rewind keeps what the user took back."""
        if not isinstance(target, str):
            raise BadInput(f"{where}: $rewindTo must be a message id, got {target!r}")
        if target not in self.kept:
            raise BadInput(
                f"{where}: $rewindTo names message {target!r}, which no message before it has: "
                "the rewind cannot be applied (it would drop the whole chat)"
            )
        ids = list(self.kept)
        dropped = ids[ids.index(target) :]
        imported = [identity for identity in dropped if self.kept[identity].imported]
        if imported:
            raise BadInput(
                f"{where}: the chat is taken back to before message {imported[0]!r} "
                f"({self.kept[imported[0]].where}), which a compression before it folded: "
                "a rewind past a compression is not read"
            )
        for identity in dropped:
            self.left[self.kept.pop(identity).where] = "rewound message"

    def _replace(self, messages: Mapping[str, Any], where: str) -> None:
        """Set the chat to ``messages`` (by place), as a record setting them whole does."""
        if not messages:
            return
        for place, data in messages.items():
            if not isinstance(data, dict) or not isinstance(data.get("id"), str):
                raise BadInput(f"{place}: a message is an object with an id")
            if data.get("type") not in TYPES:
                raise BadInput(
                    f"{place}: a message's type is one of {', '.join(TYPES)}, "
                    f"got {data.get('type')!r}"
                )
        listed = [data["id"] for data in messages.values()]
        known = list(self.kept)
        if any(identity not in listed for identity in known):
            new = [identity for identity in listed if identity not in self.kept]
            if not new and listed == known[: len(listed)]:
                self.left[where] = "$set rolling back"
                self._rewind(known[len(listed)], where)
            else:
                self._compress(messages, where)
                return
        for place, data in messages.items():
            self._write(data["id"], Message(data, place))
        self.kept = {identity: self.kept[identity] for identity in listed}

    def _compress(self, messages: Mapping[str, Any], where: str) -> None:
        """A ``$set`` that rewrote the chat: what was read stays, a compaction follows it,
        and the chat goes on from the messages set (see the module's docstring)."""
        self.left[where] = "$set compressing"
        self.done.extend(message for message in self.kept.values() if not message.imported)
        read_before = set(self.kept)
        summary: list[Message] = []
        preserved: list[str] = []
        kept: dict[str, Message] = {}
        run_over = False
        for place, data in messages.items():
            identity = data["id"]
            if identity in read_before:
                preserved.append(identity)
                self.left[place] = "message a compression kept"
                kept[identity] = Message(data, place, imported=True)
                run_over = bool(summary)
            elif not run_over:
                summary.append(Message(data, place, imported=True))
                kept[identity] = summary[-1]
            else:
                kept[identity] = Message(data, place)
        self.done.append(Compressed(tuple(summary), tuple(preserved), where))
        self.kept = kept


def _unread(record: Record) -> str:
    keys = ", ".join(sorted(map(str, record.data))[:8]) or "no keys"
    return (
        f"{record.where}: a Gemini CLI record is a message (id, type), $set, $rewindTo or the "
        f"session's metadata; got an object with {keys}"
    )
