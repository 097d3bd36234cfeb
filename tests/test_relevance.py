"""memtape.policies.store.relevance: how much of a query's words a fact holds."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import pytest

from memtape.core.state import Fact
from memtape.policies.store.relevance import RELEVANCE, fact_words, jaccard, overlap, words


def _fact(key: str, text: str) -> Fact:
    return Fact(1, key, text, 0.5, 0.0)


class TestWords:
    def test_words_are_lowercased_runs_of_letters_and_digits(self) -> None:
        assert frozenset({"dana", "s", "order", "ord", "3300"}) == words("Dana's ORDER: ORD-3300")

    def test_a_fact_is_its_key_and_its_text(self) -> None:
        assert frozenset({"user", "name", "dana"}) == fact_words(_fact("user.name", "Dana"))


class TestOverlap:
    def test_the_share_of_query_words_the_fact_holds(self) -> None:
        # Query words {how, to, contact, dana}; the fact holds contact and dana: 2 / 4.
        fact = _fact("contact", "Dana prefers email")

        assert 0.5 == overlap("how to contact Dana", fact)

    def test_a_query_without_words_is_relevant_to_nothing(self) -> None:
        assert 0.0 == overlap("?!", _fact("name", "Dana"))

    def test_repeated_query_words_count_once(self) -> None:
        assert 1.0 == overlap("dana dana", _fact("name", "Dana"))


class TestJaccard:
    def test_shared_words_over_all_words(self) -> None:
        # {contact, dana} shared; union {how, contact, dana, email}: 2 / 4.
        assert 0.5 == jaccard("how contact dana", _fact("contact", "Dana email"))

    def test_nothing_at_all_is_0(self) -> None:
        assert 0.0 == jaccard("", _fact("-", "..."))


class TestRegistry:
    @pytest.mark.parametrize("name", ["overlap", "jaccard"])
    def test_each_relevance_is_registered_by_name(self, name: str) -> None:
        assert name == RELEVANCE[name].__name__
