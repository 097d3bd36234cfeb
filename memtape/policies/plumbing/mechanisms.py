"""The memory mechanisms that sit beside the policies rather than in one of them.

A policy is one name in one axis's table. Memory blocks, recall, expiry,
bi-temporal facts and judged supersession are not: blocks are the session's
(``[[block]]`` tables), recall and the TTL are parameters every policy of an
axis takes, and bi-temporal facts are written and asked for by steps. Each
is described here once, for ``memtape policies`` to list and find by any
name a newcomer may look for (``blocks``, ``ttl``, ``as_of``): where it is
written, what it takes, and the promise the checks hold it to. What each one
does is its module's docstring, read from there (``module``).
"""

from typing import Any

import attrs

from memtape.policies.plumbing.promises import (
    BLOCK_LIMIT,
    EXPIRES,
    JUDGED,
    RECALL_BUDGET,
    SUPERSEDES,
    VALID_AS_OF,
)


@attrs.frozen
class Setting:
    """One thing a mechanism takes: its name, where it is written (``table``), its default
    (None: unset, or ``required``) and what it means."""

    name: str
    table: str
    default: Any
    meaning: str
    required: bool = False

    def data(self) -> dict[str, Any]:
        """The setting as ``memtape policies NAME --json`` writes it."""
        return {
            "name": self.name,
            "table": self.table,
            "default": self.default,
            "required": self.required,
            "meaning": self.meaning,
        }


@attrs.frozen
class Mechanism:
    """A memory mechanism beside the policies, as ``memtape policies`` shows it."""

    name: str
    module: str
    """The module that decides it, whose docstring's first paragraph says what it is."""
    where: str
    """How a scenario turns it on, and which policies take it."""
    settings: tuple[Setting, ...]
    promises: tuple[str, ...]
    guide: str
    """The how-to page that walks through it."""
    aliases: tuple[str, ...] = ()
    """The other names it is found by (a setting's, a promise's, a product's word)."""


RECALL_SETTING = Setting(
    "recall",
    "[compaction]",
    None,
    'what searches the turns that left the window for a recall step: "bm25", or '
    '"embeddings" (the [llm] model, by cosine; unset: no recall)',
)
"""A compaction policy's ``recall``, which every compaction policy takes."""

TTL_SETTING = Setting(
    "ttl",
    "[forgetting]",
    None,
    "clock units after which a fact written from then on expires, or a table of key "
    'patterns and their units ({"session.*" = 3600, "*" = 86400}; unset: none expires)',
)
"""A forgetting policy's ``ttl``, which every forgetting policy takes."""

SHARED_SETTINGS = {("compaction", "recall"): RECALL_SETTING, ("forgetting", "ttl"): TTL_SETTING}
"""The shared parameters (``zoo.SHARED``) a policy's own table leaves out while unset,
by axis and name: every policy of the axis takes them all the same."""

MECHANISMS = (
    Mechanism(
        "blocks",
        "memtape.policies.window.blocks",
        "[[block]] tables create blocks before the first step, a block step mid-session; edit "
        "steps and consolidation passes (a block rule, or the llm's answer) edit them; any "
        "session with a [compaction] policy; --set block.human.limit=400 (run, bench) or "
        "--grid block.human.limit=40,200 (bench) changes one",
        (
            Setting("label", "[[block]]", None, "the block's name, one per block", True),
            Setting(
                "limit",
                "[[block]]",
                None,
                "the most characters it holds: an edit past it is refused",
                True,
            ),
            Setting("value", "[[block]]", "", "what it holds at first"),
            Setting("read_only", "[[block]]", False, "no edit may change it, a step's or a pass's"),
            Setting(
                "op",
                "an edit step",
                None,
                '"replace" (with text), "append" (text on a new line) or "find-replace" '
                "(find, then text)",
                True,
            ),
        ),
        (BLOCK_LIMIT,),
        "docs/how-to/memory-blocks.md",
        ("block", "memory-blocks", "core-memory", "letta", "read_only", "sleep-time", BLOCK_LIMIT),
    ),
    Mechanism(
        "recall",
        "memtape.policies.window.recall",
        "recall in the [compaction] table, taken by every compaction policy "
        "(--set compaction.recall=bm25); recall steps search",
        (
            RECALL_SETTING,
            Setting("recall", "a recall step", None, "the query's text", True),
            Setting("k", "a recall step", 3, "how many turns it finds, best first"),
        ),
        (RECALL_BUDGET,),
        "docs/how-to/recall-what-left.md",
        ("bm25", "conversation-search", RECALL_BUDGET),
    ),
    Mechanism(
        "expiry",
        "memtape.policies.store.expiry",
        "ttl in the [forgetting] table, taken by every forgetting policy "
        "(--set forgetting.ttl=3600), or a write step's own expires_at",
        (
            TTL_SETTING,
            Setting(
                "expires_at",
                "a write step",
                None,
                "the clock at which this fact leaves (wins over ttl)",
            ),
        ),
        (EXPIRES,),
        "docs/how-to/expire-facts.md",
        ("ttl", "expires_at", "expired", EXPIRES),
    ),
    Mechanism(
        "bi-temporal",
        "memtape.policies.store.temporal",
        "a write step's valid_from and valid_to, a query step's as_of and known_at; under "
        "every forgetting policy",
        (
            Setting(
                "valid_from", "a write step", None, "when the fact became true (unset: always)"
            ),
            Setting("valid_to", "a write step", None, "when it stopped being true (unset: still)"),
            Setting("as_of", "a query step", None, "the valid time asked about (unset: now)"),
            Setting("known_at", "a query step", None, "the record time asked about (unset: now)"),
        ),
        (VALID_AS_OF,),
        "docs/how-to/time-aware-facts.md",
        ("temporal", "time-aware", "valid_from", "valid_to", "as_of", "known_at", VALID_AS_OF),
    ),
    Mechanism(
        "supersession",
        "memtape.policies.store.judged",
        "supersession in the [forgetting] table, taken by every forgetting policy "
        '(--set forgetting.supersession=add-only); "llm" asks the [llm] table\'s model',
        (
            Setting(
                "supersession",
                "[forgetting]",
                "key",
                '"key" (a write retires the fact on its key), "add-only" (never) or "llm" (a '
                "model decides ADD, UPDATE, DELETE or NOOP)",
            ),
            Setting(
                "candidates",
                "[forgetting]",
                3,
                'with "llm": how many of the most similar active facts a write is judged against',
            ),
        ),
        (SUPERSEDES, JUDGED),
        "docs/how-to/judge-supersession.md",
        ("judged", "judge", "supersedes", "add-only", "mem0", JUDGED),
    ),
)
"""Every mechanism beside the policies, in the order ``memtape policies`` lists them."""
