"""The names of the seed scenarios that ship inside the package, and what names a scenario.

A module of its own, with no imports, so that the command line can list them
in its help, and tell a scenario from a run file, without importing the loader.
"""

SHIPPED = ("refund-desk", "dana-facts", "sleep-pass", "cache-breaker")
"""The seed scenarios that ship inside the package, run by name."""


def is_scenario(target: str) -> bool:
    """Whether a command's argument names a scenario (shipped, or a ``.toml`` file) rather
    than a recorded run."""
    return target in SHIPPED or target.endswith(".toml")
