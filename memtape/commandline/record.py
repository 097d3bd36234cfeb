"""``memtape run``: run a scenario and record its events."""

import argparse

import attrs

from memtape.commandline.opening import simulate
from memtape.commandline.writing import run_output
from memtape.core.visible import visible
from memtape.runs.files import save_run
from memtape.scenarios import load_scenario


def run(args: argparse.Namespace) -> int:
    """Record the scenario's run to ``--out``."""
    out = run_output(args.out)
    scenario = load_scenario(args.scenario)
    if args.set:
        scenario = attrs.evolve(scenario, policies=scenario.policies.with_settings(args.set))
    session = simulate(scenario, args)
    address = save_run(session, out, scenario.name)
    print(
        f"recorded {len(session.run)} events from {len(scenario.steps)} steps "
        f"of {visible(scenario.name)} to {visible(str(address))}"
    )
    return 0
