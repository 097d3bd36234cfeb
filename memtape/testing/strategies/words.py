"""The words the kit's texts are made of, the roles, and how a strategy is weighted."""

import functools
from typing import TypeVar

from hypothesis import strategies as st

from memtape.core.commands import ROLES
from memtape.core.values import MAX_TOKENS

T = TypeVar("T")

WORDS = ("Dana", "refund", "order", "policy", "fee", "window", "the", "is", "a", "ok", "$200")
"""Words that turn, fact and episode texts are made of (besides random text)."""

BAD_ROLES = ("", " ", " user", "tool\n", "\tassistant", "User", "developer", "Dana Smith")
"""Roles a compaction policy must reject: any text outside the closed set ``ROLES``."""


def weighted(*branches: tuple[int, st.SearchStrategy[T]]) -> st.SearchStrategy[T]:
    """One of ``branches``, each drawn about as often as its weight says.

    (``st.one_of`` flattens nested choices and drops repeated branches, so
    repeating a branch there would not weigh it.)
    """
    choices = [strategy for weight, strategy in branches for _ in range(weight)]
    return st.integers(0, len(choices) - 1).flatmap(choices.__getitem__)


@functools.cache
def texts() -> st.SearchStrategy[str]:
    """Texts of words, or arbitrary unicode; empty ones included."""
    return weighted(
        (3, st.lists(st.sampled_from(WORDS), max_size=12).map(" ".join)),
        (1, st.text(max_size=16)),
    )


@functools.cache
def roles(*, valid_only: bool = False) -> st.SearchStrategy[str]:
    """Roles: the closed set ``ROLES``, and (unless ``valid_only``) bad ones: a role from
    ``BAD_ROLES`` or any other text."""
    valid = st.sampled_from(ROLES)
    if valid_only:
        return valid
    other = st.text(max_size=12).filter(lambda role: role not in ROLES)
    return weighted((8, valid), (1, st.sampled_from(BAD_ROLES)), (1, other))


@functools.lru_cache(maxsize=256)
def sized_texts(budget: int) -> st.SearchStrategy[str]:
    """Texts of words whose length is drawn against ``budget`` (in words, which the default
    tokenizer counts): a few words most often, then a fair share of the budget, about the
    whole of it, and now and then a single text over three times it, the turn a policy
    that lets its window overshoot is caught on."""
    return st.builds(_words, _sizes(budget), st.integers(0, len(WORDS) - 1))


def _sizes(budget: int) -> st.SearchStrategy[int]:
    """Sizes drawn against ``budget``: a few most often, then a fair share of it, about the
    whole of it, and now and then over three times it."""
    budget = max(budget, 1)
    return weighted(
        (6, st.integers(0, 4)),
        (3, st.integers(max(budget // 8, 1), max(budget // 3, 1))),
        (2, st.integers(max(budget // 2, 1), budget + 1)),
        (1, st.integers(3 * budget + 1, 3 * budget + 6)),
    )


@functools.lru_cache(maxsize=256)
def recorded_counts(budget: int | None = None) -> st.SearchStrategy[int | None]:
    """A turn's ``tokens``: None (the policy's tokenizer counts it) most often, else a
    recorded count, sized against ``budget`` when it is given (``_sizes``), zero included,
    and now and then the most one text may count (``MAX_TOKENS``)."""
    counts = st.integers(0, 60) if budget is None else _sizes(budget)
    return weighted((12, st.none()), (3, counts), (1, st.just(MAX_TOKENS)))


def _words(length: int, offset: int) -> str:
    """``length`` words of ``WORDS``, in their order from ``offset`` on (a long text costs
    one draw, and shrinks to a short one)."""
    return " ".join(WORDS[(offset + i) % len(WORDS)] for i in range(length))
