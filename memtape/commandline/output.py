"""What the commands print: plain lines, JSON, and whether to colour them."""

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterable
from typing import Any


def color(args: argparse.Namespace) -> bool:
    """Whether to colour the output: ``--color``, or (``auto``) a terminal without NO_COLOR."""
    if args.color != "auto":
        return bool(args.color == "always")
    return sys.stdout.isatty() and "NO_COLOR" not in os.environ


def print_lines(lines: Iterable[str]) -> None:
    """Print each line of ``lines``."""
    for line in lines:
        print(line)


def emit(args: argparse.Namespace, data: Any, render: Callable[[Any, bool], Iterable[str]]) -> None:
    """``data`` as JSON with ``--json`` (exact numbers), else as rendered text."""
    if args.json:
        print(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        print_lines(render(data, color(args)))
