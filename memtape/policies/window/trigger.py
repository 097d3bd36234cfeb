"""Trigger and target: when a compaction policy compacts, and how far down it goes.

Every compacting policy (tiered, sliding-window, rolling-summary,
clear-tool-results and the replicas) reads the same parameters beside its
``budget``:

- ``trigger``: a token count (``trigger = 50000``), a percentage of
  ``context_window`` (``trigger = "85%"``), or a table ``{messages = N}``
  (HOT holds at least N turns once the new one is in); a list of them means
  any. A token trigger fires when the window with the new turn holds
  *more* tokens than it, as the budget always has. Default: the budget.
- ``every = N``: compact at every N-th turn as well (an interval, as Google
  ADK's ``compaction_interval``), whatever the window holds.
- ``target``: what a compaction brings the window down to. Default: the
  budget, or the lowest token trigger when that is lower (a compaction that
  fires at 50% of the window and stops at a budget above it would do nothing).
- ``clear_at_least``: compact nothing unless the compaction would take at
  least this many tokens out of the window (so a cached prefix is not broken
  for little), as Anthropic's context editing does. A compaction whose
  writing asked a model is made whatever it frees: the answers are recorded
  in it, and nowhere else.
- ``context_window``: the model's window, which a percentage is of.

Left out, they change nothing: the budget triggers and the budget is the
target, and the table a run's header records is the one it always was.
"""

import re
from collections.abc import Mapping
from typing import Any

import attrs

from memtape.core.errors import BadInput
from memtape.core.events import CompactionTriggered, TurnAdded
from memtape.core.reprs import fields_repr
from memtape.core.state import State, Window
from memtape.policies.plumbing.params import MAX_INT, Params

PARAMS = ("trigger", "every", "target", "clear_at_least", "context_window")
"""The parameters ``Trigger`` reads from a ``[compaction]`` table."""


@attrs.frozen
class Trigger:
    """When a compaction fires (``tokens``, ``percents`` of ``context_window``,
    ``messages``, ``every``: any of them) and how far it goes (``target``), with the least a
    compaction must free (``clear_at_least``). No trigger given: the budget triggers."""

    __repr__ = fields_repr

    tokens: tuple[int, ...] = ()
    percents: tuple[str, ...] = ()
    messages: int | None = None
    every: int | None = None
    target: int | None = None
    clear_at_least: int = 0
    context_window: int | None = None
    _bounds: tuple[int, ...] = attrs.field(init=False, eq=False, repr=False)
    """The token bounds given, percentages worked out (read at every turn)."""

    def __attrs_post_init__(self) -> None:
        if self.percents and self.context_window is None:
            raise BadInput(
                f"trigger {self.percents[0]!r} is a percentage of context_window, "
                "which is not given (add context_window = N, the model's window in tokens)"
            )
        for name in ("messages", "every", "target", "context_window"):
            value = getattr(self, name)
            if value is not None and (not _whole(value) or value < 1):
                raise BadInput(f"{name} must be an integer >= 1, got {value!r}")
        if not _whole(self.clear_at_least) or self.clear_at_least < 0:
            raise BadInput(f"clear_at_least must be an integer >= 0, got {self.clear_at_least!r}")
        for bound in self.tokens:
            if not _whole(bound) or bound < 1:
                raise BadInput(f"a token trigger must be an integer >= 1, got {bound!r}")
        for written in self.percents:
            if _bound_of(written, self.context_window or 0) < 1:
                raise BadInput(
                    f"trigger {written!r} of context_window {self.context_window} "
                    "is under one token"
                )
        window = self.context_window or 0
        worked = (*self.tokens, *(_bound_of(written, window) for written in self.percents))
        object.__setattr__(self, "_bounds", worked)

    @property
    def given(self) -> bool:
        """Whether a trigger was given (else the budget triggers)."""
        return bool(self.tokens or self.percents or self.messages is not None)

    def bounds(self, budget: int) -> tuple[int, ...]:
        """The token counts over which the trigger fires (the budget, when none is given)."""
        return self._bounds if self.given else (budget,)

    def bound(self, budget: int) -> int | None:
        """The lowest token count the trigger fires over, or None when only turns trigger it
        (``messages``, ``every``) and the window has no token bound between compactions."""
        bounds = self.bounds(budget)
        return min(bounds) if bounds else None

    def goal(self, budget: int) -> int:
        """What a compaction brings the window down to: ``target``, else the budget or the
        lowest token trigger, whichever is lower."""
        if self.target is not None:
            return self.target
        lowest = self.bound(budget)
        return budget if lowest is None else min(budget, lowest)

    def fires(self, window: Window, turn: TurnAdded, budget: int) -> bool:
        """Whether ``turn``, joining ``window``, triggers a compaction."""
        total = window.tokens + turn.tokens
        if any(total > bound for bound in self.bounds(budget)):
            return True
        if self.messages is not None and len(window.hot) + 1 >= self.messages:
            return True
        return self.every is not None and turn.turn % self.every == 0

    def frees_enough(self, state: State, turn: TurnAdded, compaction: CompactionTriggered) -> bool:
        """Whether ``compaction`` takes at least ``clear_at_least`` tokens out of the window
        ``state`` holds once ``turn`` is in (always, when ``clear_at_least`` is 0, and when
        deciding it asked a model)."""
        if not self.clear_at_least or compaction.asked:
            # A model's answers are recorded only in the compaction that uses them: one
            # asked and then set aside could not be re-decided from its run.
            return True
        # Imported here: only a policy that sets clear_at_least folds its own decision.
        from memtape.reducers import evolve  # noqa: PLC0415

        joined = evolve(state, turn)
        after = evolve(joined, compaction)
        return joined.window.tokens - after.window.tokens >= self.clear_at_least

    def params(self) -> dict[str, Any]:
        """The table entries that say what was set (none of them when nothing was)."""
        table: dict[str, Any] = {}
        written: list[Any] = [*self.tokens, *self.percents]
        if self.messages is not None:
            written.append({"messages": self.messages})
        if written:
            table["trigger"] = written[0] if len(written) == 1 else written
        for name in PARAMS[1:]:
            value = getattr(self, name)
            if value is not None and (name != "clear_at_least" or value):
                table[name] = value
        return table


