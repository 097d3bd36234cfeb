"""Redacting a run: a copy whose free texts are placeholders and whose figures are the same.

A redacted copy can go into a bug report without the user's data. Every
free text (turn texts, WARM items and cleared results, fact keys and texts,
query texts and the keys they expect, episodes, distilled facts and rules,
memory blocks' labels and values (a redacted copy's blocks are not held to
their limits: a placeholder is not the text's length),
model answers, and every string of the header but the names) becomes a
placeholder; tool call ids become ``call.N``, in the order the run first
names them; a model call's prompt hash is zeroed. What is not free text
stays: a turn's role (one of the closed set ``ROLES``; a log holding any
other role is refused), the names of the policies, their rules
(``supersession``, ``relevance``), the summarizer, what writes tiered's
WARM items and gist (``warm``, ``gist``: ``"llm"`` or a default), the model
and the tokenizer, every number, and a COLD gist that is exactly the tiered
policy's count template (``gist_for``), which the gist invariant reads and
counts again (a gist a model wrote is masked like any answer).

Every figure a copy shows (meters, tiers, scores, decisions, a turn's or a
WARM item's tokens) comes from the counts recorded in its events, never
from measuring its placeholders. Under the word count a placeholder keeps
the text's word count anyway, because that is free: ``TAG.1 TAG.2 ...
TAG.n``, one word per word (a text of spaces only becomes spaces). Under any
other tokenizer it is the opaque ``TAG``. TAG is the shortest prefix (eight
hex digits or more) of a keyed hash of the text that no other text of the
run holds, so equal texts get equal placeholders (a fact superseded by key
is still superseded by key) and different texts different ones. No text is
refused.

The key is by default a digest of the whole run, so the copy is
deterministic, yet a reader cannot test a guess of one short text (a key
such as ``"name"``) by hashing it; pass the same ``secret`` to redact
several runs with agreeing placeholders.

The copy's header carries ``"redacted": true``: its texts and rules are
placeholders, so its commands cannot be decided again, nor its queries
ranked again by their text (``memtape check`` folds it and checks every
other invariant). A clear-tool-results policy's placeholder is masked like
any text; where the mask does not cost what the placeholder did (an opaque
tag), the copy's table records that cost as ``placeholder_tokens``, so the
budget's floor, which counts it, is the source's.
"""

import hashlib
import hmac
import json
from pathlib import Path
from typing import Any, assert_never

import attrs

from memtape.core.chain import HEAD, SIGNATURE
from memtape.core.codec import command_data, event_data
from memtape.core.commands import (
    AddTurn,
    AdvanceClock,
    Ask,
    Command,
    Consolidate,
    CreateBlock,
    EditBlock,
    Query,
    ReadFact,
    Recall,
    RecordEpisode,
    WriteFact,
    role_error,
)
from memtape.core.errors import BadInput, CorruptLog
from memtape.core.events import (
    Answered,
    BlockEdit,
    BlockEdited,
    ClockAdvanced,
    CompactionTriggered,
    Consolidated,
    EpisodeRecorded,
    Event,
    Evicted,
    Expired,
    FactRead,
    FactWritten,
    Judged,
    ModelCall,
    ProceduralRule,
    Queried,
    Recalled,
    SemanticFact,
    Superseded,
    TurnAdded,
    ValidityClosed,
    WarmItem,
)
from memtape.core.logfile import RecordedBatch, RunFile, write_run
from memtape.core.paths import same_file
from memtape.core.run import Run
from memtape.llm.asking import PROMPT_HASH_HEX
from memtape.policies.session import Policies
from memtape.policies.text.tokenizers import Tokenizer, WordCount, tokenizer_named
from memtape.policies.window.tiered import gist_for
from memtape.policies.window.tool_clearing import COST, ClearToolResults
from memtape.reducers import fold
from memtape.runs.files import epochs_from_header
from memtape.runs.signed import check_copying, check_reading
from memtape.storage import read_address

REDACTED = "redacted"
"""The header entry (``true``) that marks a redacted run."""

_WRITER_OWNED = frozenset({"memtape", "format", "version", "events", "steps", HEAD, SIGNATURE})
"""Header entries ``write_run`` writes itself (the copy is chained afresh)."""

_NAMES = frozenset(
    {
        "policy",
        "tokenizer",
        "summarizer",
        "warm",
        "gist",
        "supersession",
        "relevance",
        "model",
        "embedding_model",
        "recall",
        "op",
    }
)
"""Header entries whose strings name a policy, a tokenizer, a summarizer, what writes
tiered's WARM items and gist, a rule of one, the models asked (for chat and for
embeddings), how a recall searches or what a consolidation's block rule does to a block,
kept so the copy loads."""

_UNKNOWN_PROMPT = "0" * PROMPT_HASH_HEX
"""The prompt hash of a model call in a redacted copy: the real one is not kept."""

