"""``memtape import``: an agent's transcript as a scenario file."""

import argparse

from memtape.commandline.writing import write_scenario
from memtape.lab.choices import AUTO
from memtape.lab.importers import import_transcript


def run(args: argparse.Namespace) -> int:
    """Write the transcript's scenario to ``--out``."""
    reads = [str(args.chat)] + ([] if args.probes in {None, AUTO} else [args.probes])
    return write_scenario(
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
