"""The window's invariants: the running total, the tiers, the gist, the budget, HOT's
newest turns verbatim and well formed, pinned turns in place, memory blocks within their
limits, a recall within its own."""

from collections.abc import Mapping, Sequence

from memtape.checking.invariants.violation import Violation
from memtape.core.events import (
    BlockEdited,
    Event,
    Recalled,
    TurnAdded,
)
from memtape.core.plural import counted
from memtape.core.state import State, Window
from memtape.policies.plumbing.promises import BLOCK_LIMIT, RECALL_BUDGET
from memtape.policies.plumbing.protocols import CompactionPolicy
from memtape.policies.window.recall import limit as recall_limit
from memtape.policies.window.tiered import TieredCompaction, gist_for
from memtape.policies.window.trigger import Trigger
from memtape.policies.window.units import newest, recent_start, units


def check_token_total(window: Window, *, at: int) -> list[Violation]:
    """The running token total equals the HOT, WARM, gist, block and recall-tier tokens
    counted from scratch."""
    hot = sum(t.tokens for t in window.hot)
    warm = sum(w.tokens for w in window.warm)
    blocks = window.block_tokens
    recalled = sum(r.tokens for r in window.recalled)
    made = hot + warm + window.gist_tokens + blocks + recalled
    if made == window.tokens:
        return []
    named = f" + blocks {blocks}" if blocks else ""
    named += f" + recalled {recalled}" if recalled else ""
    message = (
        f"the running total is {counted(window.tokens, 'token')}, but HOT {hot} + WARM {warm} "
        f"+ gist {window.gist_tokens}{named} make {made}"
    )
    return [Violation(at, "token-total", message)]


def check_recall(
    compaction: CompactionPolicy, before: State, after: State, event: Recalled, *, at: int
) -> list[Violation]:
    """RECALL_BUDGET: a recall that brought turns back left the window within its limit
    (``memtape.policies.window.recall.limit``), and brought back only turns that had left
    HOT, verbatim (at the tokens they arrived with)."""
    violations: list[Violation] = []
    left = {number: (text, tokens) for number, text, tokens in before.window.left}
    for item in event.brought:
        arrived = left.get(item.turn)
        if arrived is None:
            message = f"a recall brought back turn {item.turn}, which had not left HOT"
            violations.append(Violation(at, RECALL_BUDGET, message))
        elif arrived != (item.text, item.tokens):
            message = f"a recall brought back turn {item.turn}, but not as it arrived"
            violations.append(Violation(at, RECALL_BUDGET, message))
    bound = recall_limit(compaction)
    if event.brought and after.window.tokens > bound:
        message = (
            f"a recall took the window to {counted(after.window.tokens, 'token')}, "
            f"over its limit of {bound}"
        )
        violations.append(Violation(at, RECALL_BUDGET, message))
    return violations


def check_tiers(window: Window, *, at: int) -> list[Violation]:
    """Every turn so far sits in exactly one of HOT, WARM, COLD and dropped, and no other does.

    Its cost grows with the number of turns: ``check_run`` applies it at a few
    checkpoints, not after every event.
    """
    holders: dict[int, list[str]] = {}
    tiers: tuple[tuple[str, Sequence[int]], ...] = (
        ("HOT", [t.turn for t in window.hot]),
        ("WARM", [w.turn for w in window.warm]),
        ("COLD", window.cold),
        ("dropped", window.dropped),
    )
    for name, turns in tiers:
        for turn in turns:
            holders.setdefault(turn, []).append(name)
    violations: list[Violation] = []
    for turn in range(1, window.turns + 1):
        held = holders.pop(turn, [])
        if len(held) != 1:
            where = " and ".join(held) if held else "no tier"
            violations.append(Violation(at, "tiers", f"turn {turn} is in {where}"))
    for turn, held in sorted(holders.items()):
        message = (
            f"turn {turn} is in {' and '.join(held)}, but {counted(window.turns, 'turn')} arrived"
        )
        violations.append(Violation(at, "tiers", message))
    return violations


def check_blocks(window: Window, events: Sequence[Event], *, at: int) -> list[Violation]:
    """BLOCK_LIMIT after ``events``: no memory block holds more characters than its limit,
    and no read-only one was edited after its creation (looked at only when one of them
    edited a block)."""
    if not any(type(event) is BlockEdited for event in events):
        return []
    for block in window.blocks:
        if block.read_only and block.version > 1:
            message = (
                f"block {block.label!r} is read-only, but an edit made its version {block.version}"
            )
            return [Violation(at, BLOCK_LIMIT, message)]
        if len(block.value) > block.limit:
            message = (
                f"block {block.label!r} holds {len(block.value)} characters at version "
                f"{block.version}, over its limit of {block.limit}"
            )
            return [Violation(at, BLOCK_LIMIT, message)]
    return []


