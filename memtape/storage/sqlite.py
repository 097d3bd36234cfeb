"""The SQLite backend: many runs in one database file, appended a command at a time.

Two tables: ``runs`` (id, header JSON, created) and ``events`` (one row per
event: run, position, step, type, version, fields JSON, the command JSON on
a batch's first event, and ``last`` on its last). Each append is one
transaction that takes the write lock first, so a process killed mid-write
leaves the store as it was after the last whole command, and two writers at
the same position cannot both succeed: the second is a ``Conflict``.
"""

import json
import os
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memtape.core.codec import command_data, command_from_data, event_data, event_from_data
from memtape.core.commands import Command
from memtape.core.errors import BadInput
from memtape.core.events import Event
from memtape.core.logfile import RecordedBatch, RunFile
from memtape.core.paths import regular_file
from memtape.core.run import Run
from memtape.storage.base import (
    Conflict,
    RunId,
    RunInfo,
    RunStore,
    check_batch,
    stamped_header,
    stored_header,
)

SCHEMA = 1
"""The schema version this memtape writes and reads (SQLite's ``user_version``)."""

APPLICATION_ID = 0x6D746170
"""Marks a database as a memtape run store (SQLite's ``application_id``, "mtap")."""

DEFAULT_TIMEOUT = 5.0
"""Seconds to wait for another process's lock before giving up."""

_TABLES = (
    """CREATE TABLE runs (
        id INTEGER PRIMARY KEY,
        header TEXT NOT NULL,
        created TEXT NOT NULL
    )""",
    """CREATE TABLE events (
        run_id INTEGER NOT NULL REFERENCES runs (id),
        position INTEGER NOT NULL,
        step INTEGER NOT NULL,
        type TEXT NOT NULL,
        v INTEGER NOT NULL,
        data TEXT NOT NULL,
        command TEXT,
        last INTEGER NOT NULL,
        PRIMARY KEY (run_id, position)
    ) WITHOUT ROWID""",
)


