"""Memory blocks: labelled texts of bounded size, pinned in the window (Letta's core memory).

A scenario creates each block (``[[block]]``: a label, a limit in characters,
a first value); ``EditBlock`` commands rewrite it, as Letta's memory tools
do: ``replace`` the whole value, ``append`` a line, or ``find-replace`` the
first occurrence of a text. An edit that would take a block past its limit,
or that finds nothing to replace, is refused: nothing is written, and the
block stays as it was. Each accepted edit is a ``BlockEdited`` event holding
the new value and what it costs, counted by the compaction policy's
tokenizer at the edit, so replay never counts again.

A block may be ``read_only`` (``read_only = true`` in its table, as Letta's
read-only blocks): it is created and never edited, by the scenario's steps
or by a consolidation pass. A consolidation pass may edit blocks too, as
Letta's sleep-time agent does: its ``Consolidated`` event carries the edits it
asks for (``blocks``), and each is decided here as an edit step is, a
``BlockEdited`` in the same step (``consolidated``); one refused refuses the
whole pass, so nothing of it is written.

A block is never moved: its tokens count against the budget and sit in
every compaction policy's floor (``memtape.policies.window.units.kept_tokens``),
as a pinned turn's do. An edit is not a turn, so it compacts nothing: it may
take the window past the budget until the next turn compacts (BUDGET is a
promise about the window after each turn).
"""

from typing import Any

from memtape.core.commands import Command, CreateBlock, EditBlock
from memtape.core.errors import Rejected
from memtape.core.events import BlockEdited, Consolidated
from memtape.core.state import State
from memtape.policies.plumbing.protocols import CompactionPolicy
from memtape.policies.text.tokenizers import Tokenizer, WordCount
from memtape.reducers.blocks import block_edited


def decide(
    compaction: CompactionPolicy | None, state: State, command: Command
) -> tuple[BlockEdited]:
    """A memory block created or edited, its tokens counted by ``compaction``'s tokenizer
    (the words, for a policy that has none); refused without a compaction policy, and for a
    command that neither creates nor edits one (the session's last route: it knows no other).
    """
    if not isinstance(command, CreateBlock | EditBlock):
        raise Rejected(f"unknown command {command!r}")
    tokenizer = _tokenizer(compaction)
    if isinstance(command, CreateBlock):
        return create(state, command, tokenizer)
    return edit(state, command, tokenizer)


def consolidated(
    compaction: CompactionPolicy | None, state: State, event: Consolidated
) -> tuple[BlockEdited, ...]:
    """The ``BlockEdited`` of each block edit a consolidation pass asked for, in order, each
    decided on the window the edits before it left; ``Rejected`` naming the edit when one is
    refused (the pass is then refused whole)."""
    if not event.blocks:
        return ()
    tokenizer = _tokenizer(compaction)
    window = state.window
    made: list[BlockEdited] = []
    for number, asked in enumerate(event.blocks, start=1):
        command = EditBlock(asked.label, asked.op, asked.text, asked.find)
        try:
            (edited,) = edit(state._replace(window=window), command, tokenizer)
        except Rejected as error:
            raise Rejected(f"the consolidation pass's block edit {number}: {error}") from None
        window = block_edited(window, edited)
        made.append(edited)
    return tuple(made)


def _tokenizer(compaction: CompactionPolicy | None) -> Tokenizer:
    """``compaction``'s tokenizer (the words, for a policy that has none); ``Rejected`` without
    a compaction policy, which a block needs."""
    if compaction is None:
        raise Rejected("a memory block needs a [compaction] policy, and this session has none")
    own: Any = getattr(compaction, "tokenizer", None)
    return own if callable(getattr(own, "count", None)) else WordCount()


def create(state: State, command: CreateBlock, tokenizer: Tokenizer) -> tuple[BlockEdited]:
    """Block ``command.label``'s version 1, or ``Rejected`` (a label taken or empty, a limit
    below 1, a value past the limit)."""
    from memtape.core.block_edits import within  # noqa: PLC0415 (show never edits a block)

    label = command.label
    if not label.strip():
        raise Rejected("a block's label must not be empty")
    if state.window.block(label) is not None:
        raise Rejected(f"block {label!r} exists already: edit it")
    if command.limit < 1:
        raise Rejected(f"block {label!r}: the limit must be at least 1, got {command.limit}")
    within(label, command.value, command.limit)
    value = command.value
    read_only = command.read_only
    if not isinstance(read_only, bool):
        raise Rejected(f"block {label!r}: read_only is true or false, got {read_only!r}")
    tokens = tokenizer.count(value)
    return (BlockEdited(label, 1, "create", value, tokens, command.limit, read_only),)


def edit(state: State, command: EditBlock, tokenizer: Tokenizer) -> tuple[BlockEdited]:
    """Block ``command.label`` edited, at its next version, or ``Rejected`` (no such block,
    a read-only one, an unknown op, nothing found to replace, a value past the limit:
    ``memtape.core.block_edits``)."""
    label = command.label
    block = state.window.block(label)
    if block is None:
        known = ", ".join(repr(b.label) for b in state.window.blocks) or "none"
        raise Rejected(f"no block {label!r} to edit (blocks: {known})")
    from memtape.core.block_edits import edited_value  # noqa: PLC0415 (show never edits a block)

    value = edited_value(block, command.op, command.text, command.find)
    return (BlockEdited(label, block.version + 1, command.op, value, tokenizer.count(value)),)
