"""Events: immutable, past-tense records of what happened in a run.

An event holds a decision and the external inputs behind it (a turn's
measured token count, a summary's text, the score that justified an
eviction), never what the fold can derive from earlier events. The one
exception is identity: a turn's number and a fact's or episode's id are
written into the event that creates it, so a log reads on its own and the
fold can refuse an event that does not follow its predecessor. Each event
type carries a schema version in ``VERSION``.
"""

from typing import ClassVar

import attrs

LEFT_OUT_AT_DEFAULT = "left_out_at_default"
"""Field metadata: a log line leaves the field out while it holds its default, so a field
a newer version adds costs a line nothing (and changes none of its bytes) where unused."""


@attrs.frozen
class TurnAdded:
    """A conversation turn joined the window, verbatim, with its measured tokens.

    ``calls`` are the ids of the tool calls it makes, ``answers`` those of the
    calls whose results it carries (version 2; a version-1 turn has neither),
    and a ``pinned`` turn is one no policy moves.
    """

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

    turn: int
    text: str
    tokens: int


@attrs.frozen
class CompactionTriggered:
    """One whole compaction decision, applied in this order by the fold.

    The HOT turns not named in ``hot`` leave HOT: those in ``warm`` become
    the given warm items (appended after the existing ones), those in
    ``dropped`` are dropped. Then the ``cold`` oldest warm items go COLD, and
    the COLD gist becomes ``gist`` (``""`` and 0 tokens while nothing is cold).
    Each of ``cleared`` names a turn that stays HOT, in its place, reading
    the item's text at the item's tokens from now on (a tool result cleared
    in place; version 2, a version-1 compaction clears none).
    """

    VERSION: ClassVar[int] = 2
    budget: int
    hot: tuple[int, ...]
    warm: tuple[WarmItem, ...]
    dropped: tuple[int, ...]
    cold: int
    gist: str
    gist_tokens: int
    cleared: tuple[WarmItem, ...] = attrs.field(default=(), metadata={LEFT_OUT_AT_DEFAULT: True})


@attrs.frozen
class ClockAdvanced:
    """The logical clock moved forward to ``to``."""

    VERSION: ClassVar[int] = 1
    to: float


@attrs.frozen
class FactWritten:
    """A fact entered the store as active, at the current clock."""

    VERSION: ClassVar[int] = 1
    id: int
    key: str
    text: str
    importance: float


@attrs.frozen
class FactRead:
    """An active fact was read (its read count goes up by one)."""

    VERSION: ClassVar[int] = 1
    id: int


@attrs.frozen
class Queried:
    """A query returned ``results`` (fact ids, best first); each counts as a read.

    ``scores`` holds each result's score as the policy ranked it; ``key`` is
    the key the query expected ("" for none).
    """

    VERSION: ClassVar[int] = 1
    text: str
    key: str
    k: int
    results: tuple[int, ...]
    scores: tuple[float, ...]


@attrs.frozen
class Superseded:
    """An active fact was retired because fact ``by`` replaces it; it is kept."""

    VERSION: ClassVar[int] = 1
    id: int
    by: int


@attrs.frozen
class Evicted:
    """An active fact left the store over capacity; ``score`` is why it was chosen."""

    VERSION: ClassVar[int] = 1
    id: int
    score: float


@attrs.frozen
class EpisodeRecorded:
    """A raw episode was recorded for a later consolidation pass."""

    VERSION: ClassVar[int] = 1
    id: int
    text: str


@attrs.frozen
class SemanticFact:
    """A durable fact distilled from an episode; it is also written to the store."""

    key: str
    text: str
    importance: float
    episode: int


@attrs.frozen
class ProceduralRule:
    """A durable how-to rule distilled from an episode."""

    text: str
    episode: int


@attrs.frozen
class Consolidated:
    """A sleep-time pass consumed ``episodes`` and distilled facts and rules."""

    VERSION: ClassVar[int] = 1
    episodes: tuple[int, ...]
    semantic: tuple[SemanticFact, ...]
    procedural: tuple[ProceduralRule, ...]


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
    )
}
"""Every event type by its class name, the name it carries in a log."""
