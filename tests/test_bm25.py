"""memtape.policies.text.bm25: an index that grows a document at a time, scored by BM25."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from memtape.policies.text.bm25 import K1, B, Bm25Index, terms


def _index(*texts: str) -> Bm25Index:
    index = Bm25Index()
    for text in texts:
        index.add(text)
    return index


class TestTerms:
    def test_words_are_lower_cased_runs_of_word_characters(self) -> None:
        assert ["order", "ord", "7731", "cracked"] == terms("Order ORD-7731, cracked!")


class TestAdding:
    def test_documents_are_numbered_in_the_order_they_arrive(self) -> None:
        index = Bm25Index()
        assert [0, 1, 2] == [index.add(text) for text in ("a", "b", "c")]

    def test_a_document_added_later_is_found_without_a_rebuild(self) -> None:
        index = _index("the weather is fine", "lunch at noon")
        index.search("refund", 1)
        index.add("the refund was sent")
        assert [2] == [number for number, _ in index.search("refund", 3)]


class TestScoring:
    def test_a_single_match_scores_as_okapi_bm25_says(self) -> None:
        index = _index("cracked screen", "a b c d", "e f")
        # N = 3, df = 1, the document's length 2, the average 8 / 3.
        idf = math.log(1 + (3 - 1 + 0.5) / (1 + 0.5))
        norm = K1 * (1 - B + B * 2 / (8 / 3))
        expected = idf * 1 * (K1 + 1) / (1 + norm)
        ((number, score),) = index.search("screen", 5)
        assert (0, True) == (number, math.isclose(expected, score, rel_tol=1e-12))

    def test_the_best_match_comes_first(self) -> None:
        index = _index("screen", "cracked screen on the order", "order cracked screen cracked")
        assert [2, 1, 0] == [number for number, _ in index.search("cracked screen order", 3)]

    def test_a_repeated_query_term_counts_once(self) -> None:
        index = _index("refund now", "refund later please")
        assert index.search("refund", 2) == index.search("refund refund", 2)

    def test_ties_go_to_the_earlier_document(self) -> None:
        index = _index("same words", "same words", "same words")
        assert [0, 1] == [number for number, _ in index.search("words", 2)]

    def test_a_document_sharing_no_term_is_never_found(self) -> None:
        assert [] == _index("hello there", "good morning").search("refund", 3)

    def test_an_empty_index_finds_nothing(self) -> None:
        assert [] == Bm25Index().search("anything", 3)

    def test_at_most_k_are_found(self) -> None:
        index = _index(*(f"order {n}" for n in range(10)))
        assert 4 == len(index.search("order", 4))


def _full_pass(texts: list[str], query: str) -> dict[int, float]:
    """BM25 of every document, term by term, as the formula reads (no pruning)."""
    documents = [terms(text) for text in texts]
    average = sum(map(len, documents)) / len(documents) or 1.0
    scores: dict[int, float] = {}
    for word in dict.fromkeys(terms(query)):
        holding = [n for n, words in enumerate(documents) if word in words]
        if not holding:
            continue
        idf = math.log(1 + (len(documents) - len(holding) + 0.5) / (len(holding) + 0.5))
        for n in holding:
            tf = documents[n].count(word)
            norm = K1 * (1 - B + B * len(documents[n]) / average)
            scores[n] = scores.get(n, 0.0) + idf * tf * (K1 + 1) / (tf + norm)
    return scores


class TestPruning:
    @settings(deadline=None, max_examples=200)
    @given(
        st.lists(st.lists(st.sampled_from("abcdefgh"), max_size=8), min_size=1, max_size=30),
        st.lists(st.sampled_from("abcdefghz"), min_size=1, max_size=4),
        st.integers(min_value=1, max_value=5),
    )
    def test_the_top_k_are_those_of_a_full_pass(
        self, documents: list[list[str]], query: list[str], k: int
    ) -> None:
        texts = [" ".join(words) for words in documents]
        full = _full_pass(texts, " ".join(query))
        expected = sorted(full.items(), key=lambda item: (-round(item[1], 9), item[0]))[:k]
        found = _index(*texts).search(" ".join(query), k)
        assert [(n, round(s, 9)) for n, s in expected] == [(n, round(s, 9)) for n, s in found]
