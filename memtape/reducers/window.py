"""Folding window events: a turn arrives, a compaction is applied."""

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, TypeVar

from immutables import Map

from memtape.core.errors import CorruptLog
from memtape.core.events import CompactionTriggered, Recalled, TurnAdded, WarmItem
from memtape.core.plural import counted
from memtape.core.seq import Seq, bisect_left
from memtape.core.state import SHORT_HOT, Warm, Window

T = TypeVar("T")

TOOL = "tool"
"""The role of a tool result (``memtape.core.commands.ROLES``)."""

_SHORT = 16
"""The most kept turns looked up in a tuple rather than a set."""

_WINDOW: Callable[[tuple[Any, ...]], Window] = partial(tuple.__new__, Window)
"""``Window(*fields)``, all sixteen given, in C: a NamedTuple's ``__new__`` is a Python
function, and at a turn a step costs it more than the rest of the step's bookkeeping."""


def turn_added(window: Window, event: TurnAdded) -> Window:
    """Append the turn to HOT and add its tokens to the running total; the ids it calls
    start waiting for their results, and those it answers stop; it joins the newest
    unit while a call waits, else starts its own.

    HOT becomes a ``Seq`` as it grows past ``SHORT_HOT`` turns (see ``Hot``).
    Whether the turn may answer what it answers is the policy's to decide
    (``memtape.policies.window.turns.arriving``): the fold applies what was decided.
    """
    _check_next(window, event)
    hot = window.hot
    # Type checks rather than isinstance, which costs more through Seq's
    # abstract base than the copy of a short HOT does.
    if type(hot) is tuple and len(hot) < SHORT_HOT:
        hot = (*hot, event)
    elif type(hot) is Seq:
        hot = hot.append(event)
    else:
        hot = Seq((*hot, event))
    return _WINDOW(
        (
            hot,
            window.warm,
            window.cold,
            window.gist,
            window.gist_tokens,
            window.dropped,
            window.tokens + event.tokens,
            window.turns + 1,
            _waiting_after(window.waiting, event)
            if event.calls or event.answers
            else window.waiting,
            window.unit_length + 1 if window.waiting else 1,
            window.cleared,
            window.structured or _structured(event),
            _tool_turns_after(window.tool_turns, event),
            window.recalled,
            window.left,
            window.blocks,
        )
    )


def _tool_turns_after(tool_turns: Seq[int], turn: TurnAdded) -> Seq[int]:
    """The tool turns' numbers once ``turn`` has arrived."""
    return tool_turns.append(turn.turn) if turn.role == TOOL else tool_turns


def _structured(turn: TurnAdded) -> bool:
    """Whether ``turn`` calls or answers a tool, or is pinned."""
    return bool(turn.calls or turn.answers or turn.pinned)


def _waiting_after(waiting: Map[str, int], turn: TurnAdded) -> Map[str, int]:
    """The calls waiting for a result once ``turn`` has arrived."""
    changing = waiting.mutate()
    for answered in turn.answers:
        changing.pop(answered, None)
    for called in turn.calls:
        changing[called] = turn.turn
    return changing.finish()


def compaction_triggered(window: Window, event: CompactionTriggered) -> Window:
    """Apply a compaction decision: HOT to WARM or dropped, oldest WARM to COLD.

    The event names what moves (``CompactionTriggered``): each turn leaving HOT
    or cleared in place is found by its number, so the step's Python work is
    what moved, and HOT is copied (at C speed) only when a turn leaves from
    its middle or one is cleared. A version-1 or -2 event, upcast, carries the
    list of turns that stayed (``kept``), and is split and checked by it, at
    the cost of HOT, as it always was.
    """
    return _compact(
        window,
        window.hot,
        window.tokens,
        window.turns,
        event,
        waiting=window.waiting,
        unit_length=window.unit_length,
        structured=window.structured,
        tool_turns=window.tool_turns,
    )


def turn_then_compaction(
    window: Window, turn: TurnAdded, compaction: CompactionTriggered
) -> Window:
    """The window after a turn and the compaction it triggered, in one step.

    Equal to ``compaction_triggered(turn_added(window, turn), compaction)``
    without building the window in between, which nothing reads.
    """
    # Most turns of a long run pass here: the checks and helpers of ``turn_added`` are
    # written out, each helper called only when it has something to do (the property
    # tests hold ``fold`` equal to ``evolve`` event by event, so the two cannot drift).
    if turn.turn != window.turns + 1 or turn.tokens < 0:
        _check_next(window, turn)
    # A long HOT grows by an append that shares its trie, not a copy of every turn.
    hot: Sequence[TurnAdded] = (
        window.hot.append(turn) if type(window.hot) is Seq else (*window.hot, turn)
    )
    calls, answers = turn.calls, turn.answers
    waiting = _waiting_after(window.waiting, turn) if calls or answers else window.waiting
    return _compact(
        window,
        hot,
        window.tokens + turn.tokens,
        window.turns + 1,
        compaction,
        waiting=waiting,
        unit_length=window.unit_length + 1 if window.waiting else 1,
        structured=window.structured or bool(calls or answers or turn.pinned),  # _structured
        tool_turns=(
            window.tool_turns.append(turn.turn) if turn.role == TOOL else window.tool_turns
        ),
    )


