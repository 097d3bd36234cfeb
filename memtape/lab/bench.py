"""The bench: run policies side by side on the same scenarios and measure each run.

A cell is one scenario under one policy with one set of settings (the
``--set`` ones and a point of the ``--grid``). Every cell runs in a fresh
session, so cells are independent: a process pool gives the same numbers as
a serial run, and the same inputs give the same numbers (decision cost, a
wall-clock time, aside). Each process warms up before its first cell is
timed, so a cell's decision cost is its own commands' and not its worker's
start (``warm_up``).
"""

import gc
import itertools
import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from functools import lru_cache
from pathlib import Path
from typing import Any

import attrs

from memtape.core.commands import AddTurn
from memtape.core.errors import BadInput, NothingToApply, Rejected
from memtape.core.events import Event
from memtape.core.spelling import did_you_mean
from memtape.core.state import State
from memtape.lab.judge import Judge, Verdict, answer_metrics, question_of
from memtape.lab.progress import EVERY
from memtape.lab.spread import Replicated
from memtape.llm.cache import cache_setting, caching, use_cache
from memtape.llm.config import ModelConfig
from memtape.policies.session import Policies, Session
from memtape.policies.text.summarizers import SUMMARIZER_PARAMS
from memtape.policies.text.tier_writers import WRITER_PROMPTS
from memtape.policies.zoo import AXES, AXIS_OF, LLM
from memtape.projections.billing.prices import Price, PriceTable, shipped_prices
from memtape.projections.billing.tally import COST_METRICS, CostTally
from memtape.projections.metrics import (
    CompactionMetrics,
    ProbeLoss,
    WindowTally,
    forgetting_metrics,
)
from memtape.projections.model_calls import model_usage
from memtape.scenarios import SHIPPED, Probe, Scenario, load_scenario
from memtape.scenarios.block_settings import is_block_setting, with_block_settings
from memtape.scenarios.cost import Cost, is_cost_setting, with_cost_settings

BENCHED_AXES = ("compaction", "forgetting")
"""The axes whose policies a bench compares."""

METRICS = (
    "peak_tokens",
    "peak_over_budget",
    "tokens_resent",
    "compactions",
    "probe_retention",
    "hit_at_k",
    "stale_reads",
    "evictions",
    "regret",
    "decide_us_per_command",
    "llm_calls",
    "llm_cache_hits",
    "llm_prompt_tokens",
    "llm_completion_tokens",
    "llm_seconds",
    "answers_correct",
    "answers_judged",
    *COST_METRICS,
)
"""The metrics of a result, in the order of the JSON contract.

``peak_over_budget`` is true when some turn sent more tokens than the budget, for
any reason: the policy's floor (the turns it must keep), a policy that promises no
budget (``none``), or a broken promise (``Result.over_budget`` says which; the
table marks the peak with it); false otherwise, and null where ``peak_tokens`` is.
The ``llm_*`` ones add up the model calls a cell's decisions made
(``memtape.projections.model_calls.model_usage``). ``answers_correct`` and ``answers_judged``
count the questions a ``--judge`` model answered correctly and those a judge had to
grade (``memtape.lab.judge``); null without ``--judge``. The cost ones
(``memtape.projections.billing.tally.COST_METRICS``) bill a compaction cell's
requests at the price of the scenario's ``[cost] model`` (or ``--set
cost.model=NAME``), and are null without one.
"""


@attrs.frozen
class PolicySpec:
    """A policy to bench: its axis, its name, and ``AXIS.PARAM=VALUE`` settings for it."""

    axis: str
    name: str
    settings: tuple[str, ...]
    label: str


