"""What a reader left out of the turns on purpose, counted by kind, for the transcript's notes.

A reader that reads a record and makes no turn of it says so here, with the
record's kind (``event_msg (token_count)``, ``info``...), so that nothing
a file holds is dropped silently: the scenario's header comment counts it.
"""

from collections import Counter


class Skipped:
    """The records a reader left out, counted by kind in the order first seen."""

    def __init__(self) -> None:
        self.kinds: Counter[str] = Counter()

    def add(self, kind: str, count: int = 1) -> None:
        """``count`` more records of ``kind`` left out."""
        self.kinds[kind] += count

    def __len__(self) -> int:
        return sum(self.kinds.values())

    def note(self, what: str = "not conversation") -> list[str]:
        """The one note saying what was left out (none when nothing was), sorted by kind."""
        if not self.kinds:
            return []
        kinds = ", ".join(f"{count} {kind}" for kind, count in sorted(self.kinds.items()))
        return [f"left out, {what}: {kinds}"]
