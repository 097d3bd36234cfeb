"""What ``memtape.testing`` needs that memtape itself does not: hypothesis."""


def hypothesis_missing() -> str:
    """The one line an import of the kit without hypothesis fails with, its install command
    said as memtape was installed."""
    from memtape.core.extras import install_hint  # noqa: PLC0415 (only when it is missing)

    return f"memtape.testing needs hypothesis, which is not installed: {install_hint('testing')}"
