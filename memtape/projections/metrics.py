"""Metrics of a run, each traced back to the events behind it.

Compaction: the tokens each turn sends (the window after that turn and any
compaction it triggered, what the model would see), their peak and total,
whether the peak went over the budget and why, the compactions, and probe
retention: whether each planted string is still visible in the window (HOT
text, WARM items, the gist or a memory block) at every turn from the one it
was planted at,
with the event that lost each lost one.

Forgetting: stale reads (a returned fact that is not the newest write for
its key), evictions, and for queries that name the key they expect, hit@k
(the share whose key is among the results) and regret (how many wanted a
key whose newest fact had been evicted).

A metric that does not apply to a run is None.
"""

from collections.abc import Iterator, Sequence
from typing import Any, Protocol

import attrs

from memtape.core.commands import AddTurn, Command
from memtape.core.events import (
    BlockEdited,
    CompactionTriggered,
    Event,
    Evicted,
    FactRead,
    FactWritten,
    Queried,
    Recalled,
    TurnAdded,
)
from memtape.core.run import Run
from memtape.core.state import INITIAL_STATE, State, Window
from memtape.policies.plumbing.promises import BUDGET
from memtape.policies.plumbing.protocols import CompactionPolicy, is_budgeted
from memtape.projections.probe_parts import ProbeParts
from memtape.reducers import evolve, fold

OVER_BUDGET_CAUSES = ("floor", "unbounded", "unexplained")
"""Why a peak went over the budget (``CompactionMetrics.over_budget``): the policy's
floor, a policy that promises no budget, or neither."""


class Planted(Protocol):
    """A probe: ``text`` must stay visible in the window from turn ``start`` on."""

    @property
    def text(self) -> str | None:
        """The string to look for; None for a question probe that names no string (what it
        keeps is its evidence turns, which the window's probe checks do not follow)."""
        ...

    @property
    def start(self) -> int:
        """The first turn after which it is checked."""
        ...

    @property
    def kind(self) -> str | None:
        """What the string is (a path, a number...), or None when nobody said."""
        ...


def looked_for(probes: Sequence[Planted]) -> tuple[Planted, ...]:
    """The probes that name a string to look for in the window, in order."""
    return tuple(probe for probe in probes if probe.text is not None)


@attrs.frozen
class ProbeLoss:
    """A probe that was due but not visible at turn ``turn``, and the event that lost it.

    ``at`` is the 1-based position of the event after which the probe stopped
    being visible, or None when it was never visible since it was due.
    """

    probe: str
    turn: int
    at: int | None
    event: str | None
    kind: str | None = None
    """The probe's kind (``memtape.scenarios.probes.PROBE_KINDS``), None when untyped."""

    def data(self) -> dict[str, Any]:
        """The loss as ``bench --json`` writes it."""
        return {
            "probe": self.probe,
            "kind": self.kind,
            "turn": self.turn,
            "at": self.at,
            "event": self.event,
        }


@attrs.frozen
class ProbeChange:
    """Probe ``index`` (of the probes checked) began or stopped showing, as the check after
    turn ``turn`` found: ``kept`` when it showed again (or showed as it came due).

    ``at`` is the 1-based position of the event after which it did: for a loss, the event
    that lost it (``event`` its type), or the turn's last event when it never showed since
    it came due (``event`` None); for a sighting, the turn's last event (``event`` None).
    """

    index: int
    turn: int
    at: int
    kept: bool
    event: str | None


@attrs.frozen
class CompactionMetrics:
    """What a run's window cost and what it kept, turn by turn."""

    sent: tuple[int, ...]
    """Tokens sent at each turn: the window after the turn and its compaction."""
    compactions: int
    retention: tuple[float | None, ...]
    """At each turn, the share of due probes visible (None while none is due)."""
    probe_checks: int
    probe_passes: int
    losses: tuple[ProbeLoss, ...]
    harmful_losses: int = 0
    """The losses a compaction made that a later turn's text mentioned again (harmful)."""
    budget: int | None = None
    """The budget the window is measured against (None when no policy was given)."""
    over_budget: str | None = None
    """Why the peak went over the budget, one of ``OVER_BUDGET_CAUSES``, judged at the
    first turn that sent the peak (None when it did not go over):

    - ``floor``: the policy promises BUDGET and the peak window held no more than
      ``policy.floor(window)``, the least its own rules let it keep there (its
      last turns, pinned turns, the newest turn...), so it could not do better;
    - ``unbounded``: the policy promises no budget (``none``);
    - ``unexplained``: the policy promises BUDGET, but the peak window held more
      than its floor (or it has no ``floor``): it broke the promise, which
      ``memtape check`` reports.
    """

    @property
    def peak_tokens(self) -> int | None:
        """The most tokens any turn sent (None for a run without turns)."""
        return max(self.sent) if self.sent else None

    @property
    def peak_over_budget(self) -> bool | None:
        """Whether some turn sent more tokens than the budget, for any reason (None for
        a run without turns, or without a budget to compare with); ``over_budget``
        says why."""
        if self.budget is None or not self.sent:
            return None
        return max(self.sent) > self.budget

    @property
    def tokens_resent(self) -> int:
        """The tokens of every turn's window, added up: the bill of the run."""
        return sum(self.sent)

    @property
    def probe_retention(self) -> float | None:
        """The share of probe checks passed over the run (None without checks)."""
        return self.probe_passes / self.probe_checks if self.probe_checks else None


