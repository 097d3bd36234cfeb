"""The store's and the memory's commands: writes, reads, queries, episodes."""

import math

from hypothesis import strategies as st

from memtape.core.commands import Query, ReadFact, RecordEpisode, WriteFact
from memtape.testing.strategies.words import texts, weighted

KEYS = ("name", "contact", "order", "chitchat", "promo", "user.name", "colour")
"""A small key space, so that writes supersede and reads find facts."""

EPISODES = (
    "the user confirmed their name is Dana",
    "the user confirmed their name is Bo",
    "the tool said a 10% restocking fee applies",
    "colour = blue",
    "order = ORD3300",
    "the user said nothing of note",
    "",
)
"""Episode texts, several of which the consolidation rules (``params.RULES``) distill."""


def importances() -> st.SearchStrategy[float]:
    """Importances a write accepts: [0, 1]."""
    return st.one_of(st.floats(0.0, 1.0), st.sampled_from((0.0, 1.0)))


def bad_importances(*, nan: bool = True) -> st.SearchStrategy[float]:
    """Importances a write rejects: outside [0, 1], infinite, or (if ``nan``) NaN."""
    outside = st.floats(allow_nan=False).filter(lambda x: not 0.0 <= x <= 1.0)
    return st.one_of(outside, st.just(math.nan)) if nan else outside


def keys(*, valid_only: bool = False) -> st.SearchStrategy[str]:
    """Fact keys from a small space (so writes collide), and (unless ``valid_only``) blank ones."""
    valid = st.sampled_from(KEYS)
    if valid_only:
        return valid
    return weighted((12, valid), (1, st.sampled_from(("", " ", "\n"))), (1, st.text(max_size=4)))


def write_facts(*, valid_only: bool = False, nan: bool = True) -> st.SearchStrategy[WriteFact]:
    """Writes, sometimes naming a key to supersede; mostly valid importances."""
    importance = importances()
    if not valid_only:
        importance = weighted((10, importance), (1, bad_importances(nan=nan)))
    return st.builds(
        WriteFact,
        key=keys(valid_only=valid_only),
        text=texts(),
        importance=importance,
        supersedes=weighted((6, st.none()), (1, keys(valid_only=valid_only))),
    )


def read_facts() -> st.SearchStrategy[ReadFact]:
    """Reads by key or by id (often a real one), and reads naming both or neither."""
    ids = weighted((4, st.integers(1, 6)), (1, st.integers(-1, 16)))
    return weighted(
        (6, st.builds(ReadFact, key=keys())),
        (6, st.builds(ReadFact, id=ids)),
        (1, st.builds(ReadFact, key=keys(), id=ids)),
        (1, st.just(ReadFact())),
    )


def queries(*, valid_only: bool = False) -> st.SearchStrategy[Query]:
    """Queries with texts of words (or none), an expected key (or none), and a ``k``;
    unless ``valid_only``, some with a ``k`` below 1."""
    k = (
        st.integers(1, 5)
        if valid_only
        else weighted((8, st.integers(1, 5)), (1, st.integers(-2, 0)))
    )
    return st.builds(
        Query,
        text=weighted((3, texts()), (1, st.just(""))),
        key=weighted((3, keys(valid_only=True)), (1, st.just(""))),
        k=k,
    )


def record_episodes() -> st.SearchStrategy[RecordEpisode]:
    """Episodes, several of which the consolidation rules match."""
    return st.builds(RecordEpisode, weighted((3, st.sampled_from(EPISODES)), (1, texts())))
