"""``memtape demo``: the three seed walkthroughs, driven by the shipped scenarios.

Everything printed comes from the events the policies decide and the states
they fold into; nothing here knows the figures in advance. The scenarios'
texts are printed ``visible``, as every command prints a run's.
"""

from collections.abc import Iterator

from memtape.core.commands import AddTurn, AdvanceClock, ReadFact, WriteFact
from memtape.core.events import (
    CompactionTriggered,
    Consolidated,
    EpisodeRecorded,
    Event,
    Evicted,
    FactRead,
    FactWritten,
    Superseded,
    TurnAdded,
)
from memtape.core.plural import counted
from memtape.core.state import State
from memtape.core.visible import quoted, visible
from memtape.policies.plumbing.protocols import ForgettingPolicy
from memtape.policies.session import Session
from memtape.projections.meter import Meter
from memtape.projections.text import meter_line, paint, render_view
from memtape.projections.view import view_data
from memtape.scenarios import Scenario, load_scenario


def demo_lines(color: bool = False, width: int | None = None) -> Iterator[str]:
    """All three walkthroughs, one line at a time; the meters' bars narrowed to fit ``width``,
    if given."""
    yield from compaction_walkthrough(load_scenario("refund-desk"), color, width)
    yield ""
    yield from forgetting_walkthrough(load_scenario("dana-facts"), color)
    yield ""
    yield from consolidation_walkthrough(load_scenario("sleep-pass"), color)


def _title(text: str, color: bool) -> str:
    return paint(f"━━ {visible(text)} ━━", "bold", color)


def _policy(params: dict[str, object]) -> str:
    name = params.pop("policy")
    shown = " · ".join(f"{k} {v}" for k, v in params.items())
    return visible(f"policy: {name} · {shown}")


def compaction_walkthrough(
    scenario: Scenario, color: bool, width: int | None = None
) -> Iterator[str]:
    """The meter turn by turn, and what each compaction kept, folded, dropped, cooled; the
    meters' bars narrowed to fit ``width``, if given."""
    policy = scenario.policies.compaction
    assert policy is not None, "the compaction walkthrough needs a compaction policy"
    yield _title(f"1. Compaction · {scenario.name}", color)
    yield visible(scenario.about)
    yield _policy(policy.params())
    session = Session(scenario.policies)
    for command in scenario.steps:
        if not isinstance(command, AddTurn):
            continue
        before = session.state.window.tokens
        for event in session.execute(command):
            if isinstance(event, TurnAdded):
                arrived = Meter(before + event.tokens, policy.budget)
                head = f"turn {event.turn:>2} {visible(event.role):<5} "
                room = None if width is None else width - len(head)
                yield head + meter_line(arrived, color, room=room)
            elif isinstance(event, CompactionTriggered):
                yield "         " + _compaction_line(event, session.state, color)
    yield "final window:"
    final = view_data(session.state, len(session.run), scenario.policies)
    inner = None if width is None else width - 2
    yield from (f"  {line}" for line in list(render_view(final, color, inner))[1:])


def _compaction_line(event: CompactionTriggered, after: State, color: bool) -> str:
    hot = ", ".join(str(t.turn) for t in after.window.hot) or "none"
    warm = ", ".join(str(i.turn) for i in event.warm) or "none"
    dropped = ", ".join(str(t) for t in event.dropped) or "none"
    cooled = after.window.cold[len(after.window.cold) - event.cold :] if event.cold else []
    cold = ", ".join(str(t) for t in cooled) or "none"
    meter = Meter(after.window.tokens, event.budget)
    return (
        f"COMPACT: HOT keeps {hot} · WARM ← {warm} · dropped {dropped} · "
        f"pushed cold {cold} → {paint(f'{meter.tokens}/{meter.budget}', 'green', color)}"
    )


