"""Run files edited as a JSON-level editor would: with the chain recomputed, or without one.

Each takes a run file's lines as parsed JSON (the header first) and changes
them in place: ``rechained`` recomputes every link and the head with
``memtape.core.chain``, as an editor who knows the format but not the key
would (a signature is left as it was); ``unchained`` strips the chain, which
makes the lines a file written before memtape chained its logs;
``forged_past_head`` and ``stripped`` are the two attacks of issue 28 on a
signed run, by someone who has the file but not the key.
"""

import json
import sqlite3
from collections.abc import Callable
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


FORGED_CLOCK = 99.0
"""The time the forged step of ``forged_past_head`` advances the clock to."""


def _forged_step(at: int, step: int, *, end: bool = True) -> Line:
    """A whole command (or, without ``end``, its start) advancing the clock to
    ``FORGED_CLOCK``, as a run file's line without its link."""
    line: Line = {
        "at": at,
        "step": step,
        "type": "ClockAdvanced",
        "v": 1,
        "event": {"to": FORGED_CLOCK},
        "command": {"kind": "advance", "to": FORGED_CLOCK},
    }
    if end:
        line["end"] = True
    return line


def forged_past_head(path: Path) -> Path:
    """The run file at ``path`` with a forged whole command chained on after its header's
    head (the clock advanced to ``FORGED_CLOCK``), then one junk line: the header is left
    as it was, signature and all, so the file passes for a run with a torn tail."""
    lines = lines_of(path)
    chain = Chain(bytes.fromhex(lines[0][HEAD]))
    last = lines[-1]
    forged = _forged_step(last["at"] + 1, last["step"] + 1)
    forged[LINK] = chain.add(forged)
    write_lines(path, [*lines, forged])
    with path.open("a", encoding="utf-8") as out:
        out.write('{"at": ' + str(forged["at"] + 1) + ', "ju')
    return path


def stripped(path: Path, edit: Callable[[list[Line]], object]) -> Path:
    """The run file at ``path`` changed by ``edit``, chained again and its signature dropped:
    what is left is an unsigned run, whose edit no chain shows."""
    lines = lines_of(path)
    edit(lines)
    lines[0].pop(SIGNATURE, None)
    return write_lines(path, rechained(lines))


def forged_rows(store: Path, run_id: int = 1, *, torn: bool = True) -> Path:
    """``forged_past_head`` in a SQLite store: a forged command's row chained on after run
    ``run_id``'s head, then (when ``torn``) a row starting a command that never ends; the
    run's head and signature are left as they were."""
    raw = sqlite3.connect(store)
    with raw:
        [head] = raw.execute("SELECT head FROM runs WHERE id = ?", (run_id,)).fetchone()
        at, step = raw.execute(
            "SELECT MAX(position), MAX(step) FROM events WHERE run_id = ?", (run_id,)
        ).fetchone()
        chain = Chain(bytes.fromhex(head))
        records = [_forged_step(at + 1, step + 1)]
        if torn:
            records.append(_forged_step(at + 2, step + 2, end=False))
        for record in records:
            raw.execute(
                "INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    run_id,
                    record["at"],
                    record["step"],
                    record["type"],
                    record["v"],
                    json.dumps(record["event"]),
                    json.dumps(record["command"]),
                    int(record.get("end", False)),
                    chain.add(record),
                ),
            )
    raw.close()
    return store
