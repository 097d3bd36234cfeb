"""memtape.policy: what writing a policy of your own takes, from one module.

A policy is a decider: ``decide(state, command)`` returns the events that
record its decision, or raises ``Rejected`` saying why not. This module
holds everything such a class touches: the commands it decides on, the
events it emits, the state it reads (with the types of a window's tiers:
``Hot``, ``Warm`` and the ``Seq`` a long tier is), the errors it raises, ``Params`` to
build itself from a scenario table, the promises it may declare and the
protocol of each axis, the tokenizers, and the rules the shipped policies
share (``arriving``: an arriving turn checked, measured and its salience
settled; ``decide_by_rank``: a store's writes, reads and queries under the
policy's own ranking; ``kept_tokens`` and ``units``: what keeping the
newest turns whole costs).

The promise: every name in ``__all__`` stays importable from
``memtape.policy``, with the meaning its docstring gives, whatever happens
to the modules behind it. Those (``memtape.core``, ``memtape.policies``
and everything under them) are memtape's own and may move or change;
import from here, not from them.

Importing it costs what a policy's own module costs anyway (attrs and the
event and state types); it imports no shipped policy and no optional
extra (a byte-pair tokenizer loads its encoding on its first count).
"""

from memtape.core.commands import (
    ROLES,
    AddTurn,
    AdvanceClock,
    Command,
    Consolidate,
    Query,
    ReadFact,
    RecordEpisode,
    WriteFact,
)
from memtape.core.errors import BadInput, Rejected
from memtape.core.events import (
    ClockAdvanced,
    CompactionTriggered,
    Consolidated,
    EpisodeRecorded,
    Event,
    Evicted,
    FactRead,
    FactWritten,
    ModelCall,
    ProceduralRule,
    Queried,
    SemanticFact,
    Superseded,
    TurnAdded,
    WarmItem,
)
from memtape.core.seq import Seq
from memtape.core.state import INITIAL_STATE, Fact, Hot, Memory, State, Store, Warm, Window
from memtape.policies.plumbing.params import Params
from memtape.policies.plumbing.promises import (
    BLOCK_LIMIT,
    BUDGET,
    CAPACITY,
    EVICTS_WEAKEST,
    EXPIRES,
    JUDGED,
    PINNED,
    PROMISES,
    RECALL_BUDGET,
    RECENT_VERBATIM,
    SUPERSEDES,
    VALID_AS_OF,
    WELL_FORMED,
)
from memtape.policies.plumbing.protocols import (
    BudgetedCompaction,
    CompactionPolicy,
    ConsolidationPolicy,
    ForgettingPolicy,
    Scored,
    VerbatimCompaction,
)
from memtape.policies.store.rules import RankedStore, by_rank
from memtape.policies.store.rules import decide as decide_by_rank
from memtape.policies.text.tokenizers import Tokenizer, WordCount, tokenizer_named
from memtape.policies.window.turns import arriving
from memtape.policies.window.units import Newest, Unit, kept_tokens, newest, units

__all__ = [
    "BLOCK_LIMIT",
    "BUDGET",
    "CAPACITY",
    "EVICTS_WEAKEST",
    "EXPIRES",
    "INITIAL_STATE",
    "JUDGED",
    "PINNED",
    "PROMISES",
    "RECALL_BUDGET",
    "RECENT_VERBATIM",
    "ROLES",
    "SUPERSEDES",
    "VALID_AS_OF",
    "WELL_FORMED",
    "AddTurn",
    "AdvanceClock",
    "BadInput",
    "BudgetedCompaction",
    "ClockAdvanced",
    "Command",
    "CompactionPolicy",
    "CompactionTriggered",
    "Consolidate",
    "Consolidated",
    "ConsolidationPolicy",
    "EpisodeRecorded",
    "Event",
    "Evicted",
    "Fact",
    "FactRead",
    "FactWritten",
    "ForgettingPolicy",
    "Hot",
    "Memory",
    "ModelCall",
    "Newest",
    "Params",
    "ProceduralRule",
    "Queried",
    "Query",
    "RankedStore",
    "ReadFact",
    "RecordEpisode",
    "Rejected",
    "Scored",
    "SemanticFact",
    "Seq",
    "State",
    "Store",
    "Superseded",
    "Tokenizer",
    "TurnAdded",
    "Unit",
    "VerbatimCompaction",
    "Warm",
    "WarmItem",
    "Window",
    "WordCount",
    "WriteFact",
    "arriving",
    "by_rank",
    "decide_by_rank",
    "kept_tokens",
    "newest",
    "tokenizer_named",
    "units",
]
