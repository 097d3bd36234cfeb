"""Events: immutable, past-tense records of what happened in a run.

An event holds a decision and the external inputs behind it (a turn's
measured token count, a summary's text, the score that justified an
eviction), never what the fold can derive from earlier events. The one
exception is identity: a turn's number and a fact's or episode's id are
written into the event that creates it, so a log reads on its own and the
fold can refuse an event that does not follow its predecessor. Each event
type carries a schema version in ``VERSION``.

A field marked ``OMITTED_WHEN_EMPTY`` in its metadata is left out of a log
line while it holds its default (the codec writes it only when it says
something), so an event that asked no model is no longer for having a place
to say so.
"""

from typing import ClassVar

import attrs

from memtape.core.reprs import fields_repr

OMITTED_WHEN_EMPTY = "memtape_omitted_when_empty"
"""The metadata key of a field a log line carries only when it is not its (empty) default."""


@attrs.frozen
class TurnAdded:
    """A conversation turn joined the window, verbatim, with its measured tokens.

    ``calls`` are the ids of the tool calls it makes, ``answers`` those of the
    calls whose results it carries (version 2; a version-1 turn has neither),
    and a ``pinned`` turn is one no policy moves.
    """

    __repr__ = fields_repr

    VERSION: ClassVar[int] = 2
    turn: int
    role: str
    text: str
    tokens: int
    salient: bool
    calls: tuple[str, ...] = ()
    answers: tuple[str, ...] = ()
    pinned: bool = False


@attrs.frozen
class WarmItem:
    """A turn's stand-in, a text and its tokens: what it became in the WARM tier, or the
    text a HOT turn now reads in place of its own (a cleared tool result)."""

    __repr__ = fields_repr

    turn: int
    text: str
    tokens: int


@attrs.frozen
class ModelCall:
    """One answer a model gave a decision, recorded so that replay never asks again.

    ``output`` is what it answered (before the policy enforced any limit on
    it), ``model`` the model asked (or a plug-in's import path), ``prompt``
    the hash of what was asked (``memtape.llm.prompt_hash``), the tokens the
    server counted for the prompt and the completion, the ``seconds`` the
    answer took and whether it came from the response ``cached`` (an answer
    from the cache carries the seconds the model took when it was asked).

    An answer longer than the ``[llm]`` table's ``max_answer_bytes`` (UTF-8)
    is cut to it, on a character boundary, before it is cached or recorded:
    ``cut`` says how many characters were dropped (0, and left out of the
    log line, when none was; a call of the versions before it was never cut).
    """

    __repr__ = fields_repr

    output: str
    model: str
    prompt: str
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    cached: bool
    cut: int = attrs.field(default=0, metadata={OMITTED_WHEN_EMPTY: True})


@attrs.frozen
class CompactionTriggered:
    """One whole compaction decision, applied in this order by the fold.

    It names what moves, never what stays: the HOT turns in ``warm`` leave
    HOT and become the given warm items (appended after the existing ones),
    those in ``dropped`` are dropped, and every other HOT turn stays. Then the
    ``cold`` oldest warm items go COLD, and the COLD gist becomes ``gist``
    (``""`` and 0 tokens while nothing is cold). So an event, its log line and
    its fold step cost what the decision moved, however long HOT is.

    ``asked`` holds each model call the decision made, in order; the fold
    never reads it: the texts it produced are in the warm items and the gist.
    Each of ``cleared`` names a turn that stays HOT, in its place, reading
    the item's text at the item's tokens from now on (a tool result cleared
    in place). Both are version 2: a version-1 compaction asked no model and
    cleared no turn in place.

    Version 3 no longer lists the turns that stay HOT (versions 1 and 2 named
    every one, in ``hot``: a policy that keeps a long HOT wrote and folded it
    whole at each compaction). A version-2 list is redundant when the log is
    sound (it is HOT without ``warm`` and ``dropped``), but it is what the
    fold checked a split against; an upcaster cannot see HOT to drop it
    safely, so an upcast event carries it as ``kept`` and the fold checks
    it as it always did (``memtape.core.upcast``). A version-3 decision
    leaves ``kept`` out (None), and nothing but the fold reads it; it takes
    no part in equality, so an upcast event equals the one memtape decides
    today (``memtape check`` re-decides old logs cleanly).

    Version 4: a model call may say it was ``cut`` (``ModelCall``).
    """

    __repr__ = fields_repr

    VERSION: ClassVar[int] = 4
    budget: int
    warm: tuple[WarmItem, ...]
    dropped: tuple[int, ...]
    cold: int
    gist: str
    gist_tokens: int
    asked: tuple[ModelCall, ...] = attrs.field(default=(), metadata={OMITTED_WHEN_EMPTY: True})
    cleared: tuple[WarmItem, ...] = attrs.field(default=(), metadata={OMITTED_WHEN_EMPTY: True})
    kept: tuple[int, ...] | None = attrs.field(
        default=None, eq=False, metadata={OMITTED_WHEN_EMPTY: True}
    )


