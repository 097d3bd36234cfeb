"""What a run read back from a file or a store holds in memory."""

from memtape.core.commands import ROLES, AddTurn, WriteFact
from memtape.core.logfile import RecordedBatch


def strings_shared(batches: tuple[RecordedBatch, ...]) -> bool:
    """Whether each read-back turn holds its command's own text and role (one of the
    ``ROLES`` strings), and each written fact its command's key and text; at least one
    turn or write must have been read."""
    checked = 0
    for batch in batches:
        command, event = batch.command, batch.events[0]
        if isinstance(command, AddTurn):
            shared = (
                getattr(event, "text", None) is command.text
                and getattr(event, "role", None) is command.role
                and any(command.role is role for role in ROLES)
            )
        elif isinstance(command, WriteFact):
            shared = (
                getattr(event, "key", None) is command.key
                and getattr(event, "text", None) is command.text
            )
        else:
            continue
        if not shared:
            return False
        checked += 1
    return checked > 0
