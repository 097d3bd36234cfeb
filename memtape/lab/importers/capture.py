"""A capture (``memtape record``'s file) as turns: one conversation, and what the agent did to it.

The file is JSONL: a header line ``{"memtape_capture": 1, ...}`` (again
wherever a later ``record`` appended to the file), then one exchange a line:
its ``exchange`` number, ``endpoint``, ``request`` and ``response`` bodies (a
stream reassembled), ``status`` and ``thread`` key. The exchanges of the
OpenAI Chat Completions, OpenAI Responses and Anthropic Messages endpoints
are grouped into threads by their ``thread`` key (computed by
``memtape.capture.threads`` when a line has none). A thread whose key is a
fingerprint (``f-``) and that begins after another of the same system
prompt ended (no exchange of that system prompt between) is that thread
going on: an agent without a session key that rewrote its first user
message (a compaction) changed its fingerprint. The two are one thread.

One thread imports: ``thread`` (its number in the listed order, from 1, or
its key), else the one with the most turns. Its turns are the union of
what its requests sent: walking its exchanges in order, each entry
(``memtape.lab.importers.capture_entries``) that first appears in request
k becomes a turn there, and each response is the assistant's turn, with its
``usage``. So turns the agent let go of stay in the session, where they
were. A Responses request that names its ``previous_response_id`` sends
only what is new: all of it is.

Between request k and request k+1 (``memtape.lab.importers.
capture_changes``), what the agent did to its context becomes a compaction
of the ``recorded`` policy, before the first turn request k+1 adds, labelled
with the exchange where it happened (``memtape why`` names it):

- entries left and nothing replaced them: a truncation (the turns
  ``dropped``);
- entries left and new ones replaced them: a summary, their text (the
  turns ``folded`` into it); a provider's compaction among them is the
  summary, exactly;
- a tool result (or an assistant's message with calls) rewritten in
  place: a clearing (the turn ``cleared`` to its new text).

What the provider did is read from the exchange where it did it: an
Anthropic response's ``context_management.applied_edits``
(``clear_tool_uses``: the ``cleared_tool_uses`` oldest tool results of
that request cleared, before the response's turn), and a provider's
compaction in a response (an Anthropic ``compaction`` block, a Responses
``compaction`` item): every turn before it folded into its summary.

What does not import is counted in the ledger, by kind: the header lines,
the exchanges of other endpoints, those with no request body, those of the
other threads. A request resends its conversation: the ledger counts each
tool call and result once, at the exchange it first appears in.
"""

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import attrs

from memtape.capture import threads as keys
from memtape.core.errors import BadInput
from memtape.core.plural import counted
from memtape.lab.importers.capture_changes import compare
from memtape.lab.importers.capture_entries import COMPACTION, Entry, Placed, Reader, usage
from memtape.lab.importers.ledger import Tally
from memtape.lab.importers.records import Record, Source
from memtape.lab.importers.transcript import Compaction, Transcript, Turns
from memtape.policies.tool_clearing import PLACEHOLDER
from memtape.scenarios.usage import Usage

FORMAT = "capture"
"""The name ``--format`` gives this format."""

HEADER = "memtape_capture"
"""The key of a capture's header line; its value is the version."""

VERSION = 1
"""The capture version this reader reads."""

HEADERS = "capture header"
OTHER_ENDPOINT = "other endpoint"
NO_BODY = "exchange without a request body"
OTHER_THREAD = "other thread"
"""The ledger's kinds of the lines left out."""

CLEAR_TOOL_USES = "clear_tool_uses"
"""The prefix of Anthropic's context-management edit that clears tool results."""


def is_capture(data: Any) -> bool:
    """Whether a record is a capture's header line."""
    return isinstance(data, dict) and HEADER in data


