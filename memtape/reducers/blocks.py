"""Folding memory-block events: a block is created or rewritten, its tokens in the window's."""

from memtape.core.errors import CorruptLog
from memtape.core.events import BlockEdited
from memtape.core.plural import counted
from memtape.core.state import Block, Window


def block_edited(window: Window, event: BlockEdited) -> Window:
    """The window with block ``event.label`` at its new version, and the total changed by
    what its value now costs.

    Version 1 creates the block (with its limit) after the others; a later
    version must follow the block's current one and names no limit. Whether
    the value keeps within the limit is the policy's to decide and the kit's
    to check, not the fold's: the fold applies what was decided.
    """
    if event.tokens < 0:
        raise CorruptLog(f"block {event.label!r} has {counted(event.tokens, 'token')}")
    current = window.block(event.label)
    if current is None:
        if event.version != 1 or event.limit is None:
            raise CorruptLog(
                f"block {event.label!r} does not exist, so an edit cannot make "
                f"its version {event.version}"
            )
        block = Block(event.label, event.limit, event.value, event.tokens, 1, event.read_only)
        return window._replace(blocks=(*window.blocks, block), tokens=window.tokens + event.tokens)
    if event.version != current.version + 1 or event.limit is not None or event.read_only:
        raise CorruptLog(
            f"block {event.label!r} is at version {current.version}: an edit makes version "
            f"{current.version + 1}, without a limit (got version {event.version})"
        )
    block = Block(
        current.label, current.limit, event.value, event.tokens, event.version, current.read_only
    )
    blocks = tuple(block if b.label == event.label else b for b in window.blocks)
    return window._replace(blocks=blocks, tokens=window.tokens - current.tokens + event.tokens)
