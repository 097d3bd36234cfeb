"""Reading a transcript file into records, each with the place it came from.

A transcript is either JSONL (one JSON object a line: a record is a line,
named ``FILE:LINE``) or one JSON document: an array of records (named
``FILE: [INDEX]``, counting from 0) or an object holding them, as a request
does (``{"messages": [...]}``, ``{"input": [...]}``, a response's
``{"output": [...]}``: named ``FILE: messages[INDEX]``...). The whole file is
tried as one document first; a file that is not one is read line by line.

Tolerant where a writer crashed, strict where data would be lost. A line
holding two JSON objects one after the other (a writer that lost its
newline) is split into both: the second is named ``FILE:LINE (object 2)``.
A last line cut short (no newline after it, and not JSON: the write a
crash interrupted) is skipped, and the ``Source`` says so in ``skipped``,
which the command line prints as a warning. Any other line that is not a
JSON object refuses the file, naming ``FILE:LINE``, unless
``skip_bad_lines``: then it is skipped and named in ``skipped`` too.
"""

import json
from pathlib import Path
from typing import Any

import attrs
import orjson

from memtape.core.errors import BadInput
from memtape.core.paths import read_regular

CONTAINERS = ("messages", "input", "output")
"""The keys of a document object whose lists hold the records (a request, a response)."""


@attrs.frozen
class Record:
    """One JSON record of a transcript and where it is: ``FILE:LINE`` or ``FILE: [INDEX]``."""

    data: Any
    where: str


@attrs.frozen
class Source:
    """A transcript file's records, and the document object that held them, if any."""

    path: Path
    records: tuple[Record, ...]
    document: dict[str, Any] | None = None
    """The file's top-level object when it is one request or response (its ``system``,
    ``instructions``... are the format's to read)."""
    skipped: tuple[str, ...] = ()
    """The lines left out, each ``FILE:LINE: why`` (a half-written last line; with
    ``skip_bad_lines``, every malformed one)."""


def read_source(path: Path, *, skip_bad_lines: bool = False) -> Source:
    """The records of the transcript at ``path``; a malformed file is refused, named
    (``skip_bad_lines``: a malformed line is skipped, and named in ``Source.skipped``)."""
    raw = read_regular(path, "transcript")
    try:
        whole = orjson.loads(raw)
    except orjson.JSONDecodeError:
        records, skipped = _lines(path, raw, skip_bad_lines)
        return Source(path, records, skipped=skipped)
    if isinstance(whole, list):
        return Source(path, tuple(Record(item, f"{path}: [{i}]") for i, item in enumerate(whole)))
    if isinstance(whole, dict):
        if _holds_records(whole):
            return Source(path, _contained(path, whole), whole)
        line = next(n for n, text in enumerate(raw.split(b"\n"), start=1) if text.strip())
        return Source(path, (Record(whole, f"{path}:{line}"),))
    raise BadInput(f"{path}: a transcript is JSON objects, got {_kind(whole)}")


def _holds_records(document: dict[str, Any]) -> bool:
    """Whether a document object is a request or response holding records, not one record
    (a record has a ``role`` or a ``type``: a custom tool call's ``input`` is its own)."""
    if "role" in document or "type" in document:
        return False
    return any(isinstance(document.get(key), list | str) for key in CONTAINERS)


def _lines(
    path: Path, raw: bytes, skip_bad_lines: bool
) -> tuple[tuple[Record, ...], tuple[str, ...]]:
    """The records of a JSONL file, and the lines skipped (see the module's docstring)."""
    records: list[Record] = []
    skipped: list[str] = []
    lines = raw.split(b"\n")
    unfinished = len(lines) if lines[-1].strip() else None  # no newline after the last line
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            objects = _objects(line)
        except orjson.JSONDecodeError as error:
            if number == unfinished:
                skipped.append(f"{where}: a half-written last line ({len(line)} bytes), skipped")
                continue
            # orjson refuses invalid UTF-8 and unpaired surrogates, so every text writes as UTF-8.
            problem = f"{where}: not a JSON object: {error}"
            if not skip_bad_lines:
                raise BadInput(problem + " (--skip-bad-lines skips such lines)") from None
            skipped.append(f"{problem}; skipped")
            continue
        for count, data in enumerate(objects, start=1):
            place = where if count == 1 else f"{where} (object {count})"
            if not isinstance(data, dict):
                problem = f"{place}: a record is a JSON object, got {_kind(data)}"
                if not skip_bad_lines:
                    raise BadInput(problem + " (--skip-bad-lines skips such lines)")
                skipped.append(f"{problem}; skipped")
                continue
            records.append(Record(data, place))
    return tuple(records), tuple(skipped)


def _objects(line: bytes) -> list[Any]:
    """The JSON values of one line: one, or several written one after another with nothing
    between them but blanks (raises ``orjson.JSONDecodeError`` when the line is neither)."""
    try:
        return [orjson.loads(line)]
    except orjson.JSONDecodeError:
        if not line.lstrip().startswith(b"{"):
            raise
    # Only a failed line pays for this: the standard decoder finds where each value ends.
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        raise orjson.JSONDecodeError("not UTF-8", "", 0) from None
    decoder = json.JSONDecoder()
    values: list[Any] = []
    at = 0
    while at < len(text):
        try:
            value, end = decoder.raw_decode(text, at)
        except json.JSONDecodeError as error:
            raise orjson.JSONDecodeError(error.msg, error.doc, error.pos) from None
        values.append(value)
        at = end
        while at < len(text) and text[at] in " \t\r":
            at += 1
    # Each value goes through orjson too, so that the two readers never disagree on one.
    return [orjson.loads(json.dumps(value)) for value in values]


def _contained(path: Path, document: dict[str, Any]) -> tuple[Record, ...]:
    records = []
    for key in CONTAINERS:
        value = document.get(key)
        if isinstance(value, str):
            # The Responses API's input may be one string: the user's message.
            records.append(Record({"role": "user", "content": value}, f"{path}: {key}"))
        elif isinstance(value, list):
            records.extend(Record(item, f"{path}: {key}[{i}]") for i, item in enumerate(value))
    return tuple(records)


def _kind(value: Any) -> str:
    """What a JSON value is, in words."""
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}
    if value is None:
        return "null"
    if isinstance(value, int | float) and not isinstance(value, bool):
        return "a number"
    return names.get(type(value), type(value).__name__)