def trigger_from(params: Params, default: Any = None) -> Trigger | None:
    """The trigger and target a ``[compaction]`` table gives, or None when it sets none of
    them (the policy decides as it did before triggers); ``default`` is the trigger a
    policy has when the table gives none (None: the budget)."""
    spec = params.optional("trigger")
    if spec is None:
        spec = default
    every = _count(params, "every", 1)
    target = _count(params, "target", 1)
    clear_at_least = params.integer("clear_at_least", 0, minimum=0)
    context_window = _count(params, "context_window", 1)
    tokens: list[int] = []
    percents: list[str] = []
    messages: int | None = None
    for item in spec if isinstance(spec, list) else ([] if spec is None else [spec]):
        if _whole(item) and 1 <= item <= MAX_INT:
            tokens.append(item)
        elif isinstance(item, str) and _percent(item) is not None:
            percents.append(item)
        elif isinstance(item, Mapping) and list(item) == ["messages"]:
            count = item["messages"]
            if not _whole(count) or not 1 <= count <= MAX_INT:
                raise params.error("trigger", f"messages must be an integer >= 1, got {count!r}")
            messages = count if messages is None else min(messages, count)
        else:
            raise params.error(
                "trigger",
                'must be a token count, a percentage of context_window ("85%"), '
                f"{{messages = N}}, or a list of them, got {item!r}",
            )
    if isinstance(spec, list) and not spec:
        raise params.error("trigger", "must name at least one trigger, got []")
    unset = (every, target, context_window) == (None, None, None)
    if spec is None and unset and not clear_at_least:
        return None
    try:
        return Trigger(
            tuple(tokens),
            tuple(percents),
            messages,
            every,
            target,
            clear_at_least,
            context_window,
        )
    except BadInput as error:
        raise BadInput(f"{params.where}: {error}") from None


def _count(params: Params, name: str, minimum: int) -> int | None:
    """An optional integer parameter of at least ``minimum``."""
    value = params.optional(name)
    if value is None:
        return None
    if not _whole(value) or not minimum <= value <= MAX_INT:
        raise params.error(name, f"must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


_PERCENT = re.compile(r"[0-9]+(?:\.[0-9]+)?%")
"""A percentage as a trigger writes it: ``85%``, ``92.5%``."""


def _percent(written: str) -> float | None:
    """The percentage ``"85%"`` says (in (0, 100]), or None when it says none."""
    # ASCII digits and a point only: float() alone reads "٨٥", "8_5", " 85" and "1e1".
    if _PERCENT.fullmatch(written) is None:
        return None
    value = float(written[:-1])
    return value if 0 < value <= 100 else None


def _bound_of(written: str, window: int) -> int:
    """The token count a percentage of ``window`` comes to (rounded down)."""
    value = _percent(written)
    return int(window * (value or 0) / 100)


def calls_for_compaction(
    trigger: Trigger | None, window: Window, turn: TurnAdded, budget: int
) -> bool:
    """Whether ``turn``, joining ``window``, calls for a compaction: when it takes the window
    over ``budget`` with no trigger set, else when ``trigger`` fires."""
    if trigger is None:
        return window.tokens + turn.tokens > budget
    return trigger.fires(window, turn, budget)
