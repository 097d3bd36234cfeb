"""Run files edited as a JSON-level editor would: with the chain recomputed, or without one.

Each takes a run file's lines as parsed JSON (the header first) and changes
them in place: ``rechained`` recomputes every link and the head with
``memtape.core.chain``, as an editor who knows the format but not the key
would (a signature is left as it was); ``unchained`` strips the chain, which
makes the lines a file written before memtape chained its logs.
"""

import json
from pathlib import Path
from typing import Any

from memtape.core.chain import HEAD, LINK, SIGNATURE, Chain

Line = dict[str, Any]


def lines_of(path: Path) -> list[Line]:
    """The run file's lines, parsed."""
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def write_lines(path: Path, lines: list[Line]) -> Path:
    """Write ``lines`` back to ``path`` as a run file."""
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), "utf-8")
    return path


def rechained(lines: list[Line]) -> list[Line]:
    """``lines`` with every link and the head recomputed; a signature stays as it was."""
    chain = Chain.of(lines[0])
    for line in lines[1:]:
        line.pop(LINK, None)
        line[LINK] = chain.add(line)
    lines[0][HEAD] = chain.head
    return lines


def unchained(lines: list[Line]) -> list[Line]:
    """``lines`` without their links, head and signature."""
    for name in (HEAD, SIGNATURE):
        lines[0].pop(name, None)
    for line in lines[1:]:
        line.pop(LINK, None)
    return lines
