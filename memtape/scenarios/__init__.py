"""Scenarios as data: the TOML format, its loader, and the seed scenarios.

The loader is imported on first use of a name it defines; ``SHIPPED`` (the
seed scenarios' names) and ``is_scenario`` cost nothing, for the command line.
"""

from typing import TYPE_CHECKING, Any

from memtape.scenarios.shipped import SHIPPED, is_scenario

if TYPE_CHECKING:
    from memtape.scenarios.loader import (
        Probe,
        Scenario,
        load_scenario,
        parse_scenario,
        read_scenario,
    )

__all__ = [
    "SHIPPED",
    "Probe",
    "Scenario",
    "is_scenario",
    "load_scenario",
    "parse_scenario",
    "read_scenario",
]

_LOADED = ("Probe", "Scenario", "load_scenario", "parse_scenario", "read_scenario")
"""The names the loader defines."""


def __getattr__(name: str) -> Any:
    if name in _LOADED:
        from memtape.scenarios import loader  # noqa: PLC0415 (the loader only when asked for)

        return getattr(loader, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
