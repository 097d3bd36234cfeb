"""memtape's structured log: quiet unless the ``memtape`` logger is set to DEBUG.

Log entries go through structlog bound to the standard library's
``memtape`` logger, so an application decides where they go and memtape
never configures logging behind its back. Neither is imported with memtape:
a program that never imported ``logging`` cannot have asked for memtape's
entries, and structlog is imported on the first entry.
"""

import functools
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import structlog

LOGGER_NAME = "memtape"

_DEBUG = 10
"""``logging.DEBUG``, without importing ``logging`` to read it."""


@functools.cache
def get_logger() -> "structlog.stdlib.BoundLogger":
    """The structured logger memtape's modules write to (made once, on first use)."""
    import logging  # noqa: PLC0415 (imported when something is first logged)

    import structlog  # noqa: PLC0415

    logger: structlog.stdlib.BoundLogger = structlog.wrap_logger(
        logging.getLogger(LOGGER_NAME), wrapper_class=structlog.stdlib.BoundLogger
    )
    return logger


def debug_enabled() -> bool:
    """Whether decision entries would be shown (checked once per command, not per event).

    Until something imports ``logging``, no logger can have been set to show them.
    """
    logging = sys.modules.get("logging")
    return logging is not None and bool(logging.getLogger(LOGGER_NAME).isEnabledFor(_DEBUG))
