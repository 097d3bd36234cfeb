"""The lives of facts: each write, read, query, judgement, supersession, eviction, expiry
and consolidation that touched them, with the scores behind each."""

from collections.abc import Callable, Mapping
from typing import Any

from memtape.core.errors import BadInput
from memtape.core.events import (
    Consolidated,
    EpisodeRecorded,
    Evicted,
    Expired,
    FactRead,
    FactWritten,
    Judged,
    Queried,
    Superseded,
    ValidityClosed,
)
from memtape.core.plural import counted
from memtape.core.run import Run
from memtape.core.state import Fact, State
from memtape.core.visible import quoted, visible
from memtape.policies.plumbing.protocols import (
    ForgettingPolicy,
    Scored,
)
from memtape.policies.session import Policies
from memtape.projections.audit.lives import Moment, Seeker, Standing, Step, Subject


def _forgetting(policies_at: Callable[[int], Policies], at: int) -> ForgettingPolicy:
    forgetting = policies_at(at).forgetting
    if forgetting is None:
        raise BadInput(f"event {at}: auditing a fact needs a [forgetting] policy to score it")
    return forgetting


def fact_lives(
    run: Run, policies_at: Callable[[int], Policies], ids: list[int]
) -> tuple[Subject, ...]:
    wanted = set(ids)
    seeker = Seeker(run)
    steps: dict[int, list[Step]] = {i: [] for i in ids}
    episodes: dict[int, str] = {}
    consolidation: tuple[int, int, Consolidated] | None = None
    judged: tuple[int, Judged] | None = None
    for at, event in enumerate(run.events, start=1):
        if isinstance(event, EpisodeRecorded):
            episodes[event.id] = event.text
        elif isinstance(event, Consolidated):
            consolidation = (at, seeker.around(at).step, event)
        if (
            isinstance(
                event, FactWritten | FactRead | Superseded | Evicted | Expired | ValidityClosed
            )
            and event.id in wanted
        ):
            forgetting = _forgetting(policies_at, at)
            if (
                isinstance(event, FactWritten)
                and judged is not None
                and run.step_of(judged[0]) == run.step_of(at)
            ):
                # The write a judgement let in: the judgement comes first in its batch.
                steps[event.id].append(_judged_step(seeker.around(judged[0]), judged[1], None))
            step = _fact_step(seeker.around(at), forgetting, event)
            if isinstance(event, FactWritten) and consolidation is not None:
                step = _distilled(step, event, consolidation, episodes)
            steps[event.id].append(step)
        elif isinstance(event, Judged):
            judged = (at, event)
            for fact_id in sorted(wanted.intersection(event.candidates)):
                steps[fact_id].append(_judged_step(seeker.around(at), event, fact_id))
        elif isinstance(event, Queried) and wanted.intersection(event.results):
            moment = seeker.around(at)
            for fact_id in sorted(wanted.intersection(event.results)):
                steps[fact_id].append(_query_step(moment, event, fact_id))
    forgetting = _forgetting(policies_at, len(run))
    final = run.state
    subjects = []
    for fact_id in ids:
        fact = final.store.facts[fact_id]
        label = f"fact {fact_id} {quoted(fact.key)}: {visible(fact.text)}"
        now = _fact_now(forgetting, final, fact)
        subjects.append(Subject("fact", fact_id, label, tuple(steps[fact_id]), now))
    return tuple(subjects)


def _distilled(
    step: Step,
    event: FactWritten,
    consolidation: tuple[int, int, Consolidated],
    episodes: Mapping[int, str],
) -> Step:
    """A write's step, naming the episode and the consolidation it was distilled by when the
    write is a semantic fact of that consolidation (which writes it in the same step)."""
    at, command, consolidated = consolidation
    fact = next(
        (f for f in consolidated.semantic if (f.key, f.text) == (event.key, event.text)), None
    )
    if fact is None or command != step.step:
        return step
    episode = episodes.get(fact.episode)
    said = "" if episode is None else f" ({quoted(episode)})"
    what = (
        f"{step.what}; distilled from episode {fact.episode}{said} by the consolidation "
        f"at event {at}"
    )
    numbers = {**step.numbers, "episode": fact.episode, "consolidated_at": at}
    return Step(step.at, step.step, step.type, step.clock, what, numbers)


def _fact_step(
    moment: Moment,
    forgetting: ForgettingPolicy,
    event: FactWritten | FactRead | Superseded | Evicted | Expired | ValidityClosed,
) -> Step:
    after = moment.after
    clock = after.clock
    numbers: dict[str, Any]
    match event:
        case FactWritten(importance=importance, expires_at=expires_at):
            numbers = {"importance": importance, "clock": clock}
            what = f"written at t={clock:g}, importance {importance:g}"
            if expires_at is not None:
                numbers["expires_at"] = expires_at
                rule = f"by ttl {quoted(event.ttl)}" if event.ttl else "as the write asked"
                what += f", to expire at t={expires_at:g} ({rule})"
            if event.valid_from is not None or event.valid_to is not None:
                start = clock if event.valid_from is None else event.valid_from
                end = " on" if event.valid_to is None else f" to t={event.valid_to:g}"
                numbers.update(valid_from=event.valid_from, valid_to=event.valid_to)
                what += f", true from t={start:g}{end}"
        case FactRead(id=fact_id):
            scored = next(s for s in forgetting.rank(after.store, clock) if s.fact.id == fact_id)
            reads = scored.fact.reads
            numbers = {"reads": reads, "score": scored.score, "factors": scored.factors}
            what = f"read at t={clock:g}, {counted(reads, 'read')} now, score {scored.score:.4f}"
        case Superseded(by=by):
            key = after.store.facts[by].key
            numbers = {"by": by}
            what = (
                f"superseded at t={clock:g} by fact {by} ({quoted(key)}): "
                "retired, kept, never ranked"
            )
        case Evicted():
            numbers, what = _eviction(forgetting, event, moment.before)
        case ValidityClosed(to=to, by=by):
            numbers = {"to": to, "by": by}
            what = (
                f"closed at t={clock:g} by fact {by}: true until t={to:g}, "
                "kept for queries as of before"
            )
        case Expired(reason=reason):
            numbers = {"reason": reason}
            what = f"expired at t={clock:g}: {visible(reason)}; kept, never ranked again"
    return Step(moment.at, moment.step, type(event).__name__, clock, what, numbers)


