"""Scenarios as data: the TOML format, its loader, and the seed scenarios."""

from memtape.scenarios.loader import (
    SHIPPED,
    Probe,
    Scenario,
    is_scenario,
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
