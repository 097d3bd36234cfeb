"""The zoo: every policy memtape ships, by axis and name, and which axis decides each command.

Looking a name up imports its module (``Registry``); listing names imports nothing.
"""

from memtape.core.commands import (
    AddTurn,
    AdvanceClock,
    Command,
    Consolidate,
    CreateBlock,
    EditBlock,
    Query,
    ReadFact,
    Recall,
    RecordEpisode,
    WriteFact,
)
from memtape.policies.plumbing.registry import Registry

COMPACTION = Registry(
    {
        "tiered": "memtape.policies.window.tiered:TieredCompaction",
        "sliding-window": "memtape.policies.window.sliding_window:SlidingWindow",
        "rolling-summary": "memtape.policies.window.rolling_summary:RollingSummary",
        "clear-tool-results": "memtape.policies.window.tool_clearing:ClearToolResults",
        "none": "memtape.policies.window.no_compaction:NoCompaction",
        "recorded": "memtape.policies.window.recorded:RecordedCompaction",
        "observation-masking": "memtape.policies.window.replicas.masking:ObservationMasking",
        "anthropic-clear-tool-uses": (
            "memtape.policies.window.replicas.masking:AnthropicClearToolUses"
        ),
        "anthropic-clear-thinking": (
            "memtape.policies.window.replicas.thinking:AnthropicClearThinking"
        ),
        "anthropic-compaction": (
            "memtape.policies.window.replicas.summarizing:AnthropicCompaction"
        ),
        "claude-code": "memtape.policies.window.replicas.summarizing:ClaudeCode",
        "codex": "memtape.policies.window.replicas.summarizing:Codex",
        "langchain-summarization": (
            "memtape.policies.window.replicas.summarizing:LangChainSummarization"
        ),
        "masking-then-summary": ("memtape.policies.window.replicas.summarizing:MaskingThenSummary"),
    }
)
"""Compaction policies by name (each class's ``name``), imported when first looked up."""

FORGETTING = Registry(
    {
        "importance-recency-access": "memtape.policies.store.forgetting:ImportanceRecencyAccess",
        "generative-agents": "memtape.policies.store.generative_agents:GenerativeAgents",
        "memorybank": "memtape.policies.store.memorybank:MemoryBank",
        "lru": "memtape.policies.store.cache:LeastRecentlyUsed",
        "lfu": "memtape.policies.store.cache:LeastFrequentlyUsed",
        "fifo": "memtape.policies.store.cache:FirstInFirstOut",
    }
)
"""Forgetting policies by name, imported when first looked up."""

CONSOLIDATION = Registry(
    {
        "rules": "memtape.policies.consolidation.rules:RuleConsolidation",
        "llm": "memtape.policies.consolidation.llm:LlmConsolidation",
    }
)
"""Consolidation policies by name, imported when first looked up."""

AXES = {"compaction": COMPACTION, "forgetting": FORGETTING, "consolidation": CONSOLIDATION}
"""Each axis of memory and the policies that serve it."""

SHARED: dict[str, tuple[str, ...]] = {
    "compaction": ("budget", "tokenizer", "recall"),
    "forgetting": ("capacity", "ttl"),
    "consolidation": (),
}
"""The parameters every policy of an axis takes: they carry over when ``--set`` changes
the policy (``compaction.policy=sliding-window``), and the others fall back to defaults."""

LLM = "llm"
"""The table beside the axes' that says which model a policy asks (``memtape.llm.config``)."""

AXIS_OF: dict[type[Command], str | None] = {
    AddTurn: "compaction",
    WriteFact: "forgetting",
    ReadFact: "forgetting",
    Query: "forgetting",
    RecordEpisode: "consolidation",
    Consolidate: "consolidation",
    AdvanceClock: None,
    Recall: "compaction",
    CreateBlock: "compaction",
    EditBlock: "compaction",
}
"""The axis whose policy decides each command (None: the session itself)."""
