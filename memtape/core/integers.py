"""Whole numbers read from text a user or a file gives: ASCII digits, bounded before ``int``.

Python's ``int`` refuses a string of more than 4,300 digits with a ``ValueError``
(a traceback, not a line), and a number past 64 bits fits neither SQLite nor a
run file; so the digits are counted first, and a number is refused as too large
before it is made.
"""

from memtape.core.errors import BadInput

LARGEST = 2**63 - 1
"""The largest whole number memtape reads from text: the largest SQLite holds."""

_WIDEST = len(str(LARGEST))
"""The digits of ``LARGEST``: a number with more (leading zeros aside) is larger."""

_SHOWN = 30
"""The longest number a refusal quotes whole; a longer one is named by its digit count."""


def is_digits(text: str) -> bool:
    """Whether ``text`` is ASCII digits only (``str.isdigit`` alone admits ``²`` and ``٣``)."""
    return text.isascii() and text.isdigit()


def bounded(text: str, what: str) -> int:
    """``text`` (ASCII digits, perhaps after a minus sign) as a whole number of at most
    ``LARGEST`` either way; a larger one is one ``BadInput`` line, ``WHAT is too large``."""
    digits = text.removeprefix("-")
    if not is_digits(digits):
        raise ValueError(f"not ASCII digits: {text!r}")
    significant = digits.lstrip("0") or "0"
    if len(significant) > _WIDEST or int(significant) > LARGEST:
        raise too_large(what, text)
    number = int(significant)
    return -number if text.startswith("-") else number


def too_large(what: str, text: str) -> BadInput:
    """The one line refusing ``text``, a number larger than ``LARGEST``, given as ``what``:
    the number itself when short, else its count of digits."""
    digits = sum(character.isdigit() for character in text)
    shown = text if len(text) <= _SHOWN else f"{digits} digits"
    return BadInput(f"{what} is too large: {shown} (at most {LARGEST})")
