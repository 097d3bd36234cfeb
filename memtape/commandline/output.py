"""What the commands print: plain lines, JSON, and whether to colour them."""

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterable
from typing import Any

from memtape.core.visible import visible


def color(args: argparse.Namespace) -> bool:
    """Whether to colour the output: ``--color``, or (``auto``) a terminal without NO_COLOR."""
    if args.color != "auto":
        return bool(args.color == "always")
    return sys.stdout.isatty() and "NO_COLOR" not in os.environ


def print_lines(lines: Iterable[str]) -> None:
    """Print each line of ``lines``."""
    for line in lines:
        print(line)


def print_json(data: Any) -> None:
    """Print ``data`` as indented JSON: exact, and safe on a terminal (each character of a
    string that could act on it is written as JSON's own escape)."""
    print(visible(json.dumps(data, indent=2, ensure_ascii=False), "json"))


def emit(args: argparse.Namespace, data: Any, render: Callable[[Any, bool], Iterable[str]]) -> None:
    """``data`` as JSON with ``--json`` (exact numbers), else as rendered text."""
    if args.json:
        print_json(data)
    else:
        print_lines(render(data, color(args)))
