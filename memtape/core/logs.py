"""memtape's structured log: quiet unless the ``memtape`` logger is set to DEBUG.

Log entries go through structlog bound to the standard library's
``memtape`` logger, so an application decides where they go and memtape
never configures logging behind its back.
"""

import logging

import structlog

LOGGER_NAME = "memtape"
_stdlib = logging.getLogger(LOGGER_NAME)


def get_logger() -> structlog.stdlib.BoundLogger:
    """The structured logger memtape's modules write to."""
    logger: structlog.stdlib.BoundLogger = structlog.wrap_logger(
        _stdlib, wrapper_class=structlog.stdlib.BoundLogger
    )
    return logger


def debug_enabled() -> bool:
    """Whether decision entries would be shown (checked once per command, not per event)."""
    return _stdlib.isEnabledFor(logging.DEBUG)
