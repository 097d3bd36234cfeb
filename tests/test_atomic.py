"""memtape.core.atomic: a file written whole or not at all, whatever stops the writer.

The interrupted writers are real processes, paused mid-write until the test
has seen their temporary file, then signalled; every wait has a timeout.
"""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import os
import re
import select
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memtape.core.atomic import atomic_file, remove_stale, write_atomic, writer_of
from memtape.core.errors import BadInput

TIMEOUT = 30.0
"""Seconds any wait on a child may take before the test fails (generous: a busy machine)."""

PID_MAX_LIMIT = 2**22
"""The largest process id Linux allows (``pid_max`` cannot be set above it)."""

PAUSED_WRITE = """
import sys
from pathlib import Path
from memtape.core.atomic import atomic_file
with atomic_file(Path(sys.argv[1])) as file:
    file.write(b"x" * 1_000_000)
    file.flush()
    print("writing", flush=True)
    sys.stdin.readline()
    file.write(b"the rest")
"""
"""A writer that pauses after its first megabyte until a line arrives on stdin."""

PAUSED_RUN = """
import sys
from pathlib import Path
from memtape.core.logfile import write_run
from memtape.policies.session import Session
from memtape.scenarios import load_scenario

class Pausing(dict):
    def items(self):
        print("writing", flush=True)
        sys.stdin.readline()
        return super().items()

scenario = load_scenario("refund-desk")
session = Session(scenario.policies)
session.execute_all(scenario.steps)
write_run(Path(sys.argv[1]), Pausing(scenario="refund-desk"), session.run)
"""
"""``write_run`` pausing inside its write: its header is read once the temporary file is open."""


def _temporaries(directory: Path) -> list[str]:
    return sorted(name for name in os.listdir(directory) if name.endswith(".tmp"))


@pytest.fixture
def paused() -> Iterator[list[subprocess.Popen[str]]]:
    """The paused writers a test starts; any still running at the end is killed."""
    started: list[subprocess.Popen[str]] = []
    yield started
    for process in started:
        if process.poll() is None:
            process.kill()
            process.wait(TIMEOUT)


def _start(
    started: list[subprocess.Popen[str]], script: str, target: Path
) -> subprocess.Popen[str]:
    """A writer of ``target`` running ``script``, once it says it is mid-write."""
    process = subprocess.Popen(
        [sys.executable, "-c", script, str(target)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    started.append(process)
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], TIMEOUT)
    assert ready, "the writer did not start writing in time"
    assert "writing\n" == process.stdout.readline()
    return process


class TestWrite:
    def test_a_write_replaces_the_file_and_leaves_nothing_else(self, tmp_path: Path) -> None:
        path = tmp_path / "out.json"
        path.write_bytes(b"old")
        write_atomic(path, b"new")
        assert (b"new", ["out.json"]) == (path.read_bytes(), os.listdir(tmp_path))

    def test_a_written_file_is_0644_whatever_the_umask(self, tmp_path: Path) -> None:
        path = tmp_path / "out.json"
        previous = os.umask(0o077)
        try:
            write_atomic(path, b"x")
        finally:
            os.umask(previous)
        assert 0o644 == path.stat().st_mode & 0o777

    def test_the_temporary_file_is_named_for_its_writer(self, tmp_path: Path) -> None:
        path = tmp_path / "out.jsonl"
        with atomic_file(path) as file:
            file.write(b"x")
            names = os.listdir(tmp_path)
        pattern = rf"\.out\.jsonl\.{os.getpid()}\.[0-9a-f]{{8}}\.tmp"
        assert (1, True) == (len(names), bool(re.fullmatch(pattern, names[0])))

    def test_an_error_in_the_block_removes_the_temporary_and_keeps_the_file(
        self, tmp_path: Path
    ) -> None:
        path = tmp_path / "out.json"
        path.write_bytes(b"old")

        def fail_halfway() -> None:
            with atomic_file(path) as file:
                file.write(b"half")
                raise ZeroDivisionError

        with pytest.raises(ZeroDivisionError):
            fail_halfway()
        assert (b"old", ["out.json"]) == (path.read_bytes(), os.listdir(tmp_path))

    def test_an_os_error_in_the_block_is_one_line_naming_the_file(self, tmp_path: Path) -> None:
        path = tmp_path / "out.json"
        with pytest.raises(BadInput) as raised, atomic_file(path):
            raise OSError(28, "No space left on device")
        assert (f"{path}: cannot write it: No space left on device", []) == (
            str(raised.value),
            os.listdir(tmp_path),
        )

    def test_a_fifo_target_is_refused_before_anything_is_made(self, tmp_path: Path) -> None:
        path = tmp_path / "out.json"
        os.mkfifo(path)
        with pytest.raises(BadInput) as raised:
            write_atomic(path, b"x")
        assert (f"{path}: cannot write it: it is a FIFO", ["out.json"]) == (
            str(raised.value),
            os.listdir(tmp_path),
        )


