"""One thread of a capture, walked exchange by exchange, into turns and compactions.

``build`` takes a thread's exchanges in order (``memtape.lab.importers.
capture`` groups them) and keeps the context the agent had after each:
every entry of it (``memtape.lab.importers.capture_entries``) and the turn
it became. A request's new entries become turns; what it changed in the
context (``memtape.lab.importers.capture_changes``), what the provider did
(a context-management clearing, a compaction in a response) is met as a
compaction before the next turn added, labelled with the exchange; two met
before the same turn are one compaction. A turn a compaction moved is
gone: a later one that names only gone turns moves nothing, and is none.
"""

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from memtape.capture import threads as keys
from memtape.core.errors import BadInput
from memtape.core.plural import counted
from memtape.lab.importers.capture_changes import compare
from memtape.lab.importers.capture_counts import usage
from memtape.lab.importers.capture_entries import COMPACTION, Entry, Placed
from memtape.lab.importers.capture_reader import Reader
from memtape.lab.importers.ledger import Tally
from memtape.lab.importers.records import Source
from memtape.lab.importers.transcript import Compaction, Transcript, Turns
from memtape.policies.window.tool_clearing import PLACEHOLDER
from memtape.scenarios.usage import Usage

FORMAT = "capture"
"""The name ``--format`` gives a capture (``memtape.lab.importers.capture``)."""

CLEAR_TOOL_USES = "clear_tool_uses"
"""The prefix of Anthropic's context-management edit that clears tool results."""


@attrs.frozen
class Exchange:
    """One exchange of a conversation endpoint, as the file has it."""

    index: int
    where: str
    number: int
    endpoint: str
    request: Mapping[str, Any]
    response: Mapping[str, Any] | None
    answered: bool
    """Whether a whole response came back: a success status, and no error (a connection
    dropped mid-stream leaves a response cut short)."""
    thread: str
    label: str
    """How a compaction's label names the exchange: its number and its line, in the
    file's name alone (``exchange 7, cap.jsonl:8``)."""


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


def build(source: Source, group: list[Exchange], readers: dict[str, Reader]) -> "Builder":
    """The thread of ``group`` (its exchanges, in order) built, each endpoint read by its
    reader in ``readers`` (made when missing, kept for the next thread)."""
    builder = Builder(source)
    for exchange in group:
        reader = readers.get(exchange.endpoint)
        if reader is None:
            reader = readers[exchange.endpoint] = Reader(exchange.endpoint)
        builder.exchange(exchange, reader)
    return builder


class Builder:
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

    def exchange(self, exchange: Exchange, reader: Reader) -> None:
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
        if response is None or not exchange.answered:
            self.unanswered += 1
            self.previous = None
            return
        # The model the request asked for, unless the response names the one that answered.
        self.turns.asked(exchange.request.get("model"))
        self.turns.asked(response.get("model"))
        entries, others = reader.response(response, exchange.where)
        self.choices += others
        billed = usage(exchange.endpoint, response, exchange.where)
        self._edits(exchange, response, billed)
        for pending in self.pending[-1:]:
            if pending.where == exchange.where and billed is not None:
                pending.post_tokens = _prompt(billed)
        self._add(exchange, entries, "response", billed)
        self.previous = billed

    def _changed(self, exchange: Exchange, placed: list[Placed]) -> None:
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

    def _edits(self, exchange: Exchange, response: Mapping[str, Any], billed: Usage | None) -> None:
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
        exchange: Exchange,
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
        exchange: Exchange,
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
