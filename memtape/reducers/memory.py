"""Folding memory events: episodes recorded, consolidation passes."""

from memtape.core.errors import CorruptLog
from memtape.core.events import Consolidated, EpisodeRecorded
from memtape.core.seq import Seq
from memtape.core.state import Memory


def episode_recorded(memory: Memory, event: EpisodeRecorded) -> Memory:
    """Queue the episode for the next consolidation pass."""
    if event.id != memory.recorded + 1:
        raise CorruptLog(f"episode {event.id} cannot follow episode {memory.recorded}")
    return Memory(
        memory.episodes.append(event),
        memory.recorded + 1,
        memory.semantic,
        memory.procedural,
    )


def consolidated(memory: Memory, event: Consolidated) -> Memory:
    """Prune the consumed episodes and keep what the pass distilled."""
    consumed = set(event.episodes)
    pending = {episode.id for episode in memory.episodes}
    if not consumed <= pending:
        raise CorruptLog(
            f"consolidation consumes episodes {sorted(consumed - pending)}, not pending"
        )
    return Memory(
        Seq(episode for episode in memory.episodes if episode.id not in consumed),
        memory.recorded,
        memory.semantic.extend(event.semantic),
        memory.procedural.extend(event.procedural),
    )
