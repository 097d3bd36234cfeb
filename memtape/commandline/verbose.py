"""``-v``: memtape's decision entries on stderr while one command runs, and nothing after.

``main`` may be called many times in one process (a program, a test suite),
each call with its own stderr, which its caller may close once the call
returns (as pytest closes a test's captured output). So the handler lives as
long as the call, the logger's level and structlog's configuration are put
back as they were, and an entry is written to the stderr of the moment, never
to a stream that was closed meanwhile.
"""

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import structlog

from memtape.core.logs import LOGGER_NAME


class StderrOfTheMoment(logging.Handler):
    """Writes each entry to ``sys.stderr`` as it is when the entry is logged; an entry
    logged while that stream is closed is dropped (a log line is not worth an error)."""

    def emit(self, record: logging.LogRecord) -> None:
        """Write ``record`` as one line, unless stderr is gone or closed."""
        stream = sys.stderr
        if stream is None or stream.closed:
            return
        try:
            stream.write(f"{self.format(record)}\n")
            stream.flush()
        except Exception:  # as logging.StreamHandler: a record that cannot be formatted is reported
            self.handleError(record)


@contextmanager
def decisions_shown() -> Iterator[None]:
    """Within: every decision entry of the ``memtape`` logger is a ``key=value`` line on
    stderr. Afterwards the handler is gone, and the logger's level and structlog's
    configuration are what they were before."""
    logger = logging.getLogger(LOGGER_NAME)
    level = logger.level
    configured, config = structlog.is_configured(), structlog.get_config()
    handler = StderrOfTheMoment()
    handler.setFormatter(logging.Formatter("%(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.KeyValueRenderer(key_order=["event", "at", "step"]),
        ],
    )
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
        if configured:
            structlog.configure(**config)
        else:
            structlog.reset_defaults()