_TAG_LENGTHS = range(8, 65, 4)
"""How many hex digits of the hash a tag takes: the fewest no other text holds."""


@attrs.frozen
class RedactedRun:
    """A redacted run and the header to write it with.

    ``torn`` describes a torn tail of the source (an unfinished last
    command), which the copy leaves out, or is None; ``uncovered`` the steps
    after the source's chain head, left out too.
    """

    header: dict[str, Any]
    run: Run
    torn: str | None = None
    uncovered: str | None = None

    @property
    def dropped(self) -> tuple[str, ...]:
        """What of the source the copy leaves out, each said in one line for a warning."""
        return tuple(said for said in (self.uncovered, self.torn) if said is not None)

    def write(self, path: Path) -> None:
        """Write the copy to ``path`` atomically (``write_run``)."""
        write_run(path, self.header, self.run)


def redact(source: Path, *, secret: bytes | None = None) -> RedactedRun:
    """The redacted copy of the run file at ``source``, in memory; the file is only read.

    Raises ``BadInput`` naming the file when it is not a readable run, its
    events do not fold, or it holds a role outside ``ROLES``.
    """
    recorded = read_address(str(source))
    header = recorded.header
    try:
        tokenizers = _tokenizers(header)
        masks = Masks(secret or _digest(recorded), tokenizers)
        copy = {
            name: _scrub(value, masks)
            for name, value in header.items()
            if name not in _WRITER_OWNED
        }
        copy[REDACTED] = True
        _tokenizers(copy)  # the copy's header must load as the source's does
        run = Run(fold)
        cold = 0
        for batch in recorded.batches:
            _closed_roles(batch)
            events: list[Event] = []
            for event in batch.events:
                if isinstance(event, CompactionTriggered):
                    cold += event.cold
                events.append(_event(event, masks, cold))
            _append(run, _command(batch.command, masks), events, batch)
    except BadInput as error:
        problem = str(error).removeprefix(f"{source}: ")
        raise BadInput(f"{source}: cannot redact it: {problem}") from None
    return RedactedRun(copy, run, recorded.torn, recorded.uncovered)


def export_redacted(
    source: Path, out: Path, *, secret: bytes | None = None, require: bool = False
) -> RedactedRun:
    """Write the redacted copy of the run at ``source`` to ``out``; the source is not changed.

    This is ``memtape export RUN --redact --out COPY``. ``out`` must not be
    the source itself; the write is atomic, so a failure leaves ``out`` as
    it was. A copy written with ``MEMTAPE_SIGNING_KEY`` set is signed, so the
    source's own signature under that key must vouch for every step copied;
    with ``require``, the source must be signed under it in any case
    (``memtape.runs.signed``). Otherwise nothing is written: a ``BadInput``.
    """
    if same_file(source, out):
        raise BadInput(f"{out}: is the run being redacted; write the copy to another file")
    redacted = redact(source, secret=secret)
    if require:
        check_reading(str(source), len(redacted.run), require=True)
    else:
        check_copying(str(source), len(redacted.run))
    redacted.write(out)
    return redacted


class Masks:
    """The placeholder of each text, made once and injective (see the module docstring).

    ``secret`` keys the hash that tags placeholders; ``tokenizers`` are
    every tokenizer that measured the run: when all are the word count, a
    placeholder keeps the text's word count, otherwise it is one opaque tag.
    """

    def __init__(self, secret: bytes, tokenizers: tuple[Tokenizer, ...]) -> None:
        self._secret = secret
        self._words = all(isinstance(tokenizer, WordCount) for tokenizer in tokenizers)
        self._made: dict[str, str] = {}
        self._tags: set[str] = set()
        self._spaces: set[str] = set()
        self._calls: dict[str, str] = {}

    def calls(self, ids: tuple[str, ...]) -> tuple[str, ...]:
        """Tool call ids as ``call.N``, numbered in the order the run first names them: an
        id is no figure (no token count keeps it), and the same id is the same placeholder
        wherever it appears, so a call still pairs with its results."""
        return tuple(self._calls.setdefault(i, f"call.{len(self._calls) + 1}") for i in ids)

    def text(self, text: str) -> str:
        """The placeholder of ``text``, the same one wherever ``text`` appears ("" for "")."""
        made = self._made.get(text)
        if made is not None:
            return made
        if not text:
            made = ""
        elif not self._words:
            made = self._tag(text)
        elif text.isspace():
            # No words to keep, and no tag fits in none: the n-th text of spaces only is n spaces.
            self._spaces.add(text)
            made = " " * len(self._spaces)
        else:
            tag = self._tag(text)
            made = " ".join(f"{tag}.{word}" for word in range(1, len(text.split()) + 1))
        self._made[text] = made
        return made

    def optional(self, text: str | None) -> str | None:
        """The placeholder of ``text``, or None for None."""
        return None if text is None else self.text(text)

    def _tag(self, text: str) -> str:
        """The shortest prefix of the keyed hash of ``text`` that no other text holds."""
        raw = text.encode("utf-8", "surrogatepass")
        digest = hmac.new(self._secret, raw, hashlib.sha256).hexdigest()
        tag = next(digest[:n] for n in _TAG_LENGTHS if digest[:n] not in self._tags)
        self._tags.add(tag)
        return tag


