"""Writing a file whole or not at all: through a temporary file beside it, then a rename.

The temporary file is named for its writer, ``.NAME.PID.RANDOM.tmp``. Any way
a write can stop short removes it: an error, Ctrl-C (``KeyboardInterrupt``),
and SIGTERM or SIGHUP, which kill a process without running its cleanup
unless told otherwise; so while a write runs on the main thread, those two
signals raise ``SystemExit`` (128 + the signal's number, the status a shell
reports for them) and the previous handling returns afterwards. What a
writer killed outright (SIGKILL, a power cut) leaves is removed by the next
write of the same file, once its writer's process is gone.
"""

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from types import FrameType
from typing import BinaryIO

from memtape.core.errors import BadInput
from memtape.core.paths import check_writable

MODE = 0o644
"""The permissions of every written file: readable by all, as a run file is."""

SUFFIX = ".tmp"
"""The ending of a temporary file's name."""

_ENDING = (signal.SIGTERM, signal.SIGHUP)


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically: on any failure, any earlier file stays as it was.

    A failure is a ``BadInput`` reading ``PATH: cannot write it: REASON``.
    """
    with atomic_file(path) as file:
        file.write(data)


@contextmanager
def atomic_file(path: Path) -> Iterator[BinaryIO]:
    """A binary file that takes the place of ``path`` when the block ends without an error.

    If the block raises, or is interrupted, the temporary file is removed and
    ``path`` is as it was. An ``OSError`` in the block (a full disk) is a
    ``BadInput`` naming ``path``; any other exception passes through. The
    written file has mode 0644, whatever the umask.
    """
    directory = check_writable(path)
    remove_stale(path)
    with _signals_raise():
        # Named before it exists: a signal that lands while it is being created (the
        # moment a watcher first sees it) still finds it to remove.
        name = directory / temporary_name(path, os.getpid(), os.urandom(4).hex())
        temporary: Path | None = name
        try:
            handle = _create(name)
            with os.fdopen(handle, "wb") as file:
                os.fchmod(handle, MODE)
                yield file
            os.replace(name, path)
            temporary = None
        except OSError as error:
            raise BadInput(f"{path}: cannot write it: {error.strerror or error}") from None
        finally:
            if temporary is not None:
                temporary.unlink(missing_ok=True)


def temporary_name(path: Path, pid: int, token: str) -> str:
    """The name of the temporary file process ``pid`` writes ``path`` through."""
    return f".{path.name}.{pid}.{token}{SUFFIX}"


def writer_of(path: Path, name: str) -> int | None:
    """The process id in ``name`` when it is a temporary file of ``path``; else None."""
    prefix = f".{path.name}."
    if not (name.startswith(prefix) and name.endswith(SUFFIX)):
        return None
    parts = name[len(prefix) : -len(SUFFIX)].split(".")
    if len(parts) != 2 or not parts[1]:  # a pid and a token
        return None
    pid = parts[0]
    if not (pid.isascii() and pid.isdigit()) or int(pid) < 1:
        return None
    return int(pid)


def remove_stale(path: Path) -> list[Path]:
    """Remove the temporary files of ``path`` whose writers are no longer running; them.

    A temporary file of a running writer (this process among them) is left
    alone: it is still being written.
    """
    directory = path.parent if str(path.parent) else Path(".")
    prefix = f".{path.name}."
    removed: list[Path] = []
    try:
        with os.scandir(directory) as entries:
            names = [entry.name for entry in entries if entry.name.startswith(prefix)]
    except OSError:
        return removed
    for name in names:
        pid = writer_of(path, name)
        if pid is None or _running(pid):
            continue
        stale = directory / name
        with suppress(OSError):
            stale.unlink()
            removed.append(stale)
    return removed


def _running(pid: int) -> bool:
    """Whether process ``pid`` exists (one of another user's counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OverflowError:
        return False  # no process has an id that large
    return True


def _create(name: Path) -> int:
    """The open descriptor of a new temporary file called ``name``."""
    return os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, MODE)


def _raise_exit(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


@contextmanager
def _signals_raise() -> Iterator[None]:
    """SIGTERM and SIGHUP raise ``SystemExit`` inside the block, where they would kill.

    Only on the main thread (the only one Python lets set handlers), and only
    for a signal left to its default action: one a program ignores or
    handles itself keeps its handling.
    """
    changed: dict[signal.Signals, signal.Handlers] = {}
    if threading.current_thread() is threading.main_thread():
        for signum in _ENDING:
            if signal.getsignal(signum) is signal.SIG_DFL:
                with suppress(ValueError):  # a subinterpreter may not set handlers
                    signal.signal(signum, _raise_exit)
                    changed[signum] = signal.SIG_DFL
    try:
        yield
    finally:
        for signum, handler in changed.items():
            signal.signal(signum, handler)
