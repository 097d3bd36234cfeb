"""``StepChecker``: the per-command invariants applied to one command's batch at a
time, as the kit's state machine or ``check_run`` feeds it."""

from collections.abc import Callable, Iterator, Mapping, Sequence

from memtape.checking.invariants.promises import check_compaction, check_forgetting
from memtape.checking.invariants.replay import check_codec
from memtape.checking.invariants.store import check_eviction, check_judged, check_query
from memtape.checking.invariants.violation import Violation
from memtape.checking.invariants.window import (
    _unpinned,
    check_blocks,
    check_recall,
    check_token_total,
)
from memtape.core.errors import CorruptLog
from memtape.core.events import (
    ClockAdvanced,
    CompactionTriggered,
    Event,
    Evicted,
    Expired,
    FactRead,
    FactWritten,
    Judged,
    Queried,
    Recalled,
    Superseded,
    TurnAdded,
)
from memtape.core.seq import bisect_left
from memtape.core.state import SHORT_HOT, State, Window
from memtape.policies.plumbing.promises import (
    EVICTS_WEAKEST,
    JUDGED,
    PINNED,
    RECALL_BUDGET,
    WELL_FORMED,
)
from memtape.policies.plumbing.protocols import ForgettingPolicy
from memtape.policies.session import Policies
from memtape.policies.window.turns import structure_error
from memtape.reducers import evolve

_STORE_EVENTS = (
    FactWritten,
    FactRead,
    Queried,
    Superseded,
    Evicted,
    Expired,
    Judged,
    ClockAdvanced,
)
"""The events after which the store's promises are checked (the clock: a fact may be due)."""


class _Links:
    """The call/answer pairs among the turns so far, for WELL_FORMED step by step.

    A turn's answer pairs with the latest call of the same id not answered
    yet; each HOT turn keeps its partners until it leaves HOT, so the memory
    is that of HOT.
    """

    def __init__(self) -> None:
        self.calling: dict[str, int] = {}
        self.partners: dict[int, list[tuple[int, str]]] = {}

    def arrive(self, turn: TurnAdded) -> None:
        """Pair ``turn``'s answers with their calls, and open its own calls."""
        for answered in turn.answers:
            caller = self.calling.pop(answered, None)
            if caller is not None:
                self.partners.setdefault(caller, []).append((turn.turn, answered))
                self.partners.setdefault(turn.turn, []).append((caller, answered))
        for called in turn.calls:
            self.calling[called] = turn.turn

    def arrived(self, turn: TurnAdded, hot: Mapping[int, object], *, at: int) -> list[Violation]:
        """``turn`` arrived and is HOT: the calls it answers must be HOT."""
        for caller, answered in self.partners.get(turn.turn, ()):
            if caller < turn.turn and caller not in hot:
                message = (
                    f"turn {turn.turn} answers {answered!r}, whose call is not HOT "
                    f"(turn {caller} made it)"
                )
                return [Violation(at, "well-formed", message)]
        return []

    def left(self, turn: int, hot: Mapping[int, object], *, at: int) -> list[Violation]:
        """``turn`` left HOT: its calls' results and its answers' calls must have left too."""
        for partner, id_ in self.partners.pop(turn, ()):
            if partner not in hot:
                continue
            if partner > turn:
                message = (
                    f"turn {partner} answers {id_!r}, whose call is not HOT "
                    f"(turn {turn} made it, and left)"
                )
            else:
                message = (
                    f"turn {partner} calls {id_!r}, whose result has left HOT "
                    f"(turn {turn} carried it)"
                )
            return [Violation(at, "well-formed", message)]
        return []


class HotByNumber(Mapping[int, TurnAdded]):
    """HOT's turns by number, looked up by bisection (HOT is in turn order), not copied."""

    def __init__(self, hot: Sequence[TurnAdded]) -> None:
        self._hot = hot

    def __getitem__(self, number: int) -> TurnAdded:
        hot = self._hot
        at = bisect_left(hot, number, key=_turn_number)
        if at == len(hot) or hot[at].turn != number:
            raise KeyError(number)
        return hot[at]

    def __iter__(self) -> Iterator[int]:
        return (turn.turn for turn in self._hot)

    def __len__(self) -> int:
        return len(self._hot)


def _turn_number(turn: TurnAdded) -> int:
    return turn.turn