class TestSignalHandling:
    def test_sigterm_and_sighup_raise_only_during_the_write(self, tmp_path: Path) -> None:
        with atomic_file(tmp_path / "out.json"):
            during = [signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGHUP)]
        after = [signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGHUP)]
        assert ([False, False], [signal.SIG_DFL, signal.SIG_DFL]) == (
            [handler is signal.SIG_DFL for handler in during],
            after,
        )

    def test_a_programs_own_handling_is_kept(self, tmp_path: Path) -> None:
        def own(signum: int, frame: Any) -> None:
            """A handler of the program's own."""

        previous = signal.signal(signal.SIGTERM, own)
        ignored = signal.signal(signal.SIGHUP, signal.SIG_IGN)
        try:
            with atomic_file(tmp_path / "out.json"):
                during = (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGHUP))
            after = (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGHUP))
        finally:
            signal.signal(signal.SIGTERM, previous)
            signal.signal(signal.SIGHUP, ignored)
        assert ((own, signal.SIG_IGN), (own, signal.SIG_IGN)) == (during, after)

    def test_a_write_on_another_thread_sets_no_handler(self, tmp_path: Path) -> None:
        seen: list[object] = []

        def write() -> None:
            with atomic_file(tmp_path / "out.json") as file:
                file.write(b"x")
                seen.append(signal.getsignal(signal.SIGTERM))

        thread = threading.Thread(target=write)
        thread.start()
        thread.join(TIMEOUT)
        assert ([signal.SIG_DFL], b"x") == (seen, (tmp_path / "out.json").read_bytes())


