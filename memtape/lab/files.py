"""Output files: checked before any work, then written whole or not at all.

Every refusal to write reads ``PATH: cannot write it: REASON``, whichever
command or option named the path.
"""

import os
import tempfile
from pathlib import Path

from memtape.core.errors import BadInput

_SLASHES = ("/", os.sep)


def output_path(text: str) -> Path:
    """The file an output option (``--out``, ``--json``...) names, as typed.

    Refused as bad input when it names a directory (an existing one, or any
    path ending in a slash, which ``Path`` would quietly drop) or lies in a
    directory that does not exist.
    """
    if text.endswith(_SLASHES):
        raise BadInput(f"{text}: cannot write it: it ends in a slash, so it names a directory")
    path = Path(text)
    check_writable(path)
    return path


def check_writable(path: Path) -> Path:
    """The directory ``path`` would be written in; refused as bad input when ``path``
    is a directory or its directory does not exist."""
    directory = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise BadInput(f"{path}: cannot write it: it is a directory")
    if not directory.is_dir():
        raise BadInput(f"{path}: cannot write it: no such directory {directory}")
    return directory


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file beside it, so a failure leaves
    any earlier file as it was. The file is readable by all, as a run file is."""
    directory = check_writable(path)
    try:
        handle, temporary = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.")
    except OSError as error:
        raise BadInput(f"{path}: cannot write it: {error.strerror}") from None
    try:
        # mkstemp makes the file private (0600); an output file is not a secret.
        os.fchmod(handle, 0o644)
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.replace(temporary, path)
    except OSError as error:
        Path(temporary).unlink(missing_ok=True)
        raise BadInput(f"{path}: cannot write it: {error.strerror}") from None
