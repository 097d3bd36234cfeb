"""Replicas that clear tool results: observation masking and Anthropic's
``clear_tool_uses``, each ``clear-tool-results`` with its product's defaults.

``observation-masking`` is the baseline of JetBrains' "The Complexity Trap"
(Lindenbauer et al., 2025): every tool observation older than the last
``keep`` (10) reads as a placeholder, at every turn, whatever the budget.

``anthropic-clear-tool-uses`` is Anthropic's context editing strategy
``clear_tool_uses_20250919``: once the input passes ``trigger`` (100,000
tokens), every tool result but the last ``keep`` (3) is cleared, unless its
tool is one of ``exclude_tools``; with ``clear_tool_inputs`` the call's input
goes too. A turn's tool calls read ``call NAME(ARGUMENTS)`` a line in an
imported transcript (``memtape.lab.importers.texts``): a result's tool is the
name its call reads under, and clearing an input leaves ``call NAME()``.
``clear_at_least`` is the shared one (``memtape.policies.window.trigger``).
"""

import re
from collections.abc import Iterable, Sequence
from typing import Any, ClassVar

import attrs

from memtape.core.commands import AddTurn
from memtape.core.errors import BadInput
from memtape.core.events import CompactionTriggered, Event, TurnAdded, WarmItem
from memtape.core.seq import bisect_left
from memtape.core.state import State, Window
from memtape.policies.plumbing.params import Params
from memtape.policies.window.tool_clearing import ClearToolResults
from memtape.policies.window.trigger import Trigger
from memtape.policies.window.units import newest

MASK = "[old observation omitted]"
"""What a masked observation reads."""

_CALL = re.compile(r"^call ([^\s(]+)\((.*)\)$", re.MULTILINE)
"""A tool call's line in a turn's text: its name and its (one-line) input."""


def _tools(names: Iterable[str]) -> tuple[str, ...]:
    """``exclude_tools`` as a tuple (a table gives a list)."""
    return tuple(names)


@attrs.frozen
class ObservationMasking(ClearToolResults):
    """Every tool result but the last ``keep`` masked, at every turn, whatever the budget."""

    name: ClassVar[str] = "observation-masking"
    DEFAULT_KEEP: ClassVar[int] = 10
    DEFAULT_PLACEHOLDER: ClassVar[str] = MASK
    keep: int = 10
    placeholder: str = MASK

    @classmethod
    def read_params(cls, params: Params, costed: bool) -> dict[str, Any]:
        """``clear-tool-results``'s parameters, triggered at every turn unless told."""
        read = super().read_params(params, costed)
        trigger = read["trigger"]
        if trigger is None:
            read["trigger"] = Trigger(every=1)
        elif not trigger.given and trigger.every is None:
            read["trigger"] = attrs.evolve(trigger, every=1)
        return read

    def __attrs_post_init__(self) -> None:
        super().__attrs_post_init__()
        if self.trigger is None:
            object.__setattr__(self, "trigger", Trigger(every=1))


