"""The JSONL run file: a header line, then one event per line.

Each event line is ``{"at", "step", "type", "v", "event", "h"}``; the first
event of a command's batch also carries ``"command"`` and the last carries
``"end": true``, so a reader knows where whole commands begin and end. ``"h"``
is the event's link in the run's hash chain (``memtape.core.chain``), whose
head the header carries as ``"chain"``, signed as ``"signature"`` when
``MEMTAPE_SIGNING_KEY`` is set. Files written before the chain have neither and
read as before. Writing is atomic: a failed write leaves any earlier file untouched.
"""

import io
import json
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import orjson

from memtape._version import __version__
from memtape.core.codec import (
    canonical_role,
    command_data,
    command_from_data,
    event_data,
    event_from_data,
    sharing_strings,
)
from memtape.core.collector import collector_paused
from memtape.core.commands import Command
from memtape.core.errors import BadInput
from memtape.core.events import Event
from memtape.core.paths import read_regular
from memtape.core.reprs import fields_repr
from memtape.core.run import Run

if TYPE_CHECKING:
    from memtape.core.chain import Verdict

FORMAT = 1
"""The run file format this memtape writes and reads."""


@attrs.frozen
class RecordedBatch:
    """One command and the events that honoured it, as read from a file."""

    __repr__ = fields_repr

    step: int
    command: Command
    events: tuple[Event, ...]
    line: int


@attrs.frozen
class RunFile:
    """A run file's header and its batches, decoded but not yet folded.

    ``torn`` describes a torn tail that was dropped (a last command without
    its end mark, or an unfinished last line), or is None for a whole file.
    ``uncovered`` describes the steps dropped because they come after the
    header's chain head (``cut_at_head``), or is None.
    """

    __repr__ = fields_repr

    header: dict[str, Any]
    batches: tuple[RecordedBatch, ...]
    torn: str | None = None
    uncovered: str | None = None


def write_run(path: Path, header: Mapping[str, Any], run: Run) -> None:
    """Write ``run`` to ``path`` with ``header``, replacing the file atomically.

    The lines go to a fresh temporary file beside ``path``, which then takes
    its place (``memtape.core.atomic``); on any failure or interruption the
    temporary file is removed and ``path`` is as it was. The run is chained
    afresh (any chain fields of ``header`` are dropped) and signed when
    ``MEMTAPE_SIGNING_KEY`` is set.
    """
    # Imported here: reading a run (``memtape show``) neither writes nor chains.
    from memtape.core.atomic import atomic_file  # noqa: PLC0415
    from memtape.core.chain import HEAD, HEAD_HEX, LINK, SIGNATURE, Chain, signing_key  # noqa: PLC0415

    with atomic_file(path) as binary, io.TextIOWrapper(binary, encoding="utf-8") as out:
        top = {k: v for k, v in stamp(header).items() if k not in (HEAD, SIGNATURE)}
        top.update(events=len(run), steps=run.steps)
        chain, key = Chain.of(top), signing_key()
        # The head is known once every line is written: the header goes first
        # with placeholders of the same length, and is written again at the end.
        top[HEAD] = "0" * HEAD_HEX
        if key is not None:
            top[SIGNATURE] = "0" * HEAD_HEX
        out.write(json.dumps(top, ensure_ascii=False) + "\n")
        for line in _event_lines(run):
            line[LINK] = chain.add(line)
            out.write(json.dumps(line, ensure_ascii=False) + "\n")
        top[HEAD], signature = chain.head, chain.signature(key)
        if signature is not None:
            top[SIGNATURE] = signature
        out.seek(0)
        out.write(json.dumps(top, ensure_ascii=False) + "\n")


def stamp(header: Mapping[str, Any]) -> dict[str, Any]:
    """``header`` under the stamp every run carries: the format and the memtape that wrote it.

    The stamp comes first and cannot be overridden by the header's own entries.
    """
    top: dict[str, Any] = {"memtape": "run", "format": FORMAT, "version": __version__}
    top.update((key, value) for key, value in header.items() if key not in top)
    return top


def _event_lines(run: Run) -> Iterator[dict[str, Any]]:
    events = run.events
    for step, command in enumerate(run.commands, start=1):
        start, end = run.batch(step)
        for at in range(start + 1, end + 1):
            event = events[at - 1]
            line: dict[str, Any] = {
                "at": at,
                "step": step,
                "type": type(event).__name__,
                "v": event.VERSION,
                "event": event_data(event),
            }
            if at == start + 1:
                line["command"] = command_data(command)
            if at == end:
                line["end"] = True
            yield line


