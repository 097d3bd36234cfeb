"""Tool-result clearing: over budget, older tool outputs become a short placeholder.

This is Anthropic's context editing (``clear_tool_uses``): the last ``keep``
tool results stay verbatim, every older one is replaced by ``placeholder``,
and nothing else is touched, so the window may stay over budget once the
conversation itself outgrows it. A result no longer than the placeholder is
left as it is, since replacing it would save nothing.

A result that answers a call is cleared in place, as context editing leaves
a request: it stays HOT beside its call, reading the placeholder (the
compaction's ``cleared``), so HOT stays well formed; so is a tool turn that
makes a call, or sits between a call and its result (its unit stays whole,
``memtape.policies.window.units``). A tool turn that is a unit of its own, calling
and answering nothing, has nothing in the request pointing at it, and is
cleared as it always was: to a WARM item whose text is the placeholder,
under its own turn number. A pinned result is never cleared; nor, keeping at
least one result, is one in the newest turn's unit
(``memtape.policies.window.units``), which stays verbatim.

The placeholder costs what the tokenizer counts, unless ``placeholder_tokens``
says: a redacted copy (``memtape.runs.redact``) records there what its source's
placeholder cost, since its own placeholder is a stand-in that measures
otherwise.
"""

import math
from collections.abc import Mapping, Sequence
from itertools import chain
from typing import Any, ClassVar

import attrs

from memtape.core.commands import AddTurn
from memtape.core.errors import BadInput
from memtape.core.events import CompactionTriggered, Event, TurnAdded, WarmItem
from memtape.core.seq import bisect_left, bisect_right
from memtape.core.state import State, Window
from memtape.policies.plumbing.params import Params
from memtape.policies.plumbing.promises import BUDGET, PINNED, RECENT_VERBATIM, WELL_FORMED
from memtape.policies.text.tokenizers import Tokenizer, WordCount, as_tokenizer
from memtape.policies.window.trigger import Trigger, calls_for_compaction, trigger_from
from memtape.policies.window.turns import arriving, check_count, check_shared, shared_params
from memtape.policies.window.units import newest, newest_with

TOOL = "tool"
"""The role of a tool result."""

PLACEHOLDER = "[tool result cleared]"
"""What a cleared tool result reads by default."""

COST = "placeholder_tokens"
"""The parameter that says what the placeholder costs instead of counting it."""


