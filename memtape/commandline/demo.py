"""``memtape demo``: the three seed mechanisms, walked through."""

import argparse

from memtape.commandline.output import color, print_lines, terminal_width
from memtape.demo import demo_lines


def run(args: argparse.Namespace) -> int:
    """Print the demo."""
    width = terminal_width()
    print_lines(demo_lines(color(args), width), width)
    return 0
