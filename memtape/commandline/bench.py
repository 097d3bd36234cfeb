"""``memtape bench``: compare policies on the same scenarios."""

import argparse

from memtape.commandline.output import terminal_width
from memtape.lab.files import output_path
from memtape.lab.report import bench


def run(args: argparse.Namespace) -> int:
    """Run every policy on every scenario and report their metrics."""
    from memtape.lab.table import column_names  # noqa: PLC0415 (rich: only for a bench)

    columns = None if args.columns is None else column_names(args.columns)
    return bench(
        args.scenarios,
        args.policy,
        settings=args.set,
        grid=args.grid,
        json_out=None if args.json is None else output_path(args.json),
        plot_out=None if args.plot is None else output_path(args.plot),
        jobs=args.jobs,
        quiet=args.quiet,
        losses=args.losses,
        engine=args.engine,
        address=args.address,
        results_out=None if args.results is None else output_path(args.results),
        resume=args.resume,
        columns=columns,
        replicates=args.replicates,
        judge=args.judge,
        probes=args.probes,
        frontier=args.frontier,
        verbose=args.verbose,
        width=terminal_width(),
    )
