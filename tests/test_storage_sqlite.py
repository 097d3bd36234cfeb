"""memtape.storage.sqlite: many runs in one file, addressed, locked, interrupted."""

import sqlite3
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from memtape.core.codec import event_data
from memtape.core.commands import AddTurn, AdvanceClock
from memtape.core.errors import BadInput
from memtape.core.events import ClockAdvanced, Event, TurnAdded
from memtape.policies.session import Session
from memtape.scenarios import load_scenario
from memtape.storage import Conflict, JsonlStore, SqliteStore, open_store, parse_address
from memtape.storage import sqlite as sqlite_backend

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
        with sqlite3.connect(path) as raw:
            raw.execute("DELETE FROM events WHERE position = 4")
        raw.close()

        with open_store(path) as store:
            recorded = store.read()
            with pytest.raises(BadInput, match="not appending to a torn command"):
                store.append(1, TURN, (TURN_EVENT,), 3)

        assert (
            1,
            "a torn tail: step 2 (from position 2) has no end mark; "
            "loaded the 1 whole steps before it",
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

    def test_processes_creating_one_store_at_once_all_succeed(self, tmp_path: Path) -> None:
        path = tmp_path / "shared.db"
        command = [sys.executable, "-m", "memtape.cli", "run", "dana-facts", "--out", str(path)]
        processes = [subprocess.Popen(command, stderr=subprocess.PIPE) for _ in range(4)]
        errors = [process.communicate()[1] for process in processes]

        assert [0, 0, 0, 0] == [process.returncode for process in processes], errors
        with SqliteStore(path) as store:
            assert 4 == len(store.runs())