def _tokenizers(header: dict[str, Any]) -> tuple[Tokenizer, ...]:
    """Every tokenizer that measured the run (the seed's word count if none did).

    Building the policies also checks that the header loads.
    """
    tables = header.get("policies")
    if not isinstance(tables, dict):
        raise BadInput("line 1: the header names no policies")
    # Run files are data: a policy named by import path is stood in for, not imported.
    policies = Policies.from_params(tables, "line 1: policies", imports=False)
    epochs = epochs_from_header(header.get("epochs"), policies, "line 1: epochs")
    found: list[Tokenizer] = []
    for epoch in epochs:
        tokenizer = getattr(epoch.policies.compaction, "tokenizer", None)
        if tokenizer is not None and tokenizer not in found:
            found.append(tokenizer)
    return tuple(found) or (WordCount(),)


def _digest(recorded: RunFile) -> bytes:
    """A digest of the whole run (not of who wrote it), the default key of the placeholders."""
    digest = hashlib.sha256()

    def feed(data: Any) -> None:
        digest.update(json.dumps(data, sort_keys=True).encode("ascii"))

    feed({name: value for name, value in recorded.header.items() if name not in _WRITER_OWNED})
    for batch in recorded.batches:
        feed(command_data(batch.command))
        for event in batch.events:
            feed([type(event).__name__, event_data(event)])
    return digest.digest()


def _scrub(value: Any, masks: Masks) -> Any:
    """A header value with every string masked, except the names of policies and tokenizers."""
    if isinstance(value, str):
        return masks.text(value)
    if isinstance(value, list):
        return [_scrub(item, masks) for item in value]
    if isinstance(value, dict):
        scrubbed = {
            name: item if name in _NAMES and isinstance(item, str) else _scrub(item, masks)
            for name, item in value.items()
        }
        return _costed(value, scrubbed, masks)
    return value


def _costed(table: dict[str, Any], scrubbed: dict[str, Any], masks: Masks) -> dict[str, Any]:
    """``scrubbed``, and when ``table`` is a clear-tool-results table whose placeholder's
    mask would cost otherwise than it did, what it cost (``placeholder_tokens``): the
    budget's floor counts it, and a copy's figures are its source's."""
    placeholder = table.get("placeholder")
    if table.get("policy") != ClearToolResults.name or not isinstance(placeholder, str):
        return scrubbed
    if COST in table:
        return scrubbed
    tokenizer = tokenizer_named(str(table.get("tokenizer", WordCount.name)))
    cost = tokenizer.count(placeholder)
    if tokenizer.count(masks.text(placeholder)) != cost:
        scrubbed[COST] = cost
    return scrubbed


def _closed_roles(batch: RecordedBatch) -> None:
    """Refuse a batch with a role outside ``ROLES`` (a log written before roles were
    a closed set): a role is kept as it is, so it must not be free text."""
    roles = [batch.command.role] if isinstance(batch.command, AddTurn) else []
    roles += [event.role for event in batch.events if isinstance(event, TurnAdded)]
    for role in roles:
        wrong = role_error(role)
        if wrong is not None:
            raise BadInput(
                f"step {batch.step} (line {batch.line}): {wrong}; a redacted copy keeps "
                "roles as they are, so it would keep this text"
            )