def parse_policy(text: str) -> PolicySpec:
    """``NAME`` or ``NAME:k=v,k=v`` (e.g. ``rolling-summary:keep=4``) as a policy to bench."""
    name, _, rest = text.partition(":")
    name = name.strip()
    axes = [axis for axis in BENCHED_AXES if name in AXES[axis]]
    if not axes:
        elsewhere = [axis for axis in AXES if axis not in BENCHED_AXES and name in AXES[axis]]
        if elsewhere:
            raise BadInput(
                f"--policy {text!r}: {name!r} is a {elsewhere[0]} policy, and bench compares "
                f"{' or '.join(BENCHED_AXES)} policies"
            )
        names = sorted(n for axis in BENCHED_AXES for n in AXES[axis])
        hint = did_you_mean(name, names)
        raise BadInput(f"--policy {text!r}: no policy {name!r} (known: {', '.join(names)}){hint}")
    axis = axes[0]
    settings = []
    for pair in filter(None, (part.strip() for part in rest.split(","))):
        param, sep, value = pair.partition("=")
        if not sep or not param.strip() or param.strip() == "policy":
            raise BadInput(f"--policy {text!r}: write NAME:PARAM=VALUE,PARAM=VALUE, got {pair!r}")
        settings.append(f"{axis}.{param.strip()}={value.strip()}")
    return PolicySpec(axis, name, tuple(settings), text.strip())


def parse_grid(texts: Sequence[str]) -> tuple[tuple[str, ...], ...]:
    """The points of a grid: ``["compaction.budget=500,1000"]`` gives one setting per value.

    Several grid options multiply (every combination, the first option varying slowest).
    """
    axes = []
    for text in texts:
        name, sep, values = text.partition("=")
        choices = [value.strip() for value in values.split(",") if value.strip()]
        if not sep or "." not in name or not choices:
            raise BadInput(
                f"--grid {text!r}: write AXIS.PARAM=V1,V2,..., e.g. compaction.budget=500,1000"
            )
        axes.append([f"{name.strip()}={value}" for value in choices])
    return tuple(tuple(point) for point in itertools.product(*axes))


@attrs.frozen
class Cell:
    """One run of the bench: a scenario, a policy, and settings on top of both."""

    scenario: str
    spec: PolicySpec
    settings: tuple[str, ...]
    point: tuple[str, ...]
    """The grid point among ``settings``, shown in labels."""
    judge: str | None = None
    """The model that answers the probes' questions (``bench --judge``), or None."""
    probes: str | None = None
    """A probes file whose probes are added to the scenario's (``bench --probes``), or None."""
    replicate: int | None = None
    """Which replicate of the cell this run is (``bench --replicates``), counted from 0: its
    decisions ask models afresh, past the response cache, with the replicate's seed
    (``replicate_settings``); None for a cell run once, the cache in force."""
    prices: PriceTable | None = None
    """The price table its run is billed at (``--prices``); None: the shipped one."""

    @property
    def label(self) -> str:
        """The policy and its grid point, as tables and plots show it."""
        return " ".join((self.spec.label, *self.point))


@attrs.frozen
class Result:
    """What one cell measured, with the series a plot draws."""

    scenario: str
    label: str
    policy: str
    params: dict[str, Any] | None
    metrics: dict[str, Any]
    budget: int | None
    sent: tuple[int, ...]
    retention: tuple[float | None, ...]
    notable: dict[str, Any] = attrs.field(factory=dict)
    """The parameters a table shows: the shared one and those off the policy's defaults."""
    losses: tuple[ProbeLoss, ...] = ()
    """Each probe lost, with the event that lost it."""
    over_budget: str | None = None
    """Why the peak went over the budget (``memtape.projections.metrics.OVER_BUDGET_CAUSES``),
    or None when it did not."""
    idle: str | None = None
    """Why the cell's policy had nothing to apply to the scenario (``recorded`` on one that
    recorded no compaction), or None; such a result has no params and no metrics."""
    verdicts: tuple[Verdict, ...] = ()
    """Each question the ``--judge`` model was asked, with its reply and verdict."""
    spread: Replicated | None = None
    """For a cell run ``--replicates N`` times, each metric's spread over the replicates
    (``metrics`` then holds the medians); None for a cell run once."""

    def data(self, *, losses: bool = False) -> dict[str, Any]:
        """The result as the JSON contract writes it; with ``losses``, each lost probe too
        (``ProbeLoss.data``, its kind among its fields); for replicates, their ``spread``
        (``Replicated.data``)."""
        data: dict[str, Any] = {
            "scenario": self.scenario,
            "policy": self.policy,
            "params": self.params,
            "metrics": self.metrics,
        }
        if self.metrics.get("answers_correct") is not None:
            data["answers"] = [verdict.data() for verdict in self.verdicts]
        if self.spread is not None:
            data.update(self.spread.data())
        if losses:
            data["losses"] = [loss.data() for loss in self.losses]
        return data


