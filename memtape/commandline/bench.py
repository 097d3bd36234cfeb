"""``memtape bench``: compare policies on the same scenarios."""

import argparse
from collections.abc import Sequence
from pathlib import Path

from memtape.commandline.output import terminal_width
from memtape.core.errors import BadInput
from memtape.lab.files import output_path
from memtape.lab.report import bench
from memtape.lab.results_table import SUFFIX


def run(args: argparse.Namespace) -> int:
    """Run every policy on every scenario and report their metrics."""
    from memtape.lab.table import column_names  # noqa: PLC0415 (rich: only for a bench)

    columns = None if args.columns is None else column_names(args.columns)
    results_out, table_out = _results(args.results or ())
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
        results_out=results_out,
        table_out=table_out,
        resume=args.resume,
        baseline=None if args.baseline is None else Path(args.baseline),
        fail_if=args.fail_if,
        fail_if_missing=args.fail_if_missing,
        columns=columns,
        replicates=args.replicates,
        judge=args.judge,
        probes=args.probes,
        frontier=args.frontier,
        verbose=args.verbose,
        width=terminal_width(),
    )


def _results(texts: Sequence[str]) -> tuple[Path | None, Path | None]:
    """The JSONL results file and the Parquet table the ``--results`` options name (by
    their endings: ``.parquet`` is a table, anything else JSONL), one of each at most."""
    found: dict[bool, Path] = {}
    for text in texts:
        path = output_path(text)
        table = path.suffix.lower() == SUFFIX
        if table in found:
            kind = "Parquet table" if table else "JSONL results file"
            raise BadInput(
                f"--results {text}: a second {kind} (after {found[table]}): name one "
                "FILE.jsonl and one FILE.parquet at most"
            )
        found[table] = path
    return found.get(False), found.get(True)
