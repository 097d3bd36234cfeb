"""Counts in words: "1 token", "2 tokens"."""


def noun_for(count: int, noun: str, plural: str | None = None) -> str:
    """``noun`` as ``count`` of it reads: in the plural (``noun + "s"`` unless told) unless
    the count is 1 ("unknown parameters a, b")."""
    if count == 1:
        return noun
    return plural if plural is not None else noun + "s"


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``count`` and ``noun``, in the plural (``noun + "s"`` unless told) unless the count is 1."""
    return f"{count} {noun_for(count, noun, plural)}"
