"""Anthropic's ``clear_thinking_20251015`` context edit: the thinking of all but the last
``keep`` assistant turns that thought is cleared from the window.

memtape's turns have no thinking of their own: an importer writes a model's
thinking into its turn's text, one part a line, as ``[thinking] TEXT`` (and
redacted thinking as ``[redacted thinking]``; ``memtape.lab.importers.texts``).
Clearing a turn's thinking removes those lines in place, so the turn stays HOT
beside its calls and results (the compaction's ``cleared``). A thinking part
that runs over several lines loses its first: where it ends is not written.

``keep`` is a count of turns with thinking (default 1, as Anthropic's) or
``"all"`` (nothing is ever cleared, which keeps a cached prefix whole). It
clears at every turn unless a trigger says otherwise
(``memtape.policies.window.trigger``). A pinned turn is never cleared, nor is
a turn of the newest unit while ``keep`` is at least 1. It promises no budget:
thinking is all it ever takes out.
"""

import re
from collections.abc import Mapping
from itertools import chain
from typing import Any, ClassVar

import attrs

from memtape.core.commands import AddTurn
from memtape.core.errors import BadInput
from memtape.core.events import CompactionTriggered, Event, TurnAdded, WarmItem
from memtape.core.state import State
from memtape.policies.plumbing.params import Params
from memtape.policies.plumbing.promises import PINNED, RECENT_VERBATIM, WELL_FORMED
from memtape.policies.text.tokenizers import Tokenizer, WordCount, as_tokenizer
from memtape.policies.window.trigger import Trigger, trigger_from
from memtape.policies.window.turns import arriving, check_shared, shared_params
from memtape.policies.window.units import newest, newest_with

ALL = "all"
"""``keep`` that clears nothing."""

_THOUGHT = re.compile(r"^\[(?:thinking\]|redacted thinking\]).*(?:\n|$)", re.MULTILINE)
"""A line of a turn's text that holds thinking, with its line break."""


_EVERY_TURN = Trigger(every=1)
"""The default trigger: a clearing considered at every turn."""


def _thought(turn: TurnAdded) -> bool:
    """Whether ``turn`` is an assistant turn whose text holds thinking."""
    return turn.role == "assistant" and _THOUGHT.search(turn.text) is not None


def without_thinking(text: str) -> str:
    """``text`` without its thinking lines (trailing line breaks left by them dropped)."""
    return _THOUGHT.sub("", text).rstrip("\n")


@attrs.frozen
class AnthropicClearThinking:
    """The thinking of every assistant turn but the last ``keep`` that thought, cleared."""

    name: ClassVar[str] = "anthropic-clear-thinking"
    budget: int
    keep: int | str = 1
    tokenizer: Tokenizer = attrs.field(factory=WordCount, converter=as_tokenizer)
    trigger: Trigger | None = attrs.field(default=None, kw_only=True)
    """When it clears (None: at every turn)."""

    def __attrs_post_init__(self) -> None:
        check_shared(self.budget, self.tokenizer)
        keep = self.keep
        if keep != ALL and (not isinstance(keep, int) or isinstance(keep, bool) or keep < 0):
            raise BadInput(f'keep must be an integer >= 0 or "all", got {keep!r}')
        if self.trigger is None:
            object.__setattr__(self, "trigger", Trigger(every=1))

    @classmethod
    def from_params(cls, data: Mapping[str, Any], where: str) -> "AnthropicClearThinking":
        """Build the policy from a scenario's ``[compaction]`` table."""
        params = Params(data, where)
        budget, tokenizer = shared_params(params)
        keep = params.raw("keep", 1)
        if keep != ALL and (not isinstance(keep, int) or isinstance(keep, bool) or keep < 0):
            raise params.error("keep", f'must be an integer >= 0 or "all", got {keep!r}')
        trigger = trigger_from(params)
        params.done()
        return cls(budget, keep, tokenizer, trigger=trigger)

    @property
    def promises(self) -> frozenset[str]:
        """Well-formed HOT (it clears in place), pinned turns, and, keeping any, the newest
        turn's unit verbatim; no budget bound."""
        promised = frozenset({WELL_FORMED, PINNED})
        return promised | {RECENT_VERBATIM} if self.keep else promised

    @property
    def verbatim(self) -> int:
        """The newest turn stays verbatim, with its unit, while ``keep`` is at least 1."""
        return 1 if self.keep else 0

    def params(self) -> dict[str, Any]:
        """The parameters, as a scenario table would write them."""
        table: dict[str, Any] = {
            "policy": self.name,
            "budget": self.budget,
            "keep": self.keep,
            "tokenizer": self.tokenizer.name,
        }
        if self.trigger is not None:
            table.update(self.trigger.params())
        return table

    def decide(self, state: State, command: AddTurn) -> tuple[Event, ...]:
        """The turn, and the clearing of older thinking when the trigger fires.

        Every thinking turn before the last clearing was cleared then (or is
        pinned, or was in the newest unit and is looked at again), so the look
        back stops at the last cleared turn. Clearing at every turn (the
        default trigger), it stops sooner: the turn before already cleared all
        it could but its newest unit, so only that unit's turns, and, when the
        new turn thought, the turn it pushes out of the last ``keep``, can go
        now; the look back costs them, not the turns since the last clearing
        (a window another policy left, a fork, keeps what that policy left).
        """
        window = state.window
        turn = arriving(window, command, self.tokenizer)
        trigger = self.trigger
        if self.keep == ALL or trigger is None or not trigger.fires(window, turn, self.budget):
            return (turn,)
        keep = int(self.keep)
        cleared = window.cleared
        last = cleared[len(cleared) - 1] if cleared else 0
        protected = newest_with(window, turn).start if keep else window.turns + 2
        every_turn = trigger == _EVERY_TURN
        before = newest(window).start if keep else window.turns + 1
        thought = _thought(turn)
        seen = 0
        found: list[WarmItem] = []
        count = self.tokenizer.count
        for candidate in chain((turn,), reversed(window.hot)):
            if candidate.turn <= last:
                break
            if every_turn and candidate.turn < before and (not thought or seen > keep):
                break
            if not _thought(candidate):
                continue
            seen += 1
            if seen <= keep or candidate.pinned or candidate.turn >= protected:
                continue
            text = without_thinking(candidate.text)
            found.append(WarmItem(candidate.turn, text, count(f"{candidate.role}: {text}")))
        if not found:
            return (turn,)
        found.reverse()
        compaction = CompactionTriggered(
            self.budget, (), (), 0, window.gist, window.gist_tokens, cleared=tuple(found)
        )
        if not trigger.frees_enough(state, turn, compaction):
            return (turn,)
        return (turn, compaction)
