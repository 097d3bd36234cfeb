"""Tiered compaction: keep the last turns HOT, fold salient older ones WARM,
drop chatter, and push the oldest WARM items into a COLD gist.

By default a WARM item is its turn's bare text and the gist counts the COLD
turns; ``warm = "llm"`` and ``gist = "llm"`` have a model write them
(``memtape.policies.text.tier_writers``), every answer recorded in the event.
"""

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import attrs

from memtape.core.commands import AddTurn
from memtape.core.events import CompactionTriggered, Event, ModelCall, TurnAdded, WarmItem
from memtape.core.packing import maker
from memtape.core.state import State, Window
from memtape.policies.plumbing.params import Params
from memtape.policies.plumbing.promises import BUDGET, PINNED, RECENT_VERBATIM, WELL_FORMED
from memtape.policies.text.tokenizers import Tokenizer, WordCount, as_tokenizer
from memtape.policies.window.trigger import Trigger, trigger_from
from memtape.policies.window.turns import arriving, check_count, check_shared, shared_params
from memtape.policies.window.units import kept_tokens, older_units

if TYPE_CHECKING:
    from memtape.policies.text.tier_writers import LlmGist, LlmWarm

DEFAULT_WRITERS = {"warm": "verbatim", "gist": "count"}
"""What ``warm`` and ``gist`` name by default (``tier_writers.VERBATIM`` and ``COUNT``): a
table that keeps both needs no model, so its policy is built without importing the writers
(nor the model client behind them)."""


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
    than the budget. It moves whole units (``memtape.policies.window.units``): the
    last ``hot_n`` turns stay with the rest of their units, pinned turns with
    theirs, and an older unit goes to WARM whole if any of its turns is
    salient (a call with its results), or is dropped whole.

    ``warm`` (default None: the bare texts) has a model write one stand-in
    per unit going WARM; ``gist`` (default None: ``gist_for``'s count line)
    has a model write the gist whenever items go COLD. The gist's limit
    counts in full while the policy decides how many items to push, so the
    window ends within the budget whatever the model writes, and the push
    still ends when WARM runs out.
    """

    name: ClassVar[str] = "tiered"
    budget: int
    hot_n: int
    tokenizer: Tokenizer = attrs.field(factory=WordCount, converter=as_tokenizer)
    warm: "LlmWarm | None" = None
    gist: "LlmGist | None" = None
    trigger: Trigger | None = attrs.field(default=None, kw_only=True)
    """When it compacts and how far down (``memtape.policies.window.trigger``; None: over
    the budget, down to it)."""

    def __attrs_post_init__(self) -> None:
        check_shared(self.budget, self.tokenizer)
        check_count("hot_n", self.hot_n)
        if self.warm is not None:
            check_count("warm_tokens", self.warm.tokens)
        if self.gist is not None:
            check_count("gist_tokens", self.gist.tokens)

    @classmethod
    def from_params(cls, data: Mapping[str, Any], where: str) -> "TieredCompaction":
        """Build the policy from a scenario's ``[compaction]`` table."""
        params = Params(data, where)
        budget, tokenizer = shared_params(params)
        hot_n = params.integer("hot_n", 2, minimum=0)
        trigger = trigger_from(params)
        warm, gist = None, None
        if any(data.get(key, name) != name for key, name in DEFAULT_WRITERS.items()):
            from memtape.policies.text.tier_writers import gist_from, warm_from  # noqa: PLC0415

            warm, gist = warm_from(params, budget), gist_from(params, budget)
        else:
            for key, name in DEFAULT_WRITERS.items():
                params.text(key, name)  # named as the default: read, so not unknown
        params.done()
        return cls(budget, hot_n, tokenizer, warm, gist, trigger=trigger)

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
        table: dict[str, Any] = {"policy": self.name, "budget": self.budget, "hot_n": self.hot_n}
        # The defaults are left out, so a run made with them has the header it always had.
        if self.warm is not None:
            table.update(self.warm.params())
        if self.gist is not None:
            table.update(self.gist.params())
        table["tokenizer"] = self.tokenizer.name
        if self.trigger is not None:
            table.update(self.trigger.params())
        return table

    def decide(self, state: State, command: AddTurn) -> tuple[Event, ...]:
        """The turn, and the compaction it triggers if it takes the window over budget."""
        window = state.window
        turn = arriving(window, command, self.tokenizer)
        total = window.tokens + turn.tokens
        trigger = self.trigger
        if trigger is None:
            if total <= self.budget:
                return (turn,)
            return (turn, self._compact(window, turn, total))
        if not trigger.fires(window, turn, self.budget):
            return (turn,)
        compaction = self._compact(window, turn, total)
        moved = compaction.warm or compaction.dropped or compaction.cold
        if not moved or not trigger.frees_enough(state, turn, compaction):
            return (turn,)
        return (turn, compaction)

    def _compact(self, window: Window, turn: TurnAdded, total: int) -> CompactionTriggered:
        count = self.tokenizer.count
        warm: list[WarmItem] = []
        dropped: list[int] = []
        asked: list[ModelCall] = []
        tokens = total
        if window.structured or turn.calls or turn.answers or turn.pinned:
            _, groups = older_units(window, turn, (*window.hot, turn), self.hot_n)
        else:
            # Every turn is its own unit, none pinned: the seed's split, at its cost (the
            # oldest turns read from HOT as it is, not from a copy with the new turn).
            leaving = max(len(window.hot) + 1 - self.hot_n, 0)
            older = window.hot[:leaving] if leaving <= len(window.hot) else (*window.hot, turn)
            groups = []
            if self.warm is not None:
                groups = [((old,), False, old.salient) for old in older]
            else:
                for old in older:
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
            if salient and self.warm is not None:
                for old in turns:
                    tokens -= old.tokens
                for item in self._stand_in(self.warm, turns, asked):
                    warm.append(item)
                    tokens += item.tokens
                continue
            for old in turns:
                tokens -= old.tokens
                if salient:
                    item = WarmItem(old.turn, old.text, count(old.text))
                    warm.append(item)
                    tokens += item.tokens
                else:
                    dropped.append(old.turn)
        cold, gist, gist_tokens = self._push(window, warm, tokens, asked)
        return _COMPACTION(
            self.budget,
            tuple(warm),
            tuple(dropped),
            cold,
            gist,
            gist_tokens,
            tuple(asked),
            (),
            None,
            False,
        )

    def _push(
        self, window: Window, warm: list[WarmItem], tokens: int, asked: list[ModelCall]
    ) -> tuple[int, str, int]:
        """How many of the oldest WARM items (those waiting, then ``warm``) go COLD while the
        window's ``tokens`` are over budget, and the gist and its tokens after them."""
        count = self.tokenizer.count
        waiting_items = len(window.warm)
        cold = 0
        goal = self.budget if self.trigger is None else self.trigger.goal(self.budget)
        gist, gist_tokens = window.gist, window.gist_tokens
        if self.gist is None:
            while tokens > goal and cold < waiting_items + len(warm):
                oldest = window.warm[cold] if cold < waiting_items else warm[cold - waiting_items]
                cold += 1
                gist = gist_for(len(window.cold) + cold)
                tokens -= oldest.tokens + gist_tokens
                gist_tokens = count(gist)
                tokens += gist_tokens
            return cold, gist, gist_tokens
        limit = self.gist.tokens
        while tokens > goal and cold < waiting_items + len(warm):
            oldest = window.warm[cold] if cold < waiting_items else warm[cold - waiting_items]
            if not cold:
                # The new gist may cost up to its limit: count that, not the old gist.
                tokens += limit - gist_tokens
            cold += 1
            tokens -= oldest.tokens
        if cold:
            pushed = (*window.warm[:cold], *warm[: max(0, cold - waiting_items)])
            gist = self._gist(self.gist, window.gist, pushed, len(window.cold) + cold, asked)
            gist_tokens = count(gist)
        return cold, gist, gist_tokens

    def _stand_in(
        self, writer: "LlmWarm", unit: Sequence[TurnAdded], asked: list[ModelCall]
    ) -> list[WarmItem]:
        """The WARM items of a unit the model stands in for: the stand-in under its newest
        turn, within the limit (no call when that is 0), and empty items for the others."""
        from memtape.policies.text.summarizers import cap  # noqa: PLC0415 (a model's writers only)

        count = self.tokenizer.count
        limit = min(writer.tokens, sum(count(old.text) for old in unit))
        text = ""
        if limit:
            call = writer(unit, limit)
            asked.append(call)
            text = cap(call.output, limit, count)
        items = [WarmItem(old.turn, "", 0) for old in unit[:-1]]
        items.append(WarmItem(unit[-1].turn, text, count(text)))
        return items

    def _gist(
        self,
        writer: "LlmGist",
        previous: str,
        pushed: Sequence[WarmItem],
        cold: int,
        asked: list[ModelCall],
    ) -> str:
        """The model's gist of ``previous`` and the ``pushed`` items, on one line and within
        its limit (no call, and no gist, when that is 0)."""
        from memtape.policies.text.summarizers import cap  # noqa: PLC0415 (a model's writers only)

        if not writer.tokens:
            return ""
        call = writer(previous, pushed, cold)
        asked.append(call)
        return cap(" ".join(call.output.split()), writer.tokens, self.tokenizer.count)


_COMPACTION = maker(CompactionTriggered)
"""``CompactionTriggered(...)``, every field given, made through its slots (``maker``):
most turns of a full window make one."""
