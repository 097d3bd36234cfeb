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
what its requests sent (``memtape.lab.importers.capture_session`` builds
them): walking its exchanges in order, each entry
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
other threads, and a failed reply's calls and results (an error's, or one
a dropped connection cut short: no turn). A request resends its
conversation: the ledger counts a call or result where it comes in, as the
turns are made: in a reply, or in a request beyond what the request before
and its reply held (so a call id a provider uses again, once the first call
left, is a second call).
"""

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from memtape.capture import threads as keys
from memtape.core.errors import BadInput
from memtape.core.plural import counted
from memtape.lab.importers.capture_reader import Reader
from memtape.lab.importers.capture_session import FORMAT, Builder, Exchange, build
from memtape.lab.importers.ledger import Tally
from memtape.lab.importers.records import Record, Source
from memtape.lab.importers.transcript import Transcript

__all__ = ["FORMAT", "HEADER", "Thread", "is_capture", "read"]

HEADER = "memtape_capture"
"""The key of a capture's header line; its value is the version."""

VERSION = 1
"""The capture version this reader reads."""

HEADERS = "capture header"
OTHER_ENDPOINT = "other endpoint"
NO_BODY = "exchange without a request body"
OTHER_THREAD = "other thread"
"""The ledger's kinds of the lines left out."""
FAILED_REPLY = "failed reply"
"""The kind of a reply that is no turn (an error's, or one its dropped connection cut
short), left out with the calls and results it holds."""


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
    built = [build(source, group, readers) for group in groups.values()]
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
        for exchange, new in zip(group, _new_ids(group, readers), strict=True):
            if number != chosen:
                calls, results = new.calls + new.failed_calls, new.results + new.failed_results
                tally.left_out(OTHER_THREAD, exchange.where, calls=calls, results=results)
                continue
            tally.took(exchange.where, calls=new.calls, results=new.results)
            if new.failed_calls or new.failed_results:
                tally.left_out(
                    FAILED_REPLY,
                    exchange.where,
                    calls=new.failed_calls,
                    results=new.failed_results,
                )
    builder = built[chosen]
    summary = summaries[chosen]
    notes = [
        f"thread {summary.number} of {len(summaries)} ({summary.key}): "
        f"{counted(summary.requests, 'request')}",
        *notes,
    ]
    return builder.transcript(tally, notes)


def _exchanges(source: Source) -> tuple[list[tuple[str, Record]], list[Exchange]]:
    """The lines left out (by kind), and the exchanges of conversation endpoints, each
    with its thread key."""
    records = source.records
    if not records or not is_capture(records[0].data):
        where = records[0].where if records else str(source.path)
        raise BadInput(f'{where}: a capture begins with its header line {{"{HEADER}": 1, ...}}')
    left: list[tuple[str, Record]] = []
    exchanges: list[Exchange] = []
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
        succeeded = status is None or (isinstance(status, int) and 200 <= status < 300)
        answered = succeeded and not data.get("error")
        label = f"exchange {number}, {where.replace(str(source.path), source.path.name, 1)}"
        exchanges.append(
            Exchange(index, where, number, endpoint, request, response, answered, key, label)
        )
    return left, exchanges


def _threads(exchanges: list[Exchange]) -> tuple[dict[str, list[Exchange]], list[str]]:
    """The exchanges by thread, in order of each thread's first; a fingerprint thread that
    goes on from another (see the module's docstring) joined to it."""
    groups: dict[str, list[Exchange]] = {}
    for exchange in exchanges:
        groups.setdefault(exchange.thread, []).append(exchange)
    systems = {
        key: keys.system_text(group[0].endpoint, group[0].request) for key, group in groups.items()
    }
    joined: dict[str, list[Exchange]] = {}
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


def _chosen(thread: str | None, names: list[str], built: list[Builder], source: Source) -> int:
    """The index of the thread to import: the one ``thread`` names, else the longest."""
    if thread is None:
        return max(range(len(built)), key=lambda i: (len(built[i].turns), -i))
    if thread in names:
        return names.index(thread)
    # A number as the list writes it (1, 2...): no int() of what the user typed, which took
    # other scripts' digits and raised past 4,300 of them.
    numbers = [str(n) for n in range(1, len(names) + 1)]
    if thread in numbers:
        return numbers.index(thread)
    there = ", ".join(f"{n} ({name})" for n, name in enumerate(names, start=1))
    raise BadInput(f"{source.path}: --thread {thread!r}: no such thread; the capture has {there}")


@attrs.frozen
class NewIds:
    """The ids of the tool calls and results one exchange brings to its thread, and those
    of its reply when the reply failed (no turn)."""

    calls: list[str]
    results: list[str]
    failed_calls: list[str]
    failed_results: list[str]


def _new_ids(group: list[Exchange], readers: dict[str, Reader]) -> list[NewIds]:
    """What each exchange of a thread brings, read from the raw bodies as the turns are
    built: a request's calls and results beyond what the request before it and that
    request's answered reply held (a request resends its conversation), and each call and
    result of an answered reply (the model made them now, even under the id of a call
    that had left the context: a provider may number calls per reply)."""
    held_calls: Counter[str] = Counter()
    held_results: Counter[str] = Counter()
    found = []
    for exchange in group:
        reader = readers[exchange.endpoint]
        request_calls, request_results = reader.ids(exchange.request)
        response_calls, response_results = reader.ids(exchange.response)
        sent_calls, sent_results = Counter(request_calls), Counter(request_results)
        calls = list((sent_calls - held_calls).elements())
        results = list((sent_results - held_results).elements())
        if exchange.answered:
            found.append(NewIds(calls + response_calls, results + response_results, [], []))
            sent_calls.update(response_calls)
            sent_results.update(response_results)
        else:
            found.append(NewIds(calls, results, response_calls, response_results))
        held_calls, held_results = sent_calls, sent_results
    return found
