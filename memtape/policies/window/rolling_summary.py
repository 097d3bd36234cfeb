"""Rolling-summary compaction: over budget, fold everything but the last turns
into one running summary.

This is LangChain's summary-buffer memory and LangGraph's summarization
node: keep the last ``keep`` turns verbatim, and fold every older turn, with
the summary so far, into a new summary of at most ``summary_tokens`` tokens.

In the window the running summary is the one WARM item, under the number of
the newest turn it folded in; the older turns it folded in are COLD, with no
gist of their own (the summary speaks for them). The existing event says so:
each folded turn but the newest passes through WARM as an empty item and
goes COLD at once, with the summary it replaces. The summary's text and
tokens are in the event, so replay never calls the summarizer.

It folds whole units (``memtape.policies.window.units``): the last ``keep`` turns
stay with the rest of their units, and so do pinned turns with theirs; a
call is folded with its results, never without them.
"""

from collections.abc import Mapping
from typing import Any, ClassVar

import attrs

from memtape.core.commands import AddTurn
from memtape.core.errors import BadInput
from memtape.core.events import CompactionTriggered, Event, ModelCall, TurnAdded, WarmItem
from memtape.core.state import State, Window
from memtape.policies.plumbing.params import Params
from memtape.policies.plumbing.promises import BUDGET, PINNED, RECENT_VERBATIM, WELL_FORMED
from memtape.policies.text.summarizers import (
    SalientTexts,
    Summarizer,
    cap,
    name_of,
    summarizer_from,
    summarizer_params,
)
from memtape.policies.text.tokenizers import Tokenizer, WordCount, as_tokenizer
from memtape.policies.window.trigger import Trigger, calls_for_compaction, trigger_from
from memtape.policies.window.turns import arriving, check_count, check_shared, shared_params
from memtape.policies.window.units import Group, kept_tokens, older_units


def _quarter(policy: "RollingSummary") -> int:
    return policy.budget // 4 if isinstance(policy.budget, int) else 0


