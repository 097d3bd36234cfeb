"""A BM25 index that grows one document at a time: what recall searches.

An inverted index of memtape's own (term to postings, each document's
length), scored by Okapi BM25 with ``k1 = 1.2`` and ``b = 0.75``, and the
non-negative idf ``ln(1 + (N - df + 0.5) / (df + 0.5))``. Adding a document
costs its own terms: no statistic is frozen at indexing time (the average
length and each term's document frequency are read at query time), so the
index never has to be rebuilt as turns leave the window. ``bm25s`` builds
its matrices in one pass over a whole corpus and has no way to add to them
(``docs/explanation/dependencies.md``).
"""

import math
import re
from bisect import bisect_left
from heapq import nlargest

K1 = 1.2
"""How quickly a term's repeats stop adding to a document's score."""

B = 0.75
"""How much a document's length, against the average, discounts its score."""

_WORD = re.compile(r"\w+")


def terms(text: str) -> list[str]:
    """The terms of ``text``: its runs of word characters, lower-cased."""
    return _WORD.findall(text.lower())


class Bm25Index:
    """Documents numbered 0, 1, 2, ... in the order they were added, searchable by BM25."""

    __slots__ = ("_lengths", "_postings", "_total")

    def __init__(self) -> None:
        self._postings: dict[str, tuple[list[int], list[int]]] = {}
        self._lengths: list[int] = []
        self._total = 0

    def __len__(self) -> int:
        return len(self._lengths)

    def add(self, text: str) -> int:
        """Index ``text`` as the next document, and return its number."""
        number = len(self._lengths)
        words = terms(text)
        counts: dict[str, int] = {}
        for word in words:
            counts[word] = counts.get(word, 0) + 1
        postings = self._postings
        for word, count in counts.items():
            found = postings.get(word)
            if found is None:
                postings[word] = ([number], [count])
            else:
                found[0].append(number)
                found[1].append(count)
        self._lengths.append(len(words))
        self._total += len(words)
        return number

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        """The ``k`` best documents for ``query`` (number, score), best first; ties go to the
        earlier document, and a document that shares no term with the query is never found.

        Terms are taken rarest first (highest idf). Once the most the remaining terms could
        add to a document (``idf × (k1 + 1)`` each) is below the ``k``-th best score so far,
        no document they alone hold can reach the top ``k``: they only add to the documents
        already scored, each found in their postings by bisection (MaxScore pruning). So a
        query that pairs a rare word with a common one costs the rare word's postings, not
        the common one's; the answer is the one a full pass would give.
        """
        count = len(self._lengths)
        if not count or k < 1:
            return []
        weighted = []
        for word in dict.fromkeys(terms(query)):
            found = self._postings.get(word)
            if found is not None:
                frequency = len(found[0])
                idf = math.log(1 + (count - frequency + 0.5) / (frequency + 0.5))
                weighted.append((idf * (K1 + 1), word, found))
        weighted.sort(key=lambda term: (-term[0], term[1]))
        remaining = [0.0] * (len(weighted) + 1)
        for at in range(len(weighted) - 1, -1, -1):
            remaining[at] = remaining[at + 1] + weighted[at][0]
        scores: dict[int, float] = {}
        for at, (weight, _, (documents, counts)) in enumerate(weighted):
            if len(scores) >= k and remaining[at] < nlargest(k, scores.values())[-1]:
                for later, _, postings in weighted[at:]:
                    self._add_to_scored(scores, later, postings)
                break
            self._add_all(scores, weight, documents, counts)
        best = nlargest(k, scores.items(), key=_rank)
        return [(document, score) for document, score in best]

    def _norms(self) -> tuple[float, float]:
        """The two terms of BM25's length normalization: ``k1 (1 - b)``, and the factor of
        a document's length, ``k1 b / average``."""
        average = self._total / len(self._lengths) or 1.0
        return K1 * (1 - B), K1 * B / average

    def _add_all(
        self, scores: dict[int, float], weight: float, documents: list[int], counts: list[int]
    ) -> None:
        """Add one term's part to every document that holds it."""
        flat, per_length = self._norms()
        lengths = self._lengths
        get = scores.get
        for document, repeats in zip(documents, counts, strict=True):
            scores[document] = get(document, 0.0) + weight * repeats / (
                repeats + flat + per_length * lengths[document]
            )

    def _add_to_scored(
        self, scores: dict[int, float], weight: float, postings: tuple[list[int], list[int]]
    ) -> None:
        """Add one term's part to the documents already scored that hold it."""
        flat, per_length = self._norms()
        documents, counts = postings
        for document in scores:
            at = bisect_left(documents, document)
            if at < len(documents) and documents[at] == document:
                repeats = counts[at]
                scores[document] += (
                    weight * repeats / (repeats + flat + per_length * self._lengths[document])
                )


def _rank(item: tuple[int, float]) -> tuple[float, int]:
    return item[1], -item[0]
