"""Run storage: one interface, two backends (JSONL files and SQLite databases).

``open_store(path)`` picks the backend by name: a path ending in ``.db`` is
a SQLite store of many runs, any other a JSONL file of one. A run in a store
is addressed as ``runs.db#ID``, or ``runs.db`` for its newest run
(``parse_address``).

Each backend's module is imported when first used: reading a ``.jsonl`` run
imports neither ``sqlite3`` nor the SQLite store, nor the interface the
backends share (``memtape show`` of a small run starts sooner for it).
"""

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memtape.core.errors import BadInput
from memtape.core.integers import LARGEST, bounded, is_digits
from memtape.core.logfile import RunFile, read_run, verify_run

if TYPE_CHECKING:
    from memtape.core.chain import Verdict
    from memtape.storage.base import Conflict, RunId, RunInfo, RunStore
    from memtape.storage.jsonl import JsonlStore
    from memtape.storage.sqlite import DEFAULT_TIMEOUT, SqliteStore

_HOMES = {
    "Conflict": "memtape.storage.base",
    "RunId": "memtape.storage.base",
    "RunInfo": "memtape.storage.base",
    "RunStore": "memtape.storage.base",
    "DEFAULT_TIMEOUT": "memtape.storage.sqlite",
    "SqliteStore": "memtape.storage.sqlite",
    "JsonlStore": "memtape.storage.jsonl",
}
"""The names this package gives from its modules (the interface and each backend),
imported on first use."""


def __getattr__(name: str) -> Any:
    """A name of the interface (``RunStore``, ``Conflict``, ...) or of a backend
    (``SqliteStore``, ``JsonlStore``, ``DEFAULT_TIMEOUT``), from its module, imported now."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)


MAX_RUN_ID = LARGEST
"""The largest run id SQLite can hold."""

SQLITE_SUFFIX = ".db"
"""The file name ending that makes a path a SQLite store."""


def is_sqlite(path: Path) -> bool:
    """Whether ``path`` names a SQLite store (it ends in ``.db``)."""
    return path.name.endswith(SQLITE_SUFFIX)


def open_store(path: Path, *, create: bool = False, timeout: float | None = None) -> "RunStore":
    """The store at ``path``: SQLite for ``.db``, JSONL otherwise.

    Without ``create``, a missing file is a ``BadInput``; with it, the file
    is made on first write. ``timeout`` is how long a SQLite store waits for
    another process's lock (``DEFAULT_TIMEOUT`` unless given).
    """
    if is_sqlite(path):
        from memtape.storage.sqlite import DEFAULT_TIMEOUT, SqliteStore  # noqa: PLC0415

        return SqliteStore(
            path, create=create, timeout=DEFAULT_TIMEOUT if timeout is None else timeout
        )
    from memtape.storage.jsonl import JsonlStore  # noqa: PLC0415

    return JsonlStore(path, create=create)


def parse_address(text: str) -> tuple[Path, "RunId | None"]:
    """A run address split into its store path and run id (None: the newest run).

    ``runs.db#3`` is run 3 of ``runs.db``; ``runs.db`` its newest run. Only a
    ``.db`` path takes an ``#ID``: in any other name a ``#`` is part of the name.
    """
    head, mark, tail = text.rpartition("#")
    if not mark or not head.endswith(SQLITE_SUFFIX):
        return Path(text), None
    if not is_digits(tail):
        raise BadInput(f"{text}: a run id is a positive whole number, got {tail!r}")
    run_id = bounded(tail, f"{head}#ID: the run id")
    if run_id < 1:
        raise BadInput(f"{text}: a run id is a positive whole number, got {tail!r}")
    return Path(head), run_id


def resolve_address(address: str) -> str:
    """The address that names the same run for good: ``runs.db`` (its newest run, which
    a later run replaces) becomes ``runs.db#ID``; any other address is already fixed."""
    path, run_id = parse_address(address)
    if run_id is not None or not is_sqlite(path):
        return address
    with open_store(path) as store:
        runs = store.runs()
    if not runs:
        raise BadInput(f"{path}: the run store holds no runs")
    return f"{path}#{runs[-1].id}"


def read_address(address: str) -> RunFile:
    """The run at ``address``: a JSONL file, ``runs.db`` (its newest run) or ``runs.db#ID``."""
    path, run_id = parse_address(address)
    if not is_sqlite(path):
        return read_run(path)
    with open_store(path) as store:
        return store.read(run_id)


def verify_address(address: str, key: bytes | None) -> "Verdict":
    """The chain and signature of the run at ``address``, verified (``RunStore.verify``)."""
    path, run_id = parse_address(address)
    if not is_sqlite(path):
        return verify_run(path, key)
    with open_store(path) as store:
        return store.verify(run_id, key)


__all__ = [
    "DEFAULT_TIMEOUT",
    "Conflict",
    "JsonlStore",
    "RunId",
    "RunInfo",
    "RunStore",
    "SqliteStore",
    "is_sqlite",
    "open_store",
    "parse_address",
    "read_address",
    "resolve_address",
    "verify_address",
]