def forgetting_walkthrough(scenario: Scenario, color: bool) -> Iterator[str]:
    """Rankings as time passes and reads land, then the supersession and the eviction."""
    policy = scenario.policies.forgetting
    assert policy is not None, "the forgetting walkthrough needs a forgetting policy"
    yield _title(f"2. Forgetting · {scenario.name}", color)
    yield visible(scenario.about)
    yield _policy(policy.params())
    session = Session(scenario.policies)
    previous = None
    for command in scenario.steps:
        phase_ends = isinstance(command, AdvanceClock) or (
            isinstance(command, WriteFact) and isinstance(previous, ReadFact | AdvanceClock)
        )
        if phase_ends:
            yield from _ranking(session.state, policy, color)
        previous = command
        events = session.execute(command)
        if isinstance(command, AdvanceClock):
            yield f"clock advances to t={session.state.clock:g}"
        else:
            yield from _store_lines(events, session.state, policy)
    yield from _ranking(session.state, policy, color)


def _store_lines(
    events: tuple[Event, ...], state: State, policy: ForgettingPolicy
) -> Iterator[str]:
    facts = state.store.facts
    for event in events:
        if isinstance(event, FactRead):
            yield f"read {quoted(facts[event.id].key)} (reads: {facts[event.id].reads})"
        elif isinstance(event, FactWritten):
            yield (
                f"write {quoted(event.key)} (importance {event.importance:.2f}): "
                f"{visible(event.text)}"
            )
        elif isinstance(event, Superseded):
            old = facts[event.id]
            yield (
                f"  SUPERSEDE: fact {old.id} {quoted(old.key)} ({visible(old.text)}) is retired, "
                f"kept but never ranked again; fact {event.by} replaces it"
            )
        elif isinstance(event, Evicted):
            gone = facts[event.id]
            yield (
                f"  EVICT: {len(state.store.active) + 1} active > capacity {policy.capacity}; "
                f"the weakest, {quoted(gone.key)} at {event.score:.2f}, is evicted"
            )


def _ranking(state: State, policy: ForgettingPolicy, color: bool) -> Iterator[str]:
    yield paint(f"ranking at t={state.clock:g}:", "bold", color)
    for n, scored in enumerate(policy.rank(state.store, state.clock), start=1):
        factors = " × ".join(f"{value:.2f} {name}" for name, value in scored.factors.items())
        yield f"  {n}. {visible(scored.fact.key):<10} {scored.score:.2f} = {factors}"
    retired = state.store.with_status("retired")
    evicted = state.store.with_status("evicted")
    if retired:
        yield "  retired: " + ", ".join(f"{visible(f.key)} ({visible(f.text)})" for f in retired)
    if evicted:
        yield "  evicted: " + ", ".join(f"{visible(f.key)} ({visible(f.text)})" for f in evicted)


def consolidation_walkthrough(scenario: Scenario, color: bool) -> Iterator[str]:
    """Episodes recorded, then a sleep-time pass distilling and pruning them."""
    yield _title(f"3. Consolidation · {scenario.name}", color)
    yield visible(scenario.about)
    session = Session(scenario.policies)
    for command in scenario.steps:
        events = session.execute(command)
        for event in events:
            yield from _memory_lines(event, session.state)


def _memory_lines(event: Event, state: State) -> Iterator[str]:
    if isinstance(event, Consolidated):
        yield f"sleep-time pass consumes {counted(len(event.episodes), 'episode')}:"
        for fact in event.semantic:
            yield (
                f"  semantic fact   {visible(fact.text)}  (key {visible(fact.key)}, "
                f"from episode {fact.episode})"
            )
        for rule in event.procedural:
            yield f"  procedural rule {visible(rule.text)}  (from episode {rule.episode})"
        yield f"  episodes pending after the pass: {len(state.memory.episodes)}"
    elif isinstance(event, FactWritten):
        yield (
            f"  written to the store as fact {event.id} ({quoted(event.key)}, "
            f"importance {event.importance:.2f}) through the forgetting policy"
        )
    elif isinstance(event, EpisodeRecorded):
        yield f"episode {event.id}: {visible(event.text)}"
