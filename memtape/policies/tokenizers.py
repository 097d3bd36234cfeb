"""Tokenizers: how a policy measures text. The count is recorded in events,
so replaying a run never needs the tokenizer again."""

from typing import ClassVar, Protocol

import attrs

from memtape.core.errors import BadInput


class Tokenizer(Protocol):
    """Counts the tokens of a text."""

    name: ClassVar[str]

    def count(self, text: str) -> int:
        """The number of tokens in ``text``."""
        ...


@attrs.frozen
class WordCount:
    """Tokens are whitespace-separated words: reproducible, and the seed's estimate."""

    name: ClassVar[str] = "words"

    def count(self, text: str) -> int:
        """The number of words in ``text``."""
        return len(text.split())


TOKENIZERS: dict[str, Tokenizer] = {WordCount.name: WordCount()}
"""The tokenizers memtape ships, by name."""


def tokenizer_named(name: str) -> Tokenizer:
    """The tokenizer called ``name``, or a clear error listing the known ones."""
    try:
        return TOKENIZERS[name]
    except KeyError:
        known = ", ".join(sorted(TOKENIZERS))
        raise BadInput(f"unknown tokenizer {name!r} (known: {known})") from None