@attrs.frozen
class Thread:
    """One conversation of a capture, as ``import`` lists it."""

    number: int
    key: str
    requests: int
    turns: int
    first: str
    """The text of its first request's first user message."""
    chosen: bool = False

    def line(self) -> str:
        """The thread in one line (``*`` marks the one imported)."""
        mark = "*" if self.chosen else " "
        first = " ".join(self.first.split())
        return (
            f"{mark} thread {self.number} {self.key}: {counted(self.requests, 'request')}, "
            f"{counted(self.turns, 'turn')}: {first}"
        )


@attrs.frozen
class _Exchange:
    """One exchange of a conversation endpoint, as the file has it."""

    index: int
    where: str
    number: int
    endpoint: str
    request: Mapping[str, Any]
    response: Mapping[str, Any] | None
    status: Any
    thread: str
    label: str
    """How a compaction's label names the exchange: its number and its line, in the
    file's name alone (``exchange 7, cap.jsonl:8``)."""


def read(
    source: Source,
    *,
    thread: str | None = None,
    listed: Callable[[Sequence[Thread]], None] | None = None,
) -> Transcript:
    """The turns and compactions of one thread of a capture (``thread``: its number or
    key; the one with the most turns by default); ``listed`` hears every thread, the one
    imported marked."""
    left, exchanges = _exchanges(source)
    groups, notes = _threads(exchanges)
    if not groups:
        raise BadInput(f"{source.path}: no exchange of a conversation endpoint to import")
    readers: dict[str, Reader] = {}
    built = [_build(source, group, readers) for group in groups.values()]
    chosen = _chosen(thread, list(groups), built, source)
    summaries = [
        Thread(
            number,
            key,
            len(group),
            len(builder.turns),
            keys.first_user_text(group[0].endpoint, group[0].request),
            number - 1 == chosen,
        )
        for number, ((key, group), builder) in enumerate(
            zip(groups.items(), built, strict=True), start=1
        )
    ]
    if listed is not None:
        listed(summaries)
    tally = Tally(source)
    for kind, record in left:
        tally.left_out(kind, record.where)
    for number, group in enumerate(groups.values()):
        for exchange, (calls, results) in zip(group, _new_ids(group, readers), strict=True):
            if number == chosen:
                tally.took(exchange.where, calls=calls, results=results)
            else:
                tally.left_out(OTHER_THREAD, exchange.where, calls=calls, results=results)
    builder = built[chosen]
    summary = summaries[chosen]
    notes = [
        f"thread {summary.number} of {len(summaries)} ({summary.key}): "
        f"{counted(summary.requests, 'request')}",
        *notes,
    ]
    return builder.transcript(tally, notes)


def _exchanges(source: Source) -> tuple[list[tuple[str, Record]], list[_Exchange]]:
    """The lines left out (by kind), and the exchanges of conversation endpoints, each
    with its thread key."""
    records = source.records
    if not records or not is_capture(records[0].data):
        where = records[0].where if records else str(source.path)
        raise BadInput(f'{where}: a capture begins with its header line {{"{HEADER}": 1, ...}}')
    left: list[tuple[str, Record]] = []
    exchanges: list[_Exchange] = []
    threads = keys.Threads()
    for index, record in enumerate(records):
        data, where = record.data, record.where
        if is_capture(data):
            if data[HEADER] != VERSION:
                raise BadInput(
                    f"{where}: capture version {data[HEADER]!r}; this memtape reads version "
                    f"{VERSION}"
                )
            left.append((HEADERS, record))
            continue
        endpoint = data.get("endpoint")
        if not isinstance(endpoint, str):
            raise BadInput(f"{where}: an exchange needs its endpoint, got {endpoint!r}")
        if endpoint not in keys.ENDPOINTS:
            left.append((OTHER_ENDPOINT, record))
            continue
        request, response = data.get("request"), data.get("response")
        if request is None:
            left.append((NO_BODY, record))
            continue
        if not isinstance(request, dict):
            raise BadInput(f"{where}: request must be the JSON body sent or null")
        if response is not None and not isinstance(response, dict):
            raise BadInput(f"{where}: response must be the JSON body received or null")
        number = data.get("exchange")
        if isinstance(number, bool) or not isinstance(number, int):
            raise BadInput(f"{where}: exchange must be the exchange's number, got {number!r}")
        key = data.get("thread")
        if key is None:
            key = threads.key(endpoint, request, response)
        elif not isinstance(key, str) or not key:
            raise BadInput(f"{where}: thread must be a string key, got {key!r}")
        else:
            identity = keys.response_id(response)
            if identity is not None:
                threads.seen[identity] = key
        status = data.get("status")
        label = f"exchange {number}, {where.replace(str(source.path), source.path.name, 1)}"
        exchanges.append(
            _Exchange(index, where, number, endpoint, request, response, status, key, label)
        )
    return left, exchanges