def _check_next(window: Window, turn: TurnAdded) -> None:
    if turn.turn != window.turns + 1:
        raise CorruptLog(f"turn {turn.turn} cannot follow turn {window.turns}")
    if turn.tokens < 0:
        raise CorruptLog(f"turn {turn.turn} has {counted(turn.tokens, 'token')}")


def _compact(
    window: Window,
    hot: Sequence[TurnAdded],
    tokens: int,
    turns: int,
    event: CompactionTriggered,
    *,
    waiting: Map[str, int],
    unit_length: int,
    structured: bool,
    tool_turns: Seq[int],
) -> Window:
    goes, drops = event.warm, event.dropped
    oldest = hot[0] if hot else None
    if (
        oldest is not None
        and len(goes) + len(drops) == 1
        and (goes[0].turn if goes else drops[0]) == oldest.turn
        and event.kept is None
    ):
        # The commonest compaction moves one turn, HOT's oldest (``_leave``, without a call).
        kept, tokens, leaving = hot[1:], tokens - oldest.tokens, [oldest]
    elif event.kept is None:
        kept, tokens, leaving = _leave(hot, tokens, event)
    else:
        kept, tokens, leaving = _keep_listed(hot, tokens, event, event.kept)
    # The turns that left HOT join what a recall searches, in a session that recalls; the
    # recall tier stays.
    left = window.left
    if event.recall:
        left = left.extend([(turn.turn, turn.text, turn.tokens) for turn in leaving])
    cleared = window.cleared
    if event.cleared:
        kept, tokens = _clear(kept, tokens, event)
        for item in event.cleared:
            cleared = cleared.append(item.turn)
    for item in event.warm:
        tokens += item.tokens
        if item.tokens < 0:
            raise CorruptLog(f"warm item of turn {item.turn} has {counted(item.tokens, 'token')}")
    if event.gist_tokens < 0:
        raise CorruptLog(f"the gist has {counted(event.gist_tokens, 'token')}")
    warm = _warm_after(window.warm, event.warm) if event.warm else window.warm
    cooling = event.cold
    if not 0 <= cooling <= len(warm):
        raise CorruptLog(f"compaction sends {cooling} warm items cold but WARM holds {len(warm)}")
    cold = window.cold
    if cooling:
        going = warm[:cooling]
        cold = cold.extend([item.turn for item in going])
        for item in going:
            tokens -= item.tokens
        warm = _by_length(warm[cooling:])
    dropped = window.dropped.extend(event.dropped) if event.dropped else window.dropped
    return _WINDOW(
        (
            _by_length(kept),  # HOT, as long as it is (see ``Hot``)
            warm,
            cold,
            event.gist,
            event.gist_tokens,
            dropped,
            tokens + event.gist_tokens - window.gist_tokens,
            turns,
            waiting,
            unit_length,
            cleared,
            structured,
            tool_turns,
            window.recalled,
            left,
            window.blocks,
        )
    )


def recalled(window: Window, event: Recalled) -> Window:
    """Replace the recall tier with the items ``event`` brought back, and the running total
    with it; which turns were found, and why, is the policy's (the fold never searches)."""
    if len(event.found) != len(event.scores):
        raise CorruptLog(
            f"a recall found {counted(len(event.found), 'turn')} but scored {len(event.scores)}"
        )
    tokens = window.tokens
    for item in window.recalled:
        tokens -= item.tokens
    for item in event.brought:
        if item.tokens < 0:
            raise CorruptLog(f"recalled turn {item.turn} has {counted(item.tokens, 'token')}")
        if item.turn not in event.found:
            raise CorruptLog(f"a recall brings back turn {item.turn}, which it did not find")
        tokens += item.tokens
    return window._replace(tokens=tokens, recalled=event.brought)


def _by_length(items: Sequence[T]) -> tuple[T, ...] | Seq[T]:
    """``items`` as a tier holds them: a short tuple or a ``Seq`` by length alone (see
    ``Hot`` and ``Warm``)."""
    if type(items) is Seq:
        return items if len(items) > SHORT_HOT else tuple(items)
    return tuple(items) if len(items) <= SHORT_HOT else Seq(items)


def _warm_after(warm: Warm, arriving: tuple[WarmItem, ...]) -> Warm:
    """WARM with ``arriving`` at its end: a long WARM is a ``Seq``, appended to, so a
    policy that never cools WARM (clear-tool-results) pays for the items that arrive,
    not for the ones already there."""
    if type(warm) is Seq:
        return warm.extend(arriving)
    return _by_length(warm + arriving)


