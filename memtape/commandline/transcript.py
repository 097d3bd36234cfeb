"""``memtape import``: an agent's transcript as a scenario file."""

import argparse
import sys
import warnings

from memtape.commandline.writing import write_scenario
from memtape.lab.choices import AUTO
from memtape.lab.importers import import_transcript
from memtape.lab.importers.scenario import NothingSalient


def run(args: argparse.Namespace) -> int:
    """Write the transcript's scenario to ``--out``."""
    reads = [str(args.chat)] + ([] if args.probes in {None, AUTO} else [args.probes])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", NothingSalient)
        status = write_scenario(
            args.out,
            lambda: import_transcript(
                args.chat,
                format=args.format,
                salient=args.salient,
                pin=args.pin,
                budget=args.budget,
                hot_n=args.hot_n,
                tokenizer=args.tokenizer,
                sidechains=args.sidechains,
                probes=args.probes,
            ),
            reads,
        )
    for warning in caught:
        if isinstance(warning.message, NothingSalient):
            print(f"memtape: warning: {warning.message}", file=sys.stderr)
    return status
