"""A run as the viewer's data: tables written once, then one small delta per event.

The page rebuilds the projected state (the ``show --json`` data) at any
event from these deltas, from keyframes it takes while loading. Each text of
the run is shipped once: a turn in the turn table, a fact in the fact table;
HOT holds turn numbers, and what grows with the run (dropped and cold turns,
distilled facts and rules) is shipped as what each event appended. So the
payload grows with the events, not with the events times the state.

Delta keys (all optional; an absent key means "unchanged"):
``c`` clock; ``t`` window tokens; ``h`` HOT as ``[shift, appended turn numbers]``;
``w`` WARM as ``[shift, appended [turn, text, tokens]]``; ``g`` ``[gist, tokens]``;
``k`` turns appended to COLD; ``d`` turns appended to dropped; ``z`` HOT turns
cleared in place, as ``[turn, text, tokens]`` (the text each reads from then on); ``q`` the
recall tier, whole, as ``[turn, text, tokens]`` items (``[]`` once cleared); ``f`` fact ids
written; ``r`` ``[id, reads]`` of facts read; ``x`` ``[id, status, ended_at,
superseded_by, score]`` of facts retired or evicted; ``e`` pending episodes as
``[shift, appended [id, text]]``; ``s`` semantic facts appended ``[key, text,
importance, episode]``; ``p`` procedural rules appended ``[text, episode]``;
``b`` ``[label, value, tokens, version, limit]`` of a memory block created or
edited; ``P`` the policy parameters, when they change (a fork); ``R``, only for a
forgetting policy the page cannot score, ``[reset, rows]``: the ranking's
``[id, score, factors]`` rows that changed since the last ``R`` (all of
them, the page's held scores first cleared, when ``reset`` is 1); a fact that
leaves the store (``x``) leaves the held scores too.

A turn row of the turn table is ``[role, text, tokens, salient]``, followed
by ``calls, answers, pinned`` for a turn that has any of them.

A probe row is ``[text, from]`` (the string that must stay visible in the window
from turn ``from`` on, as the run's scenario planted it); a probe change is
``[probe, at, kept, turn, event]``: after event ``at`` probe number ``probe``
(0-based) showed again (``kept`` 1) or was lost (0, ``event`` the type of the
event that lost it, or null when it never showed since it came due), as the
check after turn ``turn`` found. These are ``bench --losses``' losses, read
off the same tally (``memtape.projections.metrics.WindowTally``).

An event row is ``[step, type, summary]``; a query's row adds ``[text,
expected key, k, [[id, score], ...]]`` (its results, best first), so the page
can show what was asked and what came back.
"""

from bisect import bisect_left
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from memtape.core.commands import Command
from memtape.core.errors import BadInput
from memtape.core.events import (
    Answered,
    BlockEdited,
    ClockAdvanced,
    CompactionTriggered,
    Consolidated,
    EpisodeRecorded,
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
    ValidityClosed,
)
from memtape.core.run import Run
from memtape.core.state import Fact, Memory, State, Store, Window
from memtape.policies.session import Policies
from memtape.projections.metrics import Planted, WindowTally, looked_for
from memtape.projections.timeline import summarize
from memtape.reducers import evolve

T = TypeVar("T")

FOLLOWED: frozenset[type[Event]] = frozenset(
    {
        TurnAdded,
        CompactionTriggered,
        ClockAdvanced,
        EpisodeRecorded,
        Consolidated,
        BlockEdited,
        # The store's events: store_delta ships what each changed, and refuses any other.
        FactWritten,
        FactRead,
        Queried,
        Superseded,
        Evicted,
        Expired,
        ValidityClosed,
        Recalled,
        Judged,
        # A question asked of the window changes nothing the page shows: its row only.
        Answered,
    }
)
"""Every event type the viewer follows (tests/test_payload.py holds it to ``EVENT_TYPES``)."""

PAGE_SCORERS = frozenset(
    {"importance-recency-access", "generative-agents", "memorybank", "lru", "lfu", "fifo"}
)
"""Forgetting policies whose score ``viewer.js`` computes itself (same formula, same floats,
except memorybank's ``exp``: V8's may differ from libm's by one ulp, so its score may too);
for the others the ranking rows that changed are shipped (``R``), which costs the page
every row at a clock move when their scores decay."""


