"""The timeline: one row per event, with the meter after it and a one-line summary."""

from collections.abc import Callable, Iterator
from typing import Any

import attrs

from memtape.core.codec import event_data
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
    ModelCall,
    Queried,
    Recalled,
    Superseded,
    TurnAdded,
    ValidityClosed,
)
from memtape.core.plural import counted
from memtape.core.run import Run
from memtape.core.state import State
from memtape.core.visible import quoted, visible
from memtape.policies.session import Policies
from memtape.projections.meter import Meter, meter
from memtape.reducers import evolve


@attrs.frozen
class TimelineRow:
    """One event: its 1-based position, its step, the event, the meter after it."""

    at: int
    step: int
    event: Event
    meter: Meter | None
    summary: str

    def data(self) -> dict[str, Any]:
        """The row as JSON-ready data (the ``timeline --json`` contract)."""
        return {
            "at": self.at,
            "step": self.step,
            "type": type(self.event).__name__,
            "event": event_data(self.event),
            "meter": self.meter.data() if self.meter is not None else None,
            "summary": self.summary,
        }


def timeline(run: Run, policies: Policies | Callable[[int], Policies]) -> Iterator[TimelineRow]:
    """A row per event, folding once from the start (linear in the run).

    ``policies`` may be a function of the position (``Session.policies_at``),
    for a run whose policies changed along the way (a fork).
    """
    policies_at = policies if callable(policies) else lambda _: policies
    state = run.state_at(0)
    events = run.events
    for step in range(1, run.steps + 1):
        start, end = run.batch(step)
        for at in range(start + 1, end + 1):
            event = events[at - 1]
            before = state
            state = evolve(state, event)
            gauge = meter(state.window, policies_at(at).compaction)
            yield TimelineRow(at, step, event, gauge, summarize(event, before, state))


BLOCK_VERBS = {
    "create": "created",
    "replace": "replaced",
    "append": "appended to",
    "find-replace": "found and replaced in",
}
"""What a block edit's ``op`` did, as a timeline line (and ``why block:LABEL``) says it."""


def describe_judgement(event: Judged, before: State) -> str:
    """A model's judgement of a write in one line: the decision, its target, the candidates
    and the calls it took."""
    decision = event.decision
    if event.target:
        target = before.store.facts.get(event.target)
        key = f" ({quoted(target.key)})" if target is not None else ""
        decision = f"{decision} fact {event.target}{key}"
    if not event.candidates:
        return f"write on {quoted(event.key)} added unasked: no active fact shares a word"
    asked = "".join(f"; {_asked(call)}" for call in event.asked)
    among = _numbers(event.candidates)
    return f"write on {quoted(event.key)} judged {decision}, candidates {among}{asked}"


