"""``memtape bench``: compare policies on the same scenarios."""

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from memtape.commandline.output import print_lines, terminal_width
from memtape.core.errors import BadInput
from memtape.lab.files import output_path
from memtape.lab.frontier import check_gain
from memtape.lab.report import bench
from memtape.lab.results_table import SUFFIX

if TYPE_CHECKING:
    from memtape.projections.billing.prices import PriceTable


def run(args: argparse.Namespace) -> int:
    """Run every policy on every scenario and report their metrics (with ``--calibrate``,
    compare each session's simulated bill with the usage it recorded)."""
    from memtape.lab.table import column_names  # noqa: PLC0415 (rich: only for a bench)
    from memtape.projections.billing.prices import read_prices  # noqa: PLC0415

    prices = None if args.prices is None else read_prices(Path(args.prices))
    if args.calibrate:
        return _calibrate(args, prices)
    columns = None if args.columns is None else column_names(args.columns)
    results_out, table_out = _results(args.results or ())
    gain = None if args.frontier_on is None else check_gain(args.frontier_on)
    if gain == "answers_correct" and args.judge is None:
        raise BadInput("--frontier-on answers_correct: give --judge MODEL, which answers them")
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
        frontier=args.frontier or gain is not None,
        frontier_on=gain,
        runs=None if args.runs is None else Path(args.runs),
        verbose=args.verbose,
        width=terminal_width(),
        prices=prices,
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


_NOT_CALIBRATING: dict[str, object] = {
    "grid": [],
    "plot": None,
    "jobs": None,
    "engine": "process",
    "address": None,
    "results": None,
    "resume": False,
    "baseline": None,
    "fail_if": [],
    "fail_if_missing": False,
    "losses": False,
    "replicates": None,
    "probes": None,
    "judge": None,
    "frontier": False,
    "frontier_on": None,
    "runs": None,
    "columns": None,
}
"""The bench options --calibrate does not take, each with its value when not given: given,
each is refused rather than ignored (a --fail-if ignored passes a gate it never held)."""


def _calibrate(args: argparse.Namespace, prices: "PriceTable | None") -> int:
    """``bench --calibrate``: each scenario's calibration, then the JSON if asked for."""
    import json  # noqa: PLC0415

    from memtape.core.visible import visible  # noqa: PLC0415
    from memtape.lab.calibrate import calibrated, calibration_lines  # noqa: PLC0415
    from memtape.lab.files import check_writable, write_atomic  # noqa: PLC0415

    if args.policy:
        raise BadInput("--calibrate replays each session as its agent ran it: give no --policy")
    for name, unset in _NOT_CALIBRATING.items():
        if getattr(args, name) != unset:
            raise BadInput(
                f"--calibrate takes no --{name.replace('_', '-')}: it replays each session as "
                "recorded and compares its bill with the usage recorded, and gates nothing"
            )
    out = None if args.json is None else output_path(args.json)
    if out is not None:
        check_writable(out)
    found = [calibrated(source, args.set, prices) for source in args.scenarios]
    for calibration in found:
        print_lines(visible(line) for line in calibration_lines(calibration))
    if out is not None:
        data = {"calibrations": [calibration.data() for calibration in found]}
        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
        write_atomic(out, visible(text, "json").encode("utf-8"))
        print(f"wrote {out}")
    return 0