def _threads(exchanges: list[_Exchange]) -> tuple[dict[str, list[_Exchange]], list[str]]:
    """The exchanges by thread, in order of each thread's first; a fingerprint thread that
    goes on from another (see the module's docstring) joined to it."""
    groups: dict[str, list[_Exchange]] = {}
    for exchange in exchanges:
        groups.setdefault(exchange.thread, []).append(exchange)
    systems = {
        key: keys.system_text(group[0].endpoint, group[0].request) for key, group in groups.items()
    }
    joined: dict[str, list[_Exchange]] = {}
    notes: list[str] = []
    for key, group in groups.items():
        start = group[0].index
        earlier = [
            other
            for other, kept in joined.items()
            if systems[other] == systems[key] and kept[-1].index < start
        ]
        before = max(earlier, key=lambda other: joined[other][-1].index, default=None)
        between = before is not None and any(
            systems[other] == systems[key]
            and any(joined[before][-1].index < e.index < start for e in kept)
            for other, kept in joined.items()
        )
        if key.startswith("f-") and before is not None and before.startswith("f-") and not between:
            first = group[0]
            notes.append(
                f"thread {key} goes on from {before} at {first.where} (exchange "
                f"{first.number}): the same system prompt, a new first message (a compaction "
                "without a session key); joined"
            )
            joined[before] = sorted([*joined[before], *group], key=lambda e: e.index)
            continue
        joined[key] = list(group)
    return joined, notes


def _chosen(thread: str | None, names: list[str], built: list["_Builder"], source: Source) -> int:
    """The index of the thread to import: the one ``thread`` names, else the longest."""
    if thread is None:
        return max(range(len(built)), key=lambda i: (len(built[i].turns), -i))
    if thread in names:
        return names.index(thread)
    if thread.isdigit() and 1 <= int(thread) <= len(names):
        return int(thread) - 1
    there = ", ".join(f"{n} ({name})" for n, name in enumerate(names, start=1))
    raise BadInput(f"{source.path}: --thread {thread!r}: no such thread; the capture has {there}")


def _new_ids(
    group: list[_Exchange], readers: dict[str, Reader]
) -> list[tuple[list[str], list[str]]]:
    """Each exchange's tool calls and results that no earlier exchange of the thread held
    as often (a request resends those before it), read from the raw bodies."""
    most_calls: dict[str, int] = {}
    most_results: dict[str, int] = {}
    found = []
    for exchange in group:
        reader = readers[exchange.endpoint]
        request_calls, request_results = reader.ids(exchange.request)
        response_calls, response_results = reader.ids(exchange.response)
        calls = _beyond([*request_calls, *response_calls], most_calls)
        results = _beyond([*request_results, *response_results], most_results)
        found.append((calls, results))
    return found


def _beyond(now: list[str], most: dict[str, int]) -> list[str]:
    """The ids ``now`` holds more often than ``most`` says (which it raises to them)."""
    counts: dict[str, int] = {}
    for identity in now:
        counts[identity] = counts.get(identity, 0) + 1
    new = []
    for identity, count in counts.items():
        before = most.get(identity, 0)
        if count > before:
            new.extend([identity] * (count - before))
            most[identity] = count
    return new