def _leave(
    hot: Sequence[TurnAdded], tokens: int, event: CompactionTriggered
) -> tuple[Sequence[TurnAdded], int, list[TurnAdded]]:
    """HOT without the turns ``event`` moves to WARM or drops, the total without them, and
    the turns that left, in turn order.

    Each is found by its number (HOT is in turn order), so the step costs the
    turns that move, and a copy of HOT only when some do (at C speed).
    """
    warm, dropped = event.warm, event.dropped
    leaving = [item.turn for item in warm]
    leaving.extend(dropped)
    if not leaving:
        return hot, tokens, []
    leaving.sort()
    positions: list[int] = []
    previous = None
    for number in leaving:
        if number == previous:
            raise CorruptLog(f"compaction moves turn {number} twice")
        previous = number
        at = bisect_left(hot, number, key=_number)
        if at == len(hot) or hot[at].turn != number:
            raise CorruptLog(
                f"compaction moves turn {number}, which is not HOT (HOT holds {_span(hot)})"
            )
        positions.append(at)
        tokens -= hot[at].tokens
    left = [hot[at] for at in positions]
    if positions[-1] == len(positions) - 1:
        return hot[len(positions) :], tokens, left
    first = positions[0]
    gone = set(positions)
    rest = [turn for at, turn in enumerate(hot[first:], first) if at not in gone]
    return _spliced(hot, first, rest), tokens, left


def _spliced(hot: Sequence[TurnAdded], first: int, rest: list[TurnAdded]) -> Sequence[TurnAdded]:
    """HOT's turns before position ``first``, then ``rest``. A long HOT (a ``Seq``) keeps
    its leaves before ``first``, so a change near its end costs the turns after it: a
    policy that never shortens HOT (clear-tool-results) clears what arrived lately."""
    if type(hot) is Seq:
        return hot.prefix(first).extend(rest)
    return [*hot[:first], *rest]


def _keep_listed(
    hot: Sequence[TurnAdded], tokens: int, event: CompactionTriggered, listed: tuple[int, ...]
) -> tuple[list[TurnAdded], int, list[TurnAdded]]:
    """HOT split as a version-1 or -2 compaction listed it: the turns ``listed`` stay,
    and ``listed``, ``warm`` and ``dropped`` must name each HOT turn once; with the total
    and the turns that left."""
    # For the few turns a tiered policy keeps, a tuple is the quicker lookup; a long
    # list (a sliding window keeps all it can) needs a set, or a step costs HOT squared.
    staying = listed if len(listed) <= _SHORT else frozenset(listed)
    kept: list[TurnAdded] = []
    left: list[TurnAdded] = []
    for turn in hot:
        if turn.turn in staying:
            kept.append(turn)
        else:
            left.append(turn)
            tokens -= turn.tokens
    named = [*listed, *event.dropped, *(item.turn for item in event.warm)]
    # A split that names a turn twice, or misses one, would lose or duplicate
    # turns and leave the running token total wrong for the rest of the run.
    named.sort()
    if named != [turn.turn for turn in hot]:
        raise CorruptLog(
            f"compaction names turns {named} but HOT holds {[turn.turn for turn in hot]}"
        )
    return kept, tokens, left


def _span(hot: Sequence[TurnAdded]) -> str:
    """HOT's turns in a few words: how many, from which to which."""
    if not hot:
        return "no turn"
    return f"{counted(len(hot), 'turn')}, {hot[0].turn} to {hot[len(hot) - 1].turn}"


def _number(turn: TurnAdded) -> int:
    return turn.turn


def _clear(
    kept: Sequence[TurnAdded], tokens: int, event: CompactionTriggered
) -> tuple[Sequence[TurnAdded], int]:
    """HOT with each turn of ``event.cleared`` reading its stand-in text, and the total;
    each turn found by its number, and HOT rebuilt from the first of them on, so the step
    costs the turns from there (see ``_spliced``)."""
    turns = {item.turn for item in event.cleared}
    if len(turns) != len(event.cleared):
        raise CorruptLog(f"compaction clears turns {[i.turn for i in event.cleared]}")
    found: list[tuple[int, WarmItem]] = []
    for item in event.cleared:
        at = bisect_left(kept, item.turn, key=_number)
        if at == len(kept) or kept[at].turn != item.turn:
            raise CorruptLog(f"compaction clears turn {item.turn}, which does not stay HOT")
        if item.tokens < 0:
            raise CorruptLog(f"cleared turn {item.turn} has {counted(item.tokens, 'token')}")
        found.append((at, item))
    first = min(at for at, _ in found)
    rest = list(kept[first:])
    for at, item in found:
        turn = rest[at - first]
        rest[at - first] = TurnAdded(
            turn.turn,
            turn.role,
            item.text,
            item.tokens,
            turn.salient,
            turn.calls,
            turn.answers,
            turn.pinned,
        )
        tokens += item.tokens - turn.tokens
    return _spliced(kept, first, rest), tokens
