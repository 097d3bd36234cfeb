"""The token meter: the window's tokens against the budget in force."""

from typing import TYPE_CHECKING

import attrs

from memtape.core.reprs import fields_repr
from memtape.core.state import Window

if TYPE_CHECKING:
    from memtape.policies.plumbing.protocols import CompactionPolicy


@attrs.frozen
class Meter:
    """Tokens in the window, the budget, and whether the window is over it (strictly)."""

    __repr__ = fields_repr

    tokens: int
    budget: int

    @property
    def over(self) -> bool:
        """Over budget means strictly more tokens than the budget (40/40 is not over)."""
        return self.tokens > self.budget

    def data(self) -> dict[str, int | bool]:
        """The meter as JSON-ready data."""
        return {"tokens": self.tokens, "budget": self.budget, "over": self.over}


def meter(window: Window, compaction: "CompactionPolicy | None") -> Meter | None:
    """The meter of ``window``, or None when no compaction policy sets a budget."""
    if compaction is None:
        return None
    return Meter(window.tokens, compaction.budget)