def run_payload(
    run: Run,
    policies_at: Callable[[int], Policies],
    name: str,
    probes: Sequence[Planted] = (),
) -> dict[str, Any]:
    """The page's data for one run: its name, tables, event rows and per-event deltas, and
    its ``probes`` with where each was lost and found again."""
    built = PayloadBuilder(name, policies_at(0), run.state_at(0), probes)
    events, commands = run.events, run.commands
    for step in range(1, run.steps + 1):
        start, end = run.batch(step)
        built.add_step(events[start:end], policies_at, commands[step - 1])
    return built.payload()


class PayloadBuilder:
    """A run's page data grown one command at a time, each costing only what it added.

    ``run_payload`` builds a whole run through it; ``memtape serve`` keeps one
    and adds each command's events as the session decides them, answering the
    page with ``since``, what was added after the events the page holds.
    """

    def __init__(
        self, name: str, policies: Policies, initial: State, probes: Sequence[Planted] = ()
    ) -> None:
        self.name = name
        probes = looked_for(probes)
        self.probes: list[list[Any]] = [[probe.text, probe.start] for probe in probes]
        self.changes: list[list[Any]] = []
        # A probe is checked in the window: a run without a compaction policy has none.
        self._tally = WindowTally(probes) if probes and policies.compaction is not None else None
        self.params = policy_params(policies)
        self.turns: list[list[Any]] = []
        self.facts: list[list[Any]] = []
        self.rows: list[list[Any]] = []
        self.frames: list[dict[str, Any]] = []
        self.ends: list[int] = []
        # The table lengths after each step (0: before the first), to slice at a step's end:
        # turns, facts and probe changes.
        self._marks: list[tuple[int, int, int]] = [(0, 0, 0)]
        self._state = initial
        self._in_force = policies
        self._latest = self.params
        self._shipped = ShippedRanking()

    def add_step(
        self,
        events: Sequence[Event],
        policies_at: Callable[[int], Policies],
        command: Command | None = None,
    ) -> None:
        """Append one command's events; ``policies_at(at)`` decided the event at ``at``.
        The ``command`` that made them is needed only to check probes (after each turn)."""
        for event in events:
            # Checked before anything is added, so that a refused step adds nothing.
            _require_followed(event)
        step = len(self.ends) + 1
        at = offset = len(self.frames)
        before = self._state
        state, in_force, params, shipped = self._state, self._in_force, self._latest, self._shipped
        for event in events:
            at += 1
            after = evolve(state, event)
            policies = policies_at(at)
            frame = state_delta(event, state, after)
            # An epoch keeps its Policies object: only a fork can change the parameters.
            if policies is not in_force:
                in_force, now = policies, policy_params(policies)
                if now != params:
                    frame["P"] = params = now
            if _ranked_here(policies) and (
                "P" in frame or after.store is not state.store or after.clock != state.clock
            ):
                changed = shipped.delta(ranking_rows(policies, after), reset="P" in frame)
                if changed is not None:
                    frame["R"] = changed
            _grow_tables(event, after, self.turns, self.facts)
            self.rows.append(event_row(step, event, state, after))
            self.frames.append(frame)
            state = after
        self.ends.append(at)
        tally = self._tally
        if tally is not None and command is not None:
            tally.step(command, events, before, state, offset)
            for change in tally.changes[len(self.changes) :]:
                self.changes.append(
                    [change.index, change.at, int(change.kept), change.turn, change.event]
                )
        self._marks.append((len(self.turns), len(self.facts), len(self.changes)))
        self._state, self._in_force, self._latest = state, in_force, params

    def payload(self) -> dict[str, Any]:
        """The whole run's data, as ``run_payload`` returns it (a copy: later steps leave it)."""
        return {
            "name": self.name,
            "params": self.params,
            "ends": list(self.ends),
            "turns": list(self.turns),
            "facts": list(self.facts),
            "rows": list(self.rows),
            "frames": list(self.frames),
            "probes": list(self.probes),
            "changes": list(self.changes),
        }

    def steps_at(self, events: int) -> int:
        """How many commands the first ``events`` events make; refused inside a command."""
        held = len(self.frames)
        if not 0 <= events <= held:
            raise BadInput(f"since={events} is out of range 0..{held} (the run's events)")
        steps = bisect_left(self.ends, events) + 1 if events else 0
        if events and self.ends[steps - 1] != events:
            raise BadInput(f"since={events} falls inside a command; a page holds whole commands")
        return steps

    def since(self, events: int) -> dict[str, Any]:
        """What was added after the first ``events`` events (the end of a command, or 0).

        The payload's keys, each holding only what came later, and ``from``:
        how many events, steps, turns and facts the page must already hold,
        so that appending these to its arrays gives ``payload()``.
        """
        steps = self.steps_at(events)
        turns, facts, changes = self._marks[steps]
        return {
            "name": self.name,
            "params": self.params,
            "from": {
                "events": events,
                "steps": steps,
                "turns": turns,
                "facts": facts,
                "changes": changes,
            },
            "ends": self.ends[steps:],
            "turns": self.turns[turns:],
            "facts": self.facts[facts:],
            "rows": self.rows[events:],
            "frames": self.frames[events:],
            "probes": list(self.probes),
            "changes": self.changes[changes:],
        }


