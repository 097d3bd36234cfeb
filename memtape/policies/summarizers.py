"""Summarizers: what folds old turns into a running summary.

A summarizer is any callable ``(previous, turns, limit) -> str``: the summary
so far (``""`` before the first), the turns leaving the window oldest first,
and the most tokens the summary may take. The deterministic default keeps
the salient texts and drops the chatter, as the seed's WARM tier does; an
LLM summarizer is a callable the user passes in the API. Whatever it
returns is recorded in the compaction event, so replaying a run never calls
it again. The policy, not the summarizer, enforces the limit (``cap``).
"""

from collections.abc import Callable, Sequence
from typing import ClassVar

import attrs

from memtape.core.errors import BadInput
from memtape.core.events import TurnAdded

Summarizer = Callable[[str, Sequence[TurnAdded], int], str]
"""``(previous summary, turns to fold in, token limit) -> the new summary``."""


@attrs.frozen
class SalientTexts:
    """The deterministic summary: the previous one, then each salient turn's bare text."""

    name: ClassVar[str] = "salient"

    def __call__(self, previous: str, turns: Sequence[TurnAdded], limit: int) -> str:
        """``previous`` and the salient texts of ``turns``, joined by spaces; chatter dropped."""
        return " ".join([*([previous] if previous else []), *(t.text for t in turns if t.salient)])


SUMMARIZERS: dict[str, Summarizer] = {SalientTexts.name: SalientTexts()}
"""Summarizers by the name a scenario file gives them; register your own here to
name it in a file (or to load a run recorded with it)."""


def summarizer_named(name: str) -> Summarizer:
    """The summarizer registered as ``name``, or a clear error listing the known ones."""
    try:
        return SUMMARIZERS[name]
    except KeyError:
        known = ", ".join(sorted(SUMMARIZERS))
        raise BadInput(
            f"unknown summarizer {name!r} (known: {known}; register yours in "
            "memtape.policies.summarizers.SUMMARIZERS)"
        ) from None


def name_of(summarizer: Summarizer) -> str:
    """The name a run file records for ``summarizer``: its ``name``, else its ``__name__``."""
    for attribute in ("name", "__name__"):
        name = getattr(summarizer, attribute, None)
        if isinstance(name, str) and name:
            return name
    return type(summarizer).__name__


def cap(text: str, limit: int, count: Callable[[str], int]) -> str:
    """``text`` if it costs at most ``limit`` tokens, else its newest words that do.

    The oldest words go first, as the oldest WARM items are the first to go
    cold in the tiered policy. Words are rejoined by single spaces.
    """
    if count(text) <= limit:
        return text
    words = text.split()
    # The most trailing words that fit: a binary search, then a step back in case a
    # tokenizer is not monotone in the words it is given.
    low, high = 0, len(words)
    while low < high:
        middle = (low + high + 1) // 2
        if count(" ".join(words[-middle:])) <= limit:
            low = middle
        else:
            high = middle - 1
    while low and count(" ".join(words[-low:])) > limit:
        low -= 1
    return " ".join(words[-low:]) if low else ""
