"""The records events hold inside them: a WARM item, a model call, a block edit, a
distilled fact or rule (none is an event of its own); and the codec's field marker."""

import attrs

from memtape.core.reprs import fields_repr

OMITTED_WHEN_EMPTY = "memtape_omitted_when_empty"
"""The metadata key of a field a log line carries only when it is not its (empty) default."""


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
class BlockEdit:
    """An edit of memory block ``label`` a consolidation pass asked for: ``op`` (``replace``,
    ``append`` or ``find-replace``), ``text`` and, for a find-and-replace, ``find``."""

    __repr__ = fields_repr

    label: str
    op: str
    text: str
    find: str = attrs.field(default="", metadata={OMITTED_WHEN_EMPTY: True})


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
