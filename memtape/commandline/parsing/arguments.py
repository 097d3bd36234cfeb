"""What several commands' parsers share: the RUN argument's help, ``--trust``, ``-q``,
``--set``, and the handler that imports a command's module when it runs."""

import argparse
import importlib
from collections.abc import Callable
from typing import NamedTuple

from memtape.core.collector import collector_paused

RUN_HELP = "a run file (.jsonl), runs.db[#ID], or a scenario (a shipped name or a .toml file)"
"""The help of a RUN argument that a scenario, run in memory, may stand for."""
RUN_FILE_HELP = "a run file (.jsonl) or runs.db[#ID]"
"""The help of a RUN argument that must be a recorded run."""

Fill = Callable[[argparse.ArgumentParser], None]
"""What fills in a command's parser: its description, arguments and handler."""


class Command(NamedTuple):
    """A command as the top parser lists it: its one-line help, and what fills in its
    parser when it is the command being run (or when the whole parser is built)."""

    help: str
    fill: Fill


def handler(name: str, function: str = "run") -> Callable[[argparse.Namespace], int]:
    """The handler of a command: ``function`` of ``memtape.commandline.<name>``, imported
    when the command runs (building the parser imports no command)."""

    def handle(args: argparse.Namespace) -> int:
        # Importing defines classes and functions that live as long as the process: the
        # collections their allocations set off find nothing to free, and without the
        # pause's filing them as old, the first young collection after it walks them all.
        with collector_paused(file_as_old=args.as_process):
            module = importlib.import_module(f"memtape.commandline.{name}")
        status: int = getattr(module, function)(args)
        return status

    handle.__name__ = name if function == "run" else f"{name}_{function}"
    return handle


def add_trust(parser: argparse.ArgumentParser) -> None:
    """``--trust``: a run file's import paths and model are the user's to trust."""
    parser.add_argument(
        "--trust",
        action="store_true",
        help=(
            "trust a run file's code and model: import the policies it names by import "
            "path, and ask the model and server its [llm] table records (run files are "
            "data: without it, neither; also MEMTAPE_TRUST=1)"
        ),
    )


def add_quiet(parser: argparse.ArgumentParser) -> None:
    """``-q``: no progress on stderr."""
    parser.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="no progress on stderr (shown on a terminal, and with -v elsewhere)",
    )


def add_prices(parser: argparse.ArgumentParser) -> None:
    """``--prices FILE.toml``: rows over the shipped price table."""
    parser.add_argument(
        "--prices",
        metavar="FILE.toml",
        help='prices to bill at, over the shipped ones ([models."NAME"] tables, USD per million)',
    )


def add_settings(parser: argparse.ArgumentParser) -> None:
    """``--set AXIS.PARAM=VALUE``, repeatable."""
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="AXIS.PARAM=VALUE",
        help="a policy parameter to change, e.g. --set compaction.budget=60 (repeatable)",
    )