def read_run(path: Path) -> RunFile:
    """Read and check a run file; any problem is a ``BadInput`` naming the line.

    A torn tail (an unfinished last command, or an unfinished last line) is
    dropped and described in ``RunFile.torn``: the run is whole up to there.
    A chained run ends at the event whose stored link is its header's head:
    the steps after it are dropped and described (``cut_at_head``). The
    chain is not recomputed here: ``verify_run`` does that, for ``memtape check``.
    """
    from memtape.core.chain import HEAD, HEAD_HEX, LINK_HEX  # noqa: PLC0415 (names: no hashing)

    lines, unfinished = _split(_contents(path))
    header = _header(lines, path)
    head = header.get(HEAD)
    mark = head[:LINK_HEX] if isinstance(head, str) and len(head) == HEAD_HEX else None
    with collector_paused():
        batches, open_step, covered = _batches(lines, path, mark)
    tail = []
    if open_step is not None:
        tail.append(f"step {open_step[0]} (from line {open_step[1]}) has no end mark")
    if unfinished is not None:
        tail.append(f"line {unfinished} is an unfinished write")
    torn = None
    if tail:
        torn = f"a torn tail: {'; '.join(tail)}; loaded the {len(batches)} whole steps before it"
    recorded = cut_at_head(RunFile(header, batches, torn), covered, lambda at: f"line {at + 1}")
    # Steps past the head are dropped and said so: the counts written beside the head are
    # not asked to cover them (whoever chained them on may have left the counts alone). A
    # file with no event at its head was cut or edited inside: its counts say how.
    if torn is None and (recorded.uncovered is None or covered is None):
        events = sum(len(batch.events) for batch in batches)
        if not (
            _is_int(header.get("events"), events) and _is_int(header.get("steps"), len(batches))
        ):
            raise BadInput(
                f"{path}: the header promises {header.get('events')!r} events in "
                f"{header.get('steps')!r} steps, the file holds {events} in {len(batches)}"
            )
    return recorded


def cut_at_head(recorded: RunFile, covered: int | None, where: Callable[[int], str]) -> RunFile:
    """``recorded`` with only the steps its header's chain head covers.

    ``covered`` is the position of the first event whose stored link is the
    head's start (its first ``LINK_HEX`` digits), None when none is: found
    without hashing, so any reader can afford it; a stored link that lies is
    the chain's to catch (``verify_run``, under the key). The head is where
    the run ends: anyone can chain whole commands on after it (and end them
    with a torn tail, to pass for a file cut short), so the steps after it are
    dropped and ``RunFile.uncovered`` says so, naming the first by ``where``
    (its position: ``line 12``). A run without a chain, or that ends at its
    head, is returned as it is. A chained run none of whose events is at its
    head loads no step at all: what the head covers cannot be told.
    """
    from memtape.core.chain import HEAD  # noqa: PLC0415 (a name only)

    batches = recorded.batches
    if recorded.header.get(HEAD) is None or not batches:
        return recorded
    kept = [b for b in batches if covered is not None and b.line + len(b.events) - 2 <= covered]
    if len(kept) == len(batches):
        return recorded
    first = batches[len(kept)]
    if covered is None:
        problem = (
            "no event's link is the header's chain head: its events were changed, cut short "
            f"or added after the run was written; loaded none of its {len(batches)} steps"
        )
    else:
        problem = (
            f"step {first.step} and the steps after it (from {where(first.line - 1)}) come after "
            "the header's chain head: they were added after the run was written and are not "
            f"part of it; loaded the {len(kept)} steps the head covers"
        )
    return RunFile(recorded.header, tuple(kept), None, problem)


def verify_run(path: Path, key: bytes | None) -> "Verdict":
    """Verify the chain of the run file at ``path``, and its signature under ``key``.

    The file is read again, line by line, without decoding its events (read
    it with ``read_run`` first: a file it refuses may still verify here).
    An event is named by its line.
    """
    from memtape.core.chain import LINK, verify  # noqa: PLC0415 (only a check verifies)

    lines, _ = _split(_contents(path))
    header = _header(lines, path)

    def records() -> Iterator[tuple[dict[str, Any], Any]]:
        for number, raw in enumerate(lines[1:], start=2):
            line = _json(raw, path, number)
            yield line, line.pop(LINK, None)

    return verify(header, records(), key, where=lambda at: f"line {at + 1}")


