"""``memtape runs``: the runs a store holds."""

import argparse

import attrs

from memtape.commandline.output import print_json
from memtape.core.visible import visible
from memtape.storage import open_store


def run(args: argparse.Namespace) -> int:
    """List the store's runs: id, scenario, events, policies, creation time (each text
    ``visible`` as a field: a store's rows may hold anything)."""
    with open_store(args.store) as store:
        runs = store.runs()
    if args.json:
        print_json([attrs.asdict(run) for run in runs])
        return 0
    rows = [("run", "scenario", "events", "policies", "created")]
    for run in runs:
        policies = ", ".join(
            f"{axis} {table.get('model' if axis == 'llm' else 'policy')}"
            for axis, table in (run.policies or {}).items()
            if isinstance(table, dict)
        )
        rows.append(
            (
                visible(f"{args.store}#{run.id}"),
                visible(run.scenario) if run.scenario else "-",
                str(run.events),
                visible(policies) if policies else "no policies",
                visible(run.created),
            )
        )
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
    for row in rows if runs else ():
        cells = [
            cell.rjust(width) if column == 2 else cell.ljust(width)
            for column, (cell, width) in enumerate(zip(row, widths, strict=True))
        ]
        print("  ".join(cells).rstrip())
    return 0
