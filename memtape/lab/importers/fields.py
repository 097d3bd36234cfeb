"""What the readers read alike in a record: a list field, a token count, a usage whose prompt
count holds its cached part.

Each format names its fields its own way; how a field of a given kind is
read, and refused, is the same in every reader, so it is written once here.
"""

import warnings
from collections.abc import Mapping
from typing import Any

from memtape.core.errors import BadInput
from memtape.scenarios.usage import Usage


def listed(data: Any, key: str, where: str) -> list[Any]:
    """The list under ``key`` of the object ``data`` (none when it is absent or null, or
    ``data`` is no object); anything else there is refused, naming ``where`` and ``key``."""
    value = data.get(key) if isinstance(data, Mapping) else None
    if value is None:
        return []
    if not isinstance(value, list):
        raise BadInput(f"{where}: {key} must be a list, got {_shown(value)}")
    return value


class UnreadCount(UserWarning):
    """A token count a file gives is no count (negative, a fraction, text): it was read as
    absent, and the warning names the file, the entry and the field."""


def token_count(value: Any, where: str) -> int | None:
    """A token count the file gives (an integer of at least 0), or None when it is not one;
    a value that is there (not null) but no count is said in an ``UnreadCount`` warning
    naming ``where`` (the entry and its field), rather than dropped unsaid."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if value is not None:
        warnings.warn(
            UnreadCount(f"{where}: not a token count, read as none: {_shown(value)}"),
            stacklevel=2,
        )
    return None


ANTHROPIC_USAGE = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)
"""An Anthropic response's usage keys, in the order of ``Usage``'s fields: its input is the
uncached prompt already."""


def anthropic_usage(value: Any, where: str) -> Usage | None:
    """A usage as Anthropic writes it (``where`` names it, as ``FILE:LINE: usage``), or None
    when it is no object or gives no count; a count that is no count is warned of."""
    if not isinstance(value, Mapping):
        return None
    counts = [token_count(value.get(key), f"{where}.{key}") for key in ANTHROPIC_USAGE]
    if all(count is None for count in counts):
        return None
    return Usage(*counts)


def inclusive_usage(
    prompt: int | None,
    output: int | None,
    cache_read: int | None,
    cache_write: int | None = None,
) -> Usage | None:
    """The usage of a response whose ``prompt`` count includes its cached tokens (OpenAI's,
    Gemini's, OpenTelemetry's conventions): memtape's ``input`` is the uncached part, the
    prompt less what was read from and written to the cache, unless those exceed the
    prompt (a writer that counted them apart), when the prompt is kept. None when no count
    is given."""
    if prompt is None and output is None and cache_read is None and cache_write is None:
        return None
    cached = (cache_read or 0) + (cache_write or 0)
    uncached = prompt - cached if prompt is not None and cached <= prompt else prompt
    return Usage(uncached, output, cache_read, cache_write)


def _shown(value: Any) -> str:
    """The start of ``value``, as a refusal quotes it."""
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:57]}..."