def check_gist(window: Window, compaction: TieredCompaction, *, at: int) -> list[Violation]:
    """The COLD gist costs its tokens, and says how many turns are cold (nothing while none is).

    Under ``gist = "llm"`` a model wrote it: any text within ``gist_tokens``
    will do (``memtape check`` re-decides it against the recorded answer),
    but still none while nothing is cold.
    """
    writer = compaction.gist
    if writer is None:
        expected = gist_for(len(window.cold))
        if expected != window.gist:
            cold = len(window.cold)
            are = "is" if cold == 1 else "are"
            message = f"{counted(cold, 'turn')} {are} cold, but the gist reads {window.gist!r}"
            return [Violation(at, "gist", message)]
    elif window.gist and not window.cold:
        return [Violation(at, "gist", f"no turn is cold, but the gist reads {window.gist!r}")]
    tokens = compaction.tokenizer.count(window.gist)
    if tokens != window.gist_tokens:
        message = (
            f"the gist {window.gist!r} costs {counted(tokens, 'token')}, not {window.gist_tokens}"
        )
        return [Violation(at, "gist", message)]
    if writer is not None and tokens > writer.tokens:
        costs = counted(tokens, "token")
        message = f"the gist {window.gist!r} costs {costs}, over gist_tokens {writer.tokens}"
        return [Violation(at, "gist", message)]
    return []


def check_budget(window: Window, budget: int, *, floor: int, at: int) -> list[Violation]:
    """Between commands the window holds at most ``max(budget, floor)`` tokens.

    ``floor`` is the least the policy's own rules let it keep in this window
    (``policy.floor(window)``): a window is over budget only when the policy
    could not have done better.
    """
    if window.tokens <= max(budget, floor):
        return []
    message = (
        f"the window holds {counted(window.tokens, 'token')}, over the budget of {budget}, "
        f"though the policy could keep as few as {floor}"
    )
    return [Violation(at, "budget", message)]


def budget_bound(compaction: object, *, compacted: bool) -> int | None:
    """The budget ``BUDGET`` holds a window to after a turn, under the policy's trigger and
    target (``memtape.policies.window.trigger``), or None when nothing bounds it.

    After a compaction, its target; otherwise the lowest token count its
    trigger fires over, or None when only turns trigger it (``messages``,
    ``every``) or when ``clear_at_least`` may have held a compaction back (one
    freeing less is not made, so the window may stay over the trigger until a
    later one frees enough). A policy without a trigger: its budget.
    """
    budget: int = getattr(compaction, "budget", 0)
    trigger = getattr(compaction, "trigger", None)
    if not isinstance(trigger, Trigger):
        return budget
    if compacted:
        return trigger.goal(budget)
    return None if trigger.clear_at_least else trigger.bound(budget)


def check_verbatim(
    window: Window,
    verbatim: int,
    turns: Mapping[int, TurnAdded],
    *,
    at: int,
    fresh: int | None = None,
) -> list[Violation]:
    """HOT ends with the last ``verbatim`` turns (all of them while fewer arrived) and the
    rest of their units (``memtape.policies.window.units``), exactly as they arrived; what HOT
    holds before those is the policy's business.

    ``turns`` maps (at least) those turns to the ``TurnAdded`` events that
    brought them. ``fresh``, when given, says that HOT only gained its newest
    ``fresh`` turns since this held: only they are compared with how they
    arrived (the unit they extend is still checked whole for its turns).
    """
    least = min(verbatim, window.turns)
    if not least:
        return []
    hot = window.hot
    expected = list(range(window.turns - least + 1, window.turns + 1))
    tail = hot[-least:]
    if [t.turn for t in tail] != expected:
        numbers = [t.turn for t in hot]
        message = f"HOT holds turns {numbers}, which do not end with the last {least} {expected}"
        return [Violation(at, "recent-verbatim", message)]
    start = recent_start(hot, newest(window), least)
    first = hot[start].turn
    if window.turns - first + 1 != len(hot) - start:
        numbers = [t.turn for t in hot[start:]]
        message = (
            f"HOT holds turns {numbers} of the unit(s) of the last {least}, "
            f"not every turn from {first} to {window.turns}"
        )
        return [Violation(at, "recent-verbatim", message)]
    compared = hot[start:] if fresh is None else hot[max(start, len(hot) - fresh) :]
    for turn in compared:
        if turns.get(turn.turn) != turn:
            message = f"turn {turn.turn} in HOT is not verbatim the turn that arrived"
            return [Violation(at, "recent-verbatim", message)]
    return []


