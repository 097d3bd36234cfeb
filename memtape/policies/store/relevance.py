"""Relevance of a fact to a query's text, by the words they share.

Words are runs of letters and digits, compared case-blind; a fact is its key
and its text (``user.name`` reads as the words ``user`` and ``name``).
"""

import functools
import re
from collections.abc import Callable

from memtape.core.state import Fact

_WORD = re.compile(r"\w+")

Relevance = Callable[[str, Fact], float]
"""A relevance function: the query's text and a fact to a number (higher is closer)."""


@functools.lru_cache(maxsize=65536)
def words(text: str) -> frozenset[str]:
    """The distinct words of ``text``, lowercased (memoized: a query compares every
    active fact's text, again at each query)."""
    return frozenset(_WORD.findall(text.lower()))


def fact_words(fact: Fact) -> frozenset[str]:
    """The distinct words of a fact's key and text."""
    return words(f"{fact.key} {fact.text}")


def overlap(query: str, fact: Fact) -> float:
    """The share of the query's words the fact holds: ``|Q & F| / |Q|`` (0 for no words)."""
    asked = words(query)
    if not asked:
        return 0.0
    return len(asked & fact_words(fact)) / len(asked)


def jaccard(query: str, fact: Fact) -> float:
    """The Jaccard index of the two word sets: ``|Q & F| / |Q | F|`` (0 for no words)."""
    asked, held = words(query), fact_words(fact)
    union = asked | held
    return len(asked & held) / len(union) if union else 0.0


RELEVANCE: dict[str, Relevance] = {"overlap": overlap, "jaccard": jaccard}
"""Relevance functions by name (a scenario's ``relevance`` parameter)."""