@attrs.frozen
class ForgettingMetrics:
    """What a run's store returned, lost and missed."""

    reads: int
    """Facts returned by reads and queries."""
    stale_reads: int
    evictions: int
    queries: int
    """Queries that name the key they expect."""
    hits: int
    regret: int | None
    """Keyed queries whose key's newest fact had been evicted (None without any)."""

    @property
    def hit_at_k(self) -> float | None:
        """The share of keyed queries whose key is among the results (None without any)."""
        return self.hits / self.queries if self.queries else None


def steps(run: Run) -> Iterator[tuple[int, tuple[Event, ...], State, State]]:
    """Each step of ``run``: its number, its events, the state before and after them."""
    events = run.events
    state = INITIAL_STATE
    for step in range(1, run.steps + 1):
        start, end = run.batch(step)
        batch = events[start:end]
        after = fold(batch, state)
        yield step, batch, state, after
        state = after


def visible(window: Window, text: str) -> bool:
    """Whether ``text`` shows in the window: a HOT turn's text, a WARM item, the gist, a
    memory block, or a turn a recall brought back."""
    return (
        text in window.gist
        or any(text in turn.text for turn in window.hot)
        or any(text in item.text for item in window.warm)
        or any(text in block.value for block in window.blocks)
        or any(text in item.text for item in window.recalled)
    )


def compaction_metrics(
    run: Run, probes: Sequence[Planted] = (), policy: CompactionPolicy | None = None
) -> CompactionMetrics:
    """The window metrics of ``run``, checking ``probes`` after every turn, and with
    the compaction ``policy`` that made it, whether its peak went over its budget."""
    tally = WindowTally(probes, policy)
    commands = run.commands
    for step, batch, before, after in steps(run):
        tally.step(commands[step - 1], batch, before, after, run.batch(step)[0])
    return tally.metrics()


