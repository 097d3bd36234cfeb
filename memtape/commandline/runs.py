"""``memtape runs``: the runs a store holds."""

import argparse
import json

import attrs

from memtape.commandline.output import print_lines
from memtape.storage import open_store


def run(args: argparse.Namespace) -> int:
    """List the store's runs: id, scenario, events, policies, creation time."""
    with open_store(args.store) as store:
        runs = store.runs()
    if args.json:
        print(json.dumps([attrs.asdict(run) for run in runs], indent=2, ensure_ascii=False))
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
                f"{args.store}#{run.id}",
                run.scenario or "-",
                str(run.events),
                policies or "no policies",
                run.created,
            )
        )
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
    print_lines(
        "  ".join(
            cell.rjust(width) if column == 2 else cell.ljust(width)
            for column, (cell, width) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in (rows if runs else ())
    )
    return 0