@attrs.define
class _Pending:
    """A compaction seen, gathered until the turn it comes before is known."""

    before: int
    where: str
    labels: list[str]
    triggers: list[str]
    summary: str = ""
    folded: set[int] = attrs.field(factory=set)
    dropped: set[int] = attrs.field(factory=set)
    cleared: dict[int, str] = attrs.field(factory=dict)
    pre_tokens: int | None = None
    post_tokens: int | None = None


def _build(source: Source, group: list[_Exchange], readers: dict[str, Reader]) -> "_Builder":
    builder = _Builder(source)
    for exchange in group:
        reader = readers.get(exchange.endpoint)
        if reader is None:
            reader = readers[exchange.endpoint] = Reader(exchange.endpoint)
        builder.exchange(exchange, reader)
    return builder


class _Builder:
    """One thread's exchanges, walked in order, into turns and compactions."""

    def __init__(self, source: Source) -> None:
        self.path = source.path
        self.turns = Turns(source.path)
        self.context: list[tuple[Entry, int | None]] = []
        self.pending: list[_Pending] = []
        self.gone: set[int] = set()
        self.notes: list[str] = []
        self.unanswered = 0
        self.choices = 0
        self.previous: Usage | None = None
        self.responded: str | None = None

    def exchange(self, exchange: _Exchange, reader: Reader) -> None:
        """Add what one exchange's request and response hold that is new."""
        placed = reader.request(exchange.request, exchange.where)
        previous = exchange.request.get("previous_response_id")
        if not self.context:
            self._add(exchange, placed, "request")
        elif isinstance(previous, str) or exchange.request.get("conversation") is not None:
            # The provider keeps the conversation: the request sends only what is new.
            if isinstance(previous, str) and previous != self.responded:
                self.notes.append(
                    f"{exchange.where}: previous_response_id {previous!r} is not the thread's "
                    "last response (a branch): its input is added after the last"
                )
            heads = {entry.key for entry, _ in self.context if entry.head}
            self._add(exchange, [p for p in placed if p.entry.key not in heads], "request")
        else:
            self._changed(exchange, placed)
        response = exchange.response
        self.responded = keys.response_id(response)
        if response is None or not _succeeded(exchange.status):
            self.unanswered += 1
            self.previous = None
            return
        entries, others = reader.response(response, exchange.where)
        self.choices += others
        billed = usage(exchange.endpoint, response)
        self._edits(exchange, response, billed)
        for pending in self.pending[-1:]:
            if pending.where == exchange.where and billed is not None:
                pending.post_tokens = _prompt(billed)
        self._add(exchange, entries, "response", billed)
        self.previous = billed

    def _changed(self, exchange: _Exchange, placed: list[Placed]) -> None:
        """Compare the request with the context before it; meet what the agent did."""
        sent = [p.entry for p in placed]
        change = compare([entry for entry, _ in self.context], sent)
        label = exchange.label
        live = self.context
        if change.rewritten:
            cleared = {
                turn: sent[j].text
                for i, j in change.rewritten
                if (turn := live[i][1]) is not None and turn not in self.gone
            }
            if cleared:
                what = f"clearing: {counted(len(cleared), 'turn')} rewritten in place"
                self._met(exchange, f"{label}: {what}", "clearing", cleared=cleared)
        gone = self.gone
        left = [turn for i in change.left if (turn := live[i][1]) is not None and turn not in gone]
        if change.replacement:
            texts = [sent[j] for j in change.replacement]
            provided = [entry for entry in texts if entry.role == COMPACTION]
            summary = "\n".join(entry.text for entry in (provided or texts))
            kind = _provider_compaction(exchange.endpoint) if provided else "summary"
            what = f"{kind}: {counted(len(left), 'turn')} folded into it"
            self._met(exchange, f"{label}: {what}", kind, folded=left, summary=summary)
        elif left:
            what = f"truncation: {counted(len(left), 'turn')} dropped"
            self._met(exchange, f"{label}: {what}", "truncation", dropped=left)
        turns = {j: live[i][1] for i, j in change.kept}
        context: list[tuple[Entry, int | None]] = []
        new = set(change.new)
        for j, entry in enumerate(sent):
            if j in new:
                context.extend(self._add(exchange, [placed[j]], "request", into=False))
            else:
                context.append((entry, turns.get(j)))
        self.context = context

    def _edits(
        self, exchange: _Exchange, response: Mapping[str, Any], billed: Usage | None
    ) -> None:
        """Meet what an Anthropic response says its context management cleared: the prompt
        it was billed is the context after, and the tokens cleared on top of it before."""
        management = response.get("context_management")
        edits = management.get("applied_edits") if isinstance(management, Mapping) else None
        for number, edit in enumerate(edits if isinstance(edits, list) else (), start=1):
            kind = edit.get("type") if isinstance(edit, Mapping) else None
            place = f"{exchange.where}: context_management.applied_edits[{number - 1}]"
            if not isinstance(kind, str) or not isinstance(edit, Mapping):
                raise BadInput(f"{place}: an applied edit needs its type")
            if kind.startswith("compact"):
                continue  # its compaction block, in the response's content, is met there
            if not kind.startswith(CLEAR_TOOL_USES):
                self.notes.append(f"{place}: a {kind} edit is not applied by recorded")
                continue
            count = edit.get("cleared_tool_uses")
            if isinstance(count, bool) or not isinstance(count, int) or count < 0:
                raise BadInput(f"{place}: cleared_tool_uses must be a count, got {count!r}")
            spared = _spared(exchange.request, kind)
            results = [
                turn
                for entry, turn in self.context
                if entry.role == "tool" and turn and not spared & set(entry.answers)
            ]
            if count > len(results):
                self.notes.append(
                    f"{place}: {count} tool uses cleared, but the request holds "
                    f"{len(results)} results: every one is cleared"
                )
            cleared = {turn: PLACEHOLDER for turn in results[:count] if turn not in self.gone}
            tokens = edit.get("cleared_input_tokens")
            saved = f", {tokens:,} input tokens" if isinstance(tokens, int) else ""
            label = (
                f"{exchange.label}: context management {kind}: "
                f"{counted(count, 'tool use')} cleared{saved}"
            )
            pending = self._met(exchange, label, "context management", cleared=cleared)
            if pending is not None and billed is not None and isinstance(tokens, int):
                pending.pre_tokens = _prompt(billed) + tokens

    def _add(
        self,
        exchange: _Exchange,
        placed: Iterable[Placed],
        side: str,
        billed: Usage | None = None,
        *,
        into: bool = True,
    ) -> list[tuple[Entry, int | None]]:
        """Add the turns of ``placed`` (the last assistant's with ``billed``), a provider's
        compaction among them met; their places in the context, appended to it (``into``)."""
        added: list[tuple[Entry, int | None]] = []
        placed = list(placed)
        last = max((n for n, p in enumerate(placed) if p.entry.role == "assistant"), default=None)
        for number, item in enumerate(placed):
            entry = item.entry
            if entry.role == COMPACTION:
                folded = [
                    turn
                    for old, turn in (*self.context, *added)
                    if turn is not None and not old.head and turn not in self.gone
                ]
                kind = _provider_compaction(exchange.endpoint)
                label = f"{exchange.label}: {kind} in the {side}"
                self._met(exchange, label, kind, folded=folded, summary=entry.text)
                added.append((entry, None))
                continue
            self.turns.add(
                entry.role,
                entry.parts,
                f"{exchange.where}: {side} {item.at}",
                calls=entry.calls,
                answers=entry.answers,
                usage=billed if number == last else None,
            )
            added.append((entry, len(self.turns)))
        if into:
            self.context.extend(added)
        return added

    def _met(
        self,
        exchange: _Exchange,
        label: str,
        trigger: str,
        *,
        folded: Iterable[int] = (),
        dropped: Iterable[int] = (),
        cleared: Mapping[int, str] | None = None,
        summary: str = "",
    ) -> _Pending | None:
        """A compaction before the next turn added; one already met there takes it in. One
        that moves nothing (what it names left before) is none."""
        folding = [turn for turn in folded if turn not in self.gone]
        going = [turn for turn in dropped if turn not in self.gone]
        if not folding and not going and not cleared:
            return None
        before = len(self.turns) + 1
        if self.pending and self.pending[-1].before == before:
            pending = self.pending[-1]
            pending.labels.append(label)
            pending.triggers.append(trigger)
        else:
            pre = None
            if self.previous is not None and self.previous.output is not None:
                pre = _prompt(self.previous) + self.previous.output
            pending = _Pending(before, exchange.where, [label], [trigger], pre_tokens=pre)
            self.pending.append(pending)
        pending.folded.update(folding)
        if summary:
            pending.summary = f"{pending.summary}\n{summary}" if pending.summary else summary
        pending.dropped.update(going)
        self.gone.update(folding)
        self.gone.update(going)
        pending.cleared.update(cleared or {})
        return pending

    def transcript(self, tally: Tally, notes: Sequence[str]) -> Transcript:
        """The thread's transcript, its ledger closed."""
        compactions: list[Compaction] = []
        said = list(notes)
        for pending in self.pending:
            if pending.before > len(self.turns):
                said.append(f"the compaction at {pending.where} is followed by no turn")
                continue
            cleared = tuple(sorted(pending.cleared.items()))
            if not (pending.folded or pending.dropped or cleared):
                continue
            compactions.append(
                Compaction(
                    pending.before,
                    pending.summary,
                    pending.where,
                    ", ".join(dict.fromkeys(pending.triggers)),
                    pending.pre_tokens,
                    pending.post_tokens,
                    folded=_runs(pending.folded) if pending.folded else None,
                    dropped=_runs(pending.dropped),
                    cleared=cleared,
                    label="; ".join(pending.labels),
                )
            )
        if self.unanswered:
            said.append(
                f"{counted(self.unanswered, 'exchange')} got no response to import (an error, "
                "a dropped connection): their requests' turns import, no assistant turn"
            )
        if self.choices:
            said.append(f"{counted(self.choices, 'other choice')} of responses not imported")
        return self.turns.transcript(FORMAT, compactions, [*said, *self.notes], tally)