def _event(event: Event, masks: Masks, cold: int) -> Event:
    """``event`` with its texts masked; ``cold`` counts the COLD turns after it."""
    if isinstance(event, TurnAdded):
        text = masks.text(event.text)
        calls, answers = masks.calls(event.calls), masks.calls(event.answers)
        return TurnAdded(
            event.turn, event.role, text, event.tokens, event.salient, calls, answers, event.pinned
        )
    if isinstance(event, CompactionTriggered):
        warm = tuple(WarmItem(i.turn, masks.text(i.text), i.tokens) for i in event.warm)
        # The tiered gist only counts turns; the gist invariant reads it word for word.
        gist = event.gist if event.gist == gist_for(cold) else masks.text(event.gist)
        asked = _asked(event.asked, masks)
        # A text read in place of a cleared result is the policy's placeholder, which the
        # header's masking replaces too: masked alike, the copy clears to the same text.
        cleared = tuple(WarmItem(i.turn, masks.text(i.text), i.tokens) for i in event.cleared)
        return CompactionTriggered(
            event.budget,
            warm,
            event.dropped,
            event.cold,
            gist,
            event.gist_tokens,
            asked,
            cleared,
            event.kept,
            event.recall,
        )
    if isinstance(event, FactWritten):
        return FactWritten(
            event.id,
            masks.text(event.key),
            masks.text(event.text),
            event.importance,
            event.expires_at,
            masks.text(event.ttl) if event.ttl else "",
            event.valid_from,
            event.valid_to,
        )
    if isinstance(event, Queried):
        return Queried(
            masks.text(event.text),
            masks.text(event.key),
            event.k,
            event.results,
            event.scores,
            event.as_of,
            event.known_at,
        )
    if isinstance(event, EpisodeRecorded):
        return EpisodeRecorded(event.id, masks.text(event.text))
    if isinstance(event, Consolidated):
        semantic = tuple(
            SemanticFact(masks.text(f.key), masks.text(f.text), f.importance, f.episode)
            for f in event.semantic
        )
        procedural = tuple(ProceduralRule(masks.text(r.text), r.episode) for r in event.procedural)
        edits = tuple(
            BlockEdit(masks.text(e.label), e.op, masks.text(e.text), masks.text(e.find))
            for e in event.blocks
        )
        return Consolidated(event.episodes, semantic, procedural, _asked(event.asked, masks), edits)
    if isinstance(event, Expired):
        return Expired(event.id, masks.text(event.reason))
    if isinstance(event, Recalled):
        # A recalled turn is its turn's text, masked as the turn's own is.
        brought = tuple(WarmItem(i.turn, masks.text(i.text), i.tokens) for i in event.brought)
        return Recalled(masks.text(event.query), event.k, event.found, event.scores, brought)
    if isinstance(event, BlockEdited):
        return BlockEdited(
            masks.text(event.label),
            event.version,
            event.op,
            masks.text(event.value),
            event.tokens,
            event.limit,
            event.read_only,
        )
    if isinstance(event, Judged):
        return Judged(
            masks.text(event.key),
            event.decision,
            event.candidates,
            event.target,
            _asked(event.asked, masks),
        )
    if isinstance(event, Answered):
        return Answered(
            masks.text(event.question),
            masks.text(event.answer),
            masks.text(event.reply),
            event.correct,
            event.judged,
            _asked(event.asked, masks),
        )
    if isinstance(event, ClockAdvanced | FactRead | Superseded | Evicted | ValidityClosed):
        return event
    assert_never(event)


def _asked(calls: tuple[ModelCall, ...], masks: Masks) -> tuple[ModelCall, ...]:
    """Model calls with their answers masked (free text) and no prompt hash (which could
    confirm a guess of the prompt); the model, tokens, seconds, cache flag and cut are kept."""
    return tuple(
        ModelCall(
            masks.text(call.output),
            call.model,
            _UNKNOWN_PROMPT,
            call.prompt_tokens,
            call.completion_tokens,
            call.seconds,
            call.cached,
            call.cut,
        )
        for call in calls
    )


def _command(command: Command, masks: Masks) -> Command:
    """``command`` with its texts masked as its events' are."""
    if isinstance(command, AddTurn):
        text = masks.text(command.text)
        calls, answers = masks.calls(command.calls), masks.calls(command.answers)
        return AddTurn(
            command.role, text, command.salient, calls, answers, command.pin, command.tokens
        )
    if isinstance(command, WriteFact):
        return WriteFact(
            masks.text(command.key),
            masks.text(command.text),
            command.importance,
            masks.optional(command.supersedes),
            command.expires_at,
            command.valid_from,
            command.valid_to,
        )
    if isinstance(command, ReadFact):
        return ReadFact(masks.optional(command.key), command.id)
    if isinstance(command, Query):
        return Query(
            masks.text(command.text),
            masks.text(command.key),
            command.k,
            command.as_of,
            command.known_at,
        )
    if isinstance(command, RecordEpisode):
        return RecordEpisode(masks.text(command.text))
    if isinstance(command, Recall):
        return Recall(masks.text(command.text), command.k)
    if isinstance(command, CreateBlock):
        return CreateBlock(
            masks.text(command.label), command.limit, masks.text(command.value), command.read_only
        )
    if isinstance(command, EditBlock):
        find = masks.text(command.find) if command.find else ""
        return EditBlock(masks.text(command.label), command.op, masks.text(command.text), find)
    if isinstance(command, Ask):
        return Ask(
            masks.text(command.question), masks.text(command.answer), command.model, command.seed
        )
    if isinstance(command, AdvanceClock | Consolidate):
        return command
    assert_never(command)


def _append(run: Run, command: Command, events: list[Event], batch: RecordedBatch) -> None:
    try:
        run.append(command, events)
    except CorruptLog as error:
        raise BadInput(f"step {batch.step} (line {batch.line}): {error}") from None
