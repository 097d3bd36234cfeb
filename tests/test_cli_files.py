"""The ``memtape`` command and the files it is given: special files refused, interrupted
writes cleaned up.

A command handed a FIFO would wait on it for good if it opened it, so each
command runs in one child process with a timeout: a regression fails the
test instead of hanging the suite.
"""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from memtape.cli import main
from memtape.core.logfile import read_run
from memtape.lab.generate import support_session
from memtape.policies.session import Session
from memtape.runs.files import save_run
from memtape.scenarios import load_scenario

TIMEOUT = 120.0
"""Seconds the child running every refused command may take (generous: a busy machine)."""

LONG = "n" * 300
"""A file name longer than any file system takes (255 bytes)."""

SPECIAL = ("fifo", "fifo.jsonl", "fifo.db", "fifo.toml", "fifo.png", "sock.jsonl")
"""The special files ``special`` makes; with ``/dev/zero`` and ``/dev/null``, those a
command must refuse from their ``stat`` alone, without opening them."""

CHILD = """
import contextlib, io, json, os, sys
from memtape.cli import main
special = {os.path.abspath(name) for name in json.loads(sys.argv[2])}
opened = []
def watch(event, args):
    # Every open by Python (builtins, io, os) and every SQLite connection is audited.
    if event in ("open", "sqlite3.connect") and isinstance(args[0], (str, bytes, os.PathLike)):
        path = os.path.abspath(os.fsdecode(args[0]))
        if path in special:
            opened.append(os.path.basename(path))
sys.addaudithook(watch)
for argv in json.loads(sys.argv[1]):
    out, err = io.StringIO(), io.StringIO()
    opened.clear()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(argv)
        except SystemExit as exit:
            status = exit.code
    line = {"argv": argv, "status": status, "out": out.getvalue(), "err": err.getvalue()}
    print(json.dumps({**line, "opened": sorted(set(opened))}), flush=True)
"""
"""Runs ``memtape.cli.main`` on each argv list in turn; one JSON line per command, naming
the special files it opened (a refusal from ``stat`` opens none: it cannot wait on one)."""

FIFO = "not a regular file (a FIFO)"
UNWRITABLE_FIFO = "cannot write it: it is a FIFO"

READERS = [
    (["show", "fifo.jsonl"], f"fifo.jsonl: {FIFO}"),
    (["show", "fifo"], f"fifo: {FIFO}"),
    (["show", "fifo.db"], f"fifo.db: {FIFO}"),
    (["show", "fifo.db#1"], f"fifo.db: {FIFO}"),
    (["show", "fifo.toml"], f"fifo.toml: {FIFO}"),
    (["show", "sock.jsonl"], "sock.jsonl: not a regular file (a socket)"),
    (["show", "/dev/zero"], "/dev/zero: not a regular file (a character device)"),
    (["timeline", "fifo.jsonl"], f"fifo.jsonl: {FIFO}"),
    (["why", "fifo.jsonl", "turn:1"], f"fifo.jsonl: {FIFO}"),
    (["diff", "fifo.jsonl", "1", "2"], f"fifo.jsonl: {FIFO}"),
    (["diff", "ok.jsonl", "fifo.jsonl", "--step", "1"], f"fifo.jsonl: {FIFO}"),
    (["runs", "fifo.db"], f"fifo.db: {FIFO}"),
    (["runs", "fifo.jsonl"], f"fifo.jsonl: {FIFO}"),
    (["check", "fifo.jsonl"], f"fifo.jsonl: {FIFO}"),
    (["check", "fifo.db"], f"fifo.db: {FIFO}"),
    (["export", "fifo.jsonl", "--redact", "--out", "e.jsonl"], f"fifo.jsonl: {FIFO}"),
    (["export", "fifo.db", "--redact", "--out", "e.jsonl"], f"fifo.db: {FIFO}"),
    (["fork", "fifo.jsonl", "--at", "0", "--out", "f.jsonl"], f"fifo.jsonl: {FIFO}"),
    (["fork", "fifo.db", "--at", "0", "--out", "f.db"], f"fifo.db: {FIFO}"),
    (["view", "fifo.jsonl", "--out", "v.html"], f"fifo.jsonl: {FIFO}"),
    (["view", "ok.jsonl", "--compare", "fifo.jsonl", "--out", "v.html"], f"fifo.jsonl: {FIFO}"),
    (["view", "fifo.toml", "--out", "v.html"], f"fifo.toml: {FIFO}"),
    (["serve", "fifo.jsonl"], f"fifo.jsonl: {FIFO}"),
    (["serve", "fifo.toml"], f"fifo.toml: {FIFO}"),
    (["run", "fifo.toml", "--out", "o.jsonl"], f"fifo.toml: {FIFO}"),
    (["bench", "fifo.toml", "--policy", "tiered", "-q"], f"fifo.toml: {FIFO}"),
    (["bench", "refund-desk", "fifo.toml", "--policy", "tiered", "-q"], f"fifo.toml: {FIFO}"),
    (["import", "fifo", "--out", "s.toml"], f"fifo: {FIFO}"),
]
"""Each command given a special file to read, and its one-line refusal."""

