"""memtape.testing: the invariant kit users run on their own policies.

``PolicyMachine`` (a hypothesis state machine to subclass), the strategies
in ``memtape.testing.strategies``, and the invariants themselves, which live
in ``memtape.checking.invariants`` as plain functions. The kit needs hypothesis (the
``testing`` extra). The package itself imports without it, because the
pytest plugin (``memtape.testing.plugin``) is loaded in every pytest session
of a project that has memtape installed and must cost nothing there; the
names below fail with one clear ``ImportError`` when hypothesis is missing.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memtape.testing.machine import (
        InvariantBroken,
        PolicyMachine,
        axis_of,
        kit_settings,
        policy_name,
    )

__all__ = ["InvariantBroken", "PolicyMachine", "axis_of", "kit_settings", "policy_name"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from memtape.testing import machine  # noqa: PLC0415 (hypothesis only when asked for)

        return getattr(machine, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
