"""What ``memtape why`` asks about: a turn, a fact by id or by key, or a memory block."""

import re

import attrs

from memtape.core.errors import BadInput
from memtape.core.integers import bounded


@attrs.frozen
class TurnTarget:
    """A turn, by its 1-based number (``turn:5``)."""

    turn: int


@attrs.frozen
class FactTarget:
    """One fact, by its id (``3``)."""

    id: int


@attrs.frozen
class KeyTarget:
    """Every fact that ever had a key (``chitchat``), in id order."""

    key: str


@attrs.frozen
class BlockTarget:
    """A memory block, by its label (``block:human``)."""

    label: str


Target = TurnTarget | FactTarget | KeyTarget | BlockTarget
"""What ``memtape why`` asks about."""

_TURN = re.compile(r"turn:(.*)", re.DOTALL)
_NUMBER = re.compile(r"[0-9]+")


_FACT_KEY = "fact:"
"""The prefix that names a fact by its key whatever it looks like (``fact:session.topic``,
``fact:42`` for the key "42"); a key that itself begins so is ``fact:fact:...``."""


_BLOCK = "block:"
"""The prefix that names a memory block by its label (``block:human``)."""


def parse_target(text: str) -> Target:
    """``turn:N`` is a turn, ``fact:KEY`` a fact key, ``block:LABEL`` a memory block, a
    bare integer a fact id, anything else a fact key."""
    if text.startswith(_BLOCK) and text[len(_BLOCK) :].strip():
        return BlockTarget(text[len(_BLOCK) :])
    if text.startswith(_FACT_KEY) and text[len(_FACT_KEY) :].strip():
        return KeyTarget(text[len(_FACT_KEY) :])
    if not text.strip():
        raise BadInput("a target is turn:N, a fact id or a fact key, got an empty string")
    turn = _TURN.fullmatch(text)
    if turn is not None:
        number = turn.group(1)
        position = bounded(number, "turn:N: the turn number") if _NUMBER.fullmatch(number) else 0
        if position < 1:
            raise BadInput(f"a turn target is turn:N with N a whole number >= 1, got {text!r}")
        return TurnTarget(position)
    if _NUMBER.fullmatch(text):
        fact = bounded(text, "the fact id")
        if fact < 1:
            raise BadInput(f"a fact id is a whole number >= 1, got {text!r}")
        return FactTarget(fact)
    return KeyTarget(text)
