"""The view at one point of a run: meter, tiers, ranking, memory, as JSON-ready data.

Field names here are a contract (``memtape show --json``); numbers are exact.
"""

from typing import TYPE_CHECKING, Any

from memtape.core.events import EpisodeRecorded, ProceduralRule, SemanticFact, TurnAdded
from memtape.core.state import Fact, State, Store, Window
from memtape.policies.plumbing.trust import NotImported
from memtape.policies.session import Policies
from memtape.projections.meter import meter

if TYPE_CHECKING:
    from memtape.policies.plumbing.protocols import CompactionPolicy, ForgettingPolicy, Scored


def view_data(state: State, at: int, policies: Policies) -> dict[str, Any]:
    """Everything ``show`` reports at position ``at``; an unused part is None."""
    memory = state.memory
    uses_memory = policies.consolidation is not None
    return {
        "at": at,
        "clock": state.clock,
        "window": window_data(state.window, policies.compaction),
        "store": store_data(state, policies.forgetting),
        "episodes": [episode_data(e) for e in memory.episodes] if uses_memory else None,
        "semantic": [semantic_data(f) for f in memory.semantic] if uses_memory else None,
        "procedural": [procedural_data(r) for r in memory.procedural] if uses_memory else None,
    }


def window_data(window: Window, compaction: "CompactionPolicy | None") -> dict[str, Any] | None:
    """The meter and the tiers: HOT turns, WARM items, the COLD gist, dropped turns, the
    recall tier (the turns the latest recall brought back, verbatim), and the memory blocks,
    pinned beside them."""
    gauge = meter(window, compaction)
    if gauge is None:
        return None
    return {
        **gauge.data(),
        "hot": [turn_data(turn) for turn in window.hot],
        "warm": [{"turn": i.turn, "text": i.text, "tokens": i.tokens} for i in window.warm],
        "cold": {"turns": len(window.cold), "gist": window.gist, "tokens": window.gist_tokens},
        "dropped": list(window.dropped),
        "recalled": [{"turn": i.turn, "text": i.text, "tokens": i.tokens} for i in window.recalled],
        **blocks_data(window),
    }


def blocks_data(window: Window) -> dict[str, Any]:
    """The memory blocks, in the order they were created, under ``blocks``; nothing while
    there is none (so a window without blocks reads as it always did). A read-only block
    says so (``read_only``); the others leave it out."""
    if not window.blocks:
        return {}
    return {
        "blocks": [
            {
                "label": block.label,
                "value": block.value,
                "chars": len(block.value),
                "limit": block.limit,
                "tokens": block.tokens,
                "version": block.version,
                **({"read_only": True} if block.read_only else {}),
            }
            for block in window.blocks
        ]
    }


def turn_data(turn: TurnAdded) -> dict[str, Any]:
    """A HOT turn, verbatim."""
    return {
        "turn": turn.turn,
        "role": turn.role,
        "text": turn.text,
        "tokens": turn.tokens,
        "salient": turn.salient,
        "calls": list(turn.calls),
        "answers": list(turn.answers),
        "pinned": turn.pinned,
    }


def store_data(state: State, forgetting: "ForgettingPolicy | None") -> dict[str, Any] | None:
    """The ranking at the state's clock with each factor, and the retired and evicted facts.

    A policy a run file names by import path is not imported, so it cannot
    score: then the active facts are listed oldest first, each with a null
    score and no factors, and ``unscored`` says why.
    """
    if forgetting is None:
        return None
    store = state.store
    unscored: dict[str, str] = {}
    try:
        ranking = [ranked_data(s) for s in forgetting.rank(store, state.clock)]
    except NotImported as error:
        unscored["unscored"] = str(error)
        ranking = [
            {**fact_data(fact), "factors": {}, "score": None} for fact in store.active_facts()
        ]
    return {
        **unscored,
        "capacity": forgetting.capacity,
        "ranking": ranking,
        "retired": [
            {**fact_data(f), "retired_at": f.ended_at, "superseded_by": f.superseded_by}
            for f in store.with_status("retired")
        ],
        "evicted": [
            {**fact_data(f), "score": f.evicted_score, "evicted_at": f.ended_at}
            for f in store.with_status("evicted")
        ],
        **_expired(store),
    }


def _expired(store: Store) -> dict[str, Any]:
    """The expired facts, under ``expired``; nothing while none has expired (so a store
    that uses no expiry reads as it always did)."""
    expired = store.with_status("expired")
    if not expired:
        return {}
    return {
        "expired": [
            {
                **fact_data(f),
                "expires_at": f.expires_at,
                "expired_at": f.ended_at,
                "reason": f.expired_reason,
            }
            for f in expired
        ]
    }


def ranked_data(scored: "Scored") -> dict[str, Any]:
    """One ranked fact: its fields, each factor of its score, and the score."""
    # The fact's own fields win over a factor of the same name (a normalized
    # importance is a factor, not the fact's importance).
    return {
        **scored.factors,
        **fact_data(scored.fact),
        "factors": scored.factors,
        "score": scored.score,
    }


def fact_data(fact: Fact) -> dict[str, Any]:
    """A fact's own fields."""
    return {
        "id": fact.id,
        "key": fact.key,
        "text": fact.text,
        "importance": fact.importance,
        "reads": fact.reads,
        "written_at": fact.written_at,
    }


def episode_data(episode: EpisodeRecorded) -> dict[str, Any]:
    """A pending episode."""
    return {"id": episode.id, "text": episode.text}


def semantic_data(fact: SemanticFact) -> dict[str, Any]:
    """A distilled semantic fact and the episode it came from."""
    return {
        "key": fact.key,
        "text": fact.text,
        "importance": fact.importance,
        "episode": fact.episode,
    }


def procedural_data(rule: ProceduralRule) -> dict[str, Any]:
    """A distilled procedural rule and the episode it came from."""
    return {"text": rule.text, "episode": rule.episode}
