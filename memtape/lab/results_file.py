"""A sweep's results as a JSONL file, one line per cell written as the cell finishes.

The first line names the sweep (a digest of its cells, its scenarios' texts,
the judge and the probes file's text when there are some, and memtape's
version); each line after it holds one cell's key (scenario, policy, settings,
and for a replicate of ``--replicates`` its number) and its whole result, a
judge's answers among it. A line is written with one call and
synced, so a sweep killed at any point keeps every cell that finished; a last
line without its newline is a write cut short (a power cut) and is dropped on
``--resume``, which runs only the cells the file does not hold.
"""

import hashlib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import cattrs

from memtape._version import __version__
from memtape.core.atomic import write_atomic
from memtape.core.errors import BadInput
from memtape.core.paths import read_regular
from memtape.lab.bench import Cell, Result
from memtape.scenarios import read_scenario

FORMAT = "memtape-bench-results"
"""The ``format`` of a results file's first line."""

VERSION = 1
"""The ``version`` of a results file's first line."""

Key = tuple[str, str, tuple[str, ...], int | None]
"""A cell as a results file names it: its scenario, its policy (as ``--policy`` gave it),
its settings (the ``--set`` ones, then its grid point) and which replicate it is (None for
a cell run once)."""

_converter = cattrs.Converter()


def cell_key(cell: Cell) -> Key:
    """The key a results file holds a cell's result under."""
    return (cell.scenario, cell.spec.label, cell.settings, cell.replicate)


