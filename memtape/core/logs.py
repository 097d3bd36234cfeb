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
    import logging

    import structlog

LOGGER_NAME = "memtape"

_DEBUG = 10
"""``logging.DEBUG``, without importing ``logging`` to read it."""

_LOGGER: "logging.Logger | None" = None
"""The standard library's ``memtape`` logger, once looked up."""


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
    # Called at every command: the logger, once found, is read without a call.
    logger = _standard_logger() if _LOGGER is None else _LOGGER
    return logger is not None and logger.isEnabledFor(_DEBUG)


def _standard_logger() -> "logging.Logger | None":
    """The standard library's ``memtape`` logger, once ``logging`` is imported (looked up
    once: ``logging.getLogger`` takes a lock, and a name's logger never changes)."""
    global _LOGGER  # noqa: PLW0603 (a cache of one object)
    if _LOGGER is None:
        logging = sys.modules.get("logging")
        if logging is None:
            return None
        _LOGGER = logging.getLogger(LOGGER_NAME)
    return _LOGGER
