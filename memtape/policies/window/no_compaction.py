"""The baseline that never compacts: every turn stays HOT, verbatim, however large
the window grows. Its budget only sets the meter's red line."""

from collections.abc import Mapping
from typing import Any, ClassVar

import attrs

from memtape.core.commands import AddTurn
from memtape.core.events import Event
from memtape.core.state import State
from memtape.policies.plumbing.params import MAX_INT
from memtape.policies.plumbing.promises import PINNED, RECENT_VERBATIM, WELL_FORMED
from memtape.policies.text.tokenizers import Tokenizer, WordCount, as_tokenizer
from memtape.policies.window.turns import arriving, budget_only, budget_table, check_shared


@attrs.frozen
class NoCompaction:
    """Never compacts: the window is every turn so far, and may exceed ``budget``."""

    name: ClassVar[str] = "none"
    budget: int
    tokenizer: Tokenizer = attrs.field(factory=WordCount, converter=as_tokenizer)

    def __attrs_post_init__(self) -> None:
        check_shared(self.budget, self.tokenizer)

    @classmethod
    def from_params(cls, data: Mapping[str, Any], where: str) -> "NoCompaction":
        """Build the policy from a scenario's ``[compaction]`` table."""
        return cls(*budget_only(data, where))

    @property
    def promises(self) -> frozenset[str]:
        """Every turn verbatim (so HOT is well formed and pinned turns stay); no budget bound,
        which is the point of the baseline."""
        return frozenset({RECENT_VERBATIM, WELL_FORMED, PINNED})

    @property
    def verbatim(self) -> int:
        """Every turn stays HOT verbatim (the largest count a run file can carry)."""
        return MAX_INT

    def params(self) -> dict[str, Any]:
        """The parameters, as a scenario table would write them."""
        return budget_table(self.name, self.budget, self.tokenizer)

    def decide(self, state: State, command: AddTurn) -> tuple[Event, ...]:
        """The turn, and never a compaction."""
        return (arriving(state.window, command, self.tokenizer),)
