"""The SQLite backend: many runs in one database file, appended a command at a time.

Two tables: ``runs`` (id, header JSON, created, the chain's head and its
signature) and ``events`` (one row per event: run, position, step, type,
version, fields JSON, the command JSON on a batch's first event, ``last`` on
its last, and its link in the run's hash chain, ``memtape.core.chain``). Each
append is one transaction that takes the write lock first and moves the
run's head with its rows, so a process killed mid-write leaves the store as
it was after the last whole command, and two writers at the same position
cannot both succeed: the second is a ``Conflict``.

The journal is a write-ahead log (WAL), set on a handle's first write: a
reader is never blocked by a writer, and sees the store as of its last
commit. A schema-1 store (before the chain) reads as unchained runs and is
upgraded in place on its first write here.
"""

import functools
import json
import os
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from memtape.core.chain import (
    HEAD,
    HEAD_HEX,
    KEY_VARIABLE,
    LINK_HEX,
    SIGNATURE,
    Chain,
    Signature,
    Verdict,
    signature_status,
    signing_key,
    verify,
)
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
from memtape.core.logfile import RecordedBatch, RunFile, cut_at_head
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

SCHEMA = 2
"""The schema version this memtape writes (SQLite's ``user_version``); it also reads 1."""

APPLICATION_ID = 0x6D746170
"""Marks a database as a memtape run store (SQLite's ``application_id``, "mtap")."""

DEFAULT_TIMEOUT = 5.0
"""Seconds to wait for another process's lock before giving up."""

WORK_PER_PAGE = 10_000
"""The steps of SQLite's virtual machine one read may take per page of the store, counting
``SPARE_PAGES`` more. A read of a store memtape wrote takes about 40 a page (a listing, a
run, a verification of a third of a store of 9 MB); a query that would run on, one a
hand-made store could hold, is stopped there. Counting steps, not seconds, makes the bound
the same on any machine."""

SPARE_PAGES = 1_000
"""Pages added to a store's own when bounding a read: the work even a tiny store may take."""

_STEPS_PER_CALL = 10_000
"""How many steps SQLite takes between two calls of the read's progress handler."""

_TABLES = (
    """CREATE TABLE runs (
        id INTEGER PRIMARY KEY,
        header TEXT NOT NULL,
        created TEXT NOT NULL,
        head TEXT,
        signature TEXT
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
        link TEXT,
        PRIMARY KEY (run_id, position)
    ) WITHOUT ROWID""",
)

_UPGRADE_FROM_1 = (
    "ALTER TABLE runs ADD COLUMN head TEXT",
    "ALTER TABLE runs ADD COLUMN signature TEXT",
    "ALTER TABLE events ADD COLUMN link TEXT",
)
"""Schema 1 to 2: the chain's columns, empty (NULL) for the runs written before it."""

