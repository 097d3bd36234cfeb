"""memtape.storage.sqlite: many runs in one file, addressed, locked, interrupted, chained."""

import json
import os
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from memtape.checking.check import check_file
from memtape.checking.invariants import Violation
from memtape.cli import main
from memtape.core.chain import Chain, Signature
from memtape.core.codec import event_data
from memtape.core.commands import AddTurn, AdvanceClock
from memtape.core.errors import BadInput
from memtape.core.events import ClockAdvanced, Event, TurnAdded
from memtape.core.logfile import read_run, write_run
from memtape.policies.session import Session
from memtape.scenarios import load_scenario
from memtape.storage import Conflict, JsonlStore, SqliteStore, open_store, parse_address
from memtape.storage import sqlite as sqlite_backend
from memtape.storage.base import stamped_header
from tests.chained import forged_rows
from tests.loaded import strings_shared

TURN = AddTurn("user", "hello")
TURN_EVENT = TurnAdded(1, "user", "hello", 2, False)
TICKS = tuple(ClockAdvanced(float(t)) for t in range(1, 4))


def _store(path: Path, runs: int = 0, **kwargs: Any) -> SqliteStore:
    store = SqliteStore(path, create=True, **kwargs)
    for number in range(1, runs + 1):
        run_id = store.create({"scenario": f"s{number}", "policies": {"n": number}})
        for position in range(number):
            store.append(run_id, AdvanceClock(position + 1.0), TICKS[:1], position)
    return store


class TestManyRuns:
    def test_runs_lists_every_run_newest_last(self, tmp_path: Path) -> None:
        with _store(tmp_path / "runs.db", runs=3) as store:
            listing = store.runs()

        assert [(1, "s1", {"n": 1}, 1), (2, "s2", {"n": 2}, 2), (3, "s3", {"n": 3}, 3)] == [
            (info.id, info.scenario, info.policies, info.events) for info in listing
        ]
        assert all(info.created.endswith("+00:00") for info in listing)

    def test_a_run_is_read_by_its_id_and_the_newest_by_default(self, tmp_path: Path) -> None:
        with _store(tmp_path / "runs.db", runs=3) as store:
            second, newest = store.read(2), store.read()

        assert ("s2", 2) == (second.header["scenario"], second.header["events"])
        assert ("s3", 3) == (newest.header["scenario"], newest.header["events"])

    def test_runs_do_not_see_each_others_positions(self, tmp_path: Path) -> None:
        with _store(tmp_path / "runs.db", runs=2) as store:
            assert 2 == store.append(1, TURN, (TURN_EVENT,), 1)
            with pytest.raises(Conflict):
                store.append(2, TURN, (TURN_EVENT,), 1)

    def test_an_unknown_id_is_bad_input_naming_the_file_and_id(self, tmp_path: Path) -> None:
        path = tmp_path / "runs.db"
        with _store(path, runs=2) as store, pytest.raises(BadInput) as caught:
            store.read(9)

        assert f"{path}: no run #9 in this run store" == str(caught.value)

    def test_appending_to_an_unknown_run_is_bad_input(self, tmp_path: Path) -> None:
        with _store(tmp_path / "runs.db", runs=1) as store, pytest.raises(BadInput, match="#4"):
            store.append(4, TURN, (TURN_EVENT,), 0)

    def test_a_store_with_no_runs_has_no_newest(self, tmp_path: Path) -> None:
        with _store(tmp_path / "runs.db") as store:
            assert [] == store.runs()
            with pytest.raises(BadInput, match="holds no runs"):
                store.read()


class TestAddressing:
    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("runs.db", (Path("runs.db"), None)),
            ("runs.db#12", (Path("runs.db"), 12)),
            ("dir/a#b.db#3", (Path("dir/a#b.db"), 3)),
            ("run.jsonl", (Path("run.jsonl"), None)),
            ("notes#2.jsonl", (Path("notes#2.jsonl"), None)),
            ("run.jsonl#2", (Path("run.jsonl#2"), None)),
        ],
    )
    def test_an_address_names_a_store_and_maybe_a_run(
        self, text: str, expected: tuple[Path, int | None]
    ) -> None:
        assert expected == parse_address(text)

    @pytest.mark.parametrize("text", ["runs.db#", "runs.db#0", "runs.db#x", "runs.db#-1"])
    def test_a_bad_run_id_is_bad_input(self, text: str) -> None:
        with pytest.raises(BadInput, match="a run id is a positive whole number"):
            parse_address(text)

    def test_open_store_picks_the_backend_by_name(self, tmp_path: Path) -> None:
        with open_store(tmp_path / "a.db", create=True) as db:
            assert isinstance(db, SqliteStore)
        with open_store(tmp_path / "a.jsonl", create=True) as jsonl:
            assert isinstance(jsonl, JsonlStore)


