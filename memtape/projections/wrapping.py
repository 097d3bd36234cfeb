"""Lines fitted to a terminal's width: broken at spaces, never inside a word.

Every command's text goes through here when it knows a width (``memtape.commandline.output``
decides when: a terminal's, or ``COLUMNS``), so a narrow terminal never cuts a word where
its own line ends.
"""

import re
import unicodedata
from collections.abc import Iterable, Iterator

_COLOUR = re.compile(r"\x1b\[[0-9;]*m")
"""An ANSI colour code, as ``memtape.projections.text.paint`` writes them: no cells."""

_PIECES = re.compile(r" +|[^ ]+")
"""A line's runs of spaces and its words."""

HANG = 4
"""How much further than its line a continuation is indented, so it reads as one."""


def cells(text: str) -> int:
    """The terminal cells ``text`` takes: a colour code none, a combining mark none, a wide
    (East Asian) character two, any other character one."""
    plain = _COLOUR.sub("", text)
    if plain.isascii():
        return len(plain)
    return sum(_cell(char) for char in plain)


def _cell(char: str) -> int:
    if unicodedata.combining(char):
        return 0
    return 2 if unicodedata.east_asian_width(char) in {"W", "F"} else 1


def wrap(line: str, width: int) -> list[str]:
    """``line`` as lines of at most ``width`` cells, broken only at spaces.

    The spaces inside a line stay as they were (a row keeps its columns); a break drops the
    spaces where it falls. A row's continuation lines up under the column its first break
    falls in (a column begins after two or more spaces), so the rows of one table continue
    at one place however their first cells are aligned; a line of one column (prose) is
    indented ``HANG`` further than itself. Either is at most half the width. A word too
    long for a line of its own (a path) overflows it rather than being cut.
    """
    if cells(line) <= width:
        return [line]
    text = line.lstrip(" ")
    indent = line[: len(line) - len(text)]
    hang: str | None = None
    column = len(indent)  # the cell where the column being filled begins
    lines: list[str] = []
    current, used, space = indent, len(indent), ""
    started = False
    for piece in _PIECES.findall(text):
        if piece.startswith(" "):
            space = piece
            continue
        size = cells(piece)
        if started and used + len(space) + size > width:
            if hang is None:
                start = column if column > len(indent) else len(indent) + HANG
                hang = " " * min(start, width // 2)
            lines.append(current)
            current, used = hang + piece, len(hang) + size
        else:
            gap = space if started else ""
            if len(gap) > 1 and hang is None:
                column = used + len(gap)
            current, used = current + gap + piece, used + len(gap) + size
        started, space = True, ""
    lines.append(current)
    return lines


def wrapped(lines: Iterable[str], width: int | None) -> Iterator[str]:
    """Each of ``lines`` wrapped to ``width`` (``wrap``), a line holding line breaks taken
    as the lines it holds; ``lines`` as they are when ``width`` is None."""
    for line in lines:
        if width is None:
            yield line
        else:
            for part in line.split("\n"):
                yield from wrap(part, width)