class TestInterruptedWriter:
    @pytest.mark.parametrize(
        ("signum", "status"),
        [
            (signal.SIGTERM, 128 + signal.SIGTERM),
            (signal.SIGHUP, 128 + signal.SIGHUP),
            # An uncaught KeyboardInterrupt ends Python by SIGINT itself, after its traceback.
            (signal.SIGINT, -signal.SIGINT),
        ],
    )
    @pytest.mark.parametrize("earlier", [b"old", None])
    def test_a_signal_mid_write_removes_the_temporary_and_keeps_the_file(
        self,
        tmp_path: Path,
        paused: list[subprocess.Popen[str]],
        signum: signal.Signals,
        status: int,
        earlier: bytes | None,
    ) -> None:
        target = tmp_path / "out.jsonl"
        if earlier is not None:
            target.write_bytes(earlier)
        writer = _start(paused, PAUSED_WRITE, target)
        during = _temporaries(tmp_path)
        writer.send_signal(signum)
        writer.wait(TIMEOUT)
        assert (1, str(writer.pid)) == (len(during), during[0].split(".")[3])
        assert (status, [], earlier) == (
            writer.returncode,
            _temporaries(tmp_path),
            target.read_bytes() if target.exists() else None,
        )

    def test_sigterm_inside_write_run_removes_its_temporary(
        self, tmp_path: Path, paused: list[subprocess.Popen[str]]
    ) -> None:
        target = tmp_path / "run.jsonl"
        target.write_bytes(b"old\n")
        writer = _start(paused, PAUSED_RUN, target)
        during = _temporaries(tmp_path)
        writer.terminate()
        writer.wait(TIMEOUT)
        assert writer.stderr is not None
        assert (1, 143, "", [], b"old\n") == (
            len(during),
            writer.returncode,
            writer.stderr.read(),
            _temporaries(tmp_path),
            target.read_bytes(),
        )

    def test_a_killed_writers_temporary_is_removed_by_the_next_write(
        self, tmp_path: Path, paused: list[subprocess.Popen[str]]
    ) -> None:
        """SIGKILL runs no cleanup: its temporary stays until the file is written again."""
        target = tmp_path / "out.jsonl"
        writer = _start(paused, PAUSED_WRITE, target)
        writer.kill()
        writer.wait(TIMEOUT)
        left = _temporaries(tmp_path)
        write_atomic(target, b"new")
        assert (1, [], b"new") == (len(left), _temporaries(tmp_path), target.read_bytes())

    def test_a_live_writers_temporary_is_left_alone(
        self, tmp_path: Path, paused: list[subprocess.Popen[str]]
    ) -> None:
        target = tmp_path / "out.jsonl"
        writer = _start(paused, PAUSED_WRITE, target)
        during = _temporaries(tmp_path)
        write_atomic(target, b"mine")
        after = _temporaries(tmp_path)
        assert writer.stdin is not None
        writer.stdin.write("go on\n")
        writer.stdin.flush()
        writer.wait(TIMEOUT)
        assert (during, b"x" * 1_000_000 + b"the rest", 0, []) == (
            after,
            target.read_bytes(),
            writer.returncode,
            _temporaries(tmp_path),
        )


class TestStaleTemporaries:
    def test_a_dead_writers_temporary_goes_and_a_live_ones_stays(self, tmp_path: Path) -> None:
        target = tmp_path / "out.jsonl"
        ended = subprocess.Popen([sys.executable, "-c", "pass"])
        ended.wait(TIMEOUT)
        dead = [
            tmp_path / f".out.jsonl.{ended.pid}.x.tmp",
            tmp_path / f".out.jsonl.{PID_MAX_LIMIT + 1}.x.tmp",
        ]
        mine = tmp_path / f".out.jsonl.{os.getpid()}.x.tmp"
        for path in [*dead, mine]:
            path.write_bytes(b"half")
        write_atomic(target, b"new")
        assert [mine.name, target.name] == sorted(os.listdir(tmp_path))

    def test_only_this_files_temporaries_are_looked_at(self, tmp_path: Path) -> None:
        target = tmp_path / "out.jsonl"
        others = [
            ".out.jsonl.x.999999.y.tmp",  # out.jsonl.x's
            ".out.jsonl.999999.tmp",  # no token: not a name memtape makes
            ".out.jsonl.abc.x.tmp",  # no pid
            ".out.jsonl.abcd1234",  # an older memtape's temporary (mkstemp)
            ".other.999999.x.tmp",
        ]
        for name in others:
            (tmp_path / name).write_bytes(b"")
        assert [] == remove_stale(target)
        assert sorted([*others]) == sorted(os.listdir(tmp_path))

    @pytest.mark.parametrize(
        ("name", "pid"),
        [
            (".out.jsonl.123.ab12.tmp", 123),
            (".out.jsonl.123.tmp", None),
            (".out.jsonl.0.ab.tmp", None),
            (".out.jsonl.١٢٣.ab.tmp", None),
            (".out.jsonl.123..tmp", None),
            ("out.jsonl.123.ab.tmp", None),
            (".out.jsonl.x.123.ab.tmp", None),
        ],
    )
    def test_the_writer_is_read_from_the_name(self, name: str, pid: int | None) -> None:
        assert pid == writer_of(Path("out.jsonl"), name)
