"""memtape: simulate the memory policies of LLM agents as an event-sourced system.

Policies decide, events record, pure reducers fold, projections render.
The names below are the public API; everything else is reachable by module.
Each is imported on first use (``memtape.Session`` imports the session and
what it needs, nothing else), so that ``import memtape`` and the command
line start quickly.
"""

import importlib
from typing import TYPE_CHECKING, Any

from memtape._version import __version__

if TYPE_CHECKING:
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
    from memtape.policies.consolidation.llm import LlmConsolidation
    from memtape.policies.consolidation.rules import RuleConsolidation
    from memtape.policies.session import Policies, Session
    from memtape.policies.store.cache import FirstInFirstOut, LeastFrequentlyUsed, LeastRecentlyUsed
    from memtape.policies.store.forgetting import ImportanceRecencyAccess
    from memtape.policies.store.generative_agents import GenerativeAgents
    from memtape.policies.store.memorybank import MemoryBank
    from memtape.policies.text.llm_summary import LlmSummarizer
    from memtape.policies.window.no_compaction import NoCompaction
    from memtape.policies.window.recorded import RecordedCompaction
    from memtape.policies.window.replicas.masking import (
        AnthropicClearToolUses,
        ObservationMasking,
    )
    from memtape.policies.window.replicas.summarizing import (
        AnthropicCompaction,
        ClaudeCode,
        Codex,
        LangChainSummarization,
        MaskingThenSummary,
    )
    from memtape.policies.window.replicas.thinking import AnthropicClearThinking
    from memtape.policies.window.rolling_summary import RollingSummary
    from memtape.policies.window.sliding_window import SlidingWindow
    from memtape.policies.window.tiered import TieredCompaction
    from memtape.policies.window.tool_clearing import ClearToolResults
    from memtape.reducers import evolve, fold
    from memtape.runs.files import load_run, save_run
    from memtape.scenarios import load_scenario

_HOMES = {
    "memtape.core.commands": (
        "AddTurn",
        "AdvanceClock",
        "Command",
        "Consolidate",
        "Query",
        "ReadFact",
        "RecordEpisode",
        "WriteFact",
    ),
    "memtape.core.errors": ("BadInput", "CorruptLog", "MemtapeError", "Rejected"),
    "memtape.core.run": ("Run",),
    "memtape.policies.store.cache": ("FirstInFirstOut", "LeastFrequentlyUsed", "LeastRecentlyUsed"),
    "memtape.policies.window.tiered": ("TieredCompaction",),
    "memtape.policies.consolidation.rules": ("RuleConsolidation",),
    "memtape.policies.store.forgetting": ("ImportanceRecencyAccess",),
    "memtape.policies.store.generative_agents": ("GenerativeAgents",),
    "memtape.policies.consolidation.llm": ("LlmConsolidation",),
    "memtape.policies.text.llm_summary": ("LlmSummarizer",),
    "memtape.policies.store.memorybank": ("MemoryBank",),
    "memtape.policies.window.no_compaction": ("NoCompaction",),
    "memtape.policies.window.recorded": ("RecordedCompaction",),
    "memtape.policies.window.replicas.masking": ("AnthropicClearToolUses", "ObservationMasking"),
    "memtape.policies.window.replicas.summarizing": (
        "AnthropicCompaction",
        "ClaudeCode",
        "Codex",
        "LangChainSummarization",
        "MaskingThenSummary",
    ),
    "memtape.policies.window.replicas.thinking": ("AnthropicClearThinking",),
    "memtape.policies.window.rolling_summary": ("RollingSummary",),
    "memtape.policies.session": ("Policies", "Session"),
    "memtape.policies.window.sliding_window": ("SlidingWindow",),
    "memtape.policies.window.tool_clearing": ("ClearToolResults",),
    "memtape.reducers": ("evolve", "fold"),
    "memtape.runs.files": ("load_run", "save_run"),
    "memtape.scenarios": ("load_scenario",),
}
"""The module each public name is defined in (imported when the name is first asked for)."""

_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}

__all__ = [
    "AddTurn",
    "AdvanceClock",
    "AnthropicClearThinking",
    "AnthropicClearToolUses",
    "AnthropicCompaction",
    "BadInput",
    "ClaudeCode",
    "ClearToolResults",
    "Codex",
    "Command",
    "Consolidate",
    "CorruptLog",
    "FirstInFirstOut",
    "GenerativeAgents",
    "ImportanceRecencyAccess",
    "LangChainSummarization",
    "LeastFrequentlyUsed",
    "LeastRecentlyUsed",
    "LlmConsolidation",
    "LlmSummarizer",
    "MaskingThenSummary",
    "MemoryBank",
    "MemtapeError",
    "NoCompaction",
    "ObservationMasking",
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


def __getattr__(name: str) -> Any:
    """A public name, imported from its module on first use and kept here after."""
    module = _HOME_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The module's names, the public ones not yet imported included."""
    return sorted({*globals(), *__all__})
