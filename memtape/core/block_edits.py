"""What an edit makes of a memory block's value, as ``EditBlock``'s ops say, or why it is
refused: one rule for an edit step and for a consolidation pass's edits alike."""

from memtape.core.commands import BLOCK_OPS
from memtape.core.errors import Rejected
from memtape.core.plural import counted
from memtape.core.state import Block


def edited_value(block: Block, op: str, text: str, find: str = "") -> str:
    """``block``'s value after ``op`` (``replace`` with ``text``, ``append`` ``text`` on a
    new line, ``find-replace`` the first ``find`` with ``text``), or ``Rejected``: a
    read-only block, an unknown op, nothing found to replace, a value past the limit."""
    label = block.label
    if block.read_only:
        raise Rejected(
            f"block {label!r} is read-only: no edit may change it, so this one is refused"
        )
    if op == "replace":
        value = text
    elif op == "append":
        value = f"{block.value}\n{text}" if block.value else text
    elif op == "find-replace":
        if not find or find not in block.value:
            raise Rejected(f"block {label!r} holds no {find!r} to replace")
        value = block.value.replace(find, text, 1)
    else:
        raise Rejected(f"a block edit's op is one of {', '.join(BLOCK_OPS)}, got {op!r}")
    within(label, value, block.limit)
    return value


def within(label: str, value: str, limit: int) -> None:
    """Refuse ``value`` for block ``label`` when it is longer than ``limit`` characters."""
    if len(value) > limit:
        raise Rejected(
            f"block {label!r} holds at most {counted(limit, 'character')}: this edit would "
            f"make it {len(value)}, so it is refused"
        )