@attrs.frozen
class ClockAdvanced:
    """The logical clock moved forward to ``to``."""

    __repr__ = fields_repr

    VERSION: ClassVar[int] = 1
    to: float


@attrs.frozen
class FactWritten:
    """A fact entered the store as active, at the current clock.

    Version 2: a fact may expire. ``expires_at`` is the clock at which it
    leaves the store (None: never); ``ttl`` names the forgetting policy's TTL
    rule that set it (the key pattern, ``*`` for the default), or is ``""``
    when the write named its own ``expires_at``. A version-1 fact never expires.

    Version 3: a fact may say when it was true in the world (valid time),
    apart from when the store learned it (the clock at the write, record
    time): from ``valid_from`` (None: from its write) until ``valid_to``
    (None: until a later write closes it, ``ValidityClosed``). A fact of the
    versions before says neither.
    """

    __repr__ = fields_repr

    VERSION: ClassVar[int] = 3
    id: int
    key: str
    text: str
    importance: float
    expires_at: float | None = attrs.field(default=None, metadata={OMITTED_WHEN_EMPTY: True})
    ttl: str = attrs.field(default="", metadata={OMITTED_WHEN_EMPTY: True})
    valid_from: float | None = attrs.field(default=None, metadata={OMITTED_WHEN_EMPTY: True})
    valid_to: float | None = attrs.field(default=None, metadata={OMITTED_WHEN_EMPTY: True})


@attrs.frozen
class FactRead:
    """An active fact was read (its read count goes up by one)."""

    __repr__ = fields_repr

    VERSION: ClassVar[int] = 1
    id: int


@attrs.frozen
class Queried:
    """A query returned ``results`` (fact ids, best first); each counts as a read.

    ``scores`` holds each result's score as the policy ranked it; ``key`` is
    the key the query expected ("" for none).

    Version 2: a bi-temporal query says the valid time it asked about
    (``as_of``) and the record time it asked as of (``known_at``); either
    set, its results are the facts valid then as the store knew them then,
    retired ones included, and only the active ones count a read. A query of
    version 1 asked about now.
    """

    __repr__ = fields_repr

    VERSION: ClassVar[int] = 2
    text: str
    key: str
    k: int
    results: tuple[int, ...]
    scores: tuple[float, ...]
    as_of: float | None = attrs.field(default=None, metadata={OMITTED_WHEN_EMPTY: True})
    known_at: float | None = attrs.field(default=None, metadata={OMITTED_WHEN_EMPTY: True})


@attrs.frozen
class Superseded:
    """An active fact was retired because fact ``by`` replaces it; it is kept."""

    __repr__ = fields_repr

    VERSION: ClassVar[int] = 1
    id: int
    by: int


@attrs.frozen
class Evicted:
    """An active fact left the store over capacity; ``score`` is why it was chosen."""

    __repr__ = fields_repr

    VERSION: ClassVar[int] = 1
    id: int
    score: float


@attrs.frozen
class Expired:
    """An active fact left the store because its time ran out; it is kept, as ``expired``.

    ``reason`` says which time it was (its own ``expires_at``, or the TTL rule
    that set one at its write), in words a reader of ``why`` can use.
    """

    __repr__ = fields_repr

    VERSION: ClassVar[int] = 1
    id: int
    reason: str


@attrs.frozen
class ValidityClosed:
    """Fact ``id`` stopped being true at valid time ``to``, as fact ``by`` (a later write,
    which names when it became true) says; it is kept, and true before ``to``."""

    __repr__ = fields_repr

    VERSION: ClassVar[int] = 1
    id: int
    to: float
    by: int


