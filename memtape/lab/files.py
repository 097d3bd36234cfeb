"""Writing the lab's output files whole or not at all."""

import os
import tempfile
from pathlib import Path

from memtape.core.errors import BadInput


def check_writable(path: Path, option: str = "") -> Path:
    """The directory ``path`` would be written in; refused as bad input (named with
    ``option``, if given) when ``path`` is a directory or its directory does not exist."""
    name = f"{option} {path}" if option else str(path)
    directory = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise BadInput(f"{name}: is a directory")
    if not directory.is_dir():
        raise BadInput(f"{name}: no such directory {directory}")
    return directory


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file beside it, so a failure leaves
    any earlier file as it was."""
    directory = check_writable(path)
    try:
        handle, temporary = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.")
    except OSError as error:
        raise BadInput(f"{path}: cannot write it: {error.strerror}") from None
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.replace(temporary, path)
    except OSError as error:
        Path(temporary).unlink(missing_ok=True)
        raise BadInput(f"{path}: cannot write it: {error.strerror}") from None