MAX_REPLICATES = 1000
"""The most ``--replicates`` a bench takes: each is a whole run of every cell, and the
cells are planned up front, so a mistyped count would fill the memory before any ran."""


def plan(
    scenarios: Sequence[str],
    policies: Sequence[str],
    settings: Sequence[str] = (),
    grid: Sequence[str] = (),
    replicates: int | None = None,
    *,
    judge: str | None = None,
    probes: str | None = None,
    prices: PriceTable | None = None,
) -> list[Cell]:
    """Every cell to run, each checked to build (its priced model too, in ``prices`` or the
    shipped table), so bad input fails before any work; with ``replicates``, each cell
    that many times, one after the other (``Cell.replicate``)."""
    if replicates is not None and replicates < 1:
        raise BadInput(f"--replicates must be at least 1, got {replicates}")
    if replicates is not None and replicates > MAX_REPLICATES:
        raise BadInput(
            f"--replicates {replicates} is more than {MAX_REPLICATES:,}, the most a bench runs"
        )
    if not scenarios:
        raise BadInput("bench needs at least one scenario")
    if probes is not None and not probes.endswith((".toml", ".jsonl")):
        raise BadInput(
            f"--probes {probes}: bench takes a file ending in .toml ([[probe]] tables) or "
            '.jsonl (one {"text", "from"} object a line); auto plants probes in import and audit'
        )
    extra = () if probes is None else _file_probes(probes)
    if judge is not None and not judge.strip():
        raise BadInput(f"--judge {judge!r}: name the model that answers the questions")
    if judge is not None:
        found = [*extra, *(probe for source in scenarios for probe in _scenario(source).probes)]
        if not any(question_of(probe) is not None for probe in found):
            where = "these scenarios" if probes is None else f"these scenarios or {probes}"
            raise BadInput(
                f"--judge {judge}: no probe of {where} carries a question "
                "(a [[probe]] table's question and answer)"
            )
    if not policies:
        raise BadInput("bench needs at least one --policy")
    specs = [parse_policy(text) for text in policies]
    points = parse_grid(grid)
    cells = []
    for source in scenarios:
        scenario = _scenario(source)
        for spec in specs:
            for point in points:
                cell = Cell(source, spec, (*settings, *point), point, judge, probes, prices=prices)
                idle_reason(scenario, cell)
                price_for(scenario, cell)
                if replicates is None:
                    cells.append(cell)
                    continue
                cells.extend(attrs.evolve(cell, replicate=r) for r in range(replicates))
    return cells


def replicate_settings(policies: Policies, axis: str, replicate: int) -> list[str]:
    """The settings that seed replicate ``replicate`` (from 0): the model's ``seed`` (the
    ``[llm]`` table's, or 0, plus the replicate) when the policies may ask one, and the
    benched policy's own ``seed`` parameter likewise when it has one (a policy that samples)."""
    settings = []
    if policies.llm is not None:
        settings.append(f"llm.seed={(policies.llm.seed or 0) + replicate}")
    own = policies.params()[axis].get("seed")
    if isinstance(own, int) and not isinstance(own, bool):
        settings.append(f"{axis}.seed={own + replicate}")
    return settings


def idle_reason(scenario: Scenario, cell: Cell) -> str | None:
    """Why the cell's policy has nothing to apply to ``scenario`` (its table, built, says so:
    ``NothingToApply``), or None when it builds; any other bad input is refused."""
    try:
        policies_for(scenario, cell)
    except NothingToApply as error:
        return error.reason
    return None


