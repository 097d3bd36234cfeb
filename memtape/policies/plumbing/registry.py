"""A registry of shipped policies by name, each imported when first looked up.

Reading a run builds only the policies its header names: looking one up
imports its module, and listing the names imports nothing, so that a
command starts without importing every policy memtape ships.
"""

import importlib
from collections.abc import Iterator, Mapping
from typing import Any


class Registry(Mapping[str, Any]):
    """Policy classes by name, from ``{name: "module:Class"}``; a class is imported
    (once) when its name is first looked up."""

    def __init__(self, homes: Mapping[str, str]) -> None:
        self._homes = dict(homes)
        self._loaded: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        loaded = self._loaded.get(name)
        if loaded is not None:
            return loaded
        module, _, attribute = self._homes[name].partition(":")
        policy = getattr(importlib.import_module(module), attribute)
        self._loaded[name] = policy
        return policy

    def __contains__(self, name: object) -> bool:
        return name in self._homes

    def __iter__(self) -> Iterator[str]:
        return iter(self._homes)

    def __len__(self) -> int:
        return len(self._homes)

    def __repr__(self) -> str:
        return f"Registry({self._homes!r})"