def _spared(request: Mapping[str, Any], kind: str) -> set[str]:
    """The ids of the tool calls whose results an Anthropic request's ``kind`` edit spares:
    those of the tools its ``exclude_tools`` names."""
    management = request.get("context_management")
    edits = management.get("edits") if isinstance(management, Mapping) else None
    excluded: set[str] = set()
    for edit in edits if isinstance(edits, list) else ():
        if not isinstance(edit, Mapping) or edit.get("type") != kind:
            continue
        names = edit.get("exclude_tools")
        if isinstance(names, list):
            excluded.update(name for name in names if isinstance(name, str))
    if not excluded:
        return set()
    messages = request.get("messages")
    return {
        str(block.get("id"))
        for message in (messages if isinstance(messages, list) else ())
        if isinstance(message, Mapping) and isinstance(message.get("content"), list)
        for block in message["content"]
        if isinstance(block, Mapping)
        and block.get("type") == "tool_use"
        and block.get("name") in excluded
    }


def _provider_compaction(endpoint: str) -> str:
    """What a provider's compaction is called at ``endpoint``."""
    return "compaction block" if endpoint == keys.ANTHROPIC else "compaction item"


def _runs(turns: Iterable[int]) -> tuple[tuple[int, int], ...]:
    """Turn numbers as runs, each its first and last."""
    runs: list[list[int]] = []
    for turn in sorted(turns):
        if runs and runs[-1][1] + 1 == turn:
            runs[-1][1] = turn
        else:
            runs.append([turn, turn])
    return tuple((first, last) for first, last in runs)


def _prompt(billed: Usage) -> int:
    """The whole prompt a response was billed for: uncached, read and written."""
    return (billed.input or 0) + (billed.cache_read or 0) + (billed.cache_write or 0)


def _succeeded(status: Any) -> bool:
    """Whether an exchange's status is a success (a missing one is taken as one)."""
    return status is None or (isinstance(status, int) and 200 <= status < 300)
