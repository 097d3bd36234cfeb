"""memtape's package: the public names it exports."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import pytest

import memtape
from memtape.policies.session import AXES


@pytest.mark.parametrize("axis", sorted(AXES))
def test_every_registered_policy_is_exported(axis: str) -> None:
    """A policy registered on any axis is public: named in ``__all__`` and importable
    from ``memtape`` as the very class the registry holds."""
    registry = AXES[axis]
    missing = sorted(
        policy.__name__
        for policy in registry.values()
        if policy.__name__ not in memtape.__all__
        or getattr(memtape, policy.__name__, None) is not policy
    )
    assert [] == missing


def test_every_name_in_all_exists() -> None:
    assert [] == [name for name in memtape.__all__ if not hasattr(memtape, name)]
