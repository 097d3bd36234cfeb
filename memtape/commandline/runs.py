"""``memtape runs``: the runs a store holds."""

import argparse
import json

import attrs

from memtape.storage import open_store


def run(args: argparse.Namespace) -> int:
    """List the store's runs: id, scenario, events, policies, creation time."""
    with open_store(args.store) as store:
        runs = store.runs()
    if args.json:
        print(json.dumps([attrs.asdict(run) for run in runs], indent=2, ensure_ascii=False))
        return 0
    for run in runs:
        policies = ", ".join(
            f"{axis} {table.get('model' if axis == 'llm' else 'policy')}"
            for axis, table in (run.policies or {}).items()
            if isinstance(table, dict)
        )
        print(
            f"{args.store}#{run.id}  {run.scenario}  {run.events} events  "
            f"{policies or 'no policies'}  created {run.created}"
        )
    return 0
