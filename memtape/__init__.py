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
from memtape.policies.cache import FirstInFirstOut, LeastFrequentlyUsed, LeastRecentlyUsed
from memtape.policies.compaction import TieredCompaction
from memtape.policies.consolidation import RuleConsolidation
from memtape.policies.forgetting import ImportanceRecencyAccess
from memtape.policies.generative_agents import GenerativeAgents
from memtape.policies.llm_consolidation import LlmConsolidation
from memtape.policies.llm_summary import LlmSummarizer
from memtape.policies.memorybank import MemoryBank
from memtape.policies.no_compaction import NoCompaction
from memtape.policies.recorded import RecordedCompaction
from memtape.policies.rolling_summary import RollingSummary
from memtape.policies.session import Policies, Session
from memtape.policies.sliding_window import SlidingWindow
from memtape.policies.tool_clearing import ClearToolResults
from memtape.reducers import evolve, fold
from memtape.runfiles import load_run, save_run
from memtape.scenarios import load_scenario

__all__ = [
    "AddTurn",
    "AdvanceClock",
    "BadInput",
    "ClearToolResults",
    "Command",
    "Consolidate",
    "CorruptLog",
    "FirstInFirstOut",
    "GenerativeAgents",
    "ImportanceRecencyAccess",
    "LeastFrequentlyUsed",
    "LeastRecentlyUsed",
    "LlmConsolidation",
    "LlmSummarizer",
    "MemoryBank",
    "MemtapeError",
    "NoCompaction",
    "Policies",
    "Query",
    "ReadFact",
    "RecordEpisode",
    "RecordedCompaction",
    "Rejected",
    "RollingSummary",
    "RuleConsolidation",
    "Run",
    "Session",
    "SlidingWindow",
    "TieredCompaction",
    "WriteFact",
    "__version__",
    "evolve",
    "fold",
    "load_run",
    "load_scenario",
    "save_run",
]
