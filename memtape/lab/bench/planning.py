"""Planning a bench: every cell checked to build before any runs, each cell's policies,
price and scenario (loaded once per process), and the probes a ``--probes`` file adds."""

import os
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import attrs

from memtape.core.commands import AddTurn
from memtape.core.errors import BadInput, NothingToApply
from memtape.lab.bench.specs import Cell, parse_grid, parse_policy
from memtape.lab.judge import question_of
from memtape.policies.session import Policies
from memtape.policies.zoo import AXES, AXIS_OF, LLM
from memtape.projections.billing.prices import Price, PriceTable, shipped_prices
from memtape.scenarios import SHIPPED, Probe, Scenario, load_scenario
from memtape.scenarios.block_settings import is_block_setting, with_block_settings
from memtape.scenarios.cost import Cost, is_cost_setting, with_cost_settings

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
    shipped table, and its block settings), so bad input fails before any work; with
    ``replicates``, each cell that many times, one after the other (``Cell.replicate``)."""
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
    extra = () if probes is None else file_probes(probes)
    if judge is not None and not judge.strip():
        raise BadInput(f"--judge {judge!r}: name the model that answers the questions")
    if judge is not None:
        found = [
            *extra,
            *(probe for source in scenarios for probe in cached_scenario(source).probes),
        ]
        if not any(question_of(probe) is not None for probe in found):
            where = "these scenarios" if probes is None else f"these scenarios or {probes}"
            raise BadInput(
                f"--judge {judge}: no probe of {where} carries a question "
                "(a [[probe]] table's question and answer)"
            )
    if not policies:
        raise BadInput(
            "bench needs at least one --policy to compare, e.g. --policy tiered "
            "--policy none (memtape policies lists them)"
        )
    specs = [parse_policy(text) for text in policies]
    points = parse_grid(grid)
    cells = []
    for source in scenarios:
        scenario = cached_scenario(source)
        for spec in specs:
            for point in points:
                cell = Cell(source, spec, (*settings, *point), point, judge, probes, prices=prices)
                idle_reason(scenario, cell)
                price_for(scenario, cell)
                # As run_cell applies them: a mistyped one is refused before anything is written.
                with_block_settings(scenario.steps, cell.settings, strict=False)
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
    scenario = cached_scenario(cell.scenario)
    if idle_reason(scenario, cell) is not None:
        return True
    policies = policies_for(scenario, cell)
    return policies is not None and exercises(scenario, policies, cell.spec.axis)


def has_meter(cell: Cell) -> bool:
    """Whether the cell measures a window (a meter to plot)."""
    scenario = cached_scenario(cell.scenario)
    idle = idle_reason(scenario, cell) is not None
    return cell.spec.axis == "compaction" and not idle and applies(cell)


def cached_scenario(source: str) -> Scenario:
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


def file_probes(path: str) -> tuple[Probe, ...]:
    """The probes of a ``--probes`` file, read once per process while it is unchanged."""
    stat = os.stat(path) if os.path.isfile(path) else None
    stamp = None if stat is None else (stat.st_mtime_ns, stat.st_size)
    return _read_probes(path, stamp)


@lru_cache(maxsize=4)
def _read_probes(path: str, stamp: tuple[int, int] | None) -> tuple[Probe, ...]:
    """``probes_from_file``, cached by the file's modification time and size."""
    from memtape.lab.probes import probes_from_file  # noqa: PLC0415 (its patterns compile on import)

    return tuple(probes_from_file(Path(path)))


def exercises(scenario: Scenario, policies: Policies, axis: str) -> bool:
    """Whether the scenario exercises ``axis``: turns for compaction, store steps for
    forgetting (writes, reads, queries, or consolidation passes that write facts)."""
    if getattr(policies, axis) is None:
        return False
    if axis == "compaction":
        return any(isinstance(command, AddTurn) for command in scenario.steps)
    return any(AXIS_OF.get(type(c)) in {"forgetting", "consolidation"} for c in scenario.steps)