def _judged_step(moment: Moment, event: Judged, fact_id: int | None) -> Step:
    """A model's judgement of a write, as it touched a fact: the write it let in
    (``fact_id`` None), the candidate it retired, or a candidate it left as it was."""
    clock = moment.after.clock
    among = ", ".join(str(i) for i in event.candidates) or "no candidate"
    calls = event.asked
    model = f"model {visible(calls[-1].model)}" if calls else "no model"
    numbers: dict[str, Any] = {
        "key": event.key,
        "decision": event.decision,
        "candidates": list(event.candidates),
        "target": event.target or None,
        "asked": len(calls),
        "answer": calls[-1].output if calls else None,
    }
    write = f"the write on {quoted(event.key)}"
    if fact_id is None and not calls:
        what = f"{write} added unasked: no active fact shares a word with it"
    elif fact_id is None:
        what = f"{write} judged {event.decision} by {model}, candidates {among}"
    elif fact_id == event.target and event.decision == "DELETE":
        what = (
            f"deleted at t={clock:g}: {model} judged {write} a DELETE of it "
            f"(candidates {among}): retired, kept, never ranked"
        )
    elif fact_id == event.target:
        what = f"{model} judged {write} an UPDATE of it (candidates {among})"
    else:
        what = f"a candidate of {write}, judged {event.decision} by {model}: left as it was"
    return Step(moment.at, moment.step, "Judged", clock, what, numbers)


def _query_step(moment: Moment, event: Queried, fact_id: int) -> Step:
    """A query that returned the fact: its place among the results, its score, its reads."""
    clock = moment.after.clock
    place = event.results.index(fact_id)
    score = event.scores[place]
    reads = moment.after.store.facts[fact_id].reads
    asked = f"query {quoted(event.text)}" if event.text else "a query"
    if event.as_of is not None:
        asked += f" as of t={event.as_of:g}"
    if event.known_at is not None:
        asked += f" as known at t={event.known_at:g}"
    what = (
        f"returned by {asked} at t={clock:g}, rank {place + 1} of {len(event.results)} "
        f"(top {event.k}), score {score:.4f}, {counted(reads, 'read')} now"
    )
    numbers = {"rank": place + 1, "score": score, "reads": reads, "k": event.k}
    return Step(moment.at, moment.step, type(event).__name__, clock, what, numbers)


def _eviction(
    forgetting: ForgettingPolicy, event: Evicted, before: State
) -> tuple[dict[str, Any], str]:
    clock = before.clock
    # The ranking, not each fact's score alone: a policy may normalize over the actives.
    actives = forgetting.rank(before.store, clock)
    evicted = next(s for s in actives if s.fact.id == event.id)
    others = [s for s in actives if s.fact.id != event.id]
    lowest = all(evicted.score <= s.score for s in others)
    place = "the lowest" if lowest else f"ranked {actives.index(evicted) + 1}"
    listed = ", ".join(f"{visible(s.fact.key)} {s.score:.4f}" for s in others)
    what = f"evicted at t={clock:g}, score {evicted.score:.4f}, {place} of {len(actives)} actives"
    if listed:
        what += f": {listed}"
    if evicted.score != event.score:
        what += f" (the log recorded {event.score:.4f})"
    numbers = {
        "score": evicted.score,
        "factors": evicted.factors,
        "recorded_score": event.score,
        "lowest": lowest,
        "capacity": forgetting.capacity,
        "actives": [_scored_data(s) for s in actives],
    }
    return numbers, what


def _scored_data(scored: Scored) -> dict[str, Any]:
    return {"id": scored.fact.id, "key": scored.fact.key, "score": scored.score}


def _fact_now(forgetting: ForgettingPolicy, state: State, fact: Fact) -> Standing:
    numbers: dict[str, Any] = {"status": fact.status}
    if fact.status == "active":
        ranking = forgetting.rank(state.store, state.clock)
        rank = next(n for n, s in enumerate(ranking, start=1) if s.fact.id == fact.id)
        scored = ranking[rank - 1]
        numbers.update(score=scored.score, factors=scored.factors, rank=rank, of=len(ranking))
        what = (
            f"now active at t={state.clock:g}, score {scored.score:.4f}, "
            f"rank {rank} of {len(ranking)}"
        )
    elif fact.status == "retired":
        numbers.update(ended_at=fact.ended_at, superseded_by=fact.superseded_by)
        by = fact.superseded_by
        why = "deleted by a judged write" if by is None else f"superseded by fact {by}"
        what = f"now retired (since t={fact.ended_at:g}, {why})"
        if fact.closed_to is not None:
            numbers.update(valid_to=fact.closed_to)
            what += f"; true until t={fact.closed_to:g}"
    elif fact.status == "expired":
        numbers.update(ended_at=fact.ended_at, reason=fact.expired_reason)
        what = f"now expired (since t={fact.ended_at:g}: {visible(fact.expired_reason or '')})"
    else:
        numbers.update(ended_at=fact.ended_at, score=fact.evicted_score)
        what = f"now evicted (since t={fact.ended_at:g}, with score {fact.evicted_score:.4f})"
    return Standing(fact.status, what, numbers)