_INSERT = (
    "INSERT INTO events (run_id, position, step, type, v, data, command, last, link) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)

_COLUMNS = "position, step, type, v, data, command, last"


class SqliteStore(RunStore):
    """The runs in the SQLite database at ``path``."""

    def __init__(
        self,
        path: Path,
        *,
        create: bool = False,
        timeout: float = DEFAULT_TIMEOUT,
        work_per_page: int = WORK_PER_PAGE,
    ) -> None:
        self.path = path
        self._timeout = timeout
        self._work_per_page = work_per_page
        self._work = 0
        if not create or os.path.exists(path):
            # sqlite3 would open a FIFO and wait on it for good.
            regular_file(path, "run store")
        try:
            self._db = sqlite3.connect(path, timeout=timeout, isolation_level=None)
        except sqlite3.Error as error:
            raise BadInput(f"{path}: cannot open the run store: {error}") from None
        self._schema = 0
        self._journal_set = False
        try:
            # One read transaction: another process setting the store up
            # commits its tables and marks together, so they are seen together.
            with self._guard(), self._transaction(write=False):
                self._refresh()
        except BaseException:
            self._db.close()
            raise

    def close(self) -> None:
        """Close the database connection."""
        self._db.close()

    def create(self, header: Mapping[str, Any]) -> RunId:
        """Add an empty run, stamped with the time; the store is set up on first use."""
        stamped = stamped_header(header)
        top = _dumps(stamped)
        created = datetime.now(UTC).isoformat(timespec="seconds")
        chain = _chain_of(stamped, str(self.path))
        key = signing_key()
        with self._guard(), self._writing():
            cursor = self._db.execute(
                "INSERT INTO runs (header, created, head, signature) VALUES (?, ?, ?, ?)",
                (top, created, chain.head, chain.signature(key)),
            )
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
        """Append one command's events in one transaction; a stale position is a Conflict.

        The run's head moves in the same transaction. A run written before the
        chain (its head empty) is chained first, from its header, in that
        transaction too. A run whose rows go on past its head (added by someone
        else) is not appended to, and with the key set neither is one holding
        rows its signature does not vouch for: the new head's signature would.
        """
        where = f"{self.path}#{run_id}"
        check_batch(where, command, events)
        key = signing_key()
        try:
            with self._guard(), self._writing():
                header, head, signature = self._run(run_id)
                position, step = self._tail(run_id)
                if position != expected_position:
                    raise Conflict.stale(where, expected_position, position)
                self._extendable(run_id, head, signature, position, key)
                chain = self._chain(run_id, header, head, position)
                rows = _rows(run_id, position, step + 1, command, events, chain=chain)
                self._db.executemany(_INSERT, rows)
                self._set_head(run_id, chain, key)
        except sqlite3.IntegrityError:
            raise Conflict(
                f"{where}: position {expected_position + 1} was taken by another writer; "
                "nothing was written"
            ) from None
        return expected_position + len(events)

    def read(self, run_id: RunId | None = None) -> RunFile:
        """One run (the newest when ``run_id`` is None), read in one snapshot.

        Its header carries the run's chain head (``chain``) and signature
        (``signature``) when it has them, as a run file's header does. The
        rows are decoded as a run file's lines are (orjson, the codec's fast
        path), with the collector paused while the run's objects are built.
        Rows chained on after the run's head are no part of it: they are
        dropped and described, as a run file's lines are (``cut_at_head``),
        and the header's counts are of the rows kept.
        """
        with collector_paused():
            with self._guard(), self._transaction(write=False):
                self._refresh()
                if run_id is None:
                    run_id = self._newest()
                header, head, signature = self._run(run_id)
                rows = self._db.execute(
                    f"SELECT {_COLUMNS} FROM events WHERE run_id = ? ORDER BY position", (run_id,)
                ).fetchall()
                covered = self._covered(run_id, head)
            batches, torn = _batches(rows, f"{self.path}#{run_id}")
        pairs = ((HEAD, head), (SIGNATURE, signature))
        chained = {name: value for name, value in pairs if value is not None}
        kept = cut_at_head(RunFile(chained, batches, torn), covered, lambda at: f"position {at}")
        events = sum(len(batch.events) for batch in kept.batches)
        top = stored_header(header, events, len(kept.batches)) | chained
        return RunFile(top, kept.batches, kept.torn, kept.uncovered)

    def verify(self, run_id: RunId | None, key: bytes | None) -> Verdict:
        """Verify the chain of run ``run_id`` (the newest when None), and its signature.

        The rows are read again in one snapshot, without decoding their
        events (read the run first: a run ``read`` refuses may still verify).
        An event is named by its position.
        """
        with self._guard(), self._transaction(write=False):
            self._refresh()
            if run_id is None:
                run_id = self._newest()
            header, head, signature = self._run(run_id)
            where = f"{self.path}#{run_id}"
            link = "link" if self._schema >= SCHEMA else "NULL"
            rows = self._db.execute(
                f"SELECT {_COLUMNS}, {link} FROM events WHERE run_id = ? ORDER BY position",
                (run_id,),
            )
            records = ((_record(row, f"{where}: position {row[0]}"), row[7]) for row in rows)
            stored = {**header, HEAD: head, SIGNATURE: signature}
            return verify(stored, records, key)

    def runs(self) -> list[RunInfo]:
        """Every run with its event count, oldest first."""
        with self._guard(), self._transaction(write=False):
            self._refresh()
            if not self._schema:
                return []
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
        stamped = stamped_header(header)
        top = _dumps(stamped)
        created = datetime.now(UTC).isoformat(timespec="seconds")
        chain = _chain_of(stamped, str(self.path))
        key = signing_key()
        with self._guard(), self._writing():
            cursor = self._db.execute(
                "INSERT INTO runs (header, created) VALUES (?, ?)", (top, created)
            )
            run_id = cursor.lastrowid
            assert run_id is not None
            events = run.events
            for step, command in enumerate(run.commands, start=1):
                start, end = run.batch(step)
                rows = _rows(run_id, start, step, command, events[start:end], chain=chain)
                self._db.executemany(_INSERT, rows)
            self._set_head(run_id, chain, key)
        return run_id

    def _refresh(self) -> None:
        """Read the schema again unless it is this memtape's: another handle may have set the
        store up, or upgraded it, since this one looked."""
        if self._schema != SCHEMA:
            self._schema = self._check_schema()

    def _check_schema(self) -> int:
        """The store's schema (0: not set up); a database that is not a memtape store, or
        one of a schema this memtape cannot read, is refused."""
        application, version = (
            self._db.execute("PRAGMA application_id").fetchone()[0],
            self._db.execute("PRAGMA user_version").fetchone()[0],
        )
        tables = self._db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()[0]
        if application == 0 and version == 0 and tables == 0:
            return 0
        if application != APPLICATION_ID:
            raise BadInput(f"{self.path}: a SQLite database, but not a memtape run store")
        if version not in (1, SCHEMA):
            raise BadInput(
                f"{self.path}: run store schema {version} is not readable by this memtape "
                f"(it reads schemas 1 and {SCHEMA})"
            )
        self._check_tables(version)
        return int(version)

    def _check_tables(self, version: int) -> None:
        """Refuse a store that is not plain tables: a view, a trigger or a virtual table
        would run SQL the file brings (a view over an endless query hangs every reader), and
        ``runs`` and ``events`` must have the columns of schema ``version``."""
        entries = self._db.execute("SELECT type, name, sql FROM sqlite_master").fetchall()
        for kind, name, sql in entries:
            if kind in ("view", "trigger"):
                raise BadInput(
                    f"{self.path}: holds a {kind}, {name!r}; a run store is plain tables "
                    "and memtape runs no SQL a store brings"
                )
            if isinstance(sql, str) and sql.lstrip()[:14].upper() == "CREATE VIRTUAL":
                raise BadInput(
                    f"{self.path}: {name!r} is a virtual table; a run store is plain tables "
                    "and memtape runs no SQL a store brings"
                )
        tables = {name for kind, name, _ in entries if kind == "table"}
        for table, columns in _columns(version).items():
            if table not in tables:
                raise BadInput(f"{self.path}: not a memtape run store: it has no {table} table")
            found = tuple(self._db.execute(f"PRAGMA table_xinfo({table})").fetchall())
            if found != columns:
                raise BadInput(
                    f"{self.path}: not a memtape run store: its {table} table does not have "
                    f"the columns of a schema-{version} store"
                )

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """A write transaction on a store set up (or upgraded) to this memtape's schema."""
        if not self._journal_set:
            # Outside any transaction, as SQLite requires; it lasts in the file.
            self._db.execute("PRAGMA journal_mode = WAL")
            # Per connection. In WAL mode a commit then waits for no sync: a killed
            # process loses nothing committed; a power cut may lose the last commands.
            self._db.execute("PRAGMA synchronous = NORMAL")
            self._journal_set = True
        with self._transaction():
            # Checked again inside the write lock: another process may have set it up.
            self._refresh()
            found = self._schema
            if found == 0:
                for table in _TABLES:
                    self._db.execute(table)
                self._db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            elif found == 1:
                for change in _UPGRADE_FROM_1:
                    self._db.execute(change)
            if found != SCHEMA:
                self._db.execute(f"PRAGMA user_version = {SCHEMA}")
                self._schema = SCHEMA
            try:
                yield
            except BaseException:
                self._schema = found  # rolled back with the rest
                raise

    def _newest(self) -> RunId:
        row = self._db.execute("SELECT MAX(id) FROM runs").fetchone() if self._schema else None
        if row is None or row[0] is None:
            raise BadInput(f"{self.path}: the run store holds no runs")
        newest: RunId = row[0]
        return newest

    def _run(self, run_id: RunId) -> tuple[dict[str, Any], Any, Any]:
        """A run's header, chain head and signature (None for a run written before the chain)."""
        row = None
        if self._schema:
            chained = "head, signature" if self._schema >= SCHEMA else "NULL, NULL"
            row = self._db.execute(
                f"SELECT header, {chained} FROM runs WHERE id = ?", (run_id,)
            ).fetchone()
        if row is None:
            raise BadInput(f"{self.path}: no run #{run_id} in this run store")
        return _header_json(row[0], f"{self.path}#{run_id}"), row[1], row[2]

    def _chain(self, run_id: RunId, header: dict[str, Any], head: Any, length: int) -> Chain:
        """The run's chain to extend: from its head, or built over its rows when it has none
        (a run written before the chain, now chained from here on)."""
        where = f"{self.path}#{run_id}"
        if head is not None:
            if not (isinstance(head, str) and len(head) == HEAD_HEX):
                raise BadInput(f"{where}: its chain head {head!r} is not {HEAD_HEX} hex digits")
            try:
                return Chain(bytes.fromhex(head))
            except ValueError:
                raise BadInput(
                    f"{where}: its chain head {head!r} is not {HEAD_HEX} hex digits"
                ) from None
        chain = _chain_of(header, where)
        if not length:
            return chain
        rows = self._db.execute(
            f"SELECT {_COLUMNS} FROM events WHERE run_id = ? ORDER BY position", (run_id,)
        ).fetchall()
        links = []
        for row in rows:
            at = f"{where}: position {row[0]}"
            try:
                links.append((chain.add(_record(row, at)), run_id, row[0]))
            except TypeError as error:
                raise BadInput(f"{at}: cannot be hashed ({error})") from None
        self._db.executemany("UPDATE events SET link = ? WHERE run_id = ? AND position = ?", links)
        return chain

    def _extendable(
        self, run_id: RunId, head: Any, signature: Any, length: int, key: bytes | None
    ) -> None:
        """Refuse to extend a run whose last row is not at its head, or, under ``key``, one
        of ``length`` rows that its signature does not vouch for. Nothing is hashed but one
        HMAC: the rows before the head are ``verify``'s to check."""
        where = f"{self.path}#{run_id}"
        if head is not None and length:
            row = self._db.execute(
                "SELECT link FROM events WHERE run_id = ? AND position = ?", (run_id, length)
            ).fetchone()
            if not (isinstance(head, str) and row is not None and row[0] == head[:LINK_HEX]):
                raise BadInput(
                    f"{where}: not appending: its rows go on past its chain head (they were "
                    "added after the run was written; memtape check says where)"
                )
        if key is None or not length:
            return
        status = signature_status(head, signature, key)
        if status is Signature.INVALID:
            raise BadInput(f"{where}: not appending to a run whose signature does not match")
        if status is not Signature.VALID:
            raise BadInput(
                f"{where}: not signing an append to an unsigned run: its rows are vouched for "
                f"by no signature (unset {KEY_VARIABLE} to append unsigned)"
            )

    def _covered(self, run_id: RunId, head: Any) -> int | None:
        """The position of the run's first row whose stored link is its head's start (where the
        run ends), or None when none is; nothing is hashed."""
        if self._schema < SCHEMA or not (isinstance(head, str) and len(head) == HEAD_HEX):
            return None
        row = self._db.execute(
            "SELECT MIN(position) FROM events WHERE run_id = ? AND link = ?",
            (run_id, head[:LINK_HEX]),
        ).fetchone()
        return None if row is None or row[0] is None else int(row[0])

    def _set_head(self, run_id: RunId, chain: Chain, key: bytes | None) -> None:
        self._db.execute(
            "UPDATE runs SET head = ?, signature = ? WHERE id = ?",
            (chain.head, chain.signature(key), run_id),
        )

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
        """One transaction; a write takes the write lock first (``BEGIN IMMEDIATE``), a read
        is bounded (``WORK_PER_PAGE``)."""
        self._db.execute("BEGIN IMMEDIATE" if write else "BEGIN")
        try:
            if not write:
                self._bound()
            yield
            self._db.execute("COMMIT")
        except BaseException:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise
        finally:
            self._db.set_progress_handler(None, 0)

    def _bound(self) -> None:
        """Stop this read's queries once they take ``work_per_page`` steps a page of the
        store (and of ``SPARE_PAGES``) between them: they then fail as interrupted."""
        pages = self._db.execute("PRAGMA page_count").fetchone()[0]
        self._work = self._work_per_page * (pages + SPARE_PAGES)
        calls = iter(range(self._work // _STEPS_PER_CALL))

        def progress() -> bool:
            return next(calls, None) is None

        self._db.set_progress_handler(progress, _STEPS_PER_CALL)

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
            if "interrupted" in str(error):
                raise BadInput(
                    f"{self.path}: a read was stopped past {self._work} steps of SQLite's "
                    "work, far more than a run store of its size needs"
                ) from None
            raise BadInput(f"{self.path}: cannot use the run store: {error}") from None
        except sqlite3.DatabaseError as error:
            raise BadInput(f"{self.path}: not a readable run store: {error}") from None


@functools.cache
def _columns(version: int) -> dict[str, tuple[tuple[Any, ...], ...]]:
    """The columns of each table of a schema-``version`` store, as ``PRAGMA table_xinfo``
    gives them: the tables this memtape creates, less those its upgrade adds to schema 1."""
    made = sqlite3.connect(":memory:")
    try:
        for table in _TABLES:
            made.execute(table)
        # "ALTER TABLE runs ADD COLUMN head TEXT": the table is word 3, the column word 6.
        added = {(words[2], words[5]) for words in map(str.split, _UPGRADE_FROM_1)}
        return {
            table: tuple(
                column
                for column in made.execute(f"PRAGMA table_xinfo({table})")
                if version == SCHEMA or (table, column[1]) not in added
            )
            for table in ("runs", "events")
        }
    finally:
        made.close()


def _chain_of(header: Mapping[str, Any], where: str) -> Chain:
    """The empty chain of a run with ``header``; a header the chain cannot hash is refused."""
    try:
        return Chain.of(header)
    except TypeError as error:
        raise BadInput(f"{where}: header: cannot be hashed ({error})") from None


def _rows(
    run_id: RunId,
    position: int,
    step: int,
    command: Command,
    events: Sequence[Event],
    *,
    chain: Chain,
) -> list[tuple[Any, ...]]:
    """The rows of one command's events, the first at ``position + 1``, each with its link.

    A row's link is over the record a run file's line would hold (without
    its ``h``), so a run hashes alike in either backend.
    """
    rows = []
    for offset, event in enumerate(events):
        record: dict[str, Any] = {
            "at": position + offset + 1,
            "step": step,
            "type": type(event).__name__,
            "v": event.VERSION,
            "event": event_data(event),
        }
        if offset == 0:
            record["command"] = command_data(command)
        last = offset == len(events) - 1
        if last:
            record["end"] = True
        rows.append(
            (
                run_id,
                record["at"],
                step,
                record["type"],
                record["v"],
                _dumps(record["event"]),
                _dumps(record["command"]) if offset == 0 else None,
                int(last),
                chain.add(record),
            )
        )
    return rows


Row = tuple[Any, Any, Any, Any, Any, Any, Any]


def _record(row: Row, where: str) -> dict[str, Any]:
    """A row as the chain hashes it: the record of the run file line it stands for."""
    position, step, type_name, version, data, command, last = row[:7]
    record: dict[str, Any] = {
        "at": position,
        "step": step,
        "type": type_name,
        "v": version,
        "event": _loads(data, where),
    }
    if command is not None:
        record["command"] = _loads(command, f"{where}: command")
    if last == 1:
        record["end"] = True
    return record


def _dumps(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, allow_nan=False)


def _loads(raw: Any, where: str) -> Any:
    """JSON text as data, parsed as a run file's lines are (orjson refuses NaN and Infinity,
    integers past 64 bits and deep nesting)."""
    if not isinstance(raw, str):
        raise BadInput(f"{where}: expected JSON text, found {raw!r}")
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as error:
        raise BadInput(f"{where}: not readable JSON ({error.msg})") from None


def _header_json(raw: Any, where: str) -> dict[str, Any]:
    header = _loads(raw, f"{where}: header")
    if not isinstance(header, dict):
        raise BadInput(f"{where}: header: expected a JSON object")
    return header


def _batches(rows: list[Row], where: str) -> tuple[tuple[RecordedBatch, ...], str | None]:
    """The whole batches of a run's rows, and a description of a torn last one.

    A batch's ``line`` is the line its first event has in the run's JSONL
    form (its position + 1), so both backends give equal batches. Each
    problem is one line with one prefix: the store, the run and the position
    (worded only when there is a problem: a million rows need no million places).
    """
    batches: list[RecordedBatch] = []
    pending: list[Event] = []
    command: Command | None = None
    command_fields: Any = None
    decode = orjson.loads
    for expected, (position, step, type_name, version, data, raw_command, last) in enumerate(
        rows, start=1
    ):
        if type(position) is not int or position != expected:
            raise BadInput(
                f"{where}: position {expected}: expected event at {expected}, found at {position!r}"
            )
        if type(step) is not int or step != len(batches) + 1:
            wanted = len(batches) + 1
            raise BadInput(
                f"{where}: position {expected}: expected step {wanted}, found step {step!r}"
            )
        if command is None:
            if raw_command is None:
                raise BadInput(
                    f"{where}: position {expected}: the first event of step {step} does not "
                    "name its command"
                )
            try:
                if type(raw_command) is not str:
                    raise TypeError
                command_fields = decode(raw_command)
                canonical_role(command_fields)
                command = command_from_data(command_fields)
            except (orjson.JSONDecodeError, TypeError, BadInput) as error:
                raise _row_error(where, expected, raw_command, error, "command: ") from None
        elif raw_command is not None:
            raise BadInput(
                f"{where}: position {expected}: step {step} ended without its end mark "
                "(a new command begins)"
            )
        if not isinstance(type_name, str) or type(version) is not int:
            raise BadInput(f"{where}: position {expected}: an event needs a type and a version (v)")
        try:
            if type(data) is not str:
                raise TypeError  # a BLOB orjson would read: the store holds JSON text
            fields = decode(data)
            if not pending:
                sharing_strings(command_fields, fields)
            pending.append(event_from_data(type_name, version, fields))
        except (orjson.JSONDecodeError, TypeError, BadInput) as error:
            raise _row_error(where, expected, data, error) from None
        if last == 1:
            first = expected - len(pending) + 1
            batches.append(RecordedBatch(step, command, tuple(pending), first + 1))
            pending, command = [], None
        elif last != 0:
            raise BadInput(f"{where}: position {expected}: last must be 0 or 1, found {last!r}")
    if command is not None:
        step, first = len(batches) + 1, len(rows) - len(pending) + 1
        return tuple(batches), (
            f"a torn tail: step {step} (from position {first}) has no end mark; "
            f"loaded the {len(batches)} whole steps before it"
        )
    return tuple(batches), None


def _row_error(where: str, position: int, raw: Any, error: Exception, part: str = "") -> BadInput:
    """The one-line error of a row's JSON that does not decode, or decodes to no event or
    command: ``STORE#ID: position N: [command: ]PROBLEM``."""
    at = f"{where}: position {position}: {part}"
    if not isinstance(raw, str):
        return BadInput(f"{at}expected JSON text, found {raw!r}")
    if isinstance(error, orjson.JSONDecodeError):
        return BadInput(f"{at}not readable JSON ({error.msg})")
    return BadInput(f"{at}{error}")
