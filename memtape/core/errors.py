"""The errors memtape raises on purpose; each message says what and why."""


class MemtapeError(Exception):
    """Base of every error memtape reports to its user as one clear line."""


class Rejected(MemtapeError):
    """A command that cannot be honoured; nothing was appended."""


class CorruptLog(MemtapeError):
    """An event that cannot be applied to the state it follows."""


class BadInput(MemtapeError):
    """A malformed scenario, log or parameter, named with its place."""


class NothingToApply(BadInput):
    """A policy that has nothing to do on this input: ``recorded`` on a scenario that recorded
    no compaction. ``reason`` says why in a few words (a bench cell shows it)."""

    def __init__(self, where: str, reason: str) -> None:
        super().__init__(f"{where}: nothing to apply: {reason}")
        self.reason = reason
