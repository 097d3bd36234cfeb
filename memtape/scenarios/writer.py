"""Write scenario files: the one TOML writer of memtape.

The inverse of ``parse_scenario``: what it writes loads back to the same
policies, probes and steps. The kit saves a counterexample with
``scenario_text`` (policies and commands); the lab's generators and importer
write step tables directly with ``scenario_file``. Tables come out in a fixed
order, each followed by a blank line, so the same data always gives the same
bytes.
"""

import functools
import math
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from memtape.core.commands import (
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
)
from memtape.core.errors import BadInput
from memtape.core.visible import visible

if TYPE_CHECKING:
    from memtape.scenarios.probes import Probe

Value = str | int | float | bool
"""A scalar value a scenario file holds."""

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")

_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\f": "\\f",
    "\r": "\\r",
}


def scenario_file(
    comment: str,
    info: Mapping[str, Any],
    policies: Mapping[str, Mapping[str, Any]],
    steps: Sequence[Mapping[str, Any]],
    probes: Sequence[Mapping[str, Any]] = (),
    *,
    imported: Mapping[str, Any] | None = None,
) -> str:
    """A whole scenario file: a comment, ``[scenario]`` ``info``, the ``[import]`` ledger of
    an imported one, the policies, probes, steps.

    ``comment`` (any number of lines) heads the file as TOML comments; each
    step is the fields of one ``[[step]]`` table.
    """
    lines = [f"# {visible(line, 'message')}" if line else "#" for line in comment.splitlines()]
    if lines:
        lines.append("")
    _table(lines, "[scenario]", info)
    if imported is not None:
        _table(lines, "[import]", imported)
    for axis, table in policies.items():
        _table(lines, f"[{_key(axis)}]", table)
    for probe in probes:
        _table(lines, "[[probe]]", probe)
    for step in steps:
        _table(lines, "[[step]]", step)
    return "\n".join(lines)


def scenario_text(
    name: str,
    about: str,
    tables: Mapping[str, Mapping[str, Any]],
    commands: Sequence[Command],
    *,
    comment: str = "",
) -> str:
    """A scenario file of the policies ``tables`` (``Policies.params()``) and ``commands``."""
    info = {"name": name, "about": about}
    return scenario_file(comment, info, tables, [step_fields(command) for command in commands])


def probe_fields(probe: "Probe") -> dict[str, Any]:
    """The fields of the ``[[probe]]`` table that stands for ``probe``: each optional field
    only when it is set, so a plain probe is written as before questions existed."""
    table: dict[str, Any] = {}
    if probe.text is not None:
        table["text"] = probe.text
    table["from"] = probe.start
    if probe.kind is not None:
        table["kind"] = probe.kind
    if probe.question is not None:
        table["question"] = probe.question
    if probe.answer is not None:
        table["answer"] = probe.answer
    if probe.evidence:
        table["evidence"] = list(probe.evidence)
    return table


def step_fields(command: Command) -> dict[str, Any]:
    """The fields of the ``[[step]]`` table that stands for ``command``."""
    if isinstance(command, AddTurn):
        turn: dict[str, Any] = {"turn": command.role, "text": command.text}
        if command.salient is not None:
            turn["salient"] = command.salient
        if command.calls:
            turn["calls"] = list(command.calls)
        if command.answers:
            turn["answers"] = list(command.answers)
        if command.pin:
            turn["pin"] = True
        if command.tokens is not None:
            turn["tokens"] = command.tokens
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
        if command.expires_at is not None:
            write["expires_at"] = command.expires_at
        if command.valid_from is not None:
            write["valid_from"] = command.valid_from
        if command.valid_to is not None:
            write["valid_to"] = command.valid_to
        return write
    if isinstance(command, ReadFact):
        return {"read": command.key if command.key is not None else command.id}
    if isinstance(command, Query):
        query: dict[str, Any] = {"query": command.text}
        if command.key:
            query["expect"] = command.key
        query["k"] = command.k
        if command.as_of is not None:
            query["as_of"] = command.as_of
        if command.known_at is not None:
            query["known_at"] = command.known_at
        return query
    if isinstance(command, RecordEpisode):
        return {"episode": command.text}
    if isinstance(command, Recall):
        return {"recall": command.text, "k": command.k}
    if isinstance(command, Consolidate):
        return {"consolidate": True}
    if isinstance(command, CreateBlock):
        block: dict[str, Any] = {
            "block": command.label,
            "limit": command.limit,
            "value": command.value,
        }
        if command.read_only:
            block["read_only"] = True
        return block
    if isinstance(command, EditBlock):
        edit: dict[str, Any] = {"edit": command.label, "op": command.op, "text": command.text}
        if command.op == "find-replace":
            edit["find"] = command.find
        return edit
    raise BadInput(f"no scenario step stands for {command!r}")


def toml_value(value: Any) -> str:
    """``value`` (a string, bool, number, list or table of those) as a TOML value."""
    if isinstance(value, str):
        return toml_string(value)
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


def toml_string(text: str) -> str:
    """``text`` as a TOML basic string; the characters that could act on a terminal are
    escaped (``memtape.core.visible``), the rest kept."""
    if text.isascii():
        # Most texts are ASCII: one C-speed pass through each ASCII character's escape.
        return '"' + text.translate(_ascii_escapes()) + '"'
    return '"' + "".join(_escape(char) for char in text) + '"'


@functools.cache
def _ascii_escapes() -> dict[int, str]:
    """What ``_escape`` makes of each ASCII character, as a ``str.translate`` table."""
    return {code: _escape(chr(code)) for code in range(128)}


def _table(lines: list[str], title: str, table: Mapping[str, Any]) -> None:
    lines.append(title)
    lines.extend(f"{_key(key)} = {toml_value(value)}" for key, value in table.items())
    lines.append("")


def _key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else toml_string(key)


def _escape(char: str) -> str:
    if char in _ESCAPES:
        return _ESCAPES[char]
    if " " <= char < "\x7f":
        return char
    if visible(char, "message") != char:
        # A character that could act on a terminal (a C1 control, a bidi override) reads
        # back the same from TOML's escape, and a file shown with cat stays text.
        code = ord(char)
        return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
    return char
