"""``--set block.LABEL.PARAM=VALUE``: a scenario's memory blocks changed from the command line.

A block is not a policy's parameter but a step of the scenario (its
``[[block]]`` table, or a ``block`` step), so its settings change that step:
``block.human.limit=400`` gives block ``human`` another limit,
``block.persona.read_only=true`` makes it read-only, ``block.human.value=...``
another first value. Each is checked as the table is (a limit of at least
1 that holds the value, true or false), and a label the scenario creates no
block under, or a parameter blocks do not take, is one line naming it.
"""

import tomllib
from collections.abc import Iterable, Sequence
from typing import Any

import attrs

from memtape.core.commands import Command, CreateBlock
from memtape.core.errors import BadInput

AXIS = "block"
"""What a block setting starts with."""

PARAMS = ("limit", "value", "read_only")
"""What a block setting may change."""


def is_block_setting(setting: str) -> bool:
    """Whether an ``AXIS.PARAM=VALUE`` setting is a ``block.`` one."""
    return setting.partition("=")[0].partition(".")[0].strip() == AXIS


def with_block_settings(
    steps: Sequence[Command], settings: Iterable[str], *, strict: bool = True
) -> tuple[Command, ...]:
    """``steps`` with the ``block.LABEL.PARAM=VALUE`` ones of ``settings`` applied to the
    steps that create each block, or one ``BadInput`` naming the setting; not ``strict`` (a
    bench mixing scenarios), a setting for a block this scenario lacks is skipped."""
    changed = list(steps)
    for setting in settings:
        if not is_block_setting(setting):
            continue
        name, sep, raw = setting.partition("=")
        _, _, rest = name.strip().partition(".")
        label, dot, param = rest.rpartition(".")
        where = f"--set {setting!r}"
        if not sep or not dot or not label:
            raise BadInput(f"{where}: write block.LABEL.PARAM=VALUE, e.g. block.human.limit=400")
        if param not in PARAMS:
            from memtape.core.spelling import did_you_mean  # noqa: PLC0415 (a refusal only)

            raise BadInput(
                f"{where}: a block takes {', '.join(PARAMS)}, not {param!r}"
                f"{did_you_mean(param, PARAMS)}"
            )
        at = [n for n, step in enumerate(changed) if _creates(step, label)]
        if not at and not strict:
            continue
        if not at:
            known = sorted({s.label for s in changed if isinstance(s, CreateBlock)})
            raise BadInput(
                f"{where}: this scenario creates no block {label!r} "
                f"(blocks: {', '.join(repr(k) for k in known) or 'none'})"
            )
        value = _value(raw.strip(), param, where)
        for n in at:
            block = changed[n]
            assert isinstance(block, CreateBlock)
            block = attrs.evolve(block, **{param: value})
            _check(block, where)
            changed[n] = block
    return tuple(changed)


def taken(steps: Sequence[Command], settings: Iterable[str]) -> dict[str, str]:
    """The ``block.`` settings of ``settings`` that a block of ``steps`` takes, each name
    with its value as written (the last of a name's wins, as it does when applied)."""
    labels = {step.label for step in steps if isinstance(step, CreateBlock)}
    found = {}
    for setting in settings:
        if not is_block_setting(setting):
            continue
        name, _, value = setting.partition("=")
        label = name.strip().partition(".")[2].rpartition(".")[0]
        if label in labels:
            found[name.strip()] = value.strip()
    return found


def _creates(step: Command, label: str) -> bool:
    return isinstance(step, CreateBlock) and step.label == label


def _value(raw: str, param: str, where: str) -> Any:
    """A setting's value read as TOML (``400``, ``true``, ``"text"``), or as plain text for
    ``value``; the wrong kind for ``param`` is one line."""
    try:
        value = tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw
    if param == "limit" and (type(value) is not int or value < 1):
        raise BadInput(f"{where}: a block's limit is a whole number of at least 1, got {raw!r}")
    if param == "read_only" and type(value) is not bool:
        raise BadInput(f"{where}: read_only is true or false, got {raw!r}")
    if param == "value" and not isinstance(value, str):
        value = raw
    return value


def _check(block: CreateBlock, where: str) -> None:
    if len(block.value) > block.limit:
        raise BadInput(
            f"{where}: block {block.label!r} would hold {len(block.value)} characters, "
            f"over its limit of {block.limit}"
        )
