"""Sliding-window compaction: drop the oldest turns until the window fits the budget.

This is the ``"last"`` strategy of LangChain's ``trim_messages``: no summary,
no trace of what left. One departure: the newest turn always stays, since a
window without the message the model must answer is no window at all.

It drops whole units (``memtape.policies.window.units``): a call and its results
leave together, as ``trim_messages`` must leave them for a request to stay
valid, and the newest turn keeps the rest of its unit. A pinned turn stays
with its unit, wherever it is. Two of ``trim_messages``'s options carry over:
``include_system`` keeps a leading system turn (the run's first turn, when
its role is ``system``) as ``include_system=True`` keeps a ``SystemMessage``
at index 0, its tokens counted against the budget; ``start_on`` names the
role the turns it keeps start on: with ``start_on = "user"`` it drops, after
fitting the budget, every unit before the first that begins with a user turn
(turns it keeps for themselves aside: the leading system turn, pinned ones),
even within budget, as ``trim_messages`` does. When no such unit fits, the
newest turn's unit stays alone, as the departure above says (``trim_messages``
would keep nothing). ``trim_messages``'s ``end_on`` has no counterpart: the
newest turn always stays.
"""

from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

import attrs

from memtape.core.commands import ROLES, AddTurn
from memtape.core.errors import BadInput
from memtape.core.events import CompactionTriggered, Event, TurnAdded
from memtape.core.state import Hot, State, Window
from memtape.policies.plumbing.params import Params
from memtape.policies.plumbing.promises import BUDGET, PINNED, RECENT_VERBATIM, WELL_FORMED
from memtape.policies.text.tokenizers import Tokenizer, WordCount, as_tokenizer
from memtape.policies.window.trigger import Trigger, trigger_from
from memtape.policies.window.turns import arriving, check_shared, shared_params
from memtape.policies.window.units import Newest, Unit, newest, newest_with, recent_start, units


