"""What ``memtape.testing`` needs that memtape itself does not: hypothesis."""

HYPOTHESIS_MISSING = (
    "memtape.testing needs hypothesis, which is not installed: pip install 'memtape[testing]'"
)
"""The one line an import of the kit without hypothesis fails with."""
