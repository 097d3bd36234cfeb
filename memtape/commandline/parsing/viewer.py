"""The viewer's commands: ``view`` (a page of a run) and ``serve`` (the page, live)."""

import argparse

from memtape.commandline.numbers import integer
from memtape.commandline.parsing.arguments import (
    RUN_HELP,
    Command,
    add_quiet,
    add_settings,
    add_trust,
    handler,
)


def view(parser: argparse.ArgumentParser) -> None:
    """``view``'s parser."""
    parser.description = (
        "Write one HTML file (no network needed) to step through a run in a browser."
    )
    parser.add_argument("run", metavar="RUN", help=RUN_HELP)
    parser.add_argument(
        "--out",
        metavar="PAGE.html",
        help=(
            "default: the run file's name + .html (a.jsonl: a.html, runs.db#3: runs-3.html, "
            "a comparison: a-vs-b.html), in the current directory"
        ),
    )
    parser.add_argument("--compare", metavar="RUN2", help="a second run of the same inputs")
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace the page even if it shows another run (or is not a memtape page)",
    )
    parser.add_argument(
        "--probes",
        metavar="auto|SOURCE",
        help=(
            "the probes to follow (default: the scenario's, or for a run file the shipped "
            "scenario's its header names): auto (planted by import's rule on each run's "
            "turns), a scenario (its [[probe]] tables), or a .toml or .jsonl probes file"
        ),
    )
    add_settings(parser)
    add_trust(parser)
    add_quiet(parser)
    parser.set_defaults(handler=handler("view"))


def serve(parser: argparse.ArgumentParser) -> None:
    """``serve``'s parser."""
    parser.description = (
        "Serve the viewer on 127.0.0.1 and drive a simulation from the page: its next "
        "step (a scenario's, or a recorded run's commands in order) or any command. "
        "Open the URL it prints: it carries the session's token, without which the "
        "server answers nothing (nor to another host's or origin's request)."
    )
    parser.add_argument(
        "target",
        nargs="?",
        default="refund-desk",
        metavar="SCENARIO|RUN",
        help="a scenario, or a recorded run to replay (default: refund-desk)",
    )
    parser.add_argument("--port", type=integer, default=0, help="the port (default: a free one)")
    add_settings(parser)
    add_trust(parser)
    parser.set_defaults(handler=handler("serve"))


COMMANDS = {
    "view": Command("write a self-contained HTML page to scrub through a run", view),
    "serve": Command("the viewer, live: step a scenario or a recorded run from the browser", serve),
}
"""This family's commands, in the order ``memtape --help`` lists them."""
