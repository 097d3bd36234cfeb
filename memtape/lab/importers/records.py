"""Reading a transcript file into records, each with the place it came from.

A transcript is either JSONL (one JSON object a line: a record is a line,
named ``FILE:LINE``) or one JSON document: an array of records (named
``FILE: [INDEX]``, counting from 0) or an object holding them, as a request
does (``{"messages": [...]}``, ``{"input": [...]}``, a response's
``{"output": [...]}``: named ``FILE: messages[INDEX]``...). The whole file is
tried as one document first; a file that is not one is read line by line,
and its first line that is not a JSON object is refused, named. A last line
with no newline that is not JSON is a write cut short (an agent still
writing its session, or killed mid-write): it is skipped with a warning
(``UnfinishedLine``), as a run file's torn tail is.
"""

import warnings
from pathlib import Path
from typing import Any

import attrs
import orjson

from memtape.core.errors import BadInput
from memtape.core.paths import read_regular

CONTAINERS = ("messages", "input", "output")
"""The keys of a document object whose lists hold the records (a request, a response)."""


class UnfinishedLine(UserWarning):
    """A transcript's last line was cut short mid-write: it was skipped, and the records
    before it were read."""


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


def read_source(path: Path) -> Source:
    """The records of the transcript at ``path``; a malformed file is refused, named."""
    raw = read_regular(path, "transcript")
    try:
        whole = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return Source(path, _lines(path, raw))
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


def _lines(path: Path, raw: bytes) -> tuple[Record, ...]:
    records = []
    lines = raw.split(b"\n")
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            data = orjson.loads(line)
        except orjson.JSONDecodeError as error:
            if number == len(lines):  # no newline after it: a write cut short
                warnings.warn(
                    UnfinishedLine(
                        f"{where}: an unfinished last line (no newline, not JSON): skipped"
                    ),
                    stacklevel=4,
                )
                break
            # orjson refuses invalid UTF-8 and unpaired surrogates, so every text writes as UTF-8.
            raise BadInput(f"{where}: not a JSON object: {error}") from None
        if not isinstance(data, dict):
            raise BadInput(f"{where}: a record is a JSON object, got {_kind(data)}")
        records.append(Record(data, where))
    return tuple(records)


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