class TestBadFiles:
    def test_a_missing_store_is_bad_input_and_not_created(self, tmp_path: Path) -> None:
        path = tmp_path / "runs.db"

        with pytest.raises(BadInput, match="no such run store"):
            open_store(path)

        assert not path.exists()

    def test_a_directory_is_bad_input(self, tmp_path: Path) -> None:
        (tmp_path / "d.db").mkdir()

        with pytest.raises(BadInput, match="is a directory"):
            open_store(tmp_path / "d.db")

    @pytest.mark.parametrize("create", [False, True])
    def test_a_fifo_is_refused_before_sqlite_opens_it(self, tmp_path: Path, create: bool) -> None:
        """sqlite3 would open the FIFO and wait on it: a child, so a regression times out."""
        path = tmp_path / "runs.db"
        os.mkfifo(path)
        script = (
            "import sys\n"
            "from pathlib import Path\n"
            "from memtape.core.errors import BadInput\n"
            "from memtape.storage import SqliteStore, JsonlStore\n"
            "for store in (SqliteStore, JsonlStore):\n"
            "    try:\n"
            "        store(Path(sys.argv[1]), create=sys.argv[2] == 'True')\n"
            "    except BadInput as error:\n"
            "        print(error)\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", script, str(path), str(create)],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        assert [f"{path}: not a regular file (a FIFO)"] * 2 == done.stdout.splitlines()

    @pytest.mark.parametrize(
        "content",
        [b"this is not a database, just text\n" * 40, b"SQLite format 3\x00" + b"\xff" * 200],
    )
    def test_a_file_that_is_not_a_database_is_bad_input_naming_it(
        self, tmp_path: Path, content: bytes
    ) -> None:
        path = tmp_path / "runs.db"
        path.write_bytes(content)

        with pytest.raises(BadInput, match="not a readable run store") as caught:
            open_store(path)

        assert str(caught.value).startswith(f"{path}: ")
        assert content == path.read_bytes()

    def test_another_sqlite_database_is_bad_input(self, tmp_path: Path) -> None:
        path = tmp_path / "other.db"
        with sqlite3.connect(path) as other:
            other.execute("CREATE TABLE t (x)")
        other.close()

        with pytest.raises(BadInput, match="a SQLite database, but not a memtape run store"):
            open_store(path)

    def test_a_newer_schema_is_refused_clearly(self, tmp_path: Path) -> None:
        path = tmp_path / "runs.db"
        _store(path, runs=1).close()
        with sqlite3.connect(path) as raw:
            raw.execute(f"PRAGMA user_version = {sqlite_backend.SCHEMA + 1}")
        raw.close()

        with pytest.raises(BadInput) as caught:
            open_store(path)

        assert (
            f"{path}: run store schema 3 is not readable by this memtape (it reads schemas 1 and 2)"
        ) == str(caught.value)

    def test_a_store_another_writer_holds_is_bad_input_naming_the_file(
        self, tmp_path: Path
    ) -> None:
        """Only a write waits for another writer (a read does not: the journal is a WAL)."""
        path = tmp_path / "runs.db"
        _store(path, runs=1).close()
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")
        try:
            with open_store(path, timeout=0.05) as store, pytest.raises(BadInput) as caught:
                store.create({"scenario": "s"})
        finally:
            holder.execute("ROLLBACK")
            holder.close()

        assert f"{path}: the run store is locked by another process (waited 0.05s)" == str(
            caught.value
        )

    def test_a_hand_edited_gap_is_bad_input_naming_the_position(self, tmp_path: Path) -> None:
        path = tmp_path / "runs.db"
        with _store(path, runs=1) as store:
            store.append(1, AdvanceClock(3.0), TICKS[2:], 1)
        with sqlite3.connect(path) as raw:
            raw.execute("UPDATE events SET position = 5 WHERE position = 2")
        raw.close()

        with pytest.raises(BadInput, match=r"#1: position 2: expected event at 2, found at 5"):
            open_store(path).read()


