"""memtape's package: the public names it exports."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import tomllib
from pathlib import Path

import pytest
import setuptools  # type: ignore[import-untyped]

import memtape
from memtape.policies.zoo import AXES


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


def test_the_package_discovery_takes_memtape_and_nothing_named_like_it(tmp_path: Path) -> None:
    """A folder beside the package whose name starts like it (``memtape_scratch``, a
    checkout's ``memtape-runs``) is neither installed nor warned about."""
    config = tomllib.loads((Path(memtape.__file__).parent.parent / "pyproject.toml").read_text())
    include = config["tool"]["setuptools"]["packages"]["find"]["include"]
    for folder in ("memtape", "memtape/core", "memtape_scratch", "memtapes"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "__init__.py").write_text("")

    assert ["memtape", "memtape.core"] == sorted(
        setuptools.find_packages(str(tmp_path), include=include)
    )