def policies_for(scenario: Scenario, cell: Cell) -> Policies | None:
    """The scenario's policies with the cell's policy and settings, or None when the
    scenario has no policy on that axis (the cell does not apply).

    A policy of another name keeps the axis's shared parameters (budget and
    tokenizer; capacity) and takes its own defaults for the rest; the
    scenario's own policy keeps all of its parameters.
    """
    axis = cell.spec.axis
    tables = scenario.policies.params()
    if axis not in tables:
        return None
    # A setting for an axis this scenario lacks is skipped (a bench mixes scenarios);
    # one for an unknown axis is kept, so that ``with_settings`` names it.
    given = len(cell.settings) - len(cell.point)
    # The priced model is no policy's: ``price_for`` reads the ``cost.`` settings.
    sources = tuple(
        (option, tuple(s for s in more if not is_cost_setting(s) and not is_block_setting(s)))
        for option, more in (
            (f"--policy {cell.spec.label}", cell.spec.settings),
            ("--set", cell.settings[:given]),
            (f"--grid point {' '.join(cell.point)}", cell.settings[given:]),
        )
    )
    # The model comes first, whichever option names it: a policy may need it to build.
    model = [s for _, more in sources for s in more if _axis(s) == LLM]
    settings = [*model, f"{axis}.policy={cell.spec.name}"]
    policies = scenario.policies
    # Each option's settings go on top of the ones before, so a refusal names the
    # option that brought the bad value.
    for option, more in sources:
        settings.extend(
            s for s in more if _axis(s) != LLM and (_axis(s) not in AXES or _axis(s) in tables)
        )
        try:
            policies = scenario.policies.with_settings(settings)
        except NothingToApply:
            raise
        except BadInput as error:
            reason = str(error).removeprefix("--set: ").removeprefix("--set ")
            raise BadInput(f"{scenario.source}: {option}: {reason}") from None
    return policies


def price_for(scenario: Scenario, cell: Cell) -> tuple[Price, Cost] | None:
    """The price the cell's run is billed at and the ``[cost]`` table with the cell's
    settings on top (``memtape.scenarios.cost``), or None when no model
    is priced (the scenario's ``[cost]`` and the cell's ``cost.`` settings name none); an
    unknown model or a bad setting is refused."""
    cost = with_cost_settings(scenario.cost, cell.settings, f"{scenario.source}: --set")
    if cost.model is None:
        return None
    table = shipped_prices() if cell.prices is None else cell.prices
    named = any(is_cost_setting(s) and "model" in s.partition("=")[0] for s in cell.settings)
    where = "--set cost.model" if named else f"{scenario.source}: [cost] model"
    return table.price(cost.model, where), cost


def _axis(setting: str) -> str:
    """The axis an ``AXIS.PARAM=VALUE`` setting names."""
    return setting.partition("=")[0].partition(".")[0].strip()


def applies(cell: Cell) -> bool:
    """Whether the cell's scenario exercises the axis of the cell's policy (a policy with
    nothing to apply there still applies: its row says why it has nothing)."""
    scenario = _scenario(cell.scenario)
    if idle_reason(scenario, cell) is not None:
        return True
    policies = policies_for(scenario, cell)
    return policies is not None and _applies(scenario, policies, cell.spec.axis)


def has_meter(cell: Cell) -> bool:
    """Whether the cell measures a window (a meter to plot)."""
    scenario = _scenario(cell.scenario)
    idle = idle_reason(scenario, cell) is not None
    return cell.spec.axis == "compaction" and not idle and applies(cell)


def _scenario(source: str) -> Scenario:
    """A scenario loaded once per process while its file is unchanged (a grid's cells
    share it; a pool's workers inherit what the planning process loaded)."""
    path = Path(source)
    stamp = None
    if source not in SHIPPED and os.path.isfile(path):
        stat = path.stat()
        stamp = (stat.st_mtime_ns, stat.st_size)
    return _load(source, stamp)


@lru_cache(maxsize=16)
def _load(source: str, stamp: tuple[int, int] | None) -> Scenario:
    """``load_scenario``, cached by the file's modification time and size."""
    return load_scenario(source)