def event_row(step: int, event: Event, before: State, after: State) -> list[Any]:
    """The event list's row: step, type and summary; a query adds what it asked and found."""
    _require_followed(event)
    row: list[Any] = [step, type(event).__name__, summarize(event, before, after)]
    if isinstance(event, Queried):
        found = [[i, s] for i, s in zip(event.results, event.scores, strict=True)]
        row.append([event.text, event.key, event.k, found])
    return row


def _require_followed(event: Event) -> None:
    if type(event) not in FOLLOWED:
        raise BadInput(
            f"the viewer cannot show a {type(event).__name__} event (event type unknown)"
        )


def policy_params(policies: Policies) -> dict[str, Any]:
    """What the page needs of the policies in force: their names, budget, capacity,
    scorer, memory."""
    compaction, forgetting = policies.compaction, policies.forgetting
    table = None if forgetting is None else forgetting.params()
    scorer = table if forgetting is not None and forgetting.name in PAGE_SCORERS else None
    return {
        "compaction": None if compaction is None else compaction.name,
        "forgetting": None if forgetting is None else forgetting.name,
        "supersession": None if table is None else table.get("supersession"),
        "budget": None if compaction is None else compaction.budget,
        "capacity": None if forgetting is None else forgetting.capacity,
        "scorer": scorer,
        "memory": policies.consolidation is not None,
    }


def _ranked_here(policies: Policies) -> bool:
    forgetting = policies.forgetting
    return forgetting is not None and forgetting.name not in PAGE_SCORERS


class ShippedRanking:
    """The scores the page holds for a policy it cannot score, to ship only what changed.

    A read, a query or a write moves a few scores; a fork, or (for a score that
    decays) a clock move, may move them all, and then all of them are shipped.
    """

    def __init__(self) -> None:
        self.held: dict[int, list[Any]] = {}

    def delta(self, rows: list[list[Any]], *, reset: bool) -> list[Any] | None:
        """``[reset, rows that changed]`` (in rank order), or None when nothing did."""
        held = {} if reset else self.held
        changed = [row for row in rows if held.get(row[0]) != row]
        self.held = {row[0]: row for row in rows}
        if not changed and not reset:
            return None
        return [int(reset), changed]


def ranking_rows(policies: Policies, state: State) -> list[list[Any]]:
    """The ranking as ``[id, score, factors]`` rows, for a policy the page cannot score."""
    forgetting = policies.forgetting
    if forgetting is None:
        return []
    return [
        [scored.fact.id, scored.score, scored.factors]
        for scored in forgetting.rank(state.store, state.clock)
    ]


def state_delta(event: Event, before: State, after: State) -> dict[str, Any]:
    """What changed from ``before`` to ``after`` (one event apart), in the delta keys."""
    delta: dict[str, Any] = {}
    if after.clock != before.clock:
        delta["c"] = after.clock
    if after.window is not before.window:
        delta.update(window_delta(event, before.window, after.window))
    if after.store is not before.store:
        delta.update(store_delta(event, before.store, after.store))
    if after.memory is not before.memory:
        delta.update(memory_delta(event, before.memory, after.memory))
    return delta