@attrs.frozen
class BlockEdited:
    """Memory block ``label`` now reads ``value`` (``tokens`` by the compaction policy's
    tokenizer, measured at the edit), as its ``version``.

    Version 1 of a block creates it and carries its character ``limit``; a
    later version leaves the limit out (None: the block's own). ``op`` says
    what the edit was: ``create``, ``replace``, ``append`` or ``find-replace``.
    A block is pinned in the window: its tokens count against the budget.
    """

    __repr__ = fields_repr

    VERSION: ClassVar[int] = 1
    label: str
    version: int
    op: str
    value: str
    tokens: int
    limit: int | None = attrs.field(default=None, metadata={OMITTED_WHEN_EMPTY: True})


@attrs.frozen
class Judged:
    """A model judged a write to ``key`` against ``candidates``, the active facts most like it
    (ids, most alike first), and decided ``decision``: ``ADD`` (stored beside them),
    ``UPDATE`` (stored, and fact ``target`` retired in its favour, ``Superseded`` after),
    ``DELETE`` (fact ``target`` retired, the write not stored) or ``NOOP`` (nothing stored).

    ``asked`` holds each model call the judgement made, a refused answer and its retries
    included. ``target`` is 0 for ``ADD`` and ``NOOP``.
    """

    __repr__ = fields_repr

    VERSION: ClassVar[int] = 1
    key: str
    decision: str
    candidates: tuple[int, ...]
    target: int = attrs.field(default=0, metadata={OMITTED_WHEN_EMPTY: True})
    asked: tuple[ModelCall, ...] = attrs.field(default=(), metadata={OMITTED_WHEN_EMPTY: True})


@attrs.frozen
class EpisodeRecorded:
    """A raw episode was recorded for a later consolidation pass."""

    __repr__ = fields_repr

    VERSION: ClassVar[int] = 1
    id: int
    text: str


@attrs.frozen
class SemanticFact:
    """A durable fact distilled from an episode; it is also written to the store."""

    __repr__ = fields_repr

    key: str
    text: str
    importance: float
    episode: int


@attrs.frozen
class ProceduralRule:
    """A durable how-to rule distilled from an episode."""

    __repr__ = fields_repr

    text: str
    episode: int


@attrs.frozen
class Consolidated:
    """A sleep-time pass consumed ``episodes`` and distilled facts and rules.

    ``asked`` holds each model call the pass made, in order, a refused answer
    and its retries included (version 2; a version-1 pass asked none). Version
    3: a model call may say it was ``cut`` (``ModelCall``).
    """

    __repr__ = fields_repr

    VERSION: ClassVar[int] = 3
    episodes: tuple[int, ...]
    semantic: tuple[SemanticFact, ...]
    procedural: tuple[ProceduralRule, ...]
    asked: tuple[ModelCall, ...] = attrs.field(default=(), metadata={OMITTED_WHEN_EMPTY: True})


@attrs.frozen
class Recalled:
    """A recall searched the turns that had left the window (dropped or folded) for
    ``query`` and brought the best of them back, verbatim, into the window's recall tier.

    ``found`` holds the turn numbers of the ``k`` best matches, best first, and
    ``scores`` each one's BM25 score; ``brought`` the items that entered the tier
    (each a found turn's text at its own tokens), in the same order: those that
    fit under the budget. The fold replaces the tier with ``brought`` and never
    searches: what was found is here, so replay is the same without an index.
    """

    __repr__ = fields_repr

    VERSION: ClassVar[int] = 1
    query: str
    k: int
    found: tuple[int, ...]
    scores: tuple[float, ...]
    brought: tuple[WarmItem, ...]


Event = (
    TurnAdded
    | CompactionTriggered
    | ClockAdvanced
    | FactWritten
    | FactRead
    | Queried
    | Superseded
    | Evicted
    | EpisodeRecorded
    | Consolidated
    | Expired
    | ValidityClosed
    | Recalled
    | BlockEdited
    | Judged
)
"""Any event of the kernel."""

EVENT_TYPES: dict[str, type[Event]] = {
    cls.__name__: cls
    for cls in (
        TurnAdded,
        CompactionTriggered,
        ClockAdvanced,
        FactWritten,
        FactRead,
        Queried,
        Superseded,
        Evicted,
        EpisodeRecorded,
        Consolidated,
        Expired,
        ValidityClosed,
        Recalled,
        BlockEdited,
        Judged,
    )
}
"""Every event type by its class name, the name it carries in a log."""