@attrs.frozen
class ClearToolResults:
    """Over ``budget``, replace each tool result but the last ``keep`` with ``placeholder``."""

    name: ClassVar[str] = "clear-tool-results"
    DEFAULT_KEEP: ClassVar[int] = 3
    """``keep`` when a table leaves it out (a replica of another product has its own)."""
    DEFAULT_PLACEHOLDER: ClassVar[str] = PLACEHOLDER
    """``placeholder`` when a table leaves it out."""
    DEFAULT_TRIGGER: ClassVar[Any] = None
    """``trigger`` when a table leaves it out (None: the budget)."""
    budget: int
    keep: int = 3
    placeholder: str = PLACEHOLDER
    tokenizer: Tokenizer = attrs.field(factory=WordCount, converter=as_tokenizer)
    placeholder_tokens: int | None = attrs.field(default=None, kw_only=True)
    """What the placeholder costs, when not what the tokenizer counts (a redacted copy's)."""
    trigger: Trigger | None = attrs.field(default=None, kw_only=True)
    """When it clears (``memtape.policies.window.trigger``; None: over the budget). A
    clearing clears all it may, whatever the target."""

    def __attrs_post_init__(self) -> None:
        check_shared(self.budget, self.tokenizer)
        check_count("keep", self.keep)
        if not isinstance(self.placeholder, str):
            raise BadInput(f"placeholder must be a string, got {self.placeholder!r}")
        if self.placeholder_tokens is not None:
            check_count("placeholder_tokens", self.placeholder_tokens)

    @classmethod
    def from_params(cls, data: Mapping[str, Any], where: str) -> "ClearToolResults":
        """Build the policy from a scenario's ``[compaction]`` table."""
        params = Params(data, where)
        policy = cls(**cls.read_params(params, COST in data))
        params.done()
        return policy

    @classmethod
    def read_params(cls, params: Params, costed: bool) -> dict[str, Any]:
        """The constructor's arguments a table gives (``costed``: it says
        ``placeholder_tokens``); a subclass adds its own."""
        budget, tokenizer = shared_params(params)
        return {
            "budget": budget,
            "keep": params.integer("keep", cls.DEFAULT_KEEP, minimum=0),
            "placeholder": params.text("placeholder", cls.DEFAULT_PLACEHOLDER),
            "tokenizer": tokenizer,
            "placeholder_tokens": params.integer(COST, 0, minimum=0) if costed else None,
            "trigger": trigger_from(params, cls.DEFAULT_TRIGGER),
        }

    @property
    def promises(self) -> frozenset[str]:
        """The budget bound (down to what cannot be cleared), well-formed HOT, pinned turns,
        and, keeping at least one tool result, the newest turn's unit verbatim."""
        promised = frozenset({BUDGET, WELL_FORMED, PINNED})
        return promised | {RECENT_VERBATIM} if self.keep else promised

    @property
    def verbatim(self) -> int:
        """The newest turn stays verbatim, with its unit (a tool result among the last
        ``keep``, or not one)."""
        return 1 if self.keep else 0

    def floor(self, window: Window) -> int:
        """The least this policy may keep: the window with every clearable result cleared.

        Only the tool results since the last clearing can be (see
        ``_since_last_clearing``): each is found in HOT by its number
        (``Window.tool_turns``), so the floor costs them, not HOT.
        """
        cost = self.cost
        hot = window.hot
        tools: list[TurnAdded] = []
        tool_turns = window.tool_turns
        for number in tool_turns[bisect_right(tool_turns, self._last_cleared(window)) :]:
            at = bisect_left(hot, number, key=_number)
            if at < len(hot) and hot[at].turn == number:
                tools.append(hot[at])
        clearable = self._clearable(tools, newest(window).start, cost)
        return window.tokens - sum(t.tokens - cost for t in clearable)

    def _last_cleared(self, window: Window) -> int:
        """The number of the newest tool result cleared (to WARM or in place), or 0."""
        last = next(
            (item.turn for item in reversed(window.warm) if item.text == self.placeholder), 0
        )
        if window.cleared:
            last = max(last, window.cleared[len(window.cleared) - 1])
        return last

    @property
    def cost(self) -> int:
        """The tokens the placeholder costs (``placeholder_tokens``, or as counted)."""
        if self.placeholder_tokens is not None:
            return self.placeholder_tokens
        return self.tokenizer.count(self.placeholder)

    def params(self) -> dict[str, Any]:
        """The parameters, as a scenario table would write them (``placeholder_tokens``
        when set)."""
        table: dict[str, Any] = {
            "policy": self.name,
            "budget": self.budget,
            "keep": self.keep,
            "placeholder": self.placeholder,
            "tokenizer": self.tokenizer.name,
        }
        if self.placeholder_tokens is not None:
            table[COST] = self.placeholder_tokens
        if self.trigger is not None:
            table.update(self.trigger.params())
        return table

    def decide(self, state: State, command: AddTurn) -> tuple[Event, ...]:
        """The turn, and the compaction that clears older tool results if it is over budget."""
        window = state.window
        turn = arriving(window, command, self.tokenizer)
        trigger = self.trigger
        if not calls_for_compaction(trigger, window, turn, self.budget):
            return (turn,)
        cost = self.cost
        found = self._since_last_clearing(window, turn, cost)
        if not found:
            return (turn,)
        warm = tuple(WarmItem(t.turn, self.placeholder, cost) for t, alone in found if alone)
        cleared = tuple(WarmItem(t.turn, self.placeholder, cost) for t, alone in found if not alone)
        compaction = CompactionTriggered(
            self.budget,
            warm,
            (),
            0,
            window.gist,
            window.gist_tokens,
            cleared=cleared,
        )
        if trigger is not None and not trigger.frees_enough(state, turn, compaction):
            return (turn,)
        return (turn, compaction)

    def _clearable(self, hot: Sequence[TurnAdded], unit_start: int, cost: int) -> list[TurnAdded]:
        """The HOT tool results older than the last ``keep`` that cost more than a placeholder,
        neither pinned nor (keeping any) in the newest turn's unit, which starts at turn
        ``unit_start``."""
        protected = unit_start if self.keep else math.inf
        tools = [t for t in hot if t.role == TOOL]
        older = tools[: max(len(tools) - self.keep, 0)]
        return [t for t in older if t.tokens > cost and not t.pinned and t.turn < protected]

    def _since_last_clearing(
        self, window: Window, turn: TurnAdded, cost: int
    ) -> list[tuple[TurnAdded, bool]]:
        """``_clearable`` of HOT with ``turn``, looking back only to the last cleared result;
        each with whether it is a unit of its own that calls and answers nothing (cleared
        to WARM) or not (cleared in place, so its unit stays whole in HOT).

        A tool result older than the last one cleared that is still HOT was too short
        to clear then, and still is (or is pinned); so only the tool results since the
        last clearing count. The window lists every tool turn's number
        (``Window.tool_turns``): with no more of them since than the last ``keep``,
        nothing is looked at; otherwise the look back stops at the oldest of them,
        so it costs the turns since that result, not the whole of HOT (which this
        policy never shortens). On the way back, the results seen whose calls are
        further back say which turns sit inside a unit.
        """
        last = self._last_cleared(window)
        tool_turns = window.tool_turns
        since = bisect_right(tool_turns, last)
        arrived = len(tool_turns) - since + (turn.role == TOOL)
        if arrived <= self.keep:
            return []
        oldest = tool_turns[since] if since < len(tool_turns) else turn.turn
        unit = newest_with(window, turn).start
        protected = unit if self.keep else math.inf
        need: set[str] = set()
        kept = 0
        found: list[tuple[TurnAdded, bool]] = []
        for candidate in chain((turn,), reversed(window.hot)):
            if candidate.turn < oldest:
                break
            inside = bool(need) or candidate.turn > unit
            if candidate.calls and need:
                need.difference_update(candidate.calls)
            need.update(candidate.answers)
            if candidate.role != TOOL:
                continue
            if kept < self.keep:
                kept += 1
            elif candidate.tokens > cost and not candidate.pinned and candidate.turn < protected:
                alone = not inside and not candidate.calls and not candidate.answers
                found.append((candidate, alone))
        found.reverse()
        return found


def _number(turn: TurnAdded) -> int:
    return turn.turn
