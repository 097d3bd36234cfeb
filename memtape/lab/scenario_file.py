"""The policies the lab's scenario files declare: tiered compaction (for files of turns)
and the seed's forgetting.

The generators and the importers write their files with
``memtape.scenarios.writer``; this module only says which policies head them.
"""

from memtape.core.errors import BadInput
from memtape.lab.choices import DEFAULT_BUDGET, DEFAULT_HOT_N
from memtape.policies.text.tokenizers import WordCount, tokenizer_named
from memtape.scenarios.writer import Value

MAX_COUNT = 10_000_000
"""The largest count a lab option takes (a typo of a few zeros should not fill a disk)."""

SEED_FORGETTING: dict[str, Value] = {
    "policy": "importance-recency-access",
    "capacity": 4,
    "half_life": 4.0,
    "access_boost": 0.1,
}
"""The seed's forgetting policy, as dana-facts sets it."""


def header(
    budget: int = DEFAULT_BUDGET, hot_n: int = DEFAULT_HOT_N, tokenizer: str = WordCount.name
) -> dict[str, dict[str, Value]]:
    """The policies of a file of turns (a support session, an import): tiered compaction
    and the seed's forgetting.

    A ``budget``, ``hot_n`` or ``tokenizer`` the file could not load with is refused
    here, before any work, naming the option that set it.
    """
    check_count(budget, "--budget")
    check_count(hot_n, "--hot-n", minimum=0)
    check_tokenizer(tokenizer)
    compaction: dict[str, Value] = {
        "policy": "tiered",
        "budget": budget,
        "hot_n": hot_n,
        "tokenizer": tokenizer,
    }
    return {"compaction": compaction, "forgetting": dict(SEED_FORGETTING)}


def check_tokenizer(name: str) -> str:
    """``name``, refused as bad input unless a tokenizer memtape ships is called so."""
    try:
        tokenizer_named(name)
    except BadInput as error:
        raise BadInput(f"--tokenizer: {error}") from None
    return name


def check_count(value: int, what: str, minimum: int = 1) -> int:
    """``value``, refused as bad input unless an integer in ``minimum..MAX_COUNT``."""
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= MAX_COUNT:
        raise BadInput(f"{what} must be an integer in {minimum}..{MAX_COUNT}, got {value!r}")
    return value