def sweep_id(cells: Iterable[Cell]) -> str:
    """What a sweep is: its distinct cells, whatever their order, the texts of their
    scenarios, the model that judges their answers and the text of the probes file they
    add (``--judge``, ``--probes``), and memtape's version (another version may measure
    otherwise)."""
    cells = list(cells)
    keys = sorted(set(map(cell_key, cells)), key=_order)
    texts = {source: read_scenario(source) for source in sorted({key[0] for key in keys})}
    content: dict[str, Any] = {
        "memtape": __version__,
        "cells": keys,
        "scenarios": {s: hashlib.sha256(t.encode("utf-8")).hexdigest() for s, t in texts.items()},
    }
    judges = sorted({cell.judge for cell in cells if cell.judge is not None})
    files = sorted({cell.probes for cell in cells if cell.probes is not None})
    if judges:
        content["judges"] = judges
    if files:
        content["probes"] = {name: _digest(Path(name)) for name in files}
    text = json.dumps(content, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ResultsFile:
    """The results file of one sweep, opened to add each cell's result as it finishes."""

    def __init__(self, path: Path, cells: Sequence[Cell], *, resume: bool) -> None:
        """Check ``path`` for the sweep of ``cells``: new (refused when it exists, unless
        ``resume``), or holding results of this very sweep (``resume``). Nothing is
        written until ``open``."""
        self.path = path
        self.sweep = sweep_id(cells)
        self._keys = {cell_key(cell) for cell in cells}
        self._fd: int | None = None
        self._keep: int | None = None
        self.finished: dict[Key, Result] = {}
        """The results the file already holds, by key."""
        if not path.exists():
            return
        if not resume:
            raise BadInput(
                f"{path}: it exists: pass --resume to go on with the sweep it holds, "
                "or name another --results file"
            )
        self._read()

    def open(self) -> None:
        """Create the file with its first line, or make ready to add to the one read."""
        if not self.path.exists():
            header = {"format": FORMAT, "version": VERSION, "sweep": self.sweep}
            write_atomic(self.path, _line(header))
        elif self._keep is not None:
            # The last line was cut short: it goes before anything is added after it.
            os.truncate(self.path, self._keep)
        try:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        except OSError as error:
            raise BadInput(f"{self.path}: cannot write it: {error.strerror}") from None

    def add(self, cell: Cell, result: Result) -> None:
        """Append the cell's result as one line, synced before this returns."""
        key = cell_key(cell)
        if key in self.finished:
            return
        assert self._fd is not None, "the results file is not open"
        scenario, policy, settings, replicate = key
        entry: dict[str, Any] = {"scenario": scenario, "policy": policy, "settings": list(settings)}
        if replicate is not None:
            entry["replicate"] = replicate
        entry["result"] = _converter.unstructure(result)
        line = _line(entry)
        written = os.write(self._fd, line)
        if written != len(line):
            raise BadInput(f"{self.path}: cannot write it: the disk took {written} bytes")
        os.fsync(self._fd)
        self.finished[key] = result

    def close(self) -> None:
        """Close the file (every line added is already on disk)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def _read(self) -> None:
        contents = _Contents(self.path, self.sweep, self._keys)
        self._keep = contents.keep
        self.finished = contents.results


def read_results(path: Path) -> dict[Key, Result]:
    """Every cell's result the results file at ``path`` holds, of whichever sweep (a last line
    cut short is no result); refused as bad input, naming the line, when malformed."""
    return _Contents(path).results


class _Contents:
    """What a results file holds, read and checked; with ``sweep`` and ``keys``, that it is
    the results file of that sweep, holding only its cells."""

    def __init__(self, path: Path, sweep: str | None = None, keys: set[Key] | None = None) -> None:
        self.path = path
        self.sweep = sweep
        self.keys = keys
        self.keep: int | None = None
        """Where a last line cut short starts (the file is cut there before adding), or None."""
        self.results: dict[Key, Result] = {}
        data = read_regular(path, "results file")
        whole, newline, cut = data.rpartition(b"\n")
        if not newline:
            whole, cut = b"", data
        if cut:
            self.keep = len(whole) + len(newline)
        lines = whole.split(b"\n") if newline else []
        if not lines:
            raise BadInput(f"{path}:1: not a memtape bench results file: it is empty")
        self._header(lines[0])
        first: dict[Key, int] = {}
        for number, raw in enumerate(lines[1:], start=2):
            key, result = self._entry(raw, number)
            if key in first:
                raise BadInput(
                    f"{path}:{number}: the result of {_name(key)} again "
                    f"(first at line {first[key]})"
                )
            first[key] = number
            self.results[key] = result

    def _header(self, raw: bytes) -> None:
        where = f"{self.path}:1"
        header = _json(raw, where)
        if (
            not isinstance(header, dict)
            or header.get("format") != FORMAT
            or not isinstance(header.get("sweep"), str)
        ):
            raise BadInput(f"{where}: not a memtape bench results file")
        if header.get("version") != VERSION:
            raise BadInput(
                f"{where}: results file version {header.get('version')!r}, not {VERSION}"
            )
        if self.sweep is not None and header["sweep"] != self.sweep:
            raise BadInput(
                f"{where}: the results of another sweep (other scenarios, policies, settings "
                "or memtape version): run that sweep's command, or name another --results file"
            )

    def _entry(self, raw: bytes, number: int) -> tuple[Key, Result]:
        where = f"{self.path}:{number}"
        entry = _json(raw, where)
        fields = ("scenario", "policy", "settings", "result")
        if not isinstance(entry, dict) or sorted(set(entry) - {"replicate"}) != sorted(fields):
            raise BadInput(
                f"{where}: not a cell's result: it holds {', '.join(fields)} "
                "(and a replicate's number)"
            )
        settings = entry["settings"]
        replicate = entry.get("replicate")
        if not (
            isinstance(entry["scenario"], str)
            and isinstance(entry["policy"], str)
            and isinstance(settings, list)
            and all(isinstance(s, str) for s in settings)
            and (replicate is None or (type(replicate) is int and replicate >= 0))
        ):
            raise BadInput(
                f"{where}: not a cell's result: its scenario, policy, settings or replicate"
            )
        key: Key = (entry["scenario"], entry["policy"], tuple(settings), replicate)
        if self.keys is not None and key not in self.keys:
            raise BadInput(f"{where}: {_name(key)} is not a cell of this sweep")
        try:
            result = _converter.structure(entry["result"], Result)
        except (cattrs.BaseValidationError, TypeError, ValueError, KeyError) as error:
            raise BadInput(f"{where}: not a cell's result: {_first(error)}") from None
        return key, result


def _order(key: Key) -> tuple[str, str, tuple[str, ...], int]:
    """A key as keys are sorted (a cell run once before its replicates)."""
    scenario, policy, settings, replicate = key
    return (scenario, policy, settings, -1 if replicate is None else replicate)


def _digest(path: Path) -> str:
    """The SHA-256 of a probes file's bytes (one not there is refused where it is read)."""
    return hashlib.sha256(read_regular(path, "probes file")).hexdigest()


def _json(raw: bytes, where: str) -> Any:
    try:
        return json.loads(raw)
    except (ValueError, RecursionError) as error:
        raise BadInput(f"{where}: not JSON: {error}") from None


def _line(data: Mapping[str, Any]) -> bytes:
    return (json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def _name(key: Key) -> str:
    scenario, policy, settings, replicate = key
    again = () if replicate is None else (f"(replicate {replicate})",)
    return " ".join((f"{scenario}, {policy}", *settings, *again))


def _first(error: Exception) -> str:
    """The first concrete reason inside a cattrs error (which nests them)."""
    if isinstance(error, cattrs.BaseValidationError) and error.exceptions:
        return _first(error.exceptions[0])
    return str(error) or type(error).__name__
