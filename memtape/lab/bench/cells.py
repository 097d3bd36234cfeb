"""Running one bench cell: a fresh session over the cell's scenario, timed, measured on its
axis, with a ``--judge``'s questions asked at their turns; and the warm-up that keeps a
process's start out of its first cell's time."""

import gc
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs

from memtape.core.commands import AddTurn, Ask
from memtape.core.errors import NothingToApply, Rejected
from memtape.core.events import Answered, Event
from memtape.core.state import State
from memtape.lab.bench import planning
from memtape.lab.bench.planning import (
    cached_scenario,
    exercises,
    idle_reason,
    policies_for,
    price_for,
    replicate_settings,
)
from memtape.lab.bench.results import METRICS, Result
from memtape.lab.bench.specs import Cell
from memtape.lab.judge import asks, question_of
from memtape.lab.progress import EVERY
from memtape.llm.cache import caching
from memtape.policies.session import Policies, Session
from memtape.policies.text.summarizers import SUMMARIZER_PARAMS
from memtape.policies.text.tier_writers import WRITER_PROMPTS
from memtape.projections.answers import Verdict, answer_metrics, verdicts
from memtape.projections.billing.tally import CostTally
from memtape.projections.metrics import (
    CompactionMetrics,
    ProbeLoss,
    WindowTally,
    forgetting_metrics,
)
from memtape.projections.model_calls import model_usage
from memtape.runs.files import save_run
from memtape.scenarios import Probe, Scenario, load_scenario
from memtape.scenarios.block_settings import is_block_setting, taken, with_block_settings


def run_cell(
    cell: Cell,
    scenario: Scenario | None = None,
    on_commands: Callable[[int, int], None] | None = None,
    kept: Callable[[Session], None] | None = None,
) -> Result:
    """Run one cell in a fresh session and measure it on the cell's axis; ``on_commands``
    (done, total) hears how far the cell got every ``EVERY`` commands, and ``kept`` is
    given the session once it has run (its run records every decision, a ``--judge``'s
    answers among them).

    A compaction policy is measured on the window, a forgetting policy on the
    store; the other axis's metrics are None, since they measure the
    scenario's own policy, which every cell of the bench shares. ``scenario``
    is the cell's scenario already parsed (a worker that cannot open its
    file was sent its text); by default it is loaded from ``cell.scenario``.
    """
    scenario = cached_scenario(cell.scenario) if scenario is None else scenario
    if any(is_block_setting(s) for s in cell.settings):
        steps = with_block_settings(scenario.steps, cell.settings, strict=False)
        scenario = attrs.evolve(scenario, steps=steps)
    axis = cell.spec.axis
    metrics: dict[str, Any] = dict.fromkeys(METRICS)
    idle = idle_reason(scenario, cell)
    if idle is not None:
        return Result(
            scenario.name, cell.label, cell.spec.name, None, metrics, None, (), (), idle=idle
        )
    policies = policies_for(scenario, cell)
    if policies is None or not exercises(scenario, policies, axis):
        return Result(scenario.name, cell.label, cell.spec.name, None, metrics, None, (), ())
    if cell.replicate is not None:
        # Each replicate asks afresh: the cache would make every one the first's.
        with caching(None):
            seeded = policies.with_settings(replicate_settings(policies, axis, cell.replicate))
            return _measured(cell, scenario, seeded, on_commands, kept)
    return _measured(cell, scenario, policies, on_commands, kept)