@attrs.frozen
class SlidingWindow:
    """Over ``budget``, drop the oldest HOT units (never the newest turn's) until within it.

    ``start_on`` (a role, or None) and ``include_system`` are those of
    ``trim_messages``; their defaults change nothing. A window it inherits
    from another policy (a fork) may hold WARM items and a COLD gist: WARM
    items, being older than every HOT turn, go COLD first; the gist stays as
    it is.
    """

    name: ClassVar[str] = "sliding-window"
    budget: int
    tokenizer: Tokenizer = attrs.field(factory=WordCount, converter=as_tokenizer)
    start_on: str | None = None
    include_system: bool = False
    trigger: Trigger | None = attrs.field(default=None, kw_only=True)
    """When it compacts and how far down (``memtape.policies.window.trigger``; None: over
    the budget, down to it)."""

    def __attrs_post_init__(self) -> None:
        check_shared(self.budget, self.tokenizer)
        if self.start_on is not None and self.start_on not in ROLES:
            raise BadInput(
                f"start_on must be one of {', '.join(ROLES)} (or unset), got {self.start_on!r}"
            )
        if not isinstance(self.include_system, bool):
            raise BadInput(f"include_system must be true or false, got {self.include_system!r}")

    @classmethod
    def from_params(cls, data: Mapping[str, Any], where: str) -> "SlidingWindow":
        """Build the policy from a scenario's ``[compaction]`` table."""
        params = Params(data, where)
        budget, tokenizer = shared_params(params)
        start_on = params.optional("start_on")
        if start_on is not None and start_on not in ROLES:
            raise params.error("start_on", f"must be one of {', '.join(ROLES)}, got {start_on!r}")
        include_system = params.flag("include_system", False)
        trigger = trigger_from(params)
        params.done()
        return cls(budget, tokenizer, start_on, include_system, trigger=trigger)

    @property
    def promises(self) -> frozenset[str]:
        """The budget bound (beyond it only with the newest turn's unit and the turns it keeps
        for themselves), that unit verbatim, well-formed HOT and pinned turns."""
        return frozenset({BUDGET, RECENT_VERBATIM, WELL_FORMED, PINNED})

    @property
    def verbatim(self) -> int:
        """The newest turn always stays HOT verbatim (with the rest of its unit)."""
        return 1

    def floor(self, window: Window) -> int:
        """The least this policy may keep: the newest turn's unit, the units it keeps for
        themselves (pinned, the leading system turn), the memory blocks, and any gist it
        inherited."""
        hot, last = window.hot, newest(window)
        start = recent_start(hot, last, 1)
        tokens = window.gist_tokens + window.block_tokens + sum(t.tokens for t in hot[start:])
        held = [unit for unit in units(hot[:start], last) if self._holds(unit)]
        return tokens + sum(unit.tokens for unit in held)

    def params(self) -> dict[str, Any]:
        """The parameters, as a scenario table would write them (the options when set)."""
        table: dict[str, Any] = {
            "policy": self.name,
            "budget": self.budget,
            "tokenizer": self.tokenizer.name,
        }
        if self.start_on is not None:
            table["start_on"] = self.start_on
        if self.include_system:
            table["include_system"] = True
        if self.trigger is not None:
            table.update(self.trigger.params())
        return table

    def decide(self, state: State, command: AddTurn) -> tuple[Event, ...]:
        """The turn, and the compaction that drops the oldest units if it is over budget (or,
        under ``start_on``, if the kept turns would not start where they must)."""
        window = state.window
        turn = arriving(window, command, self.tokenizer)
        tokens = window.tokens + turn.tokens
        trigger, goal = self.trigger, self.budget
        if trigger is None:
            over = tokens > goal
        else:
            over = trigger.fires(window, turn, goal)
            goal = trigger.goal(goal)
        if not over and not self._starts_wrong(window.hot, newest(window)):
            return (turn,)
        warm = window.warm
        cold = 0
        while tokens > goal and cold < len(warm):
            tokens -= warm[cold].tokens
            cold += 1
        hot: tuple[TurnAdded, ...] = (*window.hot, turn)
        groups = self._older(window, turn, hot)
        dropped: list[int] = []
        for turns, holds in groups:
            if holds:
                continue
            if tokens <= goal and (self.start_on is None or turns[0].role == self.start_on):
                break
            for old in turns:
                tokens -= old.tokens
                dropped.append(old.turn)
        if not cold and not dropped:
            return (turn,)
        compaction = CompactionTriggered(
            self.budget,
            (),
            tuple(dropped),
            cold,
            window.gist,
            window.gist_tokens,
        )
        if trigger is not None and not trigger.frees_enough(state, turn, compaction):
            return (turn,)
        return (turn, compaction)

    def _older(
        self, window: Window, turn: TurnAdded, hot: tuple[TurnAdded, ...]
    ) -> Iterator[tuple[tuple[TurnAdded, ...], bool]]:
        """The units of ``hot`` before the newest turn's, oldest first, each with whether it
        stays for itself; each turn alone, and quickly, while no turn of the run has
        called, answered or been pinned."""
        if not window.structured and not turn.calls and not turn.answers and not turn.pinned:
            leading = self.include_system
            for old in hot[:-1]:
                yield (old,), leading and old.turn == 1 and old.role == "system"
            return
        for unit in units(hot, newest_with(window, turn)):
            if unit.turns[-1] is turn:
                return
            yield unit.turns, self._holds(unit)

    def _holds(self, unit: Unit) -> bool:
        """Whether the unit stays for itself: pinned, or the leading system turn's."""
        if unit.pinned:
            return True
        first = unit.turns[0]
        return self.include_system and first.turn == 1 and first.role == "system"

    def _starts(self, unit: Unit) -> bool:
        """Whether the kept turns may start at ``unit`` (its first turn has ``start_on``'s role)."""
        return unit.turns[0].role == self.start_on

    def _starts_wrong(self, hot: Hot, last: Newest) -> bool:
        """Under ``start_on``, whether HOT's first unit not held for itself begins with another
        role and is not the unit the next turn joins (which stays with it)."""
        if self.start_on is None:
            return False
        for unit in units(hot, last):
            if self._holds(unit):
                continue
            return not self._starts(unit) and not unit.open
        return False
