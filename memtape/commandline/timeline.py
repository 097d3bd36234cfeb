"""``memtape timeline``: one row per event of a run."""

import argparse
import shutil
import sys

from memtape.commandline.opening import open_run
from memtape.commandline.output import color, print_json, print_lines
from memtape.projections.text import render_timeline
from memtape.projections.timeline import timeline


def run(args: argparse.Namespace) -> int:
    """Print the run's timeline, as text or JSON."""
    loaded = open_run(args.run, trust=args.trust)
    rows = timeline(loaded.session.run, loaded.session.policies_at)
    if args.json:
        print_json([row.data() for row in rows])
    else:
        width = shutil.get_terminal_size().columns if sys.stdout.isatty() else None
        print_lines(render_timeline(rows, color(args), width))
    return 0
