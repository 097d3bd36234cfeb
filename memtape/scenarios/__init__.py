"""Scenarios as data: the TOML format, its loader, and the seed scenarios.

The loader is imported on first use of a name it defines; ``SHIPPED`` (the
seed scenarios' names) and ``is_scenario`` cost nothing, for the command line.
"""

import importlib
from typing import TYPE_CHECKING, Any

from memtape.scenarios.shipped import SHIPPED, is_scenario

if TYPE_CHECKING:
    from memtape.scenarios.loader import (
        Scenario,
        load_scenario,
        parse_scenario,
        read_scenario,
    )
    from memtape.scenarios.probes import Probe

__all__ = [
    "SHIPPED",
    "Probe",
    "Scenario",
    "is_scenario",
    "load_scenario",
    "parse_scenario",
    "read_scenario",
]

_HOME_OF = {
    "Probe": "memtape.scenarios.probes",
    "Scenario": "memtape.scenarios.loader",
    "load_scenario": "memtape.scenarios.loader",
    "parse_scenario": "memtape.scenarios.loader",
    "read_scenario": "memtape.scenarios.loader",
}
"""The module each name the loader brings is defined in."""


def __getattr__(name: str) -> Any:
    home = _HOME_OF.get(name)
    if home is not None:
        # The loader only when asked for.
        return getattr(importlib.import_module(home), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
