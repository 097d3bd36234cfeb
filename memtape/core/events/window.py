"""The window's events: a turn joined, a compaction, a memory block edited, a recall."""

from typing import ClassVar

import attrs

from memtape.core.events.parts import (
    OMITTED_WHEN_EMPTY,
    ModelCall,
    WarmItem,
)
from memtape.core.reprs import fields_repr


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

    Version 5: ``recall`` says the turns it moves out of HOT are kept, as they
    arrived, for a recall to search (``Window.left``); a session that recalls
    sets it (``Policies.recall``), and the fold of any other keeps nothing
    (kept always, they cost a turn a tenth of its time). A version-4
    compaction was written before recall was (its upcast keeps nothing).
    """

    __repr__ = fields_repr

    VERSION: ClassVar[int] = 5
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
    recall: bool = attrs.field(default=False, eq=False, metadata={OMITTED_WHEN_EMPTY: True})


@attrs.frozen
class BlockEdited:
    """Memory block ``label`` now reads ``value`` (``tokens`` by the compaction policy's
    tokenizer, measured at the edit), as its ``version``.

    Version 1 of a block creates it and carries its character ``limit``; a
    later version leaves the limit out (None: the block's own). ``op`` says
    what the edit was: ``create``, ``replace``, ``append`` or ``find-replace``.
    A block is pinned in the window: its tokens count against the budget.
    Schema version 2: a creation may say the block is ``read_only`` (no later
    edit is accepted); a schema-1 block was not.
    """

    __repr__ = fields_repr

    VERSION: ClassVar[int] = 2
    label: str
    version: int
    op: str
    value: str
    tokens: int
    limit: int | None = attrs.field(default=None, metadata={OMITTED_WHEN_EMPTY: True})
    read_only: bool = attrs.field(default=False, metadata={OMITTED_WHEN_EMPTY: True})


@attrs.frozen
class Recalled:
    """A recall searched the turns that had left the window (dropped or folded) for
    ``query`` and brought the best of them back, verbatim, into the window's recall tier.

    ``found`` holds the turn numbers of the ``k`` best matches, best first, and
    ``scores`` each one's score (BM25, or a cosine under ``recall = "embeddings"``);
    ``brought`` the items that entered the tier
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
