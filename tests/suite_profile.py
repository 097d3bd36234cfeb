"""How hard the suite's property tests try: a share of their examples in `make test`, all
of them in `make test-slow` (``pytest --memtape-slow``), which CI runs too.

``tests/conftest.py`` sets :data:`FULL` from the option before any test module is
imported, so a module's ``settings(max_examples=examples(N))`` reads the right one.
"""

SHARE = 4
"""`make test` runs one example in this many (never fewer than :data:`LEAST`)."""

LEAST = 10
"""The fewest examples a property gets in `make test`."""

FULL = False
"""Whether this session is the slow job's (every example, the slow tests included)."""


def examples(full: int) -> int:
    """The number of examples for a property that takes ``full`` in the slow job."""
    return full if FULL else min(full, max(LEAST, full // SHARE))
