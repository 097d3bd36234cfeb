"""A scenario's steps, one command each, and the memory blocks its header creates
(``memtape.scenarios.loader`` says what each step table holds)."""

import math
from collections.abc import Mapping
from typing import Any

from memtape.core.commands import (
    BLOCK_OPS,
    STEP_KINDS,
    AddTurn,
    AdvanceClock,
    Command,
    Consolidate,
    CreateBlock,
    EditBlock,
    Query,
    ReadFact,
    Recall,
    RecordEpisode,
    WriteFact,
    role_error,
)
from memtape.core.errors import BadInput
from memtape.core.values import MAX_TOKENS
from memtape.policies.plumbing.params import Params
from memtape.policies.session import Policies
from memtape.policies.zoo import AXIS_OF

_KINDS = STEP_KINDS


def read_blocks(tables: Any, source: str, policies: Policies) -> tuple[CreateBlock, ...]:
    """The ``[[block]]`` tables, each a block created before the first step: a label not
    taken by another, a limit of at least 1, a value within it (and a [compaction] policy
    to count them)."""
    if not isinstance(tables, list):
        raise BadInput(f"{source}: memory blocks are written as [[block]] tables")
    if tables and policies.compaction is None:
        raise BadInput(f"{source}: block 1: a memory block needs a [compaction] policy")
    created: list[CreateBlock] = []
    for number, table in enumerate(tables, start=1):
        where = f"{source}: block {number}"
        if not isinstance(table, dict):
            raise BadInput(f"{where}: must be a table")
        params = Params(table, where)
        block = _block(params, params.text("label"))
        params.done()
        if any(made.label == block.label for made in created):
            raise params.error("label", f"{block.label!r} names an earlier block too")
        created.append(block)
    return tuple(created)


def _block(params: Params, label: str) -> CreateBlock:
    """A block's label, limit, value and whether it is read-only, read and checked (the
    limit holds the value)."""
    if not label.strip():
        raise params.error("label", "must not be empty")
    limit = params.integer("limit", minimum=1)
    value = params.text("value", "")
    read_only = params.flag("read_only", False)
    if len(value) > limit:
        raise params.error("value", f"is {len(value)} characters, over the limit of {limit}")
    return CreateBlock(label, limit, value, read_only)


def _block_step(kind: str, params: Params) -> CreateBlock | EditBlock:
    """A ``block`` step (a block created) or an ``edit`` step (one edited: its op, text and,
    for a find-replace, the text to find)."""
    if kind == "block":
        return _block(params, params.text("block"))
    op = params.text("op")
    if op not in BLOCK_OPS:
        raise params.error("op", f"must be one of {', '.join(BLOCK_OPS)}, got {op!r}")
    find = params.text("find", "") if op == "find-replace" else ""
    if op == "find-replace" and not find:
        raise params.error("find", "a find-replace needs the text to find")
    return EditBlock(params.text("edit"), op, params.text("text"), find)


def _turn(params: Params) -> AddTurn:
    """A turn step: its role, text, salience, the calls it makes and answers, its pin."""
    salient = params.optional("salient")
    if salient is not None and not isinstance(salient, bool):
        raise params.error("salient", f"must be true or false, got {salient!r}")
    role = params.text("turn")
    wrong = role_error(role)
    if wrong is not None:
        raise params.error("turn", wrong)
    calls, answers = _ids(params, "calls"), _ids(params, "answers")
    pin = params.optional("pin")
    if pin is not None and not isinstance(pin, bool):
        raise params.error("pin", f"must be true or false, got {pin!r}")
    tokens = params.optional("tokens")
    if tokens is not None and (
        isinstance(tokens, bool) or not isinstance(tokens, int) or not 0 <= tokens <= MAX_TOKENS
    ):
        raise params.error("tokens", f"must be an integer in 0..{MAX_TOKENS}, got {tokens!r}")
    return AddTurn(role, params.text("text"), salient, calls, answers, pin is True, tokens)


def _ids(params: Params, name: str) -> tuple[str, ...]:
    """A list of distinct, non-empty tool call ids (absent: none)."""
    ids = params.optional(name)
    if ids is None:
        return ()
    if not isinstance(ids, list) or not all(isinstance(i, str) and i for i in ids):
        raise params.error(name, f"must be a list of non-empty ids (strings), got {ids!r}")
    if len(set(ids)) != len(ids):
        raise params.error(name, f"names an id twice: {ids!r}")
    return tuple(ids)


def check_decider(command: Command, kind: str, policies: Policies, where: str) -> None:
    """Refuse a step no policy of the header would decide."""
    axis = AXIS_OF[type(command)]
    if axis is not None and getattr(policies, axis) is None:
        raise BadInput(f"{where}: a {kind} step needs a [{axis}] policy in the header")
    if isinstance(command, Recall) and policies.recall is None:
        raise BadInput(f'{where}: a recall step needs recall = "bm25" in the [compaction] table')


def read_step(step: Mapping[str, Any], where: str) -> tuple[str, Command]:
    """A ``[[step]]`` table's kind (``turn``, ``write``...) and the command it says."""
    kinds = [kind for kind in _KINDS if kind in step]
    if not kinds and "expect" in step:
        kinds = ["query"]  # a query may name only the key it expects
    if len(kinds) != 1:
        raise BadInput(f"{where}: name exactly one of {', '.join(_KINDS)}, found {kinds or 'none'}")
    kind = kinds[0]
    params = Params(step, where)
    command: Command
    if kind == "turn":
        command = _turn(params)
    elif kind == "advance":
        command = AdvanceClock(params.number("advance", minimum=0.0))
    elif kind == "write":
        supersedes = params.optional("supersedes")
        if supersedes is not None and not isinstance(supersedes, str):
            raise params.error("supersedes", f"must be a key (a string), got {supersedes!r}")
        key, text = params.text("write"), params.text("text")
        importance = params.number("importance", minimum=0.0, maximum=1.0)
        expires_at = params.number("expires_at", minimum=0.0) if "expires_at" in step else None
        valid_from, valid_to = (
            params.number(name, minimum=-math.inf) if name in step else None
            for name in ("valid_from", "valid_to")
        )
        command = WriteFact(key, text, importance, supersedes, expires_at, valid_from, valid_to)
    elif kind == "read":
        target = params.raw("read")
        if isinstance(target, str):
            command = ReadFact(key=target)
        elif isinstance(target, int) and not isinstance(target, bool):
            command = ReadFact(id=target)
        else:
            raise params.error("read", f"must be a key (a string) or an id, got {target!r}")
    elif kind == "query":
        text, expect = params.text("query", ""), params.text("expect", "")
        k = params.integer("k", 3, minimum=1)
        as_of, known_at = (
            params.number(name, minimum=-math.inf) if name in step else None
            for name in ("as_of", "known_at")
        )
        command = Query(text, expect, k, as_of, known_at)
    elif kind in ("block", "edit"):
        command = _block_step(kind, params)
    elif kind == "episode":
        command = RecordEpisode(params.text("episode"))
    elif kind == "recall":
        command = Recall(params.text("recall"), params.integer("k", 3, minimum=1))
    else:
        if params.raw("consolidate") is not True:
            raise params.error("consolidate", "must be true")
        command = Consolidate()
    params.done()
    return kind, command