def check_hot(
    window: Window,
    hot_n: int,
    turns: Mapping[int, TurnAdded],
    *,
    compacted: bool,
    at: int,
) -> list[Violation]:
    """HOT holds the newest turns verbatim: at least the last ``hot_n`` with the rest of their
    units, only those if compacted; besides them, only pinned turns with their units.

    ``turns`` maps (at least) the turns in HOT to the ``TurnAdded`` events
    that brought them.
    """
    hot = window.hot
    numbers = [t.turn for t in hot]
    least = min(hot_n, window.turns)
    last = newest(window)
    recent = recent_start(hot, last, least)
    held = [t.turn for unit in units(hot[:recent], last) if unit.pinned for t in unit.turns]
    violations: list[Violation] = []
    if compacted:
        first = hot[recent].turn if recent < len(hot) else window.turns + 1
        expected = [*held, *range(first, window.turns + 1)]
        if numbers != expected:
            tail = expected[len(held) :]
            kept = f"the last {least}"
            if len(tail) != least:
                kept += f" with the rest of their units, {tail}"
            message = f"after a compaction HOT holds turns {numbers}, not {kept}"
            if held:
                message += f" and the pinned {held}"
            violations.append(Violation(at, "hot", message))
    else:
        # The newest turns in order, and before them only pinned units.
        start = len(numbers)
        while start and numbers[start - 1] == window.turns - (len(numbers) - start):
            start -= 1
        in_order = len(numbers) - start
        holding = set(held)
        if any(n not in holding for n in numbers[:start]) or in_order < least:
            pinned_before = sum(n in holding for n in numbers[:start])
            message = (
                f"HOT holds turns {numbers}, not the newest "
                f"{max(least, len(numbers) - pinned_before)} of {window.turns} in order"
            )
            if held:
                message += f" beside the pinned {held}"
            violations.append(Violation(at, "hot", message))
    for turn in hot:
        if turns.get(turn.turn) != turn:
            message = f"turn {turn.turn} in HOT is not verbatim the turn that arrived"
            violations.append(Violation(at, "hot", message))
    return violations


def check_well_formed(window: Window, *, at: int) -> list[Violation]:
    """HOT is a request the major APIs accept: every id a HOT turn answers was called by an
    earlier HOT turn, and every HOT call that has been answered has its answer HOT.

    Whether a call has been answered is the window's to say (``waiting`` holds
    the calls still waiting); the first violation in HOT's order is reported.
    Its cost is the size of HOT: ``StepChecker`` checks the turns that moved at
    each step instead, and ``check_run`` this at its checkpoints.
    """
    calling: dict[str, int] = {}
    for turn in window.hot:
        for answered in turn.answers:
            if calling.pop(answered, None) is None:
                message = f"turn {turn.turn} answers {answered!r}, whose call is not HOT"
                return [Violation(at, "well-formed", message)]
        for called in turn.calls:
            calling[called] = turn.turn
    for called, caller in calling.items():
        if window.waiting.get(called) != caller:
            message = f"turn {caller} calls {called!r}, whose result has left HOT"
            return [Violation(at, "well-formed", message)]
    return []


def check_pinned(window: Window, pinned: Mapping[int, TurnAdded], *, at: int) -> list[Violation]:
    """Every pinned turn so far (``pinned``: their numbers to the ``TurnAdded`` events that
    brought them) is HOT, exactly as it arrived: never dropped, folded or cleared."""
    if not pinned:
        return []
    held = {turn.turn: turn for turn in window.hot}
    return _unpinned(window, pinned, held, at)


def _unpinned(
    window: Window,
    pinned: Mapping[int, TurnAdded],
    held: Mapping[int, TurnAdded],
    at: int,
) -> list[Violation]:
    for number, arrived in sorted(pinned.items()):
        now = held.get(number)
        if now == arrived:
            continue
        if now is None:
            tier = window.tier_of(number) or "gone"
            message = f"pinned turn {number} is {tier.upper()} now, no longer HOT"
        else:
            message = f"pinned turn {number} is HOT but reads {now.text!r}, not as it arrived"
        return [Violation(at, "pinned", message)]
    return []
