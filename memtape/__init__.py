"""memtape: simulate the memory policies of LLM agents as an event-sourced system.

Policies decide, events record, pure reducers fold, projections render.
The names below are the public API; everything else is reachable by module.
"""

from memtape._version import __version__
from memtape.core.commands import (
    AddTurn,
    AdvanceClock,
    Command,
    Consolidate,
    Query,
    ReadFact,
    RecordEpisode,
    WriteFact,
)
from memtape.core.errors import BadInput, CorruptLog, MemtapeError, Rejected
from memtape.core.run import Run
from memtape.policies.compaction import TieredCompaction
from memtape.policies.consolidation import RuleConsolidation
from memtape.policies.forgetting import ImportanceRecencyAccess
from memtape.policies.session import Policies, Session
from memtape.reducers import evolve, fold
from memtape.runfiles import load_run, save_run
from memtape.scenarios import load_scenario

__all__ = [
    "AddTurn",
    "AdvanceClock",
    "BadInput",
    "Command",
    "Consolidate",
    "CorruptLog",
    "ImportanceRecencyAccess",
    "MemtapeError",
    "Policies",
    "Query",
    "ReadFact",
    "RecordEpisode",
    "Rejected",
    "RuleConsolidation",
    "Run",
    "Session",
    "TieredCompaction",
    "WriteFact",
    "__version__",
    "evolve",
    "fold",
    "load_run",
    "load_scenario",
    "save_run",
]
