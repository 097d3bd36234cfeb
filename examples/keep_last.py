"""An example compaction policy written outside memtape: keep the newest turns, drop the rest.

It is what a user writes to try a memory policy of their own: a frozen attrs
class that names its axis, builds itself from a scenario table, declares its
promises and decides each turn, with everything it needs from memtape
imported from ``memtape.policy``. ``examples/test_keep_last.py`` runs the
kit on it; a scenario names it ``policy = "examples.keep_last:KeepLast"``.
"""

from collections.abc import Mapping
from typing import Any, ClassVar

import attrs

from memtape.policy import (
    BUDGET,
    RECENT_VERBATIM,
    AddTurn,
    CompactionTriggered,
    Event,
    Params,
    State,
    Window,
    WordCount,
    arriving,
)

WORDS = WordCount()
"""How the policy measures a turn: whitespace-separated words."""


@attrs.frozen
class KeepLast:
    """Over ``budget``, drop the oldest turns until the window fits, but never the newest
    ``keep``. A turn costs the words of ``"{role}: {text}"``, and is salient when its
    command says so, or else when it is a tool result (the shipped policies' rule)."""

    name: ClassVar[str] = "keep-last"
    axis: ClassVar[str] = "compaction"
    budget: int
    keep: int = 2

    @classmethod
    def from_params(cls, data: Mapping[str, Any], where: str) -> "KeepLast":
        """Build the policy from a scenario's ``[compaction]`` table."""
        params = Params(data, where)
        budget = params.integer("budget", minimum=1)
        keep = params.integer("keep", 2, minimum=0)
        params.done()
        return cls(budget, keep)

    @property
    def promises(self) -> frozenset[str]:
        """The budget bound, and the newest ``keep`` turns verbatim."""
        return frozenset({BUDGET, RECENT_VERBATIM})

    @property
    def verbatim(self) -> int:
        """How many of the newest turns stay HOT verbatim."""
        return self.keep

    def floor(self, window: Window) -> int:
        """The least this policy keeps: the newest ``keep`` turns, the gist and the memory
        blocks (pinned in the window; no policy moves them)."""
        kept = window.hot[-self.keep :] if self.keep else ()
        return sum(turn.tokens for turn in kept) + window.gist_tokens + window.block_tokens

    def params(self) -> dict[str, Any]:
        """The parameters, as a scenario table writes them."""
        return {"policy": self.name, "budget": self.budget, "keep": self.keep}

    def decide(self, state: State, command: AddTurn) -> tuple[Event, ...]:
        """The turn, and the oldest turns dropped if it takes the window over budget.

        ``arriving`` numbers and measures the turn, settles its salience, and
        rejects a malformed one (a role memtape does not know, an answer to a
        call no turn made) as every shipped policy does.
        """
        window = state.window
        turn = arriving(window, command, WORDS)
        hot = [*window.hot, turn]
        total = window.tokens + turn.tokens
        dropped: list[int] = []
        while total > self.budget and len(hot) > self.keep:
            oldest = hot.pop(0)
            dropped.append(oldest.turn)
            total -= oldest.tokens
        if not dropped:
            return (turn,)
        compaction = CompactionTriggered(
            self.budget, (), tuple(dropped), 0, window.gist, window.gist_tokens
        )
        return (turn, compaction)
