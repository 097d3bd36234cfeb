"""``memtape check``: verify a run file's integrity and invariants, and re-decide it."""

import argparse
import sys

from memtape.checking.check import check_file
from memtape.commandline.output import print_lines
from memtape.core.errors import MemtapeError
from memtape.core.visible import visible
from memtape.runs.files import trusted
from memtape.runs.signed import signature_required
from memtape.scenarios import is_scenario


def run(args: argparse.Namespace) -> int:
    """Print the check's report; 0 when clean, 1 when anything is wrong. Each stage's
    progress goes to stderr (a bar on a terminal, lines with ``-v``, none with ``-q``)."""
    from memtape.lab.progress import Stages, progress_mode  # noqa: PLC0415 (rich, on a bar)

    if is_scenario(str(args.run)):
        raise MemtapeError(
            f"{args.run}: check takes a run file, not a scenario; record it first "
            f"(memtape run {args.run} --out RUN.jsonl)"
        )
    verbose, quiet = bool(getattr(args, "verbose", False)), bool(args.quiet)
    mode = progress_mode(sys.stderr, verbose=verbose, quiet=quiet)
    with Stages(str(args.run), mode=mode, err=sys.stderr) as stages:
        report = check_file(
            args.run,
            trust=trusted(args.trust),
            live=args.live,
            settings=args.set,
            require_signed=signature_required(args.require_signed),
            progress=stages.update if mode != "off" else None,
        )
    print_lines(visible(line, "message") for line in report.lines())
    return 0 if report.ok else 1
