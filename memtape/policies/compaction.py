"""Tiered compaction: keep the last turns HOT, fold salient older ones WARM,
drop chatter, and push the oldest WARM items into a COLD gist."""

from collections.abc import Mapping
from typing import Any, ClassVar

import attrs

from memtape.core.commands import AddTurn
from memtape.core.events import CompactionTriggered, Event, TurnAdded, WarmItem
from memtape.core.state import State, Window
from memtape.policies.params import Params
from memtape.policies.promises import BUDGET, PINNED, RECENT_VERBATIM, WELL_FORMED
from memtape.policies.tokenizers import Tokenizer, WordCount
from memtape.policies.turns import arriving, check_count, check_shared, shared_params
from memtape.policies.units import kept_tokens, older_units


def gist_for(turns: int) -> str:
    """The one-line COLD gist standing for ``turns`` turns (empty for none)."""
    if turns == 0:
        return ""
    return f"[{turns} earlier turn{'' if turns == 1 else 's'} summarized]"


@attrs.frozen
class TieredCompaction:
    """The seed's compaction: over ``budget``, keep ``hot_n`` turns verbatim.

    A turn costs the tokens of ``"{role}: {text}"``; its WARM stand-in is the
    bare text. The window is over budget when its tokens are strictly greater
    than the budget. It moves whole units (``memtape.policies.units``): the
    last ``hot_n`` turns stay with the rest of their units, pinned turns with
    theirs, and an older unit goes to WARM whole if any of its turns is
    salient (a call with its results), or is dropped whole.
    """

    name: ClassVar[str] = "tiered"
    budget: int
    hot_n: int
    tokenizer: Tokenizer = attrs.field(factory=WordCount)

    def __attrs_post_init__(self) -> None:
        check_shared(self.budget, self.tokenizer)
        check_count("hot_n", self.hot_n)

    @classmethod
    def from_params(cls, data: Mapping[str, Any], where: str) -> "TieredCompaction":
        """Build the policy from a scenario's ``[compaction]`` table."""
        params = Params(data, where)
        budget, tokenizer = shared_params(params)
        hot_n = params.integer("hot_n", 2, minimum=0)
        params.done()
        return cls(budget, hot_n, tokenizer)

    @property
    def promises(self) -> frozenset[str]:
        """The budget bound, the last ``hot_n`` turns verbatim, well-formed HOT, pinned turns."""
        return frozenset({BUDGET, RECENT_VERBATIM, WELL_FORMED, PINNED})

    @property
    def verbatim(self) -> int:
        """How many of the newest turns stay HOT verbatim (with the rest of their units)."""
        return self.hot_n

    def floor(self, window: Window) -> int:
        """The least this policy may keep: the last ``hot_n`` turns and the pinned turns,
        each with the rest of its unit, and the gist."""
        return kept_tokens(window, self.hot_n) + window.gist_tokens

    def params(self) -> dict[str, Any]:
        """The parameters, as a scenario table would write them."""
        return {
            "policy": self.name,
            "budget": self.budget,
            "hot_n": self.hot_n,
            "tokenizer": self.tokenizer.name,
        }

    def decide(self, state: State, command: AddTurn) -> tuple[Event, ...]:
        """The turn, and the compaction it triggers if it takes the window over budget."""
        window = state.window
        turn = arriving(window, command, self.tokenizer)
        total = window.tokens + turn.tokens
        if total <= self.budget:
            return (turn,)
        return (turn, self._compact(window, turn, total))

    def _compact(self, window: Window, turn: TurnAdded, total: int) -> CompactionTriggered:
        count = self.tokenizer.count
        hot = (*window.hot, turn)
        warm: list[WarmItem] = []
        dropped: list[int] = []
        tokens = total
        if window.structured or turn.calls or turn.answers or turn.pinned:
            recent, groups = older_units(window, turn, hot, self.hot_n)
        else:
            # Every turn is its own unit, none pinned: the seed's split, at its cost.
            recent = len(hot) - self.hot_n if len(hot) > self.hot_n else 0
            groups = []
            for old in hot[:recent]:
                tokens -= old.tokens
                if old.salient:
                    item = WarmItem(old.turn, old.text, count(old.text))
                    warm.append(item)
                    tokens += item.tokens
                else:
                    dropped.append(old.turn)
        for turns, pinned, salient in groups:
            if pinned:
                continue
            for old in turns:
                tokens -= old.tokens
                if salient:
                    item = WarmItem(old.turn, old.text, count(old.text))
                    warm.append(item)
                    tokens += item.tokens
                else:
                    dropped.append(old.turn)
        waiting_items = len(window.warm)
        cold = 0
        gist, gist_tokens = window.gist, window.gist_tokens
        while tokens > self.budget and cold < waiting_items + len(warm):
            oldest = window.warm[cold] if cold < waiting_items else warm[cold - waiting_items]
            cold += 1
            gist = gist_for(len(window.cold) + cold)
            tokens -= oldest.tokens + gist_tokens
            gist_tokens = count(gist)
            tokens += gist_tokens
        return CompactionTriggered(
            self.budget,
            tuple(warm),
            tuple(dropped),
            cold,
            gist,
            gist_tokens,
        )
