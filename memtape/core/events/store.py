"""The store's events, and the clock's: facts written, read, queried, superseded,
evicted, expired, closed, judged."""

from typing import ClassVar

import attrs

from memtape.core.events.parts import (
    OMITTED_WHEN_EMPTY,
    ModelCall,
)
from memtape.core.reprs import fields_repr


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