WRITERS = [
    (["run", "refund-desk", "--out", "fifo.jsonl"], f"fifo.jsonl: {UNWRITABLE_FIFO}"),
    (["run", "refund-desk", "--out", "fifo.db"], f"fifo.db: {UNWRITABLE_FIFO}"),
    (["run", "refund-desk", "--out", "sock.jsonl"], "sock.jsonl: cannot write it: it is a socket"),
    (
        ["run", "refund-desk", "--out", "/dev/null"],
        "/dev/null: cannot write it: it is a character device",
    ),
    (["fork", "ok.jsonl", "--at", "0", "--out", "fifo.jsonl"], f"fifo.jsonl: {UNWRITABLE_FIFO}"),
    (["fork", "ok.jsonl", "--at", "0", "--out", "fifo.db"], f"fifo.db: {UNWRITABLE_FIFO}"),
    (["export", "ok.jsonl", "--redact", "--out", "fifo.jsonl"], f"fifo.jsonl: {UNWRITABLE_FIFO}"),
    (["view", "ok.jsonl", "--out", "fifo"], f"fifo: {UNWRITABLE_FIFO}"),
    (
        ["generate", "support", "--turns", "5", "--seed", "1", "--out", "fifo.toml"],
        f"fifo.toml: {UNWRITABLE_FIFO}",
    ),
    (
        ["generate", "store", "--steps", "5", "--seed", "1", "--out", "fifo.toml"],
        f"fifo.toml: {UNWRITABLE_FIFO}",
    ),
    (["import", "chat.jsonl", "--out", "fifo.toml"], f"fifo.toml: {UNWRITABLE_FIFO}"),
    (
        ["bench", "refund-desk", "--policy", "tiered", "--json", "fifo", "-q"],
        f"fifo: {UNWRITABLE_FIFO}",
    ),
    (
        ["bench", "refund-desk", "--policy", "tiered", "--plot", "fifo.png", "-q"],
        f"fifo.png: {UNWRITABLE_FIFO}",
    ),
]
"""Each command given a special file to write, and its one-line refusal."""

CASES = READERS + WRITERS

Errors = Callable[..., tuple[int, str, str]]
"""``memtape ARGS...`` run in-process: its status, stdout and stderr."""


def _recorded(path: Path, name: str = "refund-desk") -> Path:
    scenario = load_scenario(name)
    session = Session(scenario.policies)
    session.execute_all(scenario.steps)
    save_run(session, path, scenario.name)
    return path


