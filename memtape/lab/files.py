"""Output files: checked before any work, then written whole or not at all.

Every refusal to write reads ``PATH: cannot write it: REASON``, whichever
command or option named the path. The checks and the atomic writer live in
``memtape.core`` (``paths``, ``atomic``), where the run file writer uses them too.
"""

import os
from pathlib import Path

from memtape.core.atomic import write_atomic
from memtape.core.errors import BadInput
from memtape.core.paths import check_writable

_SLASHES = ("/", os.sep)


def output_path(text: str) -> Path:
    """The file an output option (``--out``, ``--json``...) names, as typed.

    Refused as bad input when it names a directory (an existing one, or any
    path ending in a slash, which ``Path`` would quietly drop), a FIFO, a
    socket or a device, or lies in a directory that does not exist.
    """
    if text.endswith(_SLASHES):
        raise BadInput(f"{text}: cannot write it: it ends in a slash, so it names a directory")
    path = Path(text)
    check_writable(path)
    return path


__all__ = ["check_writable", "output_path", "write_atomic"]