def _contents(path: Path) -> bytes:
    return read_regular(path, "run file")


def _split(data: bytes) -> tuple[list[bytes], int | None]:
    """A file's lines, and the number of an unfinished last line (dropped), if any."""
    # Bytes, not text: a write cut inside a character is an unfinished last
    # line like any other, and orjson checks each line's UTF-8 itself.
    lines = data.split(b"\n")
    last = lines.pop()  # empty when the file ends with a newline, as written files do
    while not last and lines and not lines[-1].strip():
        lines.pop()  # blank lines at the end (an editor's) are not events
    if not last:
        return lines, None
    if _parses(last):
        lines.append(last)
        return lines, None
    return lines, len(lines) + 1


def _header(lines: list[bytes], path: Path) -> dict[str, Any]:
    """The header line, refused unless it is a memtape run file's, of a format read here."""
    if not lines:
        raise BadInput(f"{path}: empty file, not a run file")
    header = _json(lines[0], path, 1)
    if header.get("memtape") != "run":
        raise BadInput(f"{path}: line 1: not a memtape run file header")
    if not _is_int(header.get("format"), FORMAT):
        raise BadInput(
            f"{path}: line 1: run file format {header.get('format')!r} is not readable "
            f"by memtape {__version__} (it reads format {FORMAT})"
        )
    return header


def _parses(raw: bytes) -> bool:
    try:
        orjson.loads(raw)
    except orjson.JSONDecodeError:
        return False
    return True


def _batches(
    lines: list[bytes], path: Path, mark: str | None
) -> tuple[tuple[RecordedBatch, ...], tuple[int, int] | None, int | None]:
    """The whole batches, the (step, first line) of an unfinished last one, and the position
    of the first event whose stored link is ``mark`` (the head's start), if any."""
    from memtape.core.chain import LINK  # noqa: PLC0415 (a name only)

    covered = None
    batches: list[RecordedBatch] = []
    pending: list[Event] = []
    command: Command | None = None
    first_line = 0
    for number, raw in enumerate(lines[1:], start=2):
        line = _json(raw, path, number)
        at = line.get("at")
        if type(at) is not int or at != number - 1:
            raise BadInput(
                f"{path}: line {number}: expected event at {number - 1}, found at {at!r}"
            )
        step = len(batches) + 1
        if command is not None and "command" in line:
            raise BadInput(
                f"{path}: line {number}: step {step} ended without its end mark "
                "(a new command begins)"
            )
        found = line.get("step")
        if type(found) is not int or found != step:
            raise BadInput(f"{path}: line {number}: expected step {step}, found step {found!r}")
        if command is None:
            canonical_role(line.get("command"))
            sharing_strings(line.get("command"), line.get("event"))
            command = _command(line, path, number, step)
            first_line = number
        pending.append(_event(line, path, number))
        if covered is None and mark is not None and line.get(LINK) == mark:
            covered = number - 1
        if line.get("end") is True:
            batches.append(RecordedBatch(step, command, tuple(pending), first_line))
            pending, command = [], None
    if command is not None:
        return tuple(batches), (len(batches) + 1, first_line), covered
    return tuple(batches), None, covered


def _command(line: dict[str, Any], path: Path, number: int, step: int) -> Command:
    if "command" not in line:
        raise BadInput(
            f"{path}: line {number}: the first event of step {step} does not name its command"
        )
    try:
        return command_from_data(line["command"])
    except BadInput as error:
        raise BadInput(f"{path}: line {number}: command: {error}") from None


def _event(line: dict[str, Any], path: Path, number: int) -> Event:
    type_name, version = line.get("type"), line.get("v")
    if type(type_name) is not str or type(version) is not int:
        raise BadInput(f"{path}: line {number}: an event needs a type and a version (v)")
    try:
        return event_from_data(type_name, version, line.get("event"))
    except BadInput as error:
        raise BadInput(f"{path}: line {number}: {error}") from None


def _is_int(value: Any, expected: int) -> bool:
    """Whether ``value`` is the integer ``expected`` (JSON's ``true`` is not 1)."""
    return type(value) is int and value == expected


def _json(raw: bytes, path: Path, number: int) -> dict[str, Any]:
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as error:
        # orjson refuses NaN and Infinity, integers past 64 bits and deep nesting too.
        raise BadInput(f"{path}: line {number}: not JSON ({error.msg})") from None
    if not isinstance(data, dict):
        raise BadInput(f"{path}: line {number}: expected a JSON object")
    return data
