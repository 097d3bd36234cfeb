"""Reading one ``--set AXIS.PARAM=VALUE``: the value as TOML, the ``llm.base_url`` check, and
the parameters that go with a choice of text writer."""

from typing import Any

from memtape.core.errors import BadInput
from memtape.core.integers import LARGEST, too_large

CHOICES = ("summarizer", "warm", "gist")
"""The parameters that choose what writes a text (a summary, tiered's WARM items or gist)."""


def choice_params(param: str) -> tuple[str, ...]:
    """The parameters that belong to a choice of ``param``'s (dropped when it changes)."""
    # Imported here: the summarizers and writers bring the model client, which only a
    # policy that asks a model needs.
    from memtape.policies.text.summarizers import SUMMARIZER_PARAMS  # noqa: PLC0415
    from memtape.policies.text.tier_writers import WRITER_PARAMS  # noqa: PLC0415

    return SUMMARIZER_PARAMS if param == "summarizer" else WRITER_PARAMS[param]


def check_user_url(url: Any) -> None:
    """Refuse an ``llm.base_url`` setting that is not an http(s) URL (a run's own
    recorded value is not checked: it is never asked)."""
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise BadInput(f"--set llm.base_url: must be an http:// or https:// URL, got {url!r}")


def setting_value(raw: str, name: str) -> Any:
    """A ``--set`` value, ``raw`` read as TOML (a plain string when it is not TOML); a whole
    number past 64 bits, which TOML does not hold, is refused as too large."""
    import tomllib  # noqa: PLC0415 (only ``--set`` reads a value, and tomllib is not free)

    try:
        value = tomllib.loads(f"value = {raw}")["value"]
    except tomllib.TOMLDecodeError:
        return raw
    except ValueError:  # tomllib's int() of more digits than Python reads
        raise too_large(f"--set {name}", raw) from None
    if type(value) is int and not -LARGEST <= value <= LARGEST:
        raise too_large(f"--set {name}", raw)
    return value