class WindowTally:
    """The window metrics, gathered step by step as a run is made or replayed.

    Visibility is tracked incrementally: only the HOT turns and WARM items
    that are new at a step are searched, and a compaction is followed through
    what its event names (the turns it moves, drops or clears, the WARM items it
    cools, the gist), not by reading the whole window; a turn checks only the
    probes that come due then or began or stopped showing since the last turn.
    So a turn costs the same at turn 10 and turn 1,000,000, however long the
    window and however many probes are already due.

    Given the compaction ``policy`` that makes the run, it also says whether the
    peak went over the policy's budget and why: only the peak's window is kept
    (states are immutable and shared), and its floor is measured once, at the end.
    """

    def __init__(
        self, probes: Sequence[Planted] = (), policy: CompactionPolicy | None = None
    ) -> None:
        self._policy = policy
        self._peak: Window | None = None
        """The window of the first turn that sent the most tokens so far."""
        probes = looked_for(probes)
        self._probes = probes
        self._tracker = ProbeParts(tuple(probe.text or "" for probe in probes))
        self._seen = [False] * len(probes)
        """Whether each probe was visible at the last check (False until it is due)."""
        self._by_start = sorted(range(len(probes)), key=lambda index: probes[index].start)
        self._due = 0
        """How many of ``_by_start`` are due; ``_shown`` of them were visible at the last check."""
        self._shown = 0
        self._sent: list[int] = []
        self._retention: list[float | None] = []
        self._losses: list[ProbeLoss] = []
        self.changes: list[ProbeChange] = []
        """Each probe's changes of visibility at the checks so far, in order (the viewer's
        record of when each probe showed and when it was lost)."""
        self._compactions = self._checks = self._passes = 0

    def step(
        self,
        command: Command,
        batch: Sequence[Event],
        before: State,
        after: State,
        offset: int,
    ) -> None:
        """Take one step: its command, its events (the first at position ``offset + 1``),
        and the states before and after them."""
        compactions = sum(1 for event in batch if isinstance(event, CompactionTriggered))
        tracker = self._tracker
        self._compactions += compactions
        if compactions or any(isinstance(event, BlockEdited | Recalled) for event in batch):
            tracker.follow(batch, after.window, offset)
        else:
            # Without a compaction, a block edit or a recall a step only adds turns: nothing
            # leaves.
            tracker.add(event for event in batch if isinstance(event, TurnAdded))
        if not isinstance(command, AddTurn):
            return
        turn = after.window.turns
        if self._peak is None or after.window.tokens > self._peak.tokens:
            self._peak = after.window
        self._sent.append(after.window.tokens)
        # Only the probes that come due now, and the due ones whose visibility changed
        # since the last check, can pass or be lost differently: a turn costs the same
        # however many probes are already due.
        fresh = self._come_due(turn)
        probes = self._probes
        changed = {index for index in tracker.changed() if probes[index].start <= turn}
        for index in sorted(changed | fresh):
            probe = probes[index]
            if tracker.visible(index):
                if not self._seen[index]:
                    self.changes.append(ProbeChange(index, turn, offset + len(batch), True, None))
                self._shown += not self._seen[index]
                self._seen[index] = True
            elif self._seen[index] or probe.start == turn:
                text = probe.text or ""
                position = tracker.lost_at(index)
                if position is None and not tracker.followed:
                    position = _lost_at(before, batch, offset, text)
                event = None if position is None else type(batch[position - offset - 1]).__name__
                self._losses.append(ProbeLoss(text, turn, position, event, probe.kind))
                lost_at = offset + len(batch) if position is None else position
                self.changes.append(ProbeChange(index, turn, lost_at, False, event))
                self._shown -= self._seen[index]
                self._seen[index] = False
        self._checks += self._due
        self._passes += self._shown
        self._retention.append(self._shown / self._due if self._due else None)

    def _come_due(self, turn: int) -> set[int]:
        """The probes due from ``turn`` on that were not due before it."""
        fresh = set()
        order = self._by_start
        while self._due < len(order) and self._probes[order[self._due]].start <= turn:
            fresh.add(order[self._due])
            self._due += 1
        return fresh

    def metrics(self) -> CompactionMetrics:
        """The metrics of the steps taken so far."""
        policy, mentioned = self._policy, self._tracker.mentioned
        made = (c for c in self.changes if not c.kept and c.event == "CompactionTriggered")
        return CompactionMetrics(
            tuple(self._sent),
            self._compactions,
            tuple(self._retention),
            self._checks,
            self._passes,
            tuple(self._losses),
            sum(mentioned.get(change.index, 0) > change.turn for change in made),
            None if policy is None else policy.budget,
            None if policy is None else _over_budget(policy, self._peak),
        )


def _over_budget(policy: CompactionPolicy, peak: Window | None) -> str | None:
    """Why the ``peak`` window went over the policy's budget (None if it did not)."""
    if peak is None or peak.tokens <= policy.budget:
        return None
    if BUDGET not in policy.promises:
        return "unbounded"
    if is_budgeted(policy) and peak.tokens <= policy.floor(peak):
        return "floor"
    return "unexplained"


def _lost_at(before: State, batch: Sequence[Event], offset: int, text: str) -> int | None:
    """The position of the batch's event after which ``text`` stopped being visible."""
    state = before
    was = visible(state.window, text)
    for position, event in enumerate(batch, start=offset + 1):
        state = evolve(state, event)
        now = visible(state.window, text)
        if was and not now:
            return position
        was = now
    return None


def forgetting_metrics(run: Run) -> ForgettingMetrics:
    """The store metrics of ``run``, from its writes, reads, queries and evictions.

    A query counts for hit@k and regret when it names the key it expects;
    every fact a read or a query returns counts for stale reads, except what a
    bi-temporal query returns (it asks about the past: a fact valid then is
    not stale for it).
    """
    newest: dict[str, int] = {}
    key_of: dict[int, str] = {}
    evicted: set[int] = set()
    reads = stale = queries = hits = regret = 0
    for event in run.events:
        if isinstance(event, FactWritten):
            newest[event.key] = event.id
            key_of[event.id] = event.key
        elif isinstance(event, FactRead):
            reads += 1
            stale += newest[key_of[event.id]] != event.id
        elif isinstance(event, Queried):
            reads += len(event.results)
            if event.as_of is None and event.known_at is None:
                stale += sum(newest[key_of[found]] != found for found in event.results)
            if event.key:
                queries += 1
                hits += any(key_of[found] == event.key for found in event.results)
                regret += newest.get(event.key) in evicted
        elif isinstance(event, Evicted):
            evicted.add(event.id)
    return ForgettingMetrics(reads, stale, len(evicted), queries, hits, regret if queries else None)
