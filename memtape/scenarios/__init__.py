"""Scenarios as data: the TOML format, its loader, and the seed scenarios."""

from memtape.scenarios.loader import SHIPPED, Scenario, load_scenario, parse_scenario

__all__ = ["SHIPPED", "Scenario", "load_scenario", "parse_scenario"]
