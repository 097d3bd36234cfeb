"""Recall of what left the window: a compaction policy's ``recall = "bm25"`` (or
``"embeddings"``: ``EmbeddingsRecall``).

Every turn that leaves HOT by a drop or a fold joins ``Window.left``; a
``Recall`` command searches them with BM25 (``memtape.policies.text.bm25``)
and brings the best back, verbatim, into the window's recall tier, best
first, as many as fit under the compaction policy's budget (or its trigger's
lowest token count, when lower: ``limit``). The tier holds the latest recall's answer until the
next recall replaces it (a recall that finds nothing empties it). No
compaction moves it: it sits in the window like a pinned turn, counted in
its tokens, so a compaction makes room around it. (Cleared at the next
compaction instead, it would be gone from every request after the first
turn that compacted, which under a full window is the next one: the model
would never answer with it.)

The index is a projection beside the state, not part of it: the policy keeps
one, grown by the turns that left since it last looked (a drop costs its own
turn), and builds it again from ``Window.left`` when it is shown a state that
does not continue the one it indexed (a seek back, a fork, another run).
The ``Recalled`` event records what was found and its scores, so replay,
seek and show never search.
"""

import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import attrs

from memtape.core.commands import Recall
from memtape.core.errors import BadInput, Rejected
from memtape.core.events import CompactionTriggered, Event, Recalled, WarmItem
from memtape.core.seq import Seq
from memtape.core.state import Left, State
from memtape.llm.config import ModelConfig
from memtape.policies.plumbing.promises import RECALL_BUDGET
from memtape.policies.plumbing.protocols import CompactionPolicy

if TYPE_CHECKING:
    from memtape.policies.text.bm25 import Bm25Index

RECALLS = ("bm25", "embeddings")
"""What a compaction policy's ``recall`` may name."""


class Recaller(Protocol):
    """What a ``Recall`` searches with: ``Bm25Recall``, or ``EmbeddingsRecall``."""

    @property
    def name(self) -> str:
        """What the ``[compaction]`` table's ``recall`` names it."""
        ...

    @property
    def promises(self) -> frozenset[str]:
        """What it promises (``RECALL_BUDGET``)."""
        ...

    def decide(self, state: State, command: Recall, compaction: CompactionPolicy) -> Recalled:
        """What ``command`` finds among the turns that left, and what of it fits."""
        ...


class _Projection:
    """The BM25 index of one history's turns that left, and the last turn it indexed."""

    def __init__(self) -> None:
        self.index: Bm25Index | None = None
        self.turns: list[Left] = []
        self.lock = threading.Lock()

    def __reduce__(self) -> tuple[Any, ...]:
        # A copy (for a process pool) starts empty: the index is rebuilt from the state.
        return (_Projection, ())

    def follow(self, left: Seq[Left]) -> None:
        """Index the turns of ``left`` not indexed yet, first starting again when ``left``
        is not a continuation of what was indexed."""
        from memtape.policies.text.bm25 import Bm25Index  # noqa: PLC0415 (show never recalls)

        indexed = len(self.turns)
        if (
            self.index is None
            or indexed > len(left)
            or (indexed and left[indexed - 1] is not self.turns[-1])
        ):
            self.index, self.turns, indexed = Bm25Index(), [], 0
        index = self.index
        for turn in left[indexed:]:
            index.add(turn[1])
            self.turns.append(turn)

    def search(self, text: str, k: int) -> list[tuple[Left, float]]:
        """The ``k`` best turns for ``text``, with their scores, best first."""
        if self.index is None:
            return []
        return [(self.turns[n], score) for n, score in self.index.search(text, k)]


@attrs.frozen
class Bm25Recall:
    """Recall by BM25 over the turns that left the window (``recall = "bm25"``)."""

    name: ClassVar[str] = "bm25"
    _projection: _Projection = attrs.field(
        factory=_Projection, init=False, eq=False, repr=False, alias="_projection"
    )

    @property
    def promises(self) -> frozenset[str]:
        """A recall never takes the window over budget."""
        return frozenset({RECALL_BUDGET})

    def decide(self, state: State, command: Recall, compaction: CompactionPolicy) -> Recalled:
        """What ``command`` finds among the turns that left, and what of it fits: the
        window without its current recall tier, plus the brought turns, stays within
        ``limit(compaction)``."""
        text, k = command.text, command.k
        if not isinstance(text, str):
            raise Rejected(f"a recall's query is text, got {text!r}")
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise Rejected(f"a recall's k is a whole number of at least 1, got {k!r}")
        window = state.window
        projection = self._projection
        with projection.lock:
            projection.follow(window.left)
            hits = projection.search(text, k)
        room = limit(compaction) - window.tokens + sum(item.tokens for item in window.recalled)
        brought: list[WarmItem] = []
        for (number, found_text, tokens), _ in hits:
            if tokens <= room:
                brought.append(WarmItem(number, found_text, tokens))
                room -= tokens
        found = tuple(number for (number, _, _), _ in hits)
        scores = tuple(score for _, score in hits)
        return Recalled(text, k, found, scores, tuple(brought))


