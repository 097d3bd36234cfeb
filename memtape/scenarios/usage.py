"""What a provider billed for one response, as a transcript recorded it beside a turn.

An imported assistant turn may carry the usage its response reported
(Claude Code keeps Anthropic's on every assistant entry): a scenario step
writes it as ``usage = {input = 4, output = 96, cache_read = 13027,
cache_write = 1812}`` (any of the four; OpenTelemetry's GenAI names are
``gen_ai.usage.input_tokens``, ``output_tokens``, ``cache_read.input_tokens``
and ``cache_creation.input_tokens``). It is data kept beside the step, for a
cost model to calibrate against: it is no part of the turn's command, so no
policy decides by it and no event records it.
"""

from collections.abc import Mapping
from typing import Any

import attrs

from memtape.core.errors import BadInput

FIELDS = ("input", "output", "cache_read", "cache_write")
"""The keys of a step's ``usage`` table, in the order a scenario writes them."""


@attrs.frozen
class Usage:
    """Tokens one response was billed for: ``input`` (uncached prompt), ``output``,
    ``cache_read`` (prompt read from the cache), ``cache_write`` (prompt written to it);
    None where the transcript did not say."""

    input: int | None = None
    output: int | None = None
    cache_read: int | None = None
    cache_write: int | None = None

    def table(self) -> dict[str, int]:
        """The usage as a step's ``usage`` table writes it (unknown counts left out)."""
        return {name: value for name in FIELDS if (value := getattr(self, name)) is not None}


def read_usage(value: Any, where: str) -> Usage:
    """A step's ``usage`` table: counts of at least 0 under ``FIELDS``, nothing else; a
    refusal names ``where`` and the key."""
    if not isinstance(value, Mapping):
        raise BadInput(f"{where}: usage must be a table of token counts, got {value!r}")
    unknown = sorted(set(value) - set(FIELDS))
    if unknown:
        raise BadInput(f"{where}: usage: unknown key {unknown[0]!r} (it takes {', '.join(FIELDS)})")
    for name, count in value.items():
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise BadInput(f"{where}: usage.{name} must be an integer >= 0, got {count!r}")
    return Usage(**value)
