"""``memtape run``: run a scenario and record its events."""

import argparse

from memtape.commandline.opening import simulate
from memtape.commandline.output import print_lines
from memtape.commandline.priced import price_table
from memtape.commandline.writing import run_output
from memtape.core.visible import visible
from memtape.runs.files import save_run
from memtape.scenarios import load_scenario
from memtape.scenarios.loader import with_settings


def run(args: argparse.Namespace) -> int:
    """Record the scenario's run to ``--out``."""
    out = run_output(args.out)
    scenario = load_scenario(args.scenario)
    scenario = with_settings(scenario, args.set)
    table = None if args.prices is None else price_table(args.prices)
    if scenario.cost.model is not None:
        # A model without a price is refused before the run, not when it is shown.
        table = price_table(None) if table is None else table
        table.price(scenario.cost.model, f"{scenario.source}: [cost] model")
    session = simulate(scenario, args)
    address = save_run(session, out, scenario.name, cost=scenario.cost.table() or None)
    print_lines(
        [
            f"recorded {len(session.run)} events from {len(scenario.steps)} steps "
            f"of {visible(scenario.name)} to {visible(str(address))}"
        ]
    )
    return 0