def _measured(
    cell: Cell,
    scenario: Scenario,
    policies: Policies,
    on_commands: Callable[[int, int], None] | None,
    kept: Callable[[Session], None] | None = None,
) -> Result:
    """Run the cell's scenario under ``policies`` (the cell's, built) and measure it."""
    axis = cell.spec.axis
    metrics: dict[str, Any] = dict.fromkeys(METRICS)
    session = Session(policies)
    probes = _probes(scenario, cell)
    window = WindowTally(probes, policies.compaction) if axis == "compaction" else None
    bill = _bill(scenario, cell) if window is not None else None
    judge = cell.judge if window is not None else None
    asked = [probe for probe in probes if question_of(probe) is not None]
    _warm()
    _ready(policies)
    clock = _clock
    spent = 0
    for number, command in enumerate(scenario.steps, start=1):
        before = session.state
        began = clock()
        try:
            events = session.execute(command)
        except Rejected as error:
            raise Rejected(
                f"{scenario.source}: step {number}, under {cell.label}: {error}"
            ) from None
        spent += clock() - began
        if on_commands is not None and number % EVERY == 0:
            on_commands(number, len(scenario.steps))
        if window is not None:
            # Measured as the run is made, on the states the session folded anyway.
            window.step(command, events, before, session.state, len(session.run) - len(events))
        if bill is not None:
            bill.step(command, events, before, session.state, len(session.run) - len(events))
        if judge is not None and window is not None and isinstance(command, AddTurn):
            _ask(session, window, asks(asked, session.state.window.turns, judge, cell.replicate))
    _keep(cell, scenario, session, kept)
    metrics["decide_us_per_command"] = spent / len(scenario.steps) / 1000
    # The judge's calls measure the policy: they are no calls of its decisions.
    decided = (event for event in session.run.events if not isinstance(event, Answered))
    metrics.update(model_usage(decided).data())
    found = verdicts(session.run.events) if judge is not None else ()
    budget = None
    sent: tuple[int, ...] = ()
    retention: tuple[float | None, ...] = ()
    losses: tuple[ProbeLoss, ...] = ()
    over_budget = None
    if window is not None and policies.compaction is not None:
        tally = window.metrics()
        budget = policies.compaction.budget
        sent, retention, losses = tally.sent, tally.retention, tally.losses
        over_budget = tally.over_budget
        metrics.update(_window_metrics(tally, bill, None if judge is None else found))
    else:
        store = forgetting_metrics(session.run)
        metrics.update(
            hit_at_k=store.hit_at_k,
            stale_reads=store.stale_reads,
            evictions=store.evictions,
            regret=store.regret,
        )
    params = _cell_params(policies, axis, cell, scenario)
    return Result(
        scenario.name,
        cell.label,
        cell.spec.name,
        params,
        metrics,
        budget,
        sent,
        retention,
        _notable(axis, cell.spec.name, params),
        losses,
        over_budget,
        verdicts=found,
        priced_as=None if bill is None else bill.price.model,
    )


def _keep(
    cell: Cell, scenario: Scenario, session: Session, kept: Callable[[Session], None] | None
) -> None:
    """Give ``kept`` the session that ran, and write its run to the cell's ``--runs``
    directory (priced as the cell is)."""
    if kept is not None:
        kept(session)
    if cell.runs is not None:
        priced = price_for(scenario, cell)
        cost = None if priced is None else priced[1].table()
        save_run(session, Path(cell.runs) / cell.run_name, scenario.name, cost=cost)


def _probes(scenario: Scenario, cell: Cell) -> tuple[Probe, ...]:
    """The scenario's probes, then those of the cell's ``--probes`` file."""
    # Read through the planning module, as plan reads it: a test gives its own probes there.
    added = () if cell.probes is None else planning.file_probes(cell.probes)
    return (*scenario.probes, *added)


def _ask(session: Session, window: WindowTally, questions: Sequence[Ask]) -> None:
    """Give the session each of ``questions`` and the tally each one's step; untimed, and no
    request of the agent's to bill (each asks the judge's model)."""
    for question in questions:
        before = session.state
        answered = session.execute(question)
        window.step(question, answered, before, session.state, len(session.run) - 1)


def _bill(scenario: Scenario, cell: Cell) -> CostTally | None:
    """The tally that bills the cell's run, or None when no model is priced."""
    priced = price_for(scenario, cell)
    if priced is None:
        return None
    price, cost = priced
    return CostTally(price, cost.ttl, cost.prefix, warm=cost.warm)


