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
    from memtape.testing.case import run_kit
    from memtape.testing.counterexamples import InvariantBroken
    from memtape.testing.machine import PolicyMachine
    from memtape.testing.profiles import kit_settings
    from memtape.testing.salience import SalienceNeverVaries
    from memtape.testing.under_test import axis_of, policy_name

_HOME_OF = {
    "InvariantBroken": "memtape.testing.counterexamples",
    "PolicyMachine": "memtape.testing.machine",
    "SalienceNeverVaries": "memtape.testing.salience",
    "axis_of": "memtape.testing.under_test",
    "kit_settings": "memtape.testing.profiles",
    "policy_name": "memtape.testing.under_test",
    "run_kit": "memtape.testing.case",
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
