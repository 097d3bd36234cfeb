"""Memory blocks: labelled texts of bounded size, pinned in the window (Letta's core memory).

A scenario creates each block (``[[block]]``: a label, a limit in characters,
a first value); ``EditBlock`` commands rewrite it, as Letta's memory tools
do: ``replace`` the whole value, ``append`` a line, or ``find-replace`` the
first occurrence of a text. An edit that would take a block past its limit,
or that finds nothing to replace, is refused: nothing is written, and the
block stays as it was. Each accepted edit is a ``BlockEdited`` event holding
the new value and what it costs, counted by the compaction policy's
tokenizer at the edit, so replay never counts again.

A block is never moved: its tokens count against the budget and sit in
every compaction policy's floor (``memtape.policies.window.units.kept_tokens``),
as a pinned turn's do. An edit is not a turn, so it compacts nothing: it may
take the window past the budget until the next turn compacts (BUDGET is a
promise about the window after each turn).
"""

from typing import Any

from memtape.core.commands import BLOCK_OPS, Command, CreateBlock, EditBlock
from memtape.core.errors import Rejected
from memtape.core.events import BlockEdited
from memtape.core.plural import counted
from memtape.core.state import State
from memtape.policies.plumbing.protocols import CompactionPolicy
from memtape.policies.text.tokenizers import Tokenizer, WordCount


def decide(
    compaction: CompactionPolicy | None, state: State, command: Command
) -> tuple[BlockEdited]:
    """A memory block created or edited, its tokens counted by ``compaction``'s tokenizer
    (the words, for a policy that has none); refused without a compaction policy, and for a
    command that neither creates nor edits one (the session's last route: it knows no other).
    """
    if not isinstance(command, CreateBlock | EditBlock):
        raise Rejected(f"unknown command {command!r}")
    if compaction is None:
        raise Rejected("a memory block needs a [compaction] policy, and this session has none")
    own: Any = getattr(compaction, "tokenizer", None)
    tokenizer: Tokenizer = own if callable(getattr(own, "count", None)) else WordCount()
    if isinstance(command, CreateBlock):
        return create(state, command, tokenizer)
    return edit(state, command, tokenizer)


def create(state: State, command: CreateBlock, tokenizer: Tokenizer) -> tuple[BlockEdited]:
    """Block ``command.label``'s version 1, or ``Rejected`` (a label taken or empty, a limit
    below 1, a value past the limit)."""
    label = command.label
    if not label.strip():
        raise Rejected("a block's label must not be empty")
    if state.window.block(label) is not None:
        raise Rejected(f"block {label!r} exists already: edit it")
    if command.limit < 1:
        raise Rejected(f"block {label!r}: the limit must be at least 1, got {command.limit}")
    _within(label, command.value, command.limit)
    value = command.value
    return (BlockEdited(label, 1, "create", value, tokenizer.count(value), command.limit),)


def edit(state: State, command: EditBlock, tokenizer: Tokenizer) -> tuple[BlockEdited]:
    """Block ``command.label`` edited, at its next version, or ``Rejected`` (no such block,
    an unknown op, nothing found to replace, a value past the limit)."""
    label = command.label
    block = state.window.block(label)
    if block is None:
        known = ", ".join(repr(b.label) for b in state.window.blocks) or "none"
        raise Rejected(f"no block {label!r} to edit (blocks: {known})")
    if command.op == "replace":
        value = command.text
    elif command.op == "append":
        value = f"{block.value}\n{command.text}" if block.value else command.text
    elif command.op == "find-replace":
        if not command.find or command.find not in block.value:
            raise Rejected(f"block {label!r} holds no {command.find!r} to replace")
        value = block.value.replace(command.find, command.text, 1)
    else:
        raise Rejected(f"a block edit's op is one of {', '.join(BLOCK_OPS)}, got {command.op!r}")
    _within(label, value, block.limit)
    return (BlockEdited(label, block.version + 1, command.op, value, tokenizer.count(value)),)


def _within(label: str, value: str, limit: int) -> None:
    """Refuse ``value`` when it is longer than ``limit`` characters."""
    if len(value) > limit:
        raise Rejected(
            f"block {label!r} holds at most {counted(limit, 'character')}: this edit would "
            f"make it {len(value)}, so it is refused"
        )