@attrs.frozen
class RollingSummary:
    """Over ``budget``, keep the last ``keep`` turns and fold the rest into one summary.

    ``summary_tokens`` caps the summary (default: a quarter of the budget);
    ``summarizer`` writes it (default: the salient texts, chatter dropped).
    """

    name: ClassVar[str] = "rolling-summary"
    DEFAULT_KEEP: ClassVar[int] = 2
    """``keep`` when a table leaves it out (a replica of another product has its own)."""
    DEFAULT_TRIGGER: ClassVar[Any] = None
    """``trigger`` when a table leaves it out (None: the budget)."""
    budget: int
    keep: int = 2
    summary_tokens: int = attrs.field(default=attrs.Factory(_quarter, takes_self=True))
    summarizer: Summarizer = attrs.field(factory=SalientTexts)
    tokenizer: Tokenizer = attrs.field(factory=WordCount, converter=as_tokenizer)
    trigger: Trigger | None = attrs.field(default=None, kw_only=True)
    """When it compacts and how far down (``memtape.policies.window.trigger``; None: over
    the budget, down to it)."""

    def __attrs_post_init__(self) -> None:
        check_shared(self.budget, self.tokenizer)
        check_count("keep", self.keep)
        check_count("summary_tokens", self.summary_tokens)
        if not callable(self.summarizer):
            raise BadInput(
                "summarizer must be a callable (previous, turns, limit) -> str, "
                f"got {self.summarizer!r}"
            )

    @classmethod
    def from_params(cls, data: Mapping[str, Any], where: str) -> "RollingSummary":
        """Build the policy from a scenario's ``[compaction]`` table."""
        params = Params(data, where)
        policy = cls(**cls.read_params(params))
        params.done()
        return policy

    @classmethod
    def read_params(cls, params: Params) -> dict[str, Any]:
        """The constructor's arguments a table gives; a subclass adds its own."""
        budget, tokenizer = shared_params(params)
        return {
            "budget": budget,
            "keep": params.integer("keep", cls.DEFAULT_KEEP, minimum=0),
            "summary_tokens": params.integer("summary_tokens", budget // 4, minimum=0),
            "summarizer": summarizer_from(params),
            "tokenizer": tokenizer,
            "trigger": trigger_from(params, cls.DEFAULT_TRIGGER),
        }

    @property
    def promises(self) -> frozenset[str]:
        """The budget bound (down to the kept turns and the summary), the last turns verbatim,
        well-formed HOT and pinned turns."""
        return frozenset({BUDGET, RECENT_VERBATIM, WELL_FORMED, PINNED})

    @property
    def verbatim(self) -> int:
        """How many of the newest turns stay HOT verbatim (with the rest of their units)."""
        return self.keep

    def floor(self, window: Window) -> int:
        """The least this policy may keep: the last ``keep`` turns and the pinned turns, each
        with the rest of its unit, the summary and any gist."""
        warm = sum(item.tokens for item in window.warm)
        return kept_tokens(window, self.keep) + warm + window.gist_tokens

    def params(self) -> dict[str, Any]:
        """The parameters, as a scenario table would write them."""
        table = {
            "policy": self.name,
            "budget": self.budget,
            "keep": self.keep,
            "summary_tokens": self.summary_tokens,
            **summarizer_params(self.summarizer),
            "tokenizer": self.tokenizer.name,
        }
        if self.trigger is not None:
            table.update(self.trigger.params())
        return table

    def decide(self, state: State, command: AddTurn) -> tuple[Event, ...]:
        """The turn, and the compaction that folds older turns if it is over budget."""
        window = state.window
        turn = arriving(window, command, self.tokenizer)
        trigger = self.trigger
        if not calls_for_compaction(trigger, window, turn, self.budget):
            return (turn,)
        hot = (*window.hot, turn)
        if len(hot) <= self.keep:
            return (turn,)
        _, groups = older_units(window, turn, hot, self.keep)
        folded = self._folded(groups)
        if not folded:
            return (turn,)
        compaction = self._fold(window, tuple(folded))
        if trigger is not None and not trigger.frees_enough(state, turn, compaction):
            return (turn,)
        return (turn, compaction)

    def _folded(self, groups: list[Group]) -> list[TurnAdded]:
        """The turns of the older units ``groups`` (oldest first) that fold: every one but
        the pinned units' (a replica may keep others)."""
        return [old for turns, pinned, _ in groups if not pinned for old in turns]

    def _summarized(self, folded: tuple[TurnAdded, ...]) -> tuple[TurnAdded, ...]:
        """The folded turns the summarizer reads (all of them; a replica may trim)."""
        return folded

    def _fold(self, window: Window, folded: tuple[TurnAdded, ...]) -> CompactionTriggered:
        previous = " ".join(item.text for item in window.warm if item.text)
        written = self.summarizer(previous, self._summarized(folded), self.summary_tokens)
        # A summarizer that asked a model (or a plug-in) says so: the call goes in the event.
        asked = (written,) if isinstance(written, ModelCall) else ()
        if isinstance(written, ModelCall):
            written = written.output
        if not isinstance(written, str):
            raise BadInput(
                f"the summarizer {name_of(self.summarizer)!r} returned {written!r}, not a string"
            )
        count = self.tokenizer.count
        text = cap(written, self.summary_tokens, count)
        # An empty summary is no WARM item: every folded turn goes COLD.
        passing = folded[:-1] if text else folded
        warm = [WarmItem(t.turn, "", 0) for t in passing]
        if text:
            warm.append(WarmItem(folded[-1].turn, text, count(text)))
        return CompactionTriggered(
            self.budget,
            tuple(warm),
            (),
            len(window.warm) + len(passing),
            window.gist,
            window.gist_tokens,
            asked,
        )
