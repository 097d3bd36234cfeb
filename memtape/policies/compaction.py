"""Tiered compaction: keep the last turns HOT, fold salient older ones WARM,
drop chatter, and push the oldest WARM items into a COLD gist."""

from collections.abc import Mapping
from typing import Any, ClassVar

import attrs

from memtape.core.commands import AddTurn
from memtape.core.errors import BadInput, Rejected
from memtape.core.events import CompactionTriggered, Event, TurnAdded, WarmItem
from memtape.core.state import State, Window
from memtape.policies.params import Params
from memtape.policies.promises import BUDGET, RECENT_VERBATIM
from memtape.policies.tokenizers import Tokenizer, WordCount, tokenizer_named


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
    than the budget.
    """

    name: ClassVar[str] = "tiered"
    budget: int
    hot_n: int
    tokenizer: Tokenizer = attrs.field(factory=WordCount)

    def __attrs_post_init__(self) -> None:
        if isinstance(self.budget, bool) or not isinstance(self.budget, int) or self.budget <= 0:
            raise BadInput(f"budget must be a positive integer, got {self.budget!r}")
        if isinstance(self.hot_n, bool) or not isinstance(self.hot_n, int) or self.hot_n < 0:
            raise BadInput(f"hot_n must be an integer >= 0, got {self.hot_n!r}")
        if not callable(getattr(self.tokenizer, "count", None)) or isinstance(self.tokenizer, str):
            raise BadInput(
                f"tokenizer must be a Tokenizer (tokenizer_named({self.tokenizer!r}) finds one "
                f"by name), got {self.tokenizer!r}"
            )

    @classmethod
    def from_params(cls, data: Mapping[str, Any], where: str) -> "TieredCompaction":
        """Build the policy from a scenario's ``[compaction]`` table."""
        params = Params(data, where)
        budget = params.integer("budget", minimum=1)
        hot_n = params.integer("hot_n", 2, minimum=0)
        try:
            tokenizer = tokenizer_named(params.text("tokenizer", WordCount.name))
        except BadInput as error:
            raise params.error("tokenizer", str(error)) from None
        params.done()
        return cls(budget, hot_n, tokenizer)

    @property
    def promises(self) -> frozenset[str]:
        """The budget bound and the last ``hot_n`` turns verbatim."""
        return frozenset({BUDGET, RECENT_VERBATIM})

    @property
    def verbatim(self) -> int:
        """How many of the newest turns stay HOT verbatim."""
        return self.hot_n

    def floor(self, window: Window) -> int:
        """The least this policy may keep: the last ``hot_n`` turns and the gist."""
        kept = window.hot[-self.hot_n :] if self.hot_n else ()
        return sum(turn.tokens for turn in kept) + window.gist_tokens

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
        role, text, salient = command.role, command.text, command.salient
        if not isinstance(role, str) or not role or role != role.strip():
            raise Rejected(f"a turn's role must be a non-empty word, got {role!r}")
        if not isinstance(text, str):
            raise Rejected(f"a turn's text must be a string, got {text!r}")
        if salient is not None and not isinstance(salient, bool):
            raise Rejected(f"a turn's salient flag must be true, false or unset, got {salient!r}")
        window = state.window
        if salient is None:
            salient = role == "tool"
        tokens = self.tokenizer.count(f"{role}: {text}")
        turn = TurnAdded(window.turns + 1, role, text, tokens, salient)
        total = window.tokens + tokens
        if total <= self.budget:
            return (turn,)
        return (turn, self._compact(window, turn, total))

    def _compact(self, window: Window, turn: TurnAdded, total: int) -> CompactionTriggered:
        count = self.tokenizer.count
        hot = [*window.hot, turn]
        split = len(hot) - self.hot_n if len(hot) > self.hot_n else 0
        warm: list[WarmItem] = []
        dropped: list[int] = []
        tokens = total
        for old in hot[:split]:
            tokens -= old.tokens
            if old.salient:
                item = WarmItem(old.turn, old.text, count(old.text))
                warm.append(item)
                tokens += item.tokens
            else:
                dropped.append(old.turn)
        waiting = len(window.warm)
        cold = 0
        gist, gist_tokens = window.gist, window.gist_tokens
        while tokens > self.budget and cold < waiting + len(warm):
            oldest = window.warm[cold] if cold < waiting else warm[cold - waiting]
            cold += 1
            gist = gist_for(len(window.cold) + cold)
            tokens -= oldest.tokens + gist_tokens
            gist_tokens = count(gist)
            tokens += gist_tokens
        return CompactionTriggered(
            self.budget,
            tuple([old.turn for old in hot[split:]]),
            tuple(warm),
            tuple(dropped),
            cold,
            gist,
            gist_tokens,
        )
