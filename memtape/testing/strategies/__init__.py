"""Hypothesis strategies for memtape: turns, facts, commands, scenarios, policy parameters.

The command strategies mix commands a session honours with ones it must
reject (a blank role, an importance outside [0, 1], a read of a fact that is
gone, the clock moving backwards), so every property runs over both. Texts
are made of a few words most of the time, so a counterexample shrinks to
something a person reads at a glance. Turns for a session under way
(``turns_for``, ``turn_sequences``) carry tool-call structure (calls, the
results that answer them, in any order, some never answered; pinned turns)
and, given the budget, are sized against it, up to single turns over three
times it (``sized_texts``). Now and then a turn says what it costs (``tokens = N``,
a provider's recorded count, ``recorded_counts``), which the policy takes instead
of its tokenizer's count; and a scenario (``scenarios``) sometimes carries probes,
plain ones and questions with their answer and evidence turns (``probe_sets``).

The strategies live in modules by what they draw (``words``, ``turns``, ``facts``,
``sessions``, ``params``); every public name is imported from here.
"""

from memtape.testing.requires import hypothesis_missing

try:
    import hypothesis  # noqa: F401 (the kit's one clear line when it is missing)
except ImportError as error:  # pragma: no cover (the test extra installs it)
    raise ImportError(hypothesis_missing()) from error

from memtape.testing.strategies.facts import (
    EPISODES,
    KEYS,
    bad_importances,
    importances,
    keys,
    queries,
    read_facts,
    record_episodes,
    write_facts,
)
from memtape.testing.strategies.params import (
    RULES,
    PolicyParams,
    budgets,
    capacities,
    policy_params,
    triggers,
)
from memtape.testing.strategies.sessions import (
    ClockStep,
    clock_steps,
    command_sequences,
    commands,
    probe_sets,
    scenarios,
    store_command_sequences,
    valid_command_sequences,
)
from memtape.testing.strategies.turns import (
    GHOST,
    add_turns,
    call_id,
    turn_sequences,
    turns_for,
)
from memtape.testing.strategies.words import (
    BAD_ROLES,
    WORDS,
    recorded_counts,
    roles,
    sized_texts,
    texts,
    weighted,
)

__all__ = [
    "BAD_ROLES",
    "EPISODES",
    "GHOST",
    "KEYS",
    "RULES",
    "WORDS",
    "ClockStep",
    "PolicyParams",
    "add_turns",
    "bad_importances",
    "budgets",
    "call_id",
    "capacities",
    "clock_steps",
    "command_sequences",
    "commands",
    "importances",
    "keys",
    "policy_params",
    "probe_sets",
    "queries",
    "read_facts",
    "record_episodes",
    "recorded_counts",
    "roles",
    "scenarios",
    "sized_texts",
    "store_command_sequences",
    "texts",
    "triggers",
    "turn_sequences",
    "turns_for",
    "valid_command_sequences",
    "weighted",
    "write_facts",
]
