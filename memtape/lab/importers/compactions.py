"""The compactions a reader meets as it reads, each placed before the turn that follows it.

A provider's compaction (Anthropic's ``compaction`` block, an OpenAI
Responses ``compaction`` item) or one an agent made itself (an OpenTelemetry
trace whose next call no longer sends what came before) is met between
turns: it comes before the next turn the reader adds, whatever that turn is.
``Compactions`` keeps them so, with the rules every format shares:

- a compaction met before any turn has nothing to fold: its summary is the
  context the file starts from, and it is the first turn (a ``user`` one),
  noted;
- two met with no turn between them: the later one stands (the agent went
  on from it), and the earlier is noted;
- one met after the last turn has nothing to apply at: it is noted, and
  left out.
"""

from memtape.lab.importers.transcript import Compaction, Turns


class Compactions:
    """The compactions one reader met, placed against the turns it is building."""

    def __init__(self, turns: Turns) -> None:
        self.turns = turns
        self.notes: list[str] = []
        self._placed: list[Compaction] = []

    def met(
        self,
        summary: str,
        where: str,
        *,
        trigger: str | None = None,
        pre_tokens: int | None = None,
        preserved: tuple[int, int] | None = None,
    ) -> None:
        """A compaction at ``where``: the context became ``summary`` (and the turns
        ``preserved``, kept verbatim) before the next turn added."""
        before = len(self.turns) + 1
        if before == 1:
            self.notes.append(
                f"the compaction at {where} precedes every turn: its summary is the first turn"
            )
            self.turns.add("user", [summary], where)
            return
        if self._placed and self._placed[-1].before == before:
            earlier = self._placed.pop()
            self.notes.append(
                f"the compaction at {earlier.where} is followed by another at {where} before any "
                "turn: the later one stands"
            )
        self._placed.append(
            Compaction(before, summary, where, trigger, pre_tokens, preserved=preserved)
        )

    def recorded(self) -> tuple[list[Compaction], list[str]]:
        """The compactions that come before a turn, and the notes of those that did not."""
        placed = list(self._placed)
        notes = list(self.notes)
        if placed and placed[-1].before > len(self.turns):
            last = placed.pop()
            notes.append(
                f"the compaction at {last.where} is followed by no turn: nothing to apply it at"
            )
        return placed, notes
