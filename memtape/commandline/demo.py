"""``memtape demo``: the three seed mechanisms, walked through."""

import argparse

from memtape.commandline.output import color, print_lines
from memtape.demo import demo_lines


def run(args: argparse.Namespace) -> int:
    """Print the demo."""
    print_lines(demo_lines(color(args)))
    return 0
