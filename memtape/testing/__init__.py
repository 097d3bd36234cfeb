"""memtape.testing: the invariant kit users run on their own policies.

``PolicyMachine`` (a hypothesis state machine to subclass) and ``run_kit``,
the strategies in ``memtape.testing.strategies``, and the invariants
themselves, which live in ``memtape.checking.invariants`` as plain
functions. The kit needs hypothesis (the ``testing`` extra). The package
itself imports without it, because the pytest plugin
(``memtape.testing.plugin``) is loaded in every pytest session of a project
that has memtape installed and must cost nothing there; the names of the
machine fail with one clear ``ImportError`` when hypothesis is missing.
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memtape.testing.machine import (
        InvariantBroken,
        PolicyMachine,
        axis_of,
        kit_settings,
        policy_name,
        run_kit,
    )
    from memtape.testing.salience import SalienceNeverVaries

_HOME_OF = {
    "InvariantBroken": "memtape.testing.machine",
    "PolicyMachine": "memtape.testing.machine",
    "SalienceNeverVaries": "memtape.testing.salience",
    "axis_of": "memtape.testing.machine",
    "kit_settings": "memtape.testing.machine",
    "policy_name": "memtape.testing.machine",
    "run_kit": "memtape.testing.machine",
}
"""The module each public name is defined in (hypothesis only when the machine is asked for)."""

__all__ = [
    "InvariantBroken",
    "PolicyMachine",
    "SalienceNeverVaries",
    "axis_of",
    "kit_settings",
    "policy_name",
    "run_kit",
]


def __getattr__(name: str) -> Any:
    module = _HOME_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