class StepChecker:
    """The per-command checks of a run, fed one command's batch at a time.

    After each event: the fold accepts it (``integrity``: the checker stops
    at the first event that does not fold), the codec round trip, the token
    total, for an eviction under EVICTS_WEAKEST, that the weakest fact
    went, under JUDGED that a judged write retired only its candidates, and
    for a query, that it returned the top of the ranking. After a command
    that added a turn: ``check_compaction``, and under WELL_FORMED that a
    recorded turn's structure was one the run allowed (``structure_error``)
    and that the turns that arrived or left HOT did so with their partners;
    under PINNED that a compaction moved no pinned turn. After one that
    touched the store: ``check_forgetting``; after one that edited a memory block,
    BLOCK_LIMIT (every session's, ``check_blocks``). A batch costs what it changed,
    and the size of the window while the window is short: the token total is
    counted from the tiers after each event only while HOT and WARM hold at
    most ``SHORT_HOT`` items (a ``none`` window keeps every turn), and
    ``check_run`` counts it again at its checkpoints, with the checks that
    grow with the whole state.

    ``own_texts`` False says the run's texts are not the ones it was decided
    on (a redacted copy's placeholders): a query is then not ranked again,
    since its ranking may weigh its text (relevance); its results and scores
    are the recorded ones.
    """

    def __init__(self, initial: State, *, own_texts: bool = True) -> None:
        self.state = initial
        self.broken = False
        self._own_texts = own_texts
        self._hot: dict[int, TurnAdded] = {}
        self._links = _Links()
        self.pinned: dict[int, TurnAdded] = {}
        """The pinned turns so far, by number, as they arrived."""

    def check(
        self,
        policies: Policies,
        events: Sequence[Event],
        *,
        start: int,
        after_event: Callable[[int, State], list[Violation]] | None = None,
    ) -> list[Violation]:
        """Fold ``events`` (which follow position ``start``), checking them under ``policies``;
        ``after_event(position, state)`` adds checks after each event."""
        compaction, forgetting = policies.compaction, policies.forgetting
        judged: Judged | None = None
        promised = compaction.promises if compaction is not None else frozenset()
        violations: list[Violation] = []
        touched_window = touched_store = compacted = False
        arrivals: list[TurnAdded] = []
        leaving: list[int] = []
        state = initial = self.state
        for position, event in enumerate(events, start=start + 1):
            try:
                after = evolve(state, event)
            except CorruptLog as error:
                self.broken = True
                message = f"{type(event).__name__}: {error}"
                return [*violations, Violation(position, "integrity", message)]
            violations.extend(_each_event(policies, state, after, event, at=position))
            if isinstance(event, TurnAdded):
                touched_window = True
                arrivals.append(event)
                self._hot[event.turn] = event
                if WELL_FORMED in promised:
                    wrong = structure_error(state.window, event.calls, event.answers)
                    if wrong is not None:
                        violations.append(Violation(position, "well-formed", wrong))
                self._links.arrive(event)
                if event.pinned:
                    self.pinned[event.turn] = event
            elif isinstance(event, CompactionTriggered):
                compacted = True
                # The fold took out of HOT exactly what the event moves (it refuses
                # an event naming a turn HOT does not hold): what left, at its cost.
                leaving.extend(item.turn for item in event.warm)
                leaving.extend(event.dropped)
            elif isinstance(event, _STORE_EVENTS):
                touched_store = True
                judged = event if isinstance(event, Judged) else judged
                violations.extend(self._store_event(forgetting, state, event, judged, position))
            state = after
            window = state.window
            if len(window.hot) + len(window.warm) <= SHORT_HOT:
                violations.extend(check_token_total(window, at=position))
            if after_event is not None:
                violations.extend(after_event(position, state))
        self.state = state
        end = start + len(events)
        window = state.window
        if touched_window and compaction is not None:
            violations.extend(
                check_compaction(
                    compaction,
                    window,
                    self._hot,
                    compacted=compacted,
                    at=end,
                    arrived=len(arrivals),
                )
            )
        violations.extend(
            [
                *self._moves(window, arrivals, leaving, promised, compacted=compacted, at=end),
                # A redacted copy's placeholders are not its blocks' lengths.
                *check_blocks(window, events if self._own_texts else (), at=end),
            ]
        )
        if touched_store and forgetting is not None:
            violations.extend(
                check_forgetting(forgetting, state, at=end, before=len(initial.store.active))
            )
        return violations

    def _store_event(
        self,
        forgetting: ForgettingPolicy | None,
        state: State,
        event: Event,
        judged: Judged | None,
        position: int,
    ) -> list[Violation]:
        """What a store event breaks of EVICTS_WEAKEST, JUDGED and the query's ranking,
        ``state`` being the state before it and ``judged`` the batch's judgement so far."""
        if forgetting is None:
            return []
        promises = forgetting.promises
        if isinstance(event, Judged | Superseded) and JUDGED in promises:
            return check_judged(judged, event, at=position)
        if isinstance(event, Evicted) and EVICTS_WEAKEST in promises:
            return check_eviction(forgetting, state, event, at=position)
        if isinstance(event, Queried) and self._own_texts:
            return check_query(forgetting, state, event, at=position)
        return []

    def _moves(
        self,
        window: Window,
        arrivals: Sequence[TurnAdded],
        leaving: Sequence[int],
        promised: frozenset[str],
        *,
        compacted: bool,
        at: int,
    ) -> list[Violation]:
        """Follow HOT to ``window``, the compactions having moved the turns ``leaving`` out of
        it; what the turns that arrived in it or left it break of WELL_FORMED and PINNED,
        when promised. HOT is read by turn number, never walked."""
        if not compacted:
            if WELL_FORMED not in promised:
                return []
            return [
                found for turn in arrivals for found in self._links.arrived(turn, self._hot, at=at)
            ][:1]
        now = HotByNumber(window.hot)
        left = sorted(number for number in leaving if number in self._hot)
        for number in left:
            del self._hot[number]
        violations: list[Violation] = []
        if WELL_FORMED in promised:
            for turn in arrivals:
                if turn.turn in now:
                    violations.extend(self._links.arrived(turn, now, at=at))
            for number in left:
                violations.extend(self._links.left(number, now, at=at))
        else:
            for number in left:
                self._links.partners.pop(number, None)
        if PINNED in promised:
            violations.extend(_unpinned(window, self.pinned, now, at))
        return violations[:1]


def _each_event(
    policies: Policies, before: State, after: State, event: Event, *, at: int
) -> list[Violation]:
    """The checks of one event alone: its codec round trip, and ``check_recall`` of a
    recall when the session's recall promises RECALL_BUDGET."""
    violations = check_codec(event, at=at)
    recall, compaction = policies.recall, policies.compaction
    if not isinstance(event, Recalled) or recall is None or compaction is None:
        return violations
    if RECALL_BUDGET in recall.promises:
        violations.extend(check_recall(compaction, before, after, event, at=at))
    return violations