def window_delta(event: Event, before: Window, after: Window) -> dict[str, Any]:
    """Tokens, HOT, WARM, the gist, the turns appended to COLD and dropped, and a memory
    block edited."""
    delta: dict[str, Any] = {}
    if after.tokens != before.tokens:
        delta["t"] = after.tokens
    if isinstance(event, TurnAdded):
        # The window reducer appends the turn to HOT and touches nothing else but the
        # tokens: comparing HOT, which grows without bound under no compaction, would
        # make the payload quadratic in the run's length.
        delta["h"] = [0, [event.turn]]
        return delta
    if after.hot != before.hot:
        delta["h"] = shift_append([t.turn for t in before.hot], [t.turn for t in after.hot])
    if after.warm != before.warm:
        shift, added = shift_append(before.warm, after.warm)
        delta["w"] = [shift, [[item.turn, item.text, item.tokens] for item in added]]
    if (after.gist, after.gist_tokens) != (before.gist, before.gist_tokens):
        delta["g"] = [after.gist, after.gist_tokens]
    # COLD and dropped only ever grow (the window reducer appends to them).
    if len(after.cold) != len(before.cold):
        delta["k"] = list(after.cold[len(before.cold) :])
    if len(after.dropped) != len(before.dropped):
        delta["d"] = list(after.dropped[len(before.dropped) :])
    if after.recalled != before.recalled:
        delta["q"] = [[item.turn, item.text, item.tokens] for item in after.recalled]
    if isinstance(event, CompactionTriggered) and event.cleared:
        delta["z"] = [[item.turn, item.text, item.tokens] for item in event.cleared]
    if isinstance(event, BlockEdited):
        block = after.block(event.label)
        limit = block.limit if block is not None else event.limit
        delta["b"] = [event.label, event.value, event.tokens, event.version, limit]
        if block is not None and block.read_only:
            delta["b"].append(True)
    return delta


def store_delta(event: Event, before: Store, after: Store) -> dict[str, Any]:
    """The facts the event touched: written, read (alone or by a query), retired (a judged
    DELETE's target too) or evicted."""
    if not isinstance(
        event,
        FactWritten | FactRead | Queried | Superseded | Evicted | Expired | ValidityClosed | Judged,
    ):
        raise BadInput(f"the viewer cannot follow a store change by {type(event).__name__}")
    if isinstance(event, Queried):
        return {"r": [[i, after.facts[i].reads] for i in event.results]} if event.results else {}
    fact_id = event.target if isinstance(event, Judged) else event.id
    fact, old = after.facts[fact_id], before.facts.get(fact_id)
    delta: dict[str, Any] = {}
    if old is None:
        delta["f"] = [fact.id]
        return delta
    if fact.reads != old.reads:
        delta["r"] = [[fact.id, fact.reads]]
    if fact.status != old.status:
        delta["x"] = [_ending(fact)]
    return delta


def _ending(fact: Fact) -> list[Any]:
    ending: list[Any] = [
        fact.id,
        fact.status,
        fact.ended_at,
        fact.superseded_by,
        fact.evicted_score,
    ]
    if fact.status == "expired":
        ending += [fact.expires_at, fact.expired_reason]
    return ending


def memory_delta(event: Event, before: Memory, after: Memory) -> dict[str, Any]:
    """Pending episodes (recorded, or consumed), and the distilled facts and rules appended."""
    delta: dict[str, Any] = {}
    if isinstance(event, EpisodeRecorded):
        # The memory reducer appends a recorded episode: no need to compare the queue.
        delta["e"] = [0, [[event.id, event.text]]]
    elif after.episodes != before.episodes:
        shift, added = shift_append(tuple(before.episodes), tuple(after.episodes))
        delta["e"] = [shift, [[e.id, e.text] for e in added]]
    if len(after.semantic) != len(before.semantic):
        delta["s"] = [
            [f.key, f.text, f.importance, f.episode] for f in after.semantic[len(before.semantic) :]
        ]
    if len(after.procedural) != len(before.procedural):
        delta["p"] = [[r.text, r.episode] for r in after.procedural[len(before.procedural) :]]
    return delta


def shift_append(before: Sequence[T], after: Sequence[T]) -> list[Any]:
    """``[shift, appended]`` such that ``after == before[shift:] + appended``, least shift first.

    A queue (HOT, WARM, pending episodes) loses items at its front and gains
    them at its end, so this is small; shifting everything always works.
    """
    if after:
        for shift in range(len(before)):
            kept = len(before) - shift
            if kept <= len(after) and list(after[:kept]) == list(before[shift:]):
                return [shift, list(after[kept:])]
    return [len(before), list(after)]


def _structure(turn: TurnAdded) -> list[Any]:
    """A turn's calls, answers and pin, shipped only when it has any (most turns have none)."""
    if not (turn.calls or turn.answers or turn.pinned):
        return []
    return [list(turn.calls), list(turn.answers), turn.pinned]


def _grow_tables(
    event: Event, after: State, turns: list[list[Any]], facts: list[list[Any]]
) -> None:
    """Each turn and fact enters its table once, when it arrives."""
    if isinstance(event, TurnAdded):
        turns.append([event.role, event.text, event.tokens, event.salient, *_structure(event)])
    elif isinstance(event, FactWritten):
        fact = after.store.facts[event.id]
        facts.append([fact.key, fact.text, fact.importance, fact.written_at])
