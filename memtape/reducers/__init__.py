"""Pure reducers: ``evolve(state, event) -> state``, and the root fold."""

from memtape.reducers.root import evolve, fold

__all__ = ["evolve", "fold"]
