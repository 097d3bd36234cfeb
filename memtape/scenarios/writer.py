"""Write a scenario file: the policies' tables and one step per command, as TOML.

The inverse of ``parse_scenario``: what ``scenario_text`` writes loads back
to the same policies and commands (a counterexample found by
``memtape.testing`` is saved this way, for ``memtape run`` to replay).
"""

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from memtape.core.commands import (
    AddTurn,
    AdvanceClock,
    Command,
    Consolidate,
    Query,
    ReadFact,
    RecordEpisode,
    WriteFact,
)
from memtape.core.errors import BadInput

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f"}
_ESCAPES["\r"] = "\\r"


def scenario_text(
    name: str,
    about: str,
    tables: Mapping[str, Mapping[str, Any]],
    commands: Sequence[Command],
    *,
    comment: str = "",
) -> str:
    """A scenario file of the policies ``tables`` (``Policies.params()``) and ``commands``.

    ``comment`` (any number of lines) heads the file as TOML comments.
    """
    lines = [f"# {line}".rstrip() for line in comment.splitlines()]
    if lines:
        lines.append("")
    lines += ["[scenario]", f"name = {toml_value(name)}", f"about = {toml_value(about)}"]
    for axis, table in tables.items():
        lines += ["", f"[{_key(axis)}]"]
        lines += [f"{_key(param)} = {toml_value(value)}" for param, value in table.items()]
    for command in commands:
        lines += ["", "[[step]]"]
        lines += [f"{_key(k)} = {toml_value(v)}" for k, v in step_fields(command).items()]
    return "\n".join(lines) + "\n"


def step_fields(command: Command) -> dict[str, Any]:
    """The fields of the ``[[step]]`` table that stands for ``command``."""
    if isinstance(command, AddTurn):
        turn: dict[str, Any] = {"turn": command.role, "text": command.text}
        if command.salient is not None:
            turn["salient"] = command.salient
        return turn
    if isinstance(command, AdvanceClock):
        return {"advance": command.to}
    if isinstance(command, WriteFact):
        write: dict[str, Any] = {
            "write": command.key,
            "text": command.text,
            "importance": command.importance,
        }
        if command.supersedes is not None:
            write["supersedes"] = command.supersedes
        return write
    if isinstance(command, ReadFact):
        return {"read": command.key if command.key is not None else command.id}
    if isinstance(command, Query):
        query: dict[str, Any] = {"query": command.text}
        if command.key:
            query["expect"] = command.key
        query["k"] = command.k
        return query
    if isinstance(command, RecordEpisode):
        return {"episode": command.text}
    if isinstance(command, Consolidate):
        return {"consolidate": True}
    raise BadInput(f"no scenario step stands for {command!r}")


def toml_value(value: Any) -> str:
    """``value`` (a string, bool, number, list or table of those) as a TOML value."""
    if isinstance(value, str):
        return '"' + "".join(_escape(c) for c in value) + '"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, Mapping):
        items = ", ".join(f"{_key(k)} = {toml_value(v)}" for k, v in value.items())
        return f"{{ {items} }}" if items else "{}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    raise BadInput(f"{value!r} cannot be written as a TOML value")


def _key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else toml_value(key)


def _escape(char: str) -> str:
    if char in _ESCAPES:
        return _ESCAPES[char]
    if ord(char) < 0x20 or ord(char) == 0x7F:
        return f"\\u{ord(char):04X}"
    return char