@attrs.frozen
class AnthropicClearToolUses(ClearToolResults):
    """Anthropic's ``clear_tool_uses``: over ``trigger`` (100,000 tokens), every tool result
    but the last ``keep`` (3) cleared, but those of ``exclude_tools``; the calls' inputs
    too with ``clear_tool_inputs``."""

    name: ClassVar[str] = "anthropic-clear-tool-uses"
    DEFAULT_PLACEHOLDER: ClassVar[str] = "[cleared]"
    DEFAULT_TRIGGER: ClassVar[Any] = 100_000
    placeholder: str = "[cleared]"
    exclude_tools: tuple[str, ...] = attrs.field(default=(), kw_only=True, converter=_tools)
    clear_tool_inputs: bool = attrs.field(default=False, kw_only=True)

    def __attrs_post_init__(self) -> None:
        super().__attrs_post_init__()
        if self.trigger is None:
            object.__setattr__(self, "trigger", Trigger((100_000,)))
        if not all(isinstance(name, str) and name for name in self.exclude_tools):
            raise BadInput(f"exclude_tools must be tool names, got {list(self.exclude_tools)!r}")

    @classmethod
    def read_params(cls, params: Params, costed: bool) -> dict[str, Any]:
        """``clear-tool-results``'s parameters, with ``exclude_tools`` and ``clear_tool_inputs``."""
        read = super().read_params(params, costed)
        excluded = params.raw("exclude_tools", [])
        if not isinstance(excluded, list) or not all(isinstance(n, str) and n for n in excluded):
            raise params.error("exclude_tools", f"must be a list of tool names, got {excluded!r}")
        read["exclude_tools"] = tuple(excluded)
        read["clear_tool_inputs"] = params.flag("clear_tool_inputs", False)
        return read

    def params(self) -> dict[str, Any]:
        """``clear-tool-results``'s table, with the two knobs of its own."""
        return {
            **super().params(),
            "exclude_tools": list(self.exclude_tools),
            "clear_tool_inputs": self.clear_tool_inputs,
        }

    def floor(self, window: Window) -> int:
        """``clear-tool-results``'s floor with the excluded tools' results kept (the inputs
        it could clear left out of it: the floor may only be higher than the least)."""
        floor = super().floor(window)
        if not self.exclude_tools:
            return floor
        cost, hot = self.cost, window.hot
        last = self._last_cleared(window)
        protected = newest(window).start if self.keep else window.turns + 1
        tools = window.tool_turns
        for number in tools[: max(len(tools) - self.keep, 0)]:
            if number <= last or number >= protected:
                continue
            result = _hot_turn(hot, number)
            if result is None or result.pinned or result.tokens <= cost:
                continue
            if self._excluded(hot, result):
                floor += result.tokens - cost
        return floor

    def decide(self, state: State, command: AddTurn) -> tuple[Event, ...]:
        """``clear-tool-results``'s decision, the excluded tools' results left as they are and,
        with ``clear_tool_inputs``, the inputs of the calls whose results go."""
        events = super().decide(state, command)
        if len(events) < 2 or not (self.exclude_tools or self.clear_tool_inputs):
            return events
        turn, compaction = events
        assert isinstance(turn, TurnAdded)
        assert isinstance(compaction, CompactionTriggered)
        hot = state.window.hot

        def kept(item: WarmItem) -> bool:
            return self._excluded(hot, _find(hot, turn, item.turn))

        warm = tuple(item for item in compaction.warm if not kept(item))
        cleared = [item for item in compaction.cleared if not kept(item)]
        if self.clear_tool_inputs:
            cleared.extend(self._inputs(hot, turn, cleared))
        if not warm and not cleared:
            return (turn,)
        cleared.sort(key=lambda item: item.turn)
        edited = attrs.evolve(compaction, warm=warm, cleared=tuple(cleared))
        trigger = self.trigger
        if trigger is not None and not trigger.frees_enough(state, turn, edited):
            return (turn,)
        return (turn, edited)

    def _excluded(self, hot: Sequence[TurnAdded], result: TurnAdded | None) -> bool:
        """Whether ``result`` answers a call to one of ``exclude_tools``."""
        if result is None or not self.exclude_tools or not result.answers:
            return False
        caller = _caller(hot, result)
        if caller is None:
            return False
        names = dict(zip(caller.calls, _names(caller.text), strict=False))
        return any(names.get(answered) in self.exclude_tools for answered in result.answers)

    def _inputs(
        self, hot: Sequence[TurnAdded], turn: TurnAdded, cleared: list[WarmItem]
    ) -> list[WarmItem]:
        """The callers of the results in ``cleared``, each reading ``call NAME()`` for its
        calls (one a caller, none pinned, none already cleared, none calling an excluded
        tool, only where that takes tokens away)."""
        count = self.tokenizer.count
        done = {item.turn for item in cleared}
        inputs: list[WarmItem] = []
        for item in list(cleared):
            result = _find(hot, turn, item.turn)
            caller = None if result is None else _caller(hot, result)
            if caller is None or caller.pinned or caller.turn in done:
                continue
            done.add(caller.turn)
            if set(_names(caller.text)) & set(self.exclude_tools):
                continue
            text = _CALL.sub(lambda match: f"call {match.group(1)}()", caller.text)
            tokens = count(f"{caller.role}: {text}")
            if text != caller.text and tokens < caller.tokens:
                inputs.append(WarmItem(caller.turn, text, tokens))
        return inputs


def _names(text: str) -> list[str]:
    """The tool names a turn's text calls, in order."""
    return [match.group(1) for match in _CALL.finditer(text)]


def _hot_turn(hot: Sequence[TurnAdded], number: int) -> TurnAdded | None:
    """HOT's turn ``number``, or None when it is not HOT."""
    at = bisect_left(hot, number, key=lambda turn: turn.turn)
    return hot[at] if at < len(hot) and hot[at].turn == number else None


def _find(hot: Sequence[TurnAdded], turn: TurnAdded, number: int) -> TurnAdded | None:
    """Turn ``number`` of HOT, or the arriving ``turn`` (not HOT yet), or None."""
    return turn if number == turn.turn else _hot_turn(hot, number)


def _caller(hot: Sequence[TurnAdded], result: TurnAdded) -> TurnAdded | None:
    """The HOT turn that made the first call ``result`` (HOT, or arriving after it) answers,
    walking back from it (a call is most often just before its result), or None when it
    is not HOT."""
    wanted = result.answers[0]
    at = bisect_left(hot, result.turn, key=lambda turn: turn.turn)
    for index in range(at - 1, -1, -1):
        if wanted in hot[index].calls:
            return hot[index]
    return None
