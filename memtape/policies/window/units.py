"""Units: the turns a request keeps, folds or loses together.

A request the major APIs accept holds the call of every tool result it
holds, and the results of every call it holds that has been answered.
memtape keeps a call, its results and the turns between them together, as
one *unit*: a unit starts at a turn that arrives while no call is waiting
for its result, and ends at the first turn after which none is. So a call
not answered yet holds its unit open to the newest turn (what follows it
stays with it until the result is in), and a turn that calls and answers
nothing while nothing waits is a unit of one: in a conversation without
tool calls every unit is a single turn, and every policy does what it did
before units. The window knows where the newest turn's unit starts
(``Window.unit_length``) and whether it is open (``Window.waiting``); older
units are read from HOT, walking it only as far as needed.

The compaction policies keep or remove whole units only, which keeps HOT
well formed (``memtape.policies.plumbing.promises.WELL_FORMED``); a unit holding a
pinned turn stays whole (``PINNED``); and the last turns a policy keeps
verbatim keep their whole units (``RECENT_VERBATIM``).

In a window another policy left (a fork), a result whose call is no longer
HOT links to nothing, and neither does a call whose result is no longer HOT;
a call that policy let go while it waited still holds the newest unit open.
"""

from collections.abc import Iterator, Sequence
from typing import NamedTuple

from memtape.core.events import TurnAdded
from memtape.core.seq import bisect_left
from memtape.core.state import Window


class Unit(NamedTuple):
    """Consecutive HOT turns kept or lost together: ``open`` while a call in it waits,
    ``pinned`` when it holds a pinned turn (and so never leaves HOT), ``salient`` when it
    holds a salient one (a tiered policy folds it to WARM, not away)."""

    turns: tuple[TurnAdded, ...]
    open: bool
    pinned: bool
    salient: bool

    @property
    def tokens(self) -> int:
        """What the unit costs in the window."""
        return sum(turn.tokens for turn in self.turns)


def _unit(turns: tuple[TurnAdded, ...], opened: bool) -> Unit:
    pinned = salient = False
    for turn in turns:
        pinned = pinned or turn.pinned
        salient = salient or turn.salient
    return Unit(turns, opened, pinned, salient)


class Newest(NamedTuple):
    """Where the newest turn's unit starts (a turn number), and whether a call in it waits."""

    start: int
    open: bool


def newest(window: Window) -> Newest:
    """The newest unit of ``window``."""
    return Newest(window.turns - window.unit_length + 1, bool(window.waiting))


def newest_with(window: Window, turn: TurnAdded) -> Newest:
    """The newest unit once ``turn`` (validated by ``arriving``) has joined ``window``."""
    waiting = window.waiting
    start = window.turns - window.unit_length + 1 if waiting else turn.turn
    # Every id a turn answers is waiting (``structure_error``), so calls still wait
    # after it when it makes some, or answers fewer than wait.
    return Newest(start, bool(turn.calls) or len(waiting) > len(turn.answers))


def units(hot: Sequence[TurnAdded], last: Newest) -> Iterator[Unit]:
    """The units of ``hot``, oldest first; ``last`` is the newest unit (it may start before
    HOT, or past its end when ``hot`` is only a part before it)."""
    count = len(hot)
    boundary = _boundary(hot, last.start)
    index = 0
    ignored: set[tuple[int, str]] = set()
    while index < count:
        if index >= boundary:
            yield _unit(tuple(hot[index:]), last.open)
            return
        turn = hot[index]
        if not turn.calls:
            # Nothing waits at a unit's start, so a turn that calls nothing is one alone.
            index += 1
            yield Unit((turn,), False, turn.pinned, turn.salient)
            continue
        first = index
        pending: dict[str, int] = {}
        while True:
            turn = hot[index]
            index += 1
            if pending and turn.answers:
                for answered in turn.answers:
                    pending.pop(answered, None)
            for called in turn.calls:
                if (turn.turn, called) not in ignored:
                    pending[called] = turn.turn
            if not pending or index >= boundary:
                break
        if pending:
            # Answered calls whose results are not HOT (a window another policy left):
            # they link to nothing, so walk the unit again without them.
            ignored.update((caller, called) for called, caller in pending.items())
            index = first
            continue
        yield _unit(tuple(hot[first:index]), False)


def recent_start(hot: Sequence[TurnAdded], last: Newest, count: int) -> int:
    """The index of HOT from which every turn must stay for the last ``count`` HOT turns to
    keep their whole units, and for an open newest unit to stay whole.

    ``len(hot)`` when nothing need stay (``count`` 0 and no call waiting).
    """
    size = len(hot)
    if not count and not last.open:
        return size
    boundary = _boundary(hot, last.start)
    wanted = min(max(size - count, 0), boundary)
    # The newest unit stands whole; a turn before it in the last ``count`` may answer a
    # call older still, which draws the start back (most often none does).
    for index in range(wanted, min(boundary, size)):
        if hot[index].answers:
            break
    else:
        return wanted
    ignored: set[tuple[int, str]] = set()
    while True:
        start = wanted
        need: dict[str, int] = {}
        index = min(boundary, size) - 1
        while index >= 0:
            turn = hot[index]
            if index < start:
                if not need:
                    break
                start = index
            if need and turn.calls:
                for called in turn.calls:
                    need.pop(called, None)
            for answered in turn.answers:
                if (turn.turn, answered) not in ignored:
                    need[answered] = turn.turn
            index -= 1
        if not need:
            return start
        # Results whose calls are not HOT (a window another policy left) link to nothing.
        ignored.update((answerer, answered) for answered, answerer in need.items())


Group = tuple[tuple[TurnAdded, ...], bool, bool]
"""A unit as ``(turns, pinned, salient)``."""


def older_units(
    window: Window, turn: TurnAdded, hot: tuple[TurnAdded, ...], count: int
) -> tuple[int, list[Group]]:
    """For a policy keeping the last ``count`` turns of ``hot`` (``window``'s HOT with the
    arriving ``turn``): where the turns that must stay begin (``recent_start``), and the
    units before that, as groups. While no turn of the run has called, answered or been
    pinned, each turn is its own unit, read without walking for links."""
    if not window.structured and not turn.calls and not turn.answers and not turn.pinned:
        recent = max(len(hot) - count, 0) if count else len(hot)
        return recent, [((old,), False, old.salient) for old in hot[:recent]]
    last = newest_with(window, turn)
    recent = recent_start(hot, last, count)
    return recent, [(unit.turns, unit.pinned, unit.salient) for unit in units(hot[:recent], last)]


def kept_tokens(window: Window, count: int) -> int:
    """What a policy keeping the last ``count`` turns verbatim may not let go: those turns
    and the pinned ones, each with the rest of its unit, and the memory blocks (pinned in
    the window as well)."""
    hot, last = window.hot, newest(window)
    recent = recent_start(hot, last, count)
    tokens = window.block_tokens + sum(turn.tokens for turn in hot[recent:])
    before = hot[:recent]
    if any(turn.pinned for turn in before):
        tokens += sum(unit.tokens for unit in units(before, last) if unit.pinned)
    return tokens


def _boundary(hot: Sequence[TurnAdded], start: int) -> int:
    """The index of the first HOT turn of the newest unit, which starts at turn ``start``."""
    count = len(hot)
    # HOT ends with the newest unit whole under every shipped policy: look there first.
    at = count - 1 - (hot[count - 1].turn - start) if count else 0
    if 0 <= at < count and hot[at].turn == start:
        return at
    return bisect_left(hot, start, key=_number)


def _number(turn: TurnAdded) -> int:
    return turn.turn