def _window_metrics(
    tally: CompactionMetrics, bill: CostTally | None, verdicts: Sequence[Verdict] | None
) -> dict[str, Any]:
    """A compaction cell's metrics: the window's, the bill's when priced, the answers' when
    judged."""
    metrics: dict[str, Any] = {
        "peak_tokens": tally.peak_tokens,
        "peak_over_budget": tally.peak_over_budget,
        "tokens_resent": tally.tokens_resent,
        "compactions": tally.compactions,
        "probe_retention": tally.probe_retention,
        "harmful_losses": tally.harmful_losses,
    }
    if bill is not None:
        metrics.update(bill.metrics().data())
    if verdicts is not None:
        metrics.update(answer_metrics(verdicts))
    return metrics


_clock = time.perf_counter_ns
"""What times a cell's commands (a test reads it in their place)."""

WARM_UP = ("refund-desk", "dana-facts")
"""The shipped scenarios a process runs, untimed, before its first cell: both axes, and
policies that ask no model."""

_warmed_in: int | None = None
"""The id of the process that last warmed up: a worker forked from a warm process has its
parent's id here, and warms up all the same (its pages are its parent's until it writes)."""


def warm_up() -> None:
    """Run the ``WARM_UP`` scenarios and a full collection, untimed, so that a process's first
    cell does not time its lazy imports and caches, nor the first writes to the memory it
    shares with its parent (the collector's first pass writes to every object it walks).

    Its decisions are not logged: ``-v`` shows the cells' own.
    """
    for name in WARM_UP:
        scenario = load_scenario(name)
        # Through Session.execute, as a cell runs: its first call in a process costs most.
        _Unlogged(scenario.policies).execute_all(scenario.steps)
    gc.collect()


class _Unlogged(Session):
    """A session that logs none of its decisions (the warm-up's are no one's to read)."""

    def _log(self, before: State, events: tuple[Event, ...]) -> None:
        """Nothing: not even when the ``memtape`` logger shows decisions."""


def _warm() -> None:
    """``warm_up``, once in each process, before its first cell is timed."""
    global _warmed_in  # noqa: PLW0603 (one flag a process)
    if _warmed_in != os.getpid():
        warm_up()
        _warmed_in = os.getpid()


def _ready(policies: Policies) -> None:
    """Make each of the cell's tokenizers count once, untimed: a BPE vocabulary loads on its
    first count (a tenth of a second), which would otherwise be the first command's."""
    for policy in (policies.compaction, policies.forgetting, policies.consolidation):
        tokenizer = getattr(policy, "tokenizer", None)
        if tokenizer is not None:
            tokenizer.count("ready")


def _cell_params(policies: Policies, axis: str, cell: Cell, scenario: Scenario) -> dict[str, Any]:
    """The parameters of the cell's policy, and beside them the block settings the
    scenario's memory blocks took (not the policy's: ``block.human.limit``); one for a
    block the scenario lacks was not applied, so it is not shown."""
    params = dict(policies.params()[axis])
    del params["policy"]
    params.update(taken(scenario.steps, cell.settings))
    return params


def _notable(axis: str, name: str, params: dict[str, Any]) -> dict[str, Any]:
    """``params`` without those the policy built from its shared parameter alone has, nor a
    prompt (a page of text; the JSON has it)."""
    shared = "budget" if axis == "compaction" else "capacity"
    table = {"policy": name, shared: params[shared]}
    try:
        defaults = Policies.from_params({axis: table}).params()[axis]
    except NothingToApply:
        # A policy that cannot stand on its shared parameter (recorded): all of it is notable.
        defaults = {}
    return {
        key: value
        for key, value in params.items()
        if key == shared
        or (
            defaults.get(key) != value
            and key not in SUMMARIZER_PARAMS
            and key not in WRITER_PROMPTS
        )
    }