def run_cell(
    cell: Cell,
    scenario: Scenario | None = None,
    on_commands: Callable[[int, int], None] | None = None,
) -> Result:
    """Run one cell in a fresh session and measure it on the cell's axis; ``on_commands``
    (done, total) hears how far the cell got every ``EVERY`` commands.

    A compaction policy is measured on the window, a forgetting policy on the
    store; the other axis's metrics are None, since they measure the
    scenario's own policy, which every cell of the bench shares. ``scenario``
    is the cell's scenario already parsed (a worker that cannot open its
    file was sent its text); by default it is loaded from ``cell.scenario``.
    """
    scenario = _scenario(cell.scenario) if scenario is None else scenario
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
    if policies is None or not _applies(scenario, policies, axis):
        return Result(scenario.name, cell.label, cell.spec.name, None, metrics, None, (), ())
    if cell.replicate is not None:
        # Each replicate asks afresh: the cache would make every one the first's.
        with caching(None):
            seeded = policies.with_settings(replicate_settings(policies, axis, cell.replicate))
            return _measured(cell, scenario, seeded, on_commands)
    return _measured(cell, scenario, policies, on_commands)


def _measured(
    cell: Cell,
    scenario: Scenario,
    policies: Policies,
    on_commands: Callable[[int, int], None] | None,
) -> Result:
    """Run the cell's scenario under ``policies`` (the cell's, built) and measure it."""
    axis = cell.spec.axis
    metrics: dict[str, Any] = dict.fromkeys(METRICS)
    session = Session(policies)
    probes = (*scenario.probes, *([] if cell.probes is None else _file_probes(cell.probes)))
    window = WindowTally(probes, policies.compaction) if axis == "compaction" else None
    bill = _bill(scenario, cell) if window is not None else None
    judge = None
    if cell.judge is not None and window is not None:
        judge = Judge(ModelConfig(cell.judge, seed=cell.replicate))
    asked = [probe for probe in probes if question_of(probe) is not None]
    verdicts: list[Verdict] = []
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
            if judge is not None and isinstance(command, AddTurn):
                now = session.state.window
                verdicts.extend(judge.verdicts(now, now.turns, asked))
        if bill is not None:
            bill.step(command, events, before, session.state, len(session.run) - len(events))
    metrics["decide_us_per_command"] = spent / len(scenario.steps) / 1000
    metrics.update(model_usage(session.run.events).data())
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
        metrics.update(_window_metrics(tally, bill, None if judge is None else verdicts))
    else:
        store = forgetting_metrics(session.run)
        metrics.update(
            hit_at_k=store.hit_at_k,
            stale_reads=store.stale_reads,
            evictions=store.evictions,
            regret=store.regret,
        )
    params = _cell_params(policies, axis, cell)
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
        verdicts=tuple(verdicts),
    )


def _bill(scenario: Scenario, cell: Cell) -> CostTally | None:
    """The tally that bills the cell's run, or None when no model is priced."""
    priced = price_for(scenario, cell)
    if priced is None:
        return None
    price, cost = priced
    return CostTally(price, cost.ttl, cost.prefix, warm=cost.warm)


def _window_metrics(
    tally: CompactionMetrics, bill: CostTally | None, verdicts: list[Verdict] | None
) -> dict[str, Any]:
    """A compaction cell's metrics: the window's, the bill's when priced, the answers' when
    judged."""
    metrics: dict[str, Any] = {
        "peak_tokens": tally.peak_tokens,
        "peak_over_budget": tally.peak_over_budget,
        "tokens_resent": tally.tokens_resent,
        "compactions": tally.compactions,
        "probe_retention": tally.probe_retention,
    }
    if bill is not None:
        metrics.update(bill.metrics().data())
    if verdicts is not None:
        metrics.update(answer_metrics(verdicts))
    return metrics


def _file_probes(path: str) -> tuple[Probe, ...]:
    """The probes of a ``--probes`` file, read once per process while it is unchanged."""
    stat = os.stat(path) if os.path.isfile(path) else None
    stamp = None if stat is None else (stat.st_mtime_ns, stat.st_size)
    return _read_probes(path, stamp)


@lru_cache(maxsize=4)
def _read_probes(path: str, stamp: tuple[int, int] | None) -> tuple[Probe, ...]:
    """``probes_from_file``, cached by the file's modification time and size."""
    from memtape.lab.probes import probes_from_file  # noqa: PLC0415 (its patterns compile on import)

    return tuple(probes_from_file(Path(path)))


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


