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
  boundary has none or names an entry this file does not hold before it, such
  as a kept message written again after the summary, to the entry before it
  in the file), and across an entry whose parent the file does not hold (a
  hook's progress hanging off an entry Claude Code never wrote) to the
  message before it in the file, said in a note; then every side branch that belongs to that
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
  the turn's ``usage``; a response Claude Code wrote itself (model
  ``<synthetic>``: an API error, "No response requested.") made no request,
  and has none.
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
left (``rewound branch``), and an entry of tool results only whose calls
the file never makes (a transcript cut from a longer one opens so; Claude
Code's own loader drops such results). The ledger counts every ``tool_use`` and
``tool_result`` block of every message entry, so a call or result that is
neither imported nor in an entry left out refuses the import, named.
"""

from collections.abc import Mapping
from typing import Any

from memtape.core.errors import BadInput
from memtape.lab.importers.claude_code_thread import Graph, is_message, message_content
from memtape.lab.importers.claude_code_turns import Reader
from memtape.lab.importers.ledger import Tally
from memtape.lab.importers.records import Source
from memtape.lab.importers.transcript import Transcript

FORMAT = "claude-code"
"""The name ``--format`` gives this format."""

SIDECHAIN = "sidechain"
"""The ledger's kind for a sidechain's entries left out."""

REWOUND = "rewound branch"
"""The ledger's kind for the messages of a branch the session left."""

ORPHAN = "result of a call not in this file"
"""The ledger's kind for an entry of tool results whose calls the file never makes (made
before it began: a transcript cut from a longer one)."""


def read(source: Source, *, sidechains: bool = False) -> Transcript:
    """The turns and compactions of a Claude Code session's main thread (and, with
    ``sidechains``, its sidechains'), with the ledger of every entry."""
    records = source.records
    for record in records:
        if not isinstance(record.data, dict) or not isinstance(record.data.get("type"), str):
            raise BadInput(f"{record.where}: a Claude Code entry is an object with a type")
    graph = Graph(records)
    spine, walked, cleared = graph.spine()
    thread = graph.thread(spine)
    side = {i for i, r in enumerate(records) if is_message(r.data) and r.data.get("isSidechain")}
    if not any(is_message(records[i].data) for i in thread) and side and not sidechains:
        raise BadInput(
            f"{source.path}: every message is on a sidechain (a subagent's own file): "
            "--sidechains imports them"
        )
    made = {call for record in records for call in _blocks(record.data)[0]}
    orphans = {i for i, record in enumerate(records) if _orphan(record.data, made)}
    order = [i for i in sorted(thread | side if sidechains else thread) if i not in orphans]
    reader = Reader(source)
    reader.notes.extend(walked)
    if orphans:
        held = "entry holds" if len(orphans) == 1 else "entries hold"
        reader.notes.append(
            f"{len(orphans)} {held} only results of calls this file never makes (made before "
            "it began): left out, as Claude Code's own loader drops them"
        )
    tally = Tally(source)
    imported = set()
    for index in order:
        if index in cleared:
            reader.cleared(records[index].where)
        if reader.entry(index, records[index]):
            imported.add(index)
    for index, record in enumerate(records):
        calls, results = _blocks(record.data)
        if index in imported:
            tally.took(record.where, calls=calls, results=results)
        else:
            kind = ORPHAN if index in orphans else _kind(record.data, index in side)
            tally.left_out(kind, record.where, calls=calls, results=results)
    if side and not sidechains:
        reader.notes.append(
            f"{len(side)} sidechain entries (subagents') left out: --sidechains imports them"
        )
    return reader.finish(FORMAT, tally, graph)


def _kind(data: Mapping[str, Any], sidechain: bool) -> str:
    """What the ledger calls an entry left out."""
    if is_message(data):
        return SIDECHAIN if sidechain else REWOUND
    if data.get("type") == "system" and isinstance(data.get("subtype"), str):
        return f"system ({data['subtype']})"
    return str(data["type"])


def _orphan(data: Mapping[str, Any], made: set[str]) -> bool:
    """Whether an entry is a user message of tool results only, none of whose calls the file
    makes."""
    calls, results = _blocks(data)
    content = message_content(data)
    return (
        data.get("type") == "user"
        and bool(results)
        and len(results) == len(content)
        and not calls
        and not made.intersection(results)
    )


def _blocks(data: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """The ids of the ``tool_use`` and ``tool_result`` blocks of a message entry, read from
    its raw content (the ledger's count, apart from the turns)."""
    if not is_message(data):
        return [], []
    content = message_content(data)
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
