"""Writing scenario files: the TOML the generators and the importer produce.

The writer knows only the few shapes a scenario uses (tables of strings,
numbers and booleans, arrays of such tables) and writes them in a fixed
order, so the same data always gives the same bytes.
"""

from collections.abc import Mapping, Sequence

Value = str | int | float | bool
"""A value a scenario file holds."""

DEFAULT_BUDGET = 2000
"""The tiered compaction budget of generated and imported files."""

DEFAULT_HOT_N = 8
"""The tiered compaction's verbatim turns in generated and imported files."""

SEED_FORGETTING: dict[str, Value] = {
    "policy": "importance-recency-access",
    "capacity": 4,
    "half_life": 4.0,
    "access_boost": 0.1,
}
"""The seed's forgetting policy, as dana-facts sets it."""

_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\f": "\\f",
    "\r": "\\r",
}


def header(budget: int = DEFAULT_BUDGET, hot_n: int = DEFAULT_HOT_N) -> dict[str, dict[str, Value]]:
    """The policies of a generated or imported file: tiered compaction and the seed's forgetting."""
    compaction: dict[str, Value] = {
        "policy": "tiered",
        "budget": budget,
        "hot_n": hot_n,
        "tokenizer": "words",
    }
    return {"compaction": compaction, "forgetting": dict(SEED_FORGETTING)}


def toml_string(text: str) -> str:
    """``text`` as a TOML basic string; control characters are escaped, the rest kept."""
    out = []
    for char in text:
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif char < " " or char == "\x7f":
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def toml_value(value: Value) -> str:
    """A TOML value: a string, a boolean, an integer or a finite float."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return toml_string(value)
    return repr(value)


def _table(lines: list[str], title: str, table: Mapping[str, Value]) -> None:
    lines.append(title)
    lines.extend(f"{key} = {toml_value(value)}" for key, value in table.items())
    lines.append("")


def scenario_text(
    comment: str,
    info: Mapping[str, Value],
    policies: Mapping[str, Mapping[str, Value]],
    steps: Sequence[Mapping[str, Value]],
    probes: Sequence[Mapping[str, Value]] = (),
) -> str:
    """A whole scenario file: a comment, ``[scenario]``, the policies, probes, then steps."""
    lines = [f"# {line}" if line else "#" for line in comment.splitlines()]
    lines.append("")
    _table(lines, "[scenario]", info)
    for axis, table in policies.items():
        _table(lines, f"[{axis}]", table)
    for probe in probes:
        _table(lines, "[[probe]]", probe)
    for step in steps:
        _table(lines, "[[step]]", step)
    return "\n".join(lines)
