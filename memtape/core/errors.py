"""The errors memtape raises on purpose; each message says what and why."""


class MemtapeError(Exception):
    """Base of every error memtape reports to its user as one clear line."""


class Rejected(MemtapeError):
    """A command that cannot be honoured; nothing was appended."""


class CorruptLog(MemtapeError):
    """An event that cannot be applied to the state it follows."""


class BadInput(MemtapeError):
    """A malformed scenario, log or parameter, named with its place."""