@attrs.frozen
class EmbeddingsRecall:
    """Recall by the cosine of embeddings over the turns that left the window
    (``recall = "embeddings"``, asking the ``[llm]`` table's ``embedding_model``, else its
    ``model``, on its server).

    Each turn's embedding and the query's are asked of an OpenAI-compatible
    ``/v1/embeddings`` endpoint (``memtape.llm.embedding``: each text's vector
    cached, so a turn is embedded once and a re-run or a fork sends nothing);
    ties go to the earlier turn. The ``Recalled`` event records what was found
    and each score, so replay, seek and show never ask; a re-decision (``check``,
    a fork) embeds again from the cache. A run read without trust never chooses
    where a request goes: its recorded ``[llm]`` table finds the vectors cached
    for it, and sends nothing.
    """

    name: ClassVar[str] = "embeddings"
    config: ModelConfig

    @property
    def promises(self) -> frozenset[str]:
        """A recall never takes the window over budget."""
        return frozenset({RECALL_BUDGET})

    def decide(self, state: State, command: Recall, compaction: CompactionPolicy) -> Recalled:
        """What ``command`` finds among the turns that left, best first by cosine, and what
        of it fits under ``limit(compaction)``."""
        from memtape.llm.embedding import cosine, embedded  # noqa: PLC0415 (show never recalls)

        text, k = command.text, command.k
        if not isinstance(text, str):
            raise Rejected(f"a recall's query is text, got {text!r}")
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise Rejected(f"a recall's k is a whole number of at least 1, got {k!r}")
        window = state.window
        left = list(window.left)
        if not left:
            return Recalled(text, k, (), (), ())
        config = self.config
        if config.embedding_model is not None:
            config = attrs.evolve(config, model=config.embedding_model)
        query, *turns = embedded(config, [text, *(turn for _, turn, _ in left)])
        scored = sorted(
            ((cosine(query, vector), index) for index, vector in enumerate(turns)),
            key=lambda pair: (-pair[0], pair[1]),
        )[:k]
        room = limit(compaction) - window.tokens + sum(item.tokens for item in window.recalled)
        brought: list[WarmItem] = []
        for _, index in scored:
            number, found_text, tokens = left[index]
            if tokens <= room:
                brought.append(WarmItem(number, found_text, tokens))
                room -= tokens
        found = tuple(left[index][0] for _, index in scored)
        return Recalled(text, k, found, tuple(score for score, _ in scored), tuple(brought))


def limit(compaction: CompactionPolicy) -> int:
    """The most tokens a recall may fill the window to: the budget, or the lowest token
    count the policy's trigger fires over when that is lower. A policy that compacts to a
    ``target`` below it leaves room there for what a recall brings back."""
    from memtape.policies.window.trigger import Trigger  # noqa: PLC0415 (show never recalls)

    trigger = getattr(compaction, "trigger", None)
    budget = compaction.budget
    bound = trigger.bound(budget) if isinstance(trigger, Trigger) else None
    return budget if bound is None else min(budget, bound)


def recall_from(value: object, where: str) -> Recaller:
    """The recall a ``[compaction]`` table's ``recall`` names, or one clear error; an
    ``embeddings`` recall asks the session's ``[llm]`` model, which it needs."""
    if value == Bm25Recall.name:
        return Bm25Recall()
    if value == "embeddings":
        from memtape.policies.plumbing.building import build_settings  # noqa: PLC0415

        config = build_settings().llm
        if config is None:
            raise BadInput(
                f'{where}: recall = "embeddings" asks a model for embeddings: add an [llm] '
                'table with model = "..." (the embeddings model), or --set llm.model=...'
            )
        return EmbeddingsRecall(config)
    from memtape.core.spelling import did_you_mean  # noqa: PLC0415 (a refusal only)

    hint = did_you_mean(value, RECALLS) if isinstance(value, str) else ""
    raise BadInput(f"{where}: recall must be one of {', '.join(RECALLS)}, got {value!r}{hint}")


def recall_params(
    tables: Mapping[str, Any], where: str
) -> tuple[Mapping[str, Any], dict[str, Any]]:
    """A session's policy tables without the ``[compaction]`` table's ``recall``, and the
    ``Policies`` arguments it sets (``{"recall": ...}``, or none when it names none)."""
    compaction = tables.get("compaction")
    if not isinstance(compaction, Mapping) or "recall" not in compaction:
        return tables, {}
    rest = dict(compaction)
    recall = recall_from(rest.pop("recall"), f"{where}: [compaction]")
    return {**tables, "compaction": rest}, {"recall": recall}


def with_recall(
    tables: dict[str, dict[str, Any]], recall: Recaller | None
) -> dict[str, dict[str, Any]]:
    """A session's parameter tables with its ``recall`` named in the compaction table."""
    if recall is not None and "compaction" in tables:
        tables["compaction"]["recall"] = recall.name
    return tables


def kept_for_recall(events: tuple[Event, ...]) -> tuple[Event, ...]:
    """``events`` with each compaction marked to keep the turns it moves out of HOT for a
    recall to search (``CompactionTriggered.recall``): what a session that recalls decides."""
    return tuple(
        attrs.evolve(event, recall=True) if isinstance(event, CompactionTriggered) else event
        for event in events
    )


def decide_recall(
    recall: Recaller | None, compaction: CompactionPolicy | None, state: State, command: Recall
) -> tuple[Event, ...]:
    """The events of a ``Recall``, or ``Rejected`` for a recall in a session with none."""
    if compaction is None or recall is None:
        raise Rejected('a recall needs recall = "bm25" (or "embeddings") in the [compaction] table')
    return (recall.decide(state, command, compaction),)
