"""What a path given to memtape may be: it reads regular files, and writes over nothing else.

A FIFO, a socket or a device named where a file belongs is refused from its
``os.stat`` alone, before anything opens it: opening a FIFO for reading
blocks until a writer comes, and reading a device may never end.
"""

import os
import stat
from pathlib import Path

from memtape.core.errors import BadInput

_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def kind(mode: int) -> str:
    """What a file of ``mode`` (an ``st_mode``) is, in words: ``a FIFO``, ``a socket``..."""
    if stat.S_ISREG(mode):
        return "a regular file"
    if stat.S_ISDIR(mode):
        return "a directory"
    return next((name for test, name in _KINDS if test(mode)), "a special file")


def regular_file(path: Path, what: str, *, missing: str | None = None) -> Path:
    """``path``, when it names a regular file (through any symlinks); else ``BadInput``.

    ``what`` names what was expected there (``run file``, ``scenario file``...)
    in the refusals: ``PATH: no such run file`` (or ``PATH: MISSING``),
    ``PATH: is a directory, not a run file``, ``PATH: not a regular file (a
    FIFO)``, ``PATH: cannot read it: File name too long``. Nothing is opened.
    """
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise BadInput(f"{path}: {missing or f'no such {what}'}") from None
    except OSError as error:
        raise BadInput(f"{path}: cannot read it: {error.strerror or error}") from None
    if stat.S_ISDIR(mode):
        raise BadInput(f"{path}: is a directory, not a {what}")
    if not stat.S_ISREG(mode):
        raise BadInput(f"{path}: not a regular file ({kind(mode)})")
    return path


def read_regular(path: Path, what: str, *, missing: str | None = None) -> bytes:
    """The bytes of the regular file at ``path``; refused as ``regular_file`` refuses.

    The file is opened without blocking and checked again once open, so a FIFO
    put in its place after the check is refused rather than waited on.
    """
    regular_file(path, what, missing=missing)
    try:
        handle = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        raise BadInput(f"{path}: cannot read it: {error.strerror or error}") from None
    with os.fdopen(handle, "rb") as file:
        mode = os.fstat(handle).st_mode
        if not stat.S_ISREG(mode):
            raise BadInput(f"{path}: not a regular file ({kind(mode)})")
        try:
            return file.read()
        except OSError as error:
            raise BadInput(f"{path}: cannot read it: {error.strerror or error}") from None


def check_writable(path: Path) -> Path:
    """The directory ``path`` would be written in; refused as bad input when ``path``
    is a directory, a FIFO, a socket or a device, or its directory does not exist.

    Every refusal reads ``PATH: cannot write it: REASON``.
    """
    directory = path.parent if str(path.parent) else Path(".")
    try:
        mode: int | None = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        mode = None  # not there yet, or under a file: the directory check says which
    except OSError as error:
        raise BadInput(f"{path}: cannot write it: {error.strerror or error}") from None
    if mode is not None and stat.S_ISDIR(mode):
        raise BadInput(f"{path}: cannot write it: it is a directory")
    if mode is not None and not stat.S_ISREG(mode):
        raise BadInput(f"{path}: cannot write it: it is {kind(mode)}")
    if not directory.is_dir():
        raise BadInput(f"{path}: cannot write it: no such directory {directory}")
    return directory


def same_file(first: Path, second: Path) -> bool:
    """Whether two paths name one file; False when either cannot be looked up (its
    reader or writer then says why)."""
    try:
        return os.path.samefile(first, second)
    except (OSError, ValueError):
        return False