class TestInterruptedWrites:
    def test_a_failure_mid_batch_leaves_the_run_at_its_last_whole_command(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        store = _store(tmp_path / "runs.db", runs=1)
        before = store.read(1)
        calls = []

        def failing(event: Event) -> dict[str, Any]:
            calls.append(event)
            if len(calls) == 3:
                raise RuntimeError("killed")
            return event_data(event)

        monkeypatch.setattr("memtape.storage.sqlite.event_data", failing)
        with pytest.raises(RuntimeError, match="killed"):
            store.append(1, AdvanceClock(3.0), TICKS, 1)
        monkeypatch.undo()

        assert before == store.read(1)
        assert 4 == store.append(1, AdvanceClock(3.0), TICKS, 1)

    def test_an_insert_rolled_back_inside_the_transaction_is_never_seen(
        self, tmp_path: Path
    ) -> None:
        path = tmp_path / "runs.db"
        _store(path, runs=1).close()
        raw = sqlite3.connect(path)

        def killed_mid_batch() -> None:
            with raw:
                raw.execute(
                    "INSERT INTO events (run_id, position, step, type, v, data, command, last) "
                    "VALUES (1, 2, 2, 'ClockAdvanced', 1, '{\"to\": 2.0}', "
                    '\'{"kind": "clock", "to": 3.0}\', 0)'
                )
                raise RuntimeError("killed before the batch's last event")

        with pytest.raises(RuntimeError):
            killed_mid_batch()
        raw.close()

        with open_store(path) as store:
            assert (1, None) == (store.read().header["events"], store.read().torn)

    def test_a_writer_killed_mid_transaction_leaves_the_store_readable(
        self, tmp_path: Path
    ) -> None:
        path = tmp_path / "runs.db"
        _store(path, runs=1).close()
        script = (
            "import os, sqlite3, sys\n"
            "db = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
            "db.execute('BEGIN IMMEDIATE')\n"
            'db.execute("INSERT INTO events (run_id, position, step, type, v, data, command, '
            "last) VALUES (1, 2, 2, 'ClockAdvanced', 1, "
            '\'{\\"to\\": 2.0}\', \'{\\"kind\\": \\"clock\\", \\"to\\": 3.0}\', 0)")\n'
            "os._exit(9)\n"
        )
        killed = subprocess.run([sys.executable, "-c", script, str(path)], check=False)

        with open_store(path) as store:
            assert 9 == killed.returncode
            assert 1 == store.read().header["events"]
            assert 2 == store.append(1, AdvanceClock(2.0), TICKS[1:2], 1)

    def test_a_batch_stored_without_its_end_mark_is_a_torn_tail(self, tmp_path: Path) -> None:
        path = tmp_path / "runs.db"
        with _store(path, runs=1) as store:
            store.append(1, AdvanceClock(3.0), TICKS, 1)
        [row] = sqlite_backend._rows(1, 4, 3, TURN, (TURN_EVENT,), chain=Chain(b""))
        _sql(path, "INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", *row[:7], 0, row[8])

        with open_store(path) as store:
            recorded = store.read()
            with pytest.raises(BadInput, match="not appending to a torn command"):
                store.append(1, TURN, (TURN_EVENT,), 5)

        assert (
            2,
            "a torn tail: step 3 (from position 5) has no end mark; "
            "loaded the 2 whole steps before it",
        ) == (len(recorded.batches), recorded.torn)


class TestConcurrentWriters:
    def test_two_writers_at_the_same_position_one_wins_one_conflicts(self, tmp_path: Path) -> None:
        path = tmp_path / "runs.db"
        _store(path, runs=1).close()
        barrier = threading.Barrier(2)
        outcomes: list[str] = []

        def write(to: float) -> None:
            with open_store(path) as store:
                barrier.wait()
                try:
                    store.append(1, AdvanceClock(to), (ClockAdvanced(to),), 1)
                    outcomes.append("appended")
                except Conflict:
                    outcomes.append("conflict")

        threads = [threading.Thread(target=write, args=(t,)) for t in (5.0, 6.0)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

        assert ["appended", "conflict"] == sorted(outcomes)
        with open_store(path) as store:
            assert 2 == store.read().header["events"]

    def test_a_taken_primary_key_is_a_conflict(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        store = _store(tmp_path / "runs.db", runs=1)
        monkeypatch.setattr(SqliteStore, "_tail", lambda self, run_id: (0, 0))

        with pytest.raises(Conflict, match="position 1 was taken by another writer"):
            store.append(1, TURN, (TURN_EVENT,), 0)
        monkeypatch.undo()

        assert 1 == store.read().header["events"]
        store.close()


class TestWholeRuns:
    def _session(self) -> Session:
        scenario = load_scenario("refund-desk")
        session = Session(scenario.policies)
        session.execute_all(scenario.steps)
        return session

    def test_a_failure_partway_through_a_whole_run_leaves_no_run(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        path = tmp_path / "runs.db"
        rows = sqlite_backend._rows
        calls: list[int] = []

        def failing(*args: Any, **kwargs: Any) -> Any:
            calls.append(1)
            if len(calls) == 3:
                raise RuntimeError("killed")
            return rows(*args, **kwargs)

        monkeypatch.setattr(sqlite_backend, "_rows", failing)
        store = SqliteStore(path, create=True)
        with pytest.raises(RuntimeError):
            store.add_run({"scenario": "x", "policies": {}}, self._session().run)
        monkeypatch.undo()

        assert [] == store.runs()
        store.close()

    def test_a_whole_run_reads_back_as_recorded(self, tmp_path: Path) -> None:
        session = self._session()
        with SqliteStore(tmp_path / "runs.db", create=True) as store:
            run_id = store.add_run({"scenario": "x", "policies": {}}, session.run)
            batches = store.read(run_id).batches

        assert session.run.events == tuple(e for batch in batches for e in batch.events)

    def test_a_turn_and_a_fact_read_back_share_their_command_s_strings(
        self, tmp_path: Path
    ) -> None:
        shared = []
        with SqliteStore(tmp_path / "runs.db", create=True) as store:
            for name in ("refund-desk", "dana-facts"):
                scenario = load_scenario(name)
                session = Session(scenario.policies)
                session.execute_all(scenario.steps)
                run_id = store.add_run({"scenario": name, "policies": {}}, session.run)
                shared.append(strings_shared(store.read(run_id).batches))

        assert [True, True] == shared

    def test_processes_creating_one_store_at_once_all_succeed(self, tmp_path: Path) -> None:
        path = tmp_path / "shared.db"
        command = [sys.executable, "-m", "memtape.cli", "run", "dana-facts", "--out", str(path)]
        processes = [subprocess.Popen(command, stderr=subprocess.PIPE) for _ in range(4)]
        errors = [process.communicate()[1] for process in processes]

        assert [0, 0, 0, 0] == [process.returncode for process in processes], errors
        with SqliteStore(path) as store:
            assert 4 == len(store.runs())


class TestHandles:
    def test_a_handle_opened_before_the_first_run_sees_runs_added_later(
        self, tmp_path: Path
    ) -> None:
        path = tmp_path / "runs.db"
        with SqliteStore(path, create=True) as early, SqliteStore(path) as writer:
            run_id = writer.create({"scenario": "later"})
            writer.append(run_id, TURN, (TURN_EVENT,), 0)

            assert ([run_id], "later", 1) == (
                [info.id for info in early.runs()],
                early.read().header["scenario"],
                len(early.read(run_id).batches),
            )


class TestWriteAheadLog:
    def test_a_store_is_written_with_a_write_ahead_log(self, tmp_path: Path) -> None:
        path = tmp_path / "runs.db"
        _store(path, runs=1).close()
        raw = sqlite3.connect(path)
        try:
            assert ("wal",) == raw.execute("PRAGMA journal_mode").fetchone()
        finally:
            raw.close()

    def test_a_reader_sees_only_whole_commands_while_a_writer_is_mid_transaction(
        self, tmp_path: Path
    ) -> None:
        """The writer has a whole command and part of the next uncommitted; a reader that
        waits for nothing reads the run as of the last commit."""
        path = tmp_path / "runs.db"
        _store(path, runs=1).close()
        writer = sqlite3.connect(path, isolation_level=None)
        writer.execute("BEGIN IMMEDIATE")
        insert = (
            "INSERT INTO events (run_id, position, step, type, v, data, command, last) "
            "VALUES (1, ?, ?, 'ClockAdvanced', 1, ?, ?, ?)"
        )
        writer.executemany(
            insert,
            [
                (2, 2, '{"to": 2.0}', '{"kind": "advance", "to": 2.0}', 1),
                (3, 3, '{"to": 3.0}', '{"kind": "advance", "to": 4.0}', 0),
            ],
        )
        try:
            with open_store(path, timeout=0) as reader:
                recorded = reader.read(1)
        finally:
            writer.execute("ROLLBACK")
            writer.close()

        assert (1, 1, None) == (len(recorded.batches), recorded.header["events"], recorded.torn)

    def test_a_writer_holding_the_exclusive_lock_does_not_block_a_reader(
        self, tmp_path: Path
    ) -> None:
        """Under a rollback journal this read would wait, and fail at once with no timeout."""
        path = tmp_path / "runs.db"
        _store(path, runs=2).close()
        writer = sqlite3.connect(path, isolation_level=None)
        writer.execute("BEGIN EXCLUSIVE")
        writer.execute("DELETE FROM events")
        try:
            with open_store(path, timeout=0) as reader:
                sizes = [info.events for info in reader.runs()]
        finally:
            writer.execute("ROLLBACK")
            writer.close()

        assert [1, 2] == sizes


def _corrupted(path: Path, sql: str, *values: Any) -> None:
    """``path`` (a store of one run of three events) changed by one statement, by hand."""
    _store(path, runs=1).close()
    with SqliteStore(path) as store:
        store.append(1, AdvanceClock(3.0), TICKS[1:], 1)
    raw = sqlite3.connect(path)
    with raw:
        raw.execute(sql, values)
    raw.close()


class TestRowErrors:
    """Each problem of a bad row is one line with one prefix: store, run and position."""

    @pytest.mark.parametrize(
        ("sql", "values", "problem"),
        [
            (
                "UPDATE events SET data = ? WHERE position = 3",
                ("{oops",),
                "not readable JSON (unexpected character, expected a string key)",
            ),
            (
                "UPDATE events SET data = ? WHERE position = 3",
                ('{"to": NaN}',),
                "not readable JSON (unexpected character, expected a JSON value)",
            ),
            (
                "UPDATE events SET data = ? WHERE position = 3",
                (b'{"to": 3.0}',),
                "expected JSON text, found b'{\"to\": 3.0}'",
            ),
            (
                "UPDATE events SET data = ? WHERE position = 3",
                ('{"to": "three"}',),
                'ClockAdvanced.to must be a finite number, got "three"',
            ),
            (
                "UPDATE events SET command = ? WHERE position = 2",
                ("{oops",),
                "command: not readable JSON (unexpected character, expected a string key)",
            ),
        ],
        ids=["data-not-json", "data-nan", "data-a-blob", "data-a-wrong-type", "command-not-json"],
    )
    def test_a_corrupted_row_is_one_line_naming_its_place_once(
        self, tmp_path: Path, sql: str, values: tuple[Any, ...], problem: str
    ) -> None:
        path = tmp_path / "bj.db"
        _corrupted(path, sql, *values)
        position = 2 if "command" in sql else 3

        with SqliteStore(path) as store, pytest.raises(BadInput) as caught:
            store.read(1)

        assert f"{path}#1: position {position}: {problem}" == str(caught.value)


def _refund_desk() -> Session:
    scenario = load_scenario("refund-desk")
    session = Session(scenario.policies)
    session.execute_all(scenario.steps)
    return session


def _appended(store: SqliteStore, header: dict[str, Any], session: Session) -> int:
    run = session.run
    run_id = store.create(header)
    for step, command in enumerate(run.commands, start=1):
        start, end = run.batch(step)
        store.append(run_id, command, run.events[start:end], start)
    return run_id


def _sql(path: Path, sql: str, *values: Any) -> None:
    raw = sqlite3.connect(path)
    with raw:
        raw.execute(sql, values)
    raw.close()


HEADER = {
    "scenario": "refund-desk",
    "policies": {
        "compaction": {"policy": "tiered", "budget": 40, "hot_n": 2, "tokenizer": "words"}
    },
}
"""refund-desk's header, as ``memtape run refund-desk`` writes it."""


class TestChainedRows:
    def test_the_header_is_refund_desk_s(self) -> None:
        assert _refund_desk().policies.params() == HEADER["policies"]

    def test_every_row_carries_its_link_and_the_run_its_head(self, tmp_path: Path) -> None:
        path = tmp_path / "runs.db"
        with SqliteStore(path, create=True) as store:
            store.add_run(HEADER, _refund_desk().run)
        raw = sqlite3.connect(path)
        links = [row[0] for row in raw.execute("SELECT link FROM events ORDER BY position")]
        [(head, signature)] = raw.execute("SELECT head, signature FROM runs").fetchall()
        raw.close()

        assert ([32] * 15, 64, None) == ([len(link) for link in links], len(head), signature)

    def test_a_run_added_whole_appended_or_written_to_a_file_has_one_head(
        self, tmp_path: Path
    ) -> None:
        session = _refund_desk()
        file = tmp_path / "run.jsonl"
        write_run(file, HEADER, session.run)
        with SqliteStore(tmp_path / "runs.db", create=True) as store:
            whole = store.add_run(HEADER, session.run)
            appended = _appended(store, HEADER, session)
            heads = {store.read(run_id).header["chain"] for run_id in (whole, appended)}

        assert {read_run(file).header["chain"]} == heads

    def test_a_failed_append_leaves_the_head_where_it_was(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        store = _store(tmp_path / "runs.db", runs=1)
        head = store.read(1).header["chain"]
        monkeypatch.setattr(SqliteStore, "_set_head", _killed)
        with pytest.raises(RuntimeError):
            store.append(1, AdvanceClock(3.0), TICKS[1:], 1)
        monkeypatch.undo()

        assert (head, 1, None) == (
            store.read(1).header["chain"],
            store.read(1).header["events"],
            store.verify(1, None).broken,
        )
        store.close()

    def test_a_row_edited_with_its_command_breaks_the_chain_at_its_position(
        self, tmp_path: Path
    ) -> None:
        path = tmp_path / "runs.db"
        with SqliteStore(path, create=True) as store:
            store.add_run(HEADER, _refund_desk().run)
        text = "Hi, this is Erin. Can you look up order ORD-9999?"
        _sql(
            path,
            "UPDATE events SET data = json_set(data, '$.text', ?), "
            "command = json_set(command, '$.text', ?) WHERE position = 1",
            text,
            text,
        )
        report = check_file(Path(f"{path}#1"))

        message = (
            "position 1 breaks the chain: it, or the header, was changed after the run was written"
        )
        assert (Violation(1, "chain", message),) == report.problems

    def test_a_renamed_scenario_breaks_the_chain(self, tmp_path: Path) -> None:
        path = tmp_path / "runs.db"
        with SqliteStore(path, create=True) as store:
            store.add_run(HEADER, _refund_desk().run)
        _sql(path, "UPDATE runs SET header = json_set(header, '$.scenario', 'other')")

        assert [(1, "chain")] == [(p.position, p.invariant) for p in check_file(path).problems]

    def test_the_last_command_deleted_is_caught_by_the_head(self, tmp_path: Path) -> None:
        path = tmp_path / "runs.db"
        with SqliteStore(path, create=True) as store:
            store.add_run(HEADER, _refund_desk().run)
        _sql(path, "DELETE FROM events WHERE position > 13")

        message = (
            "position 13 is the last, but its link is not the header's chain head: events were "
            "cut from the end, or the head was changed"
        )
        assert (Violation(13, "chain", message),) == check_file(path).problems

    def test_rows_forged_past_the_head_before_a_torn_tail_are_not_read(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Issue 28, in a store: a forged command chained on after the signed head, then a
        row starting a command that never ends, so the run passes for one with a torn tail."""
        path = tmp_path / "runs.db"
        monkeypatch.setenv("MEMTAPE_SIGNING_KEY", "the key")
        with SqliteStore(path, create=True) as store:
            store.add_run(HEADER, _refund_desk().run)
        forged_rows(path)
        with SqliteStore(path) as store:
            recorded = store.read(1)

        assert (10, None, 15) == (
            len(recorded.batches),
            recorded.torn,
            recorded.header["events"],
        )
        assert (recorded.uncovered or "").startswith(
            "step 11 and the steps after it (from position 16) come after the header's chain head"
        )

    def test_rows_forged_past_the_head_break_the_chain_where_they_begin(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        path = tmp_path / "runs.db"
        monkeypatch.setenv("MEMTAPE_SIGNING_KEY", "the key")
        with SqliteStore(path, create=True) as store:
            store.add_run(HEADER, _refund_desk().run)
        forged_rows(path)
        report = check_file(Path(f"{path}#1"))

        message = (
            "position 16 and the events after it come after the header's chain head (position "
            "15 ends the run): they were added after the run was written, and are not part of it"
        )
        assert ((Violation(16, "chain", message),), Signature.VALID) == (
            report.problems,
            report.signature,
        )

    def test_a_run_whose_rows_go_on_past_its_head_is_not_appended_to(self, tmp_path: Path) -> None:
        """The append would chain on from the head, past the forged rows, and hide its own."""
        path = tmp_path / "runs.db"
        with SqliteStore(path, create=True) as store:
            store.add_run(HEADER, _refund_desk().run)
        forged_rows(path, torn=False)

        with SqliteStore(path) as store, pytest.raises(BadInput, match="past its chain head"):
            store.append(1, TURN, (TURN_EVENT,), 16)

    def test_with_the_key_a_stripped_run_is_not_appended_to(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A row edited, its run chained again and its signature dropped: an append with the
        key would sign the edit."""
        path = tmp_path / "runs.db"
        monkeypatch.setenv("MEMTAPE_SIGNING_KEY", "the key")
        with SqliteStore(path, create=True) as store:
            store.add_run(HEADER, _refund_desk().run)
        _sql(path, "UPDATE runs SET signature = NULL")

        with SqliteStore(path) as store, pytest.raises(BadInput, match="unsigned run"):
            store.append(1, TURN, (TURN_EVENT,), 15)

    def test_a_run_appended_to_live_loads_whole_and_checks_clean(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The head moves with each command's rows, so a live run has no row past it."""
        path = tmp_path / "runs.db"
        monkeypatch.setenv("MEMTAPE_SIGNING_KEY", "the key")
        with SqliteStore(path, create=True) as store:
            _appended(store, HEADER, _refund_desk())
            recorded = store.read(1)
        report = check_file(Path(f"{path}#1"), require_signed=True)

        assert (10, None, None) == (len(recorded.batches), recorded.torn, recorded.uncovered)
        assert ((), Signature.VALID) == (report.problems, report.signature)

    def test_a_signed_run_keeps_its_key_to_itself(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        path = tmp_path / "runs.db"
        key = "a key for the store"
        monkeypatch.setenv("MEMTAPE_SIGNING_KEY", key)
        with SqliteStore(path, create=True) as store:
            _appended(store, HEADER, _refund_desk())
            verdict = store.verify(1, key.encode())

        assert Signature.VALID == verdict.signature
        assert key.encode() not in b"".join(p.read_bytes() for p in tmp_path.iterdir())


SCHEMA_1 = (
    "CREATE TABLE runs (id INTEGER PRIMARY KEY, header TEXT NOT NULL, created TEXT NOT NULL)",
    "CREATE TABLE events (run_id INTEGER NOT NULL REFERENCES runs (id), "
    "position INTEGER NOT NULL, step INTEGER NOT NULL, type TEXT NOT NULL, v INTEGER NOT NULL, "
    "data TEXT NOT NULL, command TEXT, last INTEGER NOT NULL, PRIMARY KEY (run_id, position)) "
    "WITHOUT ROWID",
    f"PRAGMA application_id = {sqlite_backend.APPLICATION_ID}",
    "PRAGMA user_version = 1",
)
"""A store as memtape wrote it before the chain (schema 1)."""


def _schema_1(path: Path, session: Session) -> None:
    """A schema-1 store holding ``session``'s run, rows as schema 1 had them (no link)."""
    raw = sqlite3.connect(path)
    for statement in SCHEMA_1:
        raw.execute(statement)
    header = json.dumps(stamped_header(HEADER))
    raw.execute("INSERT INTO runs VALUES (1, ?, '2025-01-01T00:00:00+00:00')", (header,))
    run = session.run
    for step, command in enumerate(run.commands, start=1):
        start, end = run.batch(step)
        rows = sqlite_backend._rows(
            1, start, step, command, run.events[start:end], chain=Chain(b"")
        )
        raw.executemany("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?)", [r[:8] for r in rows])
    raw.commit()
    raw.close()


class TestSchema1:
    def test_a_schema_1_store_reads_as_before_and_checks_unchained(self, tmp_path: Path) -> None:
        path = tmp_path / "old.db"
        session = _refund_desk()
        _schema_1(path, session)
        with SqliteStore(path) as store:
            events = tuple(e for batch in store.read(1).batches for e in batch.events)
        report = check_file(path)

        assert (session.run.events, True, False) == (events, report.ok, report.chained)
        assert report.lines()[0].endswith("; unchained (written before memtape chained its logs)")

    def test_reading_it_changes_nothing(self, tmp_path: Path) -> None:
        path = tmp_path / "old.db"
        _schema_1(path, _refund_desk())
        before = path.read_bytes()
        check_file(path)

        assert before == path.read_bytes()

    def test_its_first_write_upgrades_it_in_place(self, tmp_path: Path) -> None:
        path = tmp_path / "old.db"
        _schema_1(path, _refund_desk())
        with SqliteStore(path) as store:
            store.create({"scenario": "new"})
        raw = sqlite3.connect(path)
        version = raw.execute("PRAGMA user_version").fetchone()[0]
        columns = {row[1] for row in raw.execute("PRAGMA table_info(events)")}
        raw.close()

        assert (2, True) == (version, "link" in columns)
        assert (False, True) == (check_file(Path(f"{path}#1")).chained, check_file(path).chained)

    def test_an_append_to_an_old_run_chains_it_from_its_header(self, tmp_path: Path) -> None:
        path = tmp_path / "old.db"
        _schema_1(path, _refund_desk())
        with SqliteStore(path) as store:
            store.append(1, AdvanceClock(1.0), (ClockAdvanced(1.0),), 15)
            verdict = store.verify(1, None)

        assert (True, None) == (verdict.chained, verdict.broken)

    def test_an_upgrade_that_fails_leaves_schema_1(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        path = tmp_path / "old.db"
        _schema_1(path, _refund_desk())
        with SqliteStore(path) as store:
            monkeypatch.setattr(sqlite_backend, "_chain_of", _killed)
            with pytest.raises(RuntimeError):
                store.append(1, AdvanceClock(1.0), (ClockAdvanced(1.0),), 15)
            monkeypatch.undo()
            assert 15 == store.read(1).header["events"]
        raw = sqlite3.connect(path)
        version = raw.execute("PRAGMA user_version").fetchone()[0]
        raw.close()

        assert 1 == version


def _killed(*args: Any, **kwargs: Any) -> Any:
    raise RuntimeError("killed")


ENDLESS = (
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) "
    "SELECT i FROM n ORDER BY i DESC"
)
"""A query that never ends: it counts for good, and sorts what it counted (spilling to disk)."""

MAIN = "import sys\nfrom memtape.cli import main\nsys.exit(main(sys.argv[1:]))"
"""The ``memtape`` command, run in a child process."""


def _crafted(path: Path, *statements: str) -> bytes:
    """A store of one run, then changed by hand by ``statements``; its bytes afterwards."""
    _store(path, runs=1).close()
    raw = sqlite3.connect(path)
    for statement in statements:
        raw.execute(statement)
    raw.commit()
    raw.close()
    return path.read_bytes()


AS_VIEW = {
    "events-a-view": (
        "ALTER TABLE events RENAME TO kept",
        "CREATE VIEW events AS SELECT * FROM kept",
        "holds a view, 'events'",
    ),
    "runs-a-view": (
        "ALTER TABLE runs RENAME TO kept",
        "CREATE VIEW runs AS SELECT * FROM kept",
        "holds a view, 'runs'",
    ),
    "a-trigger": (
        "SELECT 1",
        "CREATE TRIGGER grow AFTER INSERT ON runs BEGIN DELETE FROM events; END",
        "holds a trigger, 'grow'",
    ),
    "events-a-virtual-table": (
        "ALTER TABLE events RENAME TO kept",
        "CREATE VIRTUAL TABLE events USING fts5(run_id, position)",
        "'events' is a virtual table",
    ),
}
"""Stores whose tables are programs: each statement pair, and what the refusal names."""


class TestPlainTables:
    """A store is plain tables: opening it runs no SQL the file brings."""

    @pytest.mark.parametrize(("rename", "create", "named"), AS_VIEW.values(), ids=AS_VIEW.keys())
    def test_a_store_that_is_not_plain_tables_is_refused_in_one_line(
        self, tmp_path: Path, rename: str, create: str, named: str
    ) -> None:
        path = tmp_path / "runs.db"
        before = _crafted(path, rename, create)

        with pytest.raises(BadInput) as caught:
            open_store(path)

        assert (
            f"{path}: {named}; a run store is plain tables and memtape runs no SQL a store brings"
        ) == str(caught.value)
        assert before == path.read_bytes()

    @pytest.mark.parametrize(("rename", "create", "named"), AS_VIEW.values(), ids=AS_VIEW.keys())
    def test_a_writer_refuses_it_too_and_writes_nothing(
        self,
        tmp_path: Path,
        capsys: pytest.CaptureFixture[str],
        rename: str,
        create: str,
        named: str,
    ) -> None:
        path = tmp_path / "runs.db"
        before = _crafted(path, rename, create)

        assert 2 == main(["run", "refund-desk", "--out", str(path)])
        assert f"{path}: {named};" in capsys.readouterr().err
        assert before == path.read_bytes()

    @pytest.mark.parametrize("command", ["show", "timeline", "runs", "check", "view"])
    def test_each_reader_refuses_an_endless_view_at_once(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
    ) -> None:
        """Were the view read, the command would never return: a child, so a regression
        times out rather than hanging the suite."""
        path = tmp_path / "runs.db"
        before = _crafted(
            path,
            "ALTER TABLE events RENAME TO kept",
            f"CREATE VIEW events AS SELECT 1 AS run_id, i AS position, 1 AS step, 'x' AS type, "
            f"1 AS v, '{{}}' AS data, NULL AS command, 1 AS last, NULL AS link FROM ({ENDLESS})",
        )
        out = [] if command in ("runs", "check") else ["--out", str(tmp_path / "v.html")]
        argv = [command, str(path), *(out if command == "view" else [])]
        done = subprocess.run(
            [sys.executable, "-c", MAIN, *argv],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

        assert (True, 1, "") == (done.returncode != 0, len(done.stderr.splitlines()), done.stdout)
        assert "holds a view, 'events'" in done.stderr
        assert before == path.read_bytes()
        assert not (tmp_path / "v.html").exists()

    @pytest.mark.parametrize(
        ("table", "statement", "version"),
        [
            ("events", "ALTER TABLE events DROP COLUMN link", 2),
            ("runs", "ALTER TABLE runs ADD COLUMN extra TEXT", 2),
            ("events", "ALTER TABLE events ADD COLUMN shown TEXT AS (data || data)", 2),
        ],
        ids=["a-column-missing", "a-column-more", "a-generated-column"],
    )
    def test_a_table_without_the_schema_s_columns_is_refused(
        self, tmp_path: Path, table: str, statement: str, version: int
    ) -> None:
        path = tmp_path / "runs.db"
        _crafted(path, statement)

        with pytest.raises(BadInput) as caught:
            open_store(path)

        assert (
            f"{path}: not a memtape run store: its {table} table does not have the columns "
            f"of a schema-{version} store"
        ) == str(caught.value)

    def test_a_missing_table_is_refused(self, tmp_path: Path) -> None:
        path = tmp_path / "runs.db"
        _crafted(path, "DROP TABLE events")

        with pytest.raises(BadInput) as caught:
            open_store(path)

        assert f"{path}: not a memtape run store: it has no events table" == str(caught.value)

    def test_an_index_of_ones_own_is_allowed(self, tmp_path: Path) -> None:
        path = tmp_path / "runs.db"
        _crafted(path, "CREATE INDEX by_type ON events (type)")

        with open_store(path) as store:
            assert 1 == store.read(1).header["events"]


class TestBoundedReads:
    """A read stops after a bounded amount of SQLite's work, counted in steps, not seconds."""

    def test_a_query_that_never_ends_is_stopped_in_one_line(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        path = tmp_path / "runs.db"
        _crafted(
            path,
            "ALTER TABLE runs RENAME TO kept",
            f"CREATE VIEW runs AS SELECT i AS id, '{{}}' AS header, '' AS created, NULL AS head, "
            f"NULL AS signature FROM ({ENDLESS})",
        )
        monkeypatch.setattr(SqliteStore, "_check_tables", lambda self, version: None)

        with SqliteStore(path, work_per_page=1) as store, pytest.raises(BadInput) as caught:
            store.runs()

        assert str(caught.value).startswith(f"{path}: a read was stopped past ")
        assert str(caught.value).endswith(
            " steps of SQLite's work, far more than a run store of its size needs"
        )