def _cell_params(policies: Policies, axis: str, cell: Cell) -> dict[str, Any]:
    """The parameters of the cell's policy, and its block settings beside them (the
    scenario's memory blocks, not the policy's: ``block.human.limit``)."""
    params = dict(policies.params()[axis])
    del params["policy"]
    for setting in cell.settings:
        if is_block_setting(setting):
            name, _, value = setting.partition("=")
            params[name.strip()] = value.strip()
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


def _applies(scenario: Scenario, policies: Policies, axis: str) -> bool:
    """Whether the scenario exercises ``axis``: turns for compaction, store steps for
    forgetting (writes, reads, queries, or consolidation passes that write facts)."""
    if getattr(policies, axis) is None:
        return False
    if axis == "compaction":
        return any(isinstance(command, AddTurn) for command in scenario.steps)
    return any(AXIS_OF.get(type(c)) in {"forgetting", "consolidation"} for c in scenario.steps)


Progress = Callable[[int, int, Cell], None]
"""Told after each finished cell: how many are done, of how many, and which."""

Finished = Callable[[Cell, Result], None]
"""Told each cell's result as soon as it is finished (before ``Progress``)."""

Engine = Callable[[Sequence[Cell]], Iterator[tuple[int, Result]]]
"""Runs cells and yields each one's position among them and its result, as each finishes
(in any order); an error a cell raised is raised as it was."""


Within = Callable[[int, int, int], None]
"""Told of the commands inside a cell run in this process: cells done, commands done, the
cell's commands."""


def serial(cells: Sequence[Cell], within: Within | None = None) -> Iterator[tuple[int, Result]]:
    """The engine that runs each cell in this process, in order; ``within`` hears how far
    each cell got."""
    for number, cell in enumerate(cells):
        if within is None:
            yield number, run_cell(cell)
            continue

        def on_commands(commands: int, total: int, done: int = number) -> None:
            within(done, commands, total)

        yield number, run_cell(cell, on_commands=on_commands)


def process_pool(jobs: int, within: Within | None = None) -> Engine:
    """The engine that runs cells on ``jobs`` local processes (serially when ``jobs`` is 1,
    when ``within`` hears how far each cell got)."""
    if jobs < 1:
        raise BadInput(f"--jobs must be at least 1, got {jobs}")

    def engine(cells: Sequence[Cell]) -> Iterator[tuple[int, Result]]:
        if jobs == 1 or len(cells) < 2:
            yield from serial(cells, within)
            return
        # Each worker caches model answers where this process does (or not at all: --no-cache).
        with ProcessPoolExecutor(
            max_workers=min(jobs, len(cells)), initializer=use_cache, initargs=(cache_setting(),)
        ) as pool:
            futures = {pool.submit(run_cell, cell): number for number, cell in enumerate(cells)}
            try:
                for future in as_completed(futures):
                    yield futures[future], future.result()
            finally:
                # A failed cell (or a consumer that stopped) cancels what has not started.
                for future in futures:
                    future.cancel()

    return engine


def run_cells(
    cells: Sequence[Cell],
    jobs: int = 1,
    progress: Progress | None = None,
    *,
    engine: Engine | None = None,
    finished: Finished | None = None,
) -> list[Result]:
    """Run every cell (on ``engine``, by default on ``jobs`` processes) and return the
    results in the cells' order; ``finished`` and ``progress`` hear of each cell as it
    finishes."""
    run = process_pool(jobs) if engine is None else engine
    results: list[Result | None] = [None] * len(cells)
    for done, (number, result) in enumerate(run(cells), start=1):
        results[number] = result
        if finished is not None:
            finished(cells[number], result)
        if progress is not None:
            progress(done, len(cells), cells[number])
    missing = [cells[n].label for n, result in enumerate(results) if result is None]
    if missing:
        raise RuntimeError(f"the engine finished without running {', '.join(missing)}")
    return [result for result in results if result is not None]


def results_data(results: Iterable[Result], *, losses: bool = False) -> dict[str, Any]:
    """The JSON contract: ``{"results": [{"scenario", "policy", "params", "metrics"}]}``,
    ``metrics`` holding every name of ``METRICS`` (``peak_over_budget`` among them); with
    ``losses`` (``bench --losses``) each result holds ``losses`` too, a list of
    ``{"probe", "kind", "turn", "at", "event"}``."""
    return {"results": [result.data(losses=losses) for result in results]}
