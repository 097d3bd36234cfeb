"""What the commands print: plain lines, JSON, whether to colour them, and how wide."""

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterable
from typing import Any, TextIO

from memtape.core.visible import visible
from memtape.projections.wrapping import wrapped

NARROWEST = 60
"""The narrowest width the output is fitted to: a narrower terminal gets lines of 60."""


def color(args: argparse.Namespace) -> bool:
    """Whether to colour the output: ``--color``, or (``auto``) a terminal without NO_COLOR."""
    if args.color != "auto":
        return bool(args.color == "always")
    return sys.stdout.isatty() and "NO_COLOR" not in os.environ


def terminal_width(stream: TextIO | None = None) -> int | None:
    """The width to fit the output to: ``COLUMNS`` when it is set (a whole number), else the
    width of the terminal ``stream`` (default: stdout) is, never under ``NARROWEST``; None
    when ``stream`` is not a terminal and ``COLUMNS`` is unset, so a pipe or a file gets the
    lines whole."""
    stream = sys.stdout if stream is None else stream
    columns = os.environ.get("COLUMNS", "")
    # A width past four digits is no terminal's: ignored, as a malformed one is.
    if columns.isascii() and columns.isdigit() and len(columns) <= 4 and int(columns) > 0:
        return max(int(columns), NARROWEST)
    if not stream.isatty():
        return None
    try:
        # The stream's own terminal: shutil.get_terminal_size asks sys.__stdout__'s.
        measured = os.get_terminal_size(stream.fileno()).columns
    except (OSError, ValueError):
        return None
    return max(measured, NARROWEST) if measured else None


def complain(kind: str, message: str) -> None:
    """``memtape: KIND: MESSAGE`` on stderr (``kind`` error or warning; ``message`` made
    visible by the caller): one line to a pipe or a file, broken at spaces to the terminal's
    width as stdout's lines are, so a narrow terminal never cuts one of its words."""
    for line in wrapped([f"memtape: {kind}: {message}"], terminal_width(sys.stderr)):
        print(line, file=sys.stderr)


def print_lines(lines: Iterable[str], width: int | None = None) -> None:
    """Print each line of ``lines``, wrapped at spaces to ``width`` (default: the
    terminal's, ``terminal_width``)."""
    for line in wrapped(lines, terminal_width() if width is None else width):
        print(line)


def print_json(data: Any) -> None:
    """Print ``data`` as indented JSON: exact, and safe on a terminal (each character of a
    string that could act on it is written as JSON's own escape)."""
    print(visible(json.dumps(data, indent=2, ensure_ascii=False), "json"))


def emit(args: argparse.Namespace, data: Any, render: Callable[[Any, bool], Iterable[str]]) -> None:
    """``data`` as JSON with ``--json`` (exact numbers), else as rendered text, wrapped to
    the terminal's width."""
    if args.json:
        print_json(data)
    else:
        print_lines(render(data, color(args)))
