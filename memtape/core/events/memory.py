"""The memory's events: an episode recorded, a consolidation pass, a question answered."""

from typing import ClassVar

import attrs

from memtape.core.events.parts import (
    OMITTED_WHEN_EMPTY,
    BlockEdit,
    ModelCall,
    ProceduralRule,
    SemanticFact,
)
from memtape.core.reprs import fields_repr


@attrs.frozen
class EpisodeRecorded:
    """A raw episode was recorded for a later consolidation pass."""

    __repr__ = fields_repr

    VERSION: ClassVar[int] = 1
    id: int
    text: str


@attrs.frozen
class Consolidated:
    """A sleep-time pass consumed ``episodes`` and distilled facts and rules.

    ``asked`` holds each model call the pass made, in order, a refused answer
    and its retries included (version 2; a version-1 pass asked none). Version
    3: a model call may say it was ``cut`` (``ModelCall``). Version 4: ``blocks``
    holds the memory-block edits the pass asked for (a sleep-time agent's), each
    made by a ``BlockEdited`` after it in the same step; the fold of this event
    leaves the blocks alone.
    """

    __repr__ = fields_repr

    VERSION: ClassVar[int] = 4
    episodes: tuple[int, ...]
    semantic: tuple[SemanticFact, ...]
    procedural: tuple[ProceduralRule, ...]
    asked: tuple[ModelCall, ...] = attrs.field(default=(), metadata={OMITTED_WHEN_EMPTY: True})
    blocks: tuple[BlockEdit, ...] = attrs.field(default=(), metadata={OMITTED_WHEN_EMPTY: True})


@attrs.frozen
class Answered:
    """A model was asked ``question`` against the window as it stood (``bench --judge``), and
    replied ``reply``; ``correct`` is the verdict against the reference ``answer``, which a
    judge model gave when the reply and the answer differed (``judged``).

    ``asked`` holds the model calls that decided it: the reply's, then the judge's when one
    was asked. It changes no memory: the fold keeps the state as it was, and what a bench
    counts of the answers is read from these events.
    """

    __repr__ = fields_repr

    VERSION: ClassVar[int] = 1
    question: str
    answer: str
    reply: str
    correct: bool
    judged: bool
    asked: tuple[ModelCall, ...] = attrs.field(default=(), metadata={OMITTED_WHEN_EMPTY: True})