def summarize(event: Event, before: State, after: State) -> str:
    """What the event did, in one line of plain words; the run's texts in it are
    ``visible`` (a key quoted), so the line is safe to print as it is."""
    match event:
        case TurnAdded(turn=turn, role=role, tokens=tokens, salient=salient):
            kind = "salient" if salient else "chatter"
            return f"turn {turn} ({visible(role)}, {kind}) adds {counted(tokens, 'token')}"
        case CompactionTriggered():
            warm = _numbers(item.turn for item in event.warm)
            cold = _numbers(after.window.cold[len(before.window.cold) :])
            asked = "".join(f"; {_asked(call)}" for call in event.asked)
            cleared = _numbers(item.turn for item in event.cleared)
            in_place = f"; cleared in place {cleared}" if event.cleared else ""
            hot = _numbers(turn.turn for turn in after.window.hot)
            return (
                f"compaction over budget {event.budget}: hot keeps {hot}; "
                f"warm gets {warm}; dropped {_numbers(event.dropped)}; pushed cold {cold}"
                f"{in_place}{asked}"
            )
        case ClockAdvanced(to=to):
            return f"clock moves from t={before.clock:g} to t={to:g}"
        case FactWritten(id=fact_id, key=key, importance=importance):
            return f"fact {fact_id} written on {quoted(key)}, importance {importance:g}"
        case FactRead(id=fact_id):
            fact = after.store.facts[fact_id]
            return f"fact {fact_id} ({quoted(fact.key)}) read, {counted(fact.reads, 'read')} so far"
        case Queried():
            return describe_query(event, after)
        case Superseded(id=fact_id, by=by):
            return (
                f"fact {fact_id} ({quoted(before.store.facts[fact_id].key)}) retired: "
                f"superseded by {by}"
            )
        case Evicted(id=fact_id, score=score):
            key = before.store.facts[fact_id].key
            return f"fact {fact_id} ({quoted(key)}) evicted over capacity, score {score:.4f}"
        case ValidityClosed(id=fact_id, to=to, by=by):
            key = before.store.facts[fact_id].key
            return f"fact {fact_id} ({quoted(key)}) true until t={to:g}, as fact {by} says; kept"
        case Expired(id=fact_id, reason=reason):
            key = before.store.facts[fact_id].key
            return f"fact {fact_id} ({quoted(key)}) expired: {visible(reason)}"
        case Recalled(query=query, found=found, scores=scores, brought=brought):
            hits = ", ".join(
                f"{turn} ({score:.3f})" for turn, score in zip(found, scores, strict=True)
            )
            back = _numbers(item.turn for item in brought)
            return (
                f"recall of {quoted(query)} found {hits or 'nothing'}; "
                f"brought back {back}, {counted(sum(i.tokens for i in brought), 'token')}"
            )
        case BlockEdited(label=label, version=version, op=op, value=value, tokens=tokens):
            block = after.window.block(label)
            limit = f"/{block.limit}" if block is not None else ""
            verb = BLOCK_VERBS.get(op, visible(op)) + (" read-only" if event.read_only else "")
            return (
                f"block {quoted(label)} {verb}, version {version}: "
                f"{len(value)}{limit} characters, {counted(tokens, 'token')}"
            )
        case Judged():
            return describe_judgement(event, before)
        case Answered(question=question, reply=reply, correct=correct, judged=judged):
            verdict = "correct" if correct else "wrong"
            graded = ", as a judge said" if judged else ""
            asked = "".join(f"; {_asked(call)}" for call in event.asked)
            return f"asked {quoted(question)}: replied {quoted(reply)}, {verdict}{graded}{asked}"
        case EpisodeRecorded(id=episode_id, text=text):
            return f"episode {episode_id} recorded: {visible(text)}"
        case Consolidated(episodes=episodes, semantic=semantic, procedural=procedural):
            asked = "".join(f"; {_asked(call)}" for call in event.asked)
            edits = f", {counted(len(event.blocks), 'block edit')}" if event.blocks else ""
            return (
                f"consolidation consumed {counted(len(episodes), 'episode')}: "
                f"{counted(len(semantic), 'semantic fact')}, "
                f"{counted(len(procedural), 'procedural rule')}{edits}{asked}"
            )
    raise TypeError(f"no summary for {type(event).__name__}")


def describe_query(event: Queried, after: State) -> str:
    """A query in one line: what it asked, what it expected, what came back, best first."""
    asked = f"query {quoted(event.text)}" if event.text else "query"
    if event.as_of is not None:
        asked += f" as of t={event.as_of:g}"
    if event.known_at is not None:
        asked += f" as known at t={event.known_at:g}"
    if event.key:
        asked += f" expecting {quoted(event.key)}"
    facts = after.store.facts
    found = ", ".join(
        f"{i} ({quoted(facts[i].key)}, {score:.4f})"
        for i, score in zip(event.results, event.scores, strict=True)
    )
    return f"{asked}, top {event.k}: {found or 'nothing active'}"


def _asked(call: ModelCall) -> str:
    """A model call in a few words: which model, its tokens and time, whether cached, and
    how much of its answer the cap cut."""
    cached = ", cached" if call.cached else ""
    cut = f", answer cut by {counted(call.cut, 'character')}" if call.cut else ""
    return (
        f"asked {visible(call.model)} "
        f"({call.prompt_tokens}+{counted(call.completion_tokens, 'token')}, "
        f"{call.seconds:.2f} s{cached}{cut})"
    )


def _numbers(values: Any) -> str:
    listed = ", ".join(str(v) for v in values)
    return listed or "none"
