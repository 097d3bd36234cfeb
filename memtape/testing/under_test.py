"""The policy under test: the name a scenario gives it, and the axis it serves."""

from typing import Any

from memtape.core.errors import BadInput
from memtape.policies.plumbing.imports import import_path, is_import_path, policy_class
from memtape.policies.zoo import AXES


def policy_name(policy: Any, axis: str | None = None) -> str:
    """The name a scenario gives ``policy`` (a class, an import path or a registered name)."""
    if isinstance(policy, str) and policy:
        return policy
    if isinstance(policy, type):
        name = str(getattr(policy, "name", ""))
        registries = [AXES[axis]] if axis in AXES else list(AXES.values())
        if any(known.get(name) is policy for known in registries):
            return name
        return import_path(policy)
    raise BadInput(f"name the policy to test (a class or mypkg.module:Policy), got {policy!r}")


def axis_of(policy: Any, declared: str | None = None) -> str:
    """The axis ``policy`` serves: as declared (on the machine or as the class's ``axis``),
    or the registry it is registered in."""
    if declared is None:
        cls = policy
        if isinstance(policy, str) and is_import_path(policy):
            cls = policy_class(policy, "the policy under test")
        declared = getattr(cls, "axis", None)
        if declared is None:
            found = [
                axis
                for axis, known in AXES.items()
                if policy in known or any(cls is registered for registered in known.values())
            ]
            if isinstance(policy, str) and not found:
                names = ", ".join(sorted({name for known in AXES.values() for name in known}))
                raise BadInput(
                    f"no policy is registered as {policy!r} (registered: {names}); "
                    "name your own class as mypkg.module:Policy"
                )
            declared = found[0] if len(found) == 1 else None
    if declared not in AXES:
        raise BadInput(
            f"say which axis {policy_name(policy)} serves: axis = 'compaction', 'forgetting' "
            "or 'consolidation' on the policy class (or on the machine)"
        )
    return str(declared)
