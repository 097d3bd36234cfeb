"""The name a mistyped one most likely meant, for the one line that refuses it."""

from collections.abc import Iterable


def did_you_mean(given: str, known: Iterable[str], *, quote: bool = True) -> str:
    """``": did you mean 'tiered'?"`` for the known name closest to ``given``, or ``""`` when
    none is close (``quote=False`` names it bare, as a parameter is named)."""
    import difflib  # noqa: PLC0415 (a refusal only: no command's start pays for it)

    matches = difflib.get_close_matches(given, [name for name in known if name != given], n=1)
    if not matches:
        return ""
    name = repr(matches[0]) if quote else matches[0]
    return f": did you mean {name}?"
