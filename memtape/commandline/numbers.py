"""Whole numbers on the command line: ASCII digits only, and within range."""

import argparse

from memtape.core.errors import BadInput, MemtapeError
from memtape.core.integers import bounded


def is_integer(text: str) -> bool:
    """Whether ``text`` is a whole number in ASCII digits, perhaps after a minus sign.

    ``int()`` alone also takes any script's decimal digits (``٣`` is 3), spaces
    around them and underscores between them: a number typed by mistake, or
    one that slips past a check reading its digits another way.
    """
    digits = text.removeprefix("-")
    return digits.isascii() and digits.isdigit()


def integer(text: str) -> int:
    """The argparse type of every whole-number option: ASCII digits only.

    A minus sign is kept, for each command's range check to refuse with its
    own message.
    """
    if not is_integer(text):
        raise argparse.ArgumentTypeError(f"expected a whole number in ASCII digits, got {text!r}")
    try:
        return bounded(text, "the number")
    except BadInput as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def within(position: int, length: int, what: str) -> int:
    """``position``, refused unless it is a point of a run of ``length`` events."""
    if not 0 <= position <= length:
        raise MemtapeError(f"{what} {position} is out of range 0..{length}")
    return position