@pytest.fixture(scope="module")
def special(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A directory of FIFOs, a socket, a run and a transcript to hand the commands."""
    directory = tmp_path_factory.mktemp("special")
    for name in ("fifo", "fifo.jsonl", "fifo.db", "fifo.toml", "fifo.png"):
        os.mkfifo(directory / name)
    _recorded(directory / "ok.jsonl")
    (directory / "chat.jsonl").write_text('{"role": "user", "content": "hi"}\n', "utf-8")
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(directory / "sock.jsonl"))
    yield directory
    listener.close()


@pytest.fixture(scope="module")
def refusals(special: Path) -> dict[tuple[str, ...], dict[str, Any]]:
    """What each of ``CASES`` did, by its argv, all run in one child with a timeout."""
    argvs = [argv for argv, _ in CASES]
    specials = [*SPECIAL, "/dev/zero", "/dev/null"]
    try:
        done = subprocess.run(
            [sys.executable, "-c", CHILD, json.dumps(argvs), json.dumps(specials)],
            cwd=special,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired as expired:
        lines = (expired.stdout or b"").splitlines()
        stuck = " ".join(argvs[len(lines)]) if len(lines) < len(argvs) else "the last command"
        pytest.fail(f"a command waited on a special file: memtape {stuck} never returned")
    assert (0, "") == (done.returncode, done.stderr)
    results = [json.loads(line) for line in done.stdout.splitlines()]
    return {tuple(result["argv"]): result for result in results}


class TestSpecialFiles:
    @pytest.mark.parametrize(("argv", "message"), CASES, ids=[" ".join(a) for a, _ in CASES])
    def test_a_special_file_is_refused_in_one_line(
        self, refusals: dict[tuple[str, ...], dict[str, Any]], argv: list[str], message: str
    ) -> None:
        result = refusals[tuple(argv)]
        assert (2, "", f"memtape: error: {message}\n") == (
            result["status"],
            result["out"],
            result["err"],
        )

    @pytest.mark.parametrize(("argv", "message"), CASES, ids=[" ".join(a) for a, _ in CASES])
    def test_a_special_file_is_refused_without_being_opened(
        self, refusals: dict[tuple[str, ...], dict[str, Any]], argv: list[str], message: str
    ) -> None:
        """Refused from its ``stat`` alone: an open could wait on a FIFO for good."""
        assert [] == refusals[tuple(argv)]["opened"]

    def test_nothing_is_written_and_no_special_file_is_replaced(
        self, refusals: dict[tuple[str, ...], dict[str, Any]], special: Path
    ) -> None:
        assert len(CASES) == len(refusals)
        kinds = {path.name: path.is_fifo() or path.is_socket() for path in special.iterdir()}
        assert {
            "chat.jsonl": False,
            "fifo": True,
            "fifo.db": True,
            "fifo.jsonl": True,
            "fifo.png": True,
            "fifo.toml": True,
            "ok.jsonl": False,
            "sock.jsonl": True,
        } == kinds


class TestInterruptedRun:
    """``memtape run`` of a long scenario, sent SIGTERM while it writes its run file."""

    ATTEMPTS = 20
    """Runs to try; each catches the write in progress unless the machine stalls the test."""

    def _run_until_writing(self, command: list[str], directory: Path) -> tuple[int, bool]:
        """Run ``command``; SIGTERM it once its temporary file appears. Its exit status,
        and whether the signal was sent while the temporary file was there."""
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + TIMEOUT
        seen = False
        try:
            while process.poll() is None and time.monotonic() < deadline:
                if any(name.endswith(".tmp") for name in os.listdir(directory)):
                    process.send_signal(signal.SIGTERM)
                    seen = True
                    break
                time.sleep(0.0005)
            process.wait(TIMEOUT)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait(TIMEOUT)
        return process.returncode, seen

    def test_sigterm_mid_write_leaves_no_temporary_and_no_partial_run(self, tmp_path: Path) -> None:
        scenario = tmp_path / "long.toml"
        scenario.write_text(support_session(3000, 1), "utf-8")
        written = tmp_path / "out"
        written.mkdir()
        out = written / "run.jsonl"
        command = [sys.executable, "-m", "memtape.cli", "run", str(scenario), "--out", str(out)]
        outcomes = []
        for _ in range(self.ATTEMPTS):
            status, seen = self._run_until_writing(command, written)
            # Whenever the signal came, nothing half-written is left: no temporary file,
            # and the run file is absent or whole.
            assert [] == [name for name in os.listdir(written) if name != "run.jsonl"]
            if out.exists():
                assert 5017 == read_run(out).header["events"]
            outcomes.append((status, seen, out.exists()))
            if (status, seen, out.exists()) == (128 + signal.SIGTERM, True, False):
                break
            out.unlink(missing_ok=True)
        assert (128 + signal.SIGTERM, True, False) == outcomes[-1], outcomes


class TestOneLineForAnyPath:
    """A path the system cannot look up is one line naming it once, never a traceback."""

    @pytest.fixture
    def errors(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> Errors:
        monkeypatch.chdir(tmp_path)
        _recorded(tmp_path / "ok.jsonl")
        (tmp_path / "page.html").write_text("", "utf-8")
        for name in ("loop.jsonl", "loop.toml"):
            (tmp_path / name).symlink_to(name)

        def run(*argv: str) -> tuple[int, str, str]:
            status = main(list(argv))
            out, err = capsys.readouterr()
            return status, out, err

        return run

    @pytest.mark.parametrize(
        "argv",
        [
            ["show", "loop.jsonl"],
            ["run", "loop.toml", "--out", "o.jsonl"],
            ["import", "loop.jsonl", "--out", "s.toml"],
        ],
    )
    def test_a_symlink_loop_is_named_once(self, errors: Errors, argv: list[str]) -> None:
        name = argv[1]
        expected = f"memtape: error: {name}: cannot read it: Too many levels of symbolic links\n"
        assert (2, "", expected) == errors(*argv)

    @pytest.mark.parametrize(
        ("argv", "message"),
        [
            (["run", f"{LONG}.toml", "--out", "o.jsonl"], f"{LONG}.toml: cannot read it"),
            (["show", LONG], f"{LONG}: cannot read it"),
            (["show", f"{LONG}.db"], f"{LONG}.db: cannot read it"),
            (["view", f"{LONG}.jsonl", "--out", "page.html"], f"{LONG}.jsonl: cannot read it"),
            (
                ["fork", "ok.jsonl", "--at", "0", "--out", f"{LONG}.jsonl"],
                f"{LONG}.jsonl: cannot write it",
            ),
            (["bench", f"{LONG}.toml", "--policy", "tiered", "-q"], f"{LONG}.toml: cannot read it"),
        ],
        ids=["run", "show", "show-db", "view", "fork", "bench"],
    )
    def test_a_name_too_long_is_one_line(
        self, errors: Errors, argv: list[str], message: str
    ) -> None:
        assert (2, "", f"memtape: error: {message}: File name too long\n") == errors(*argv)