class SqliteStore(RunStore):
    """The runs in the SQLite database at ``path``."""

    def __init__(
        self, path: Path, *, create: bool = False, timeout: float = DEFAULT_TIMEOUT
    ) -> None:
        self.path = path
        self._timeout = timeout
        if not create or os.path.exists(path):
            # sqlite3 would open a FIFO and wait on it for good.
            regular_file(path, "run store")
        try:
            self._db = sqlite3.connect(path, timeout=timeout, isolation_level=None)
        except sqlite3.Error as error:
            raise BadInput(f"{path}: cannot open the run store: {error}") from None
        try:
            # One read transaction: another process setting the store up
            # commits its tables and marks together, so they are seen together.
            with self._guard(), self._transaction(write=False):
                self._ready = self._check_schema()
        except BaseException:
            self._db.close()
            raise

    def close(self) -> None:
        """Close the database connection."""
        self._db.close()

    def create(self, header: Mapping[str, Any]) -> RunId:
        """Add an empty run, stamped with the time; the store is set up on first use."""
        top = json.dumps(stamped_header(header), ensure_ascii=False, allow_nan=False)
        created = datetime.now(UTC).isoformat(timespec="seconds")
        with self._guard(), self._transaction():
            if not self._ready:
                self._set_up()
            cursor = self._db.execute(
                "INSERT INTO runs (header, created) VALUES (?, ?)", (top, created)
            )
        self._ready = True
        run_id = cursor.lastrowid
        assert run_id is not None
        return run_id

    def append(
        self,
        run_id: RunId,
        command: Command,
        events: Sequence[Event],
        expected_position: int,
    ) -> int:
        """Append one command's events in one transaction; a stale position is a Conflict."""
        where = f"{self.path}#{run_id}"
        check_batch(where, command, events)
        try:
            with self._guard(), self._transaction():
                self._header(run_id)
                position, step = self._tail(run_id)
                if position != expected_position:
                    raise Conflict.stale(where, expected_position, position)
                rows = _rows(run_id, position, step + 1, command, events)
                self._db.executemany("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
        except sqlite3.IntegrityError:
            raise Conflict(
                f"{where}: position {expected_position + 1} was taken by another writer; "
                "nothing was written"
            ) from None
        return expected_position + len(events)

    def read(self, run_id: RunId | None = None) -> RunFile:
        """One run (the newest when ``run_id`` is None), read in one snapshot."""
        with self._guard(), self._transaction(write=False):
            if run_id is None:
                run_id = self._newest()
            header = self._header(run_id)
            rows = self._db.execute(
                "SELECT position, step, type, v, data, command, last FROM events "
                "WHERE run_id = ? ORDER BY position",
                (run_id,),
            ).fetchall()
        batches, torn = _batches(rows, f"{self.path}#{run_id}")
        events = sum(len(batch.events) for batch in batches)
        return RunFile(stored_header(header, events, len(batches)), batches, torn)

    def runs(self) -> list[RunInfo]:
        """Every run with its event count, oldest first."""
        if not self._ready:
            return []
        with self._guard():
            rows = self._db.execute(
                "SELECT runs.id, runs.header, runs.created, "
                "(SELECT COUNT(*) FROM events WHERE events.run_id = runs.id) "
                "FROM runs ORDER BY runs.id"
            ).fetchall()
        listing = []
        for run_id, raw, created, events in rows:
            header = _header_json(raw, f"{self.path}#{run_id}")
            scenario, policies = header.get("scenario"), header.get("policies")
            listing.append(
                RunInfo(
                    run_id,
                    scenario if isinstance(scenario, str) else None,
                    policies if isinstance(policies, dict) else None,
                    events,
                    str(created),
                )
            )
        return listing

    def add_run(self, header: Mapping[str, Any], run: Run) -> RunId:
        """Add a finished run whole, in one transaction: a writer killed partway leaves nothing.

        ``append`` is for recording live, one command at a time.
        """
        top = json.dumps(stamped_header(header), ensure_ascii=False, allow_nan=False)
        created = datetime.now(UTC).isoformat(timespec="seconds")
        with self._guard(), self._transaction():
            if not self._ready:
                self._set_up()
            cursor = self._db.execute(
                "INSERT INTO runs (header, created) VALUES (?, ?)", (top, created)
            )
            run_id = cursor.lastrowid
            assert run_id is not None
            events = run.events
            for step, command in enumerate(run.commands, start=1):
                start, end = run.batch(step)
                rows = _rows(run_id, start, step, command, events[start:end])
                self._db.executemany("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
        self._ready = True
        return run_id

    def _check_schema(self) -> bool:
        """Whether the store is set up; a database that is not a memtape store is refused."""
        application, version = (
            self._db.execute("PRAGMA application_id").fetchone()[0],
            self._db.execute("PRAGMA user_version").fetchone()[0],
        )
        tables = self._db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()[0]
        if application == 0 and version == 0 and tables == 0:
            return False
        if application != APPLICATION_ID:
            raise BadInput(f"{self.path}: a SQLite database, but not a memtape run store")
        if version != SCHEMA:
            raise BadInput(
                f"{self.path}: run store schema {version} is not readable by this memtape "
                f"(it reads schema {SCHEMA})"
            )
        return True

    def _set_up(self) -> None:
        # Checked again inside the write lock: another process may have set it up.
        if self._check_schema():
            return
        for table in _TABLES:
            self._db.execute(table)
        self._db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        self._db.execute(f"PRAGMA user_version = {SCHEMA}")

    def _newest(self) -> RunId:
        row = self._db.execute("SELECT MAX(id) FROM runs").fetchone() if self._ready else None
        if row is None or row[0] is None:
            raise BadInput(f"{self.path}: the run store holds no runs")
        newest: RunId = row[0]
        return newest

    def _header(self, run_id: RunId) -> dict[str, Any]:
        row = None
        if self._ready:
            row = self._db.execute("SELECT header FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise BadInput(f"{self.path}: no run #{run_id} in this run store")
        return _header_json(row[0], f"{self.path}#{run_id}")

    def _tail(self, run_id: RunId) -> tuple[int, int]:
        """The run's length and step count; a run ending mid-command is refused."""
        row = self._db.execute(
            "SELECT position, step, last FROM events WHERE run_id = ? "
            "ORDER BY position DESC LIMIT 1",
            (run_id,),
        ).fetchone()
        if row is None:
            return 0, 0
        position, step, last = row
        if last != 1:
            raise BadInput(
                f"{self.path}#{run_id}: the run ends in step {step} without its end mark; "
                "not appending to a torn command"
            )
        return position, step

    @contextmanager
    def _transaction(self, *, write: bool = True) -> Iterator[None]:
        """One transaction; a write takes the write lock first (``BEGIN IMMEDIATE``)."""
        self._db.execute("BEGIN IMMEDIATE" if write else "BEGIN")
        try:
            yield
            self._db.execute("COMMIT")
        except BaseException:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise

    @contextmanager
    def _guard(self) -> Iterator[None]:
        """SQLite's errors as one ``BadInput`` line naming the file (conflicts pass)."""
        try:
            yield
        except sqlite3.IntegrityError:
            raise
        except sqlite3.OperationalError as error:
            if "locked" in str(error) or "busy" in str(error):
                raise BadInput(
                    f"{self.path}: the run store is locked by another process "
                    f"(waited {self._timeout:g}s)"
                ) from None
            raise BadInput(f"{self.path}: cannot use the run store: {error}") from None
        except sqlite3.DatabaseError as error:
            raise BadInput(f"{self.path}: not a readable run store: {error}") from None


def _rows(
    run_id: RunId, position: int, step: int, command: Command, events: Sequence[Event]
) -> list[tuple[Any, ...]]:
    """The rows of one command's events, the first at ``position + 1``."""
    return [
        (
            run_id,
            position + offset + 1,
            step,
            type(event).__name__,
            event.VERSION,
            _dumps(event_data(event)),
            _dumps(command_data(command)) if offset == 0 else None,
            int(offset == len(events) - 1),
        )
        for offset, event in enumerate(events)
    ]


def _dumps(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, allow_nan=False)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _loads(raw: Any, where: str) -> Any:
    if not isinstance(raw, str):
        raise BadInput(f"{where}: expected JSON text, found {raw!r}")
    try:
        return json.loads(raw, parse_constant=_no_constant)
    except (ValueError, RecursionError) as error:
        raise BadInput(f"{where}: not readable JSON ({error})") from None


def _header_json(raw: Any, where: str) -> dict[str, Any]:
    header = _loads(raw, f"{where}: header")
    if not isinstance(header, dict):
        raise BadInput(f"{where}: header: expected a JSON object")
    return header


Row = tuple[Any, Any, Any, Any, Any, Any, Any]


def _batches(rows: list[Row], where: str) -> tuple[tuple[RecordedBatch, ...], str | None]:
    """The whole batches of a run's rows, and a description of a torn last one.

    A batch's ``line`` is the line its first event has in the run's JSONL
    form (its position + 1), so both backends give equal batches.
    """
    batches: list[RecordedBatch] = []
    pending: list[Event] = []
    command: Command | None = None
    for expected, (position, step, type_name, version, data, raw_command, last) in enumerate(
        rows, start=1
    ):
        at = f"{where}: position {expected}"
        if type(position) is not int or position != expected:
            raise BadInput(f"{at}: expected event at {expected}, found at {position!r}")
        if type(step) is not int or step != len(batches) + 1:
            raise BadInput(f"{at}: expected step {len(batches) + 1}, found step {step!r}")
        if command is None:
            if raw_command is None:
                raise BadInput(f"{at}: the first event of step {step} does not name its command")
            try:
                command = command_from_data(_loads(raw_command, f"{at}: command"))
            except BadInput as error:
                raise BadInput(f"{at}: command: {error}") from None
        elif raw_command is not None:
            raise BadInput(f"{at}: step {step} ended without its end mark (a new command begins)")
        if not isinstance(type_name, str) or type(version) is not int:
            raise BadInput(f"{at}: an event needs a type and a version (v)")
        try:
            pending.append(event_from_data(type_name, version, _loads(data, at)))
        except BadInput as error:
            raise BadInput(f"{at}: {error}") from None
        if last not in (0, 1):
            raise BadInput(f"{at}: last must be 0 or 1, found {last!r}")
        if last == 1:
            first = expected - len(pending) + 1
            batches.append(RecordedBatch(step, command, tuple(pending), first + 1))
            pending, command = [], None
    if command is not None:
        step, first = len(batches) + 1, len(rows) - len(pending) + 1
        return tuple(batches), (
            f"a torn tail: step {step} (from position {first}) has no end mark; "
            f"loaded the {len(batches)} whole steps before it"
        )
    return tuple(batches), None
