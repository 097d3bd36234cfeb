"""Finding the records of a transcript wrapped in a document that is not a request.

Agents and the tools around them save a conversation inside an object of
their own: SWE-agent's ``.traj`` holds its messages under ``history``, a
dataset row under ``traj``, a run record under ``run.messages``. Such a
document reads (``memtape.lab.importers.records``) as one record, the whole
object. ``unwrapped`` finds the list of records in it: the one ``--path KEY``
names (keys joined by dots, each naming an object's member), or, without
``--path``, the first of ``WRAPPERS`` the document holds. The records are then
named ``FILE: KEY[INDEX]``, and the document is kept as the ``Source``'s.
"""

from typing import Any

import attrs

from memtape.core.errors import BadInput
from memtape.lab.importers.records import Record, Source

WRAPPERS = ("history", "traj")
"""The keys under which a document wraps its records when no request's container holds
them (SWE-agent's ``history``, a ``{"traj": [...]}`` wrapper): the first one present."""


def unwrapped(source: Source, key: str | None = None) -> Source:
    """``source`` with the records of the list at ``key`` (``--path``) or, without one, of
    the first wrapper its document holds; ``source`` itself when it is not wrapped."""
    whole = _document(source)
    if key is None:
        if whole is None or "role" in whole or "type" in whole:
            return source
        key = next((k for k in WRAPPERS if isinstance(whole.get(k), list)), None)
        if key is None:
            return source
    elif whole is None:
        raise BadInput(f"{source.path}: --path {key} is for one JSON document, and this is not one")
    value: Any = whole
    for name in key.split("."):
        if not isinstance(value, dict) or name not in value:
            raise BadInput(f"{source.path}: --path {key}: the document has no {name!r} there")
        value = value[name]
    if not isinstance(value, list):
        raise BadInput(f"{source.path}: --path {key} is not a list of records")
    records = tuple(Record(item, f"{source.path}: {key}[{i}]") for i, item in enumerate(value))
    return attrs.evolve(source, records=records, document=whole)


def _document(source: Source) -> dict[str, Any] | None:
    """The file's one JSON object: the document that held the records, or the one record."""
    if source.document is not None:
        return source.document
    if len(source.records) == 1 and isinstance(source.records[0].data, dict) and not source.skipped:
        data: dict[str, Any] = source.records[0].data
        return data
    return None
