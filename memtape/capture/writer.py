"""The capture file's writer: a header line, then one line an exchange, each written
whole in one call and flushed, so a killed recorder loses at most the line in flight."""

import os
import stat
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from memtape._version import __version__
from memtape.capture.exchanges import Exchange, capture_line
from memtape.capture.threads import thread_key
from memtape.core.errors import BadInput
from memtape.core.paths import check_writable, kind

CAPTURE_VERSION = 1
"""The capture format's version, in each header line (``memtape_capture``)."""


class CaptureWriter:
    """Appends exchanges to a capture file, numbering them and keying their threads.

    Safe to share between threads (an SDK client used from several): a lock keeps
    the numbering, the thread keys and the lines in one order.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.written = 0
        """Exchanges written so far."""
        self._known: dict[str, str] = {}
        self._lock = threading.Lock()
        self._file = _open_appending(path)
        started = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        self._write(
            {
                "memtape_capture": CAPTURE_VERSION,
                "started": started,
                "recorder": f"memtape {__version__}",
            }
        )

    def record(self, exchange: Exchange) -> None:
        """Write an exchange that has ended."""
        headers = {name.lower(): value for name, value in exchange.request_headers}
        line = capture_line(exchange)
        with self._lock:
            thread = thread_key(
                exchange.endpoint, line["request"], headers=headers, seen=self._known
            )
            self.written += 1
            line["exchange"], line["thread"] = self.written, thread
            response = line["response"]
            named = isinstance(response, dict) and isinstance(response.get("id"), str)
            if exchange.endpoint == "openai.responses" and named:
                self._known[response["id"]] = thread
            self._write(line)

    def close(self) -> None:
        """Close the file (every line is already written)."""
        with self._lock:
            self._file.close()

    def _write(self, line: dict[str, Any]) -> None:
        data = orjson.dumps(line) + b"\n"
        written = self._file.write(data)
        # A regular file takes a write whole; a short one (a full disk) goes on where it
        # stopped, so the line is at worst cut, never interleaved.
        while written is not None and written < len(data):
            data = data[written:]
            written = self._file.write(data)


def _open_appending(path: Path) -> BinaryIO:
    """The regular file at ``path`` opened to append (made if missing); a FIFO, socket,
    device or directory is refused (``BadInput``) rather than waited on or written into,
    and so is a file with something other than a capture in it.

    Opened without blocking and checked again once open, so a FIFO put in its place
    after the check is refused, never waited on for a reader.
    """
    check_writable(path)
    flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | os.O_CLOEXEC
    handle = os.open(path, flags, 0o666)
    mode = os.fstat(handle).st_mode
    if not stat.S_ISREG(mode):
        os.close(handle)
        raise BadInput(f"{path}: cannot write it: it is {kind(mode)}")
    start = os.pread(handle, len(_HEADER_START), 0)
    if not _HEADER_START.startswith(start):  # a header cut short is still one
        os.close(handle)
        raise BadInput(
            f"{path}: not a capture file (its first line is no memtape_capture header): "
            "name a new file, or one memtape record wrote"
        )
    os.set_blocking(handle, True)
    return os.fdopen(handle, "ab", buffering=0)


_HEADER_START = b'{"memtape_capture":'
"""How every capture file begins (its header line, as ``orjson`` writes it): a file that
begins otherwise (a run, a transcript) is never appended to."""
