"""The kit's hypothesis profiles (``memtape``, ``memtape-ci``, ``memtape-thorough``), registered
on import, and the settings a machine runs under."""

import os

from memtape.core.errors import BadInput
from memtape.testing.requires import hypothesis_missing

try:
    from hypothesis import HealthCheck, Phase, settings
    from hypothesis.errors import InvalidArgument
except ImportError as error:  # pragma: no cover (the test extra installs it)
    raise ImportError(hypothesis_missing()) from error

# No explain phase: it re-runs a failing session hundreds of times to name
# lines of code, where the saved scenario already says what broke.
_PHASES = (Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink)

settings.register_profile(
    "memtape",
    max_examples=50,
    stateful_step_count=30,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    phases=_PHASES,
)
settings.register_profile(
    "memtape-ci",
    max_examples=50,
    stateful_step_count=30,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
    phases=_PHASES,
)
settings.register_profile(
    "memtape-thorough",
    max_examples=1000,
    stateful_step_count=80,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    phases=_PHASES,
)


def kit_settings() -> settings:
    """The settings a machine runs under: the profile ``$MEMTAPE_KIT_PROFILE`` names
    (``memtape``, ``memtape-ci`` or ``memtape-thorough``; ``memtape`` by default)."""
    name = os.environ.get("MEMTAPE_KIT_PROFILE", "memtape")
    try:
        return settings.get_profile(name)
    except InvalidArgument:
        raise BadInput(
            f"MEMTAPE_KIT_PROFILE={name!r} names no hypothesis profile "
            "(memtape, memtape-ci or memtape-thorough)"
        ) from None
