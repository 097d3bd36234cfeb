"""Sliding-window compaction: drop the oldest turns until the window fits the budget.

This is the ``"last"`` strategy of LangChain's ``trim_messages``: no summary,
no trace of what left. One departure: the newest turn always stays, since a
window without the message the model must answer is no window at all.
"""

from collections.abc import Mapping
from typing import Any, ClassVar

import attrs

from memtape.core.commands import AddTurn
from memtape.core.events import CompactionTriggered, Event, TurnAdded
from memtape.core.state import State, Window
from memtape.policies.promises import BUDGET, RECENT_VERBATIM
from memtape.policies.tokenizers import Tokenizer, WordCount
from memtape.policies.turns import arriving, budget_only, budget_table, check_shared


@attrs.frozen
class SlidingWindow:
    """Over ``budget``, drop the oldest HOT turns (never the newest) until within it.

    A window it inherits from another policy (a fork) may hold WARM items and
    a COLD gist: WARM items, being older than every HOT turn, go COLD first;
    the gist stays as it is.
    """

    name: ClassVar[str] = "sliding-window"
    budget: int
    tokenizer: Tokenizer = attrs.field(factory=WordCount)

    def __attrs_post_init__(self) -> None:
        check_shared(self.budget, self.tokenizer)

    @classmethod
    def from_params(cls, data: Mapping[str, Any], where: str) -> "SlidingWindow":
        """Build the policy from a scenario's ``[compaction]`` table."""
        return cls(*budget_only(data, where))

    @property
    def promises(self) -> frozenset[str]:
        """The budget bound (beyond it only with the newest turn alone) and that turn verbatim."""
        return frozenset({BUDGET, RECENT_VERBATIM})

    @property
    def verbatim(self) -> int:
        """The newest turn always stays HOT verbatim."""
        return 1

    def floor(self, window: Window) -> int:
        """The least this policy may keep: the newest turn, and any gist it inherited."""
        return window.gist_tokens + (window.hot[-1].tokens if window.hot else 0)

    def params(self) -> dict[str, Any]:
        """The parameters, as a scenario table would write them."""
        return budget_table(self.name, self.budget, self.tokenizer)

    def decide(self, state: State, command: AddTurn) -> tuple[Event, ...]:
        """The turn, and the compaction that drops the oldest turns if it is over budget."""
        window = state.window
        turn = arriving(window, command, self.tokenizer)
        tokens = window.tokens + turn.tokens
        if tokens <= self.budget:
            return (turn,)
        warm = window.warm
        cold = 0
        while tokens > self.budget and cold < len(warm):
            tokens -= warm[cold].tokens
            cold += 1
        hot: tuple[TurnAdded, ...] = (*window.hot, turn)
        drop = 0
        while tokens > self.budget and drop < len(hot) - 1:
            tokens -= hot[drop].tokens
            drop += 1
        if not cold and not drop:
            return (turn,)
        compaction = CompactionTriggered(
            self.budget,
            tuple(t.turn for t in hot[drop:]),
            (),
            tuple(t.turn for t in hot[:drop]),
            cold,
            window.gist,
            window.gist_tokens,
        )
        return (turn, compaction)
