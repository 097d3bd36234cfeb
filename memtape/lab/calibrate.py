"""``memtape bench --calibrate``: the simulated bill of a session against the usage it recorded.

The session is replayed as its agent ran it: under ``recorded`` when its
transcript recorded compactions, under ``none`` when it recorded none (the
agent kept every turn). Each turn's recorded usage is set beside the
request it answered (``memtape.projections.billing.calibration``).
"""

from collections.abc import Sequence
from typing import Any

import attrs

from memtape.core.errors import BadInput, NothingToApply
from memtape.lab.bench import Cell, PolicySpec, price_for
from memtape.policies.session import Policies, Session
from memtape.projections.billing.calibration import KINDS, Calibration, calibrate
from memtape.projections.billing.prices import PriceTable
from memtape.projections.billing.tally import CostTally
from memtape.scenarios import Scenario, load_scenario

LABELS = {"input": "input", "cache_read": "cache read", "cache_write": "cache write"}
"""Each kind of prompt token as a line of the report names it."""


@attrs.frozen
class Calibrated:
    """A scenario's calibration: the policy replayed, the model priced, the comparison."""

    scenario: str
    policy: str
    model: str
    calibration: Calibration

    def data(self) -> dict[str, Any]:
        """The calibration as ``--json`` writes it."""
        return {
            "scenario": self.scenario,
            "policy": self.policy,
            "model": self.model,
            **self.calibration.data(),
        }


def calibrated(
    source: str, settings: Sequence[str] = (), prices: PriceTable | None = None
) -> Calibrated:
    """Replay the scenario at ``source`` as its agent ran it and compare its bill with the
    usage it recorded; a scenario without usage or without a priced model is refused."""
    scenario = load_scenario(source)
    if not scenario.usage:
        raise BadInput(
            f"{source}: --calibrate needs turns with the usage their provider billed "
            "(import a session that recorded it: Claude Code, Codex, OpenTelemetry, a "
            "capture, Gemini CLI)"
        )
    policies, name = _as_recorded(scenario)
    spec = PolicySpec("compaction", name, (), name)
    cell = Cell(source, spec, tuple(settings), (), prices=prices)
    priced = price_for(scenario, cell)
    if priced is None:
        raise BadInput(
            f"{source}: --calibrate needs the model to price: [cost] model = NAME in the "
            "scenario, or --set cost.model=NAME"
        )
    price, cost = priced
    tally = CostTally(price, cost.ttl, cost.prefix, warm=cost.warm)
    session = Session(policies)
    for command in scenario.steps:
        before = session.state
        events = session.execute(command)
        tally.step(command, events, before, session.state, len(session.run) - len(events))
    rates = (price.input, price.cache_read, price.write_price(cost.ttl))
    comparison = calibrate(tally.metrics().requests, tally.answered, scenario.usage, rates)
    return Calibrated(scenario.name, name, price.model, comparison)


def _as_recorded(scenario: Scenario) -> tuple[Policies, str]:
    """The scenario's policies with its compactions as recorded, or none at all."""
    for name in ("recorded", "none"):
        try:
            return scenario.policies.with_settings([f"compaction.policy={name}"]), name
        except NothingToApply:
            continue
    raise BadInput(f"{scenario.source}: --calibrate needs a [compaction] policy")


def calibration_lines(calibrated: Calibrated) -> list[str]:
    """The report of one calibration, a line each: the kinds, the errors, the worst turn
    (the table 59 cells wide, within the narrowest terminal the commands write for)."""
    found = calibrated.calibration
    lines = [
        f"{calibrated.scenario}: {calibrated.policy} priced as {calibrated.model}, "
        f"{len(found.turns)} turns with recorded usage",
        f"  {'':<11}{'simulated':>11}{'recorded':>11}{'mean |error|':>14}{'relative':>10}",
    ]
    for kind in KINDS:
        mean = found.mean_absolute(kind)
        relative = found.relative(kind)
        lines.append(
            f"  {LABELS[kind]:<11}{found.total(kind, simulated=True):>11,}"
            f"{found.total(kind, simulated=False):>11,}"
            f"{'-' if mean is None else f'{mean:,.1f}':>14}"
            f"{'-' if relative is None else f'{relative:.1%}':>10}"
        )
    error = found.usd_error
    lines.append(
        f"  {'prompt USD':<11}{found.usd(simulated=True):>11.4f}{found.usd(simulated=False):>11.4f}"
        f"{'':>14}{'-' if error is None else f'{error:+.1%}':>10}"
    )
    worst = found.worst
    if worst is not None:
        lines.append(
            f"  worst turn: {worst.turn} (simulated {_kinds(worst.simulated)}, "
            f"recorded {_kinds(worst.recorded)})"
        )
    if found.unseen is not None and found.unseen > 0:
        lines.append(
            f"  the agent sent {found.unseen:,} prompt tokens a turn (median) that memtape "
            "does not see: a system prompt and tools the transcript does not hold, or "
            "another tokenizer's counts"
        )
    return lines


def _kinds(counts: tuple[int, int, int]) -> str:
    return "/".join(f"{count:,}" for count in counts)
