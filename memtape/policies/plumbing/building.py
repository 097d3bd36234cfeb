"""What a policy's ``from_params`` may know beyond its own table, while policies are built.

``Policies.from_params`` builds each axis's policy from its table within
``building``: the scenario's ``[llm]`` settings (for a summarizer that asks
a model) and whether import paths may be imported (a scenario: yes; a run
file's header, which is data: no, and what they name is stood in for). A
policy's own ``from_params(data, where)`` keeps its signature.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING

import attrs

from memtape.core.reprs import fields_repr

if TYPE_CHECKING:
    from memtape.llm.config import ModelConfig


@attrs.frozen
class Building:
    """The settings in force while policies are built."""

    __repr__ = fields_repr

    llm: "ModelConfig | None" = None
    """The ``[llm]`` table's settings, if the scenario or run has one."""
    imports: bool = True
    """Whether a name given by import path is imported (False: a run file is read)."""


_in_force: ContextVar[Building] = ContextVar("building", default=Building())  # noqa: B039 (frozen)


def build_settings() -> Building:
    """The settings of the policies being built (outside ``building``: no model, imports)."""
    return _in_force.get()


@contextmanager
def building(settings: Building) -> Iterator[None]:
    """Within the block, policies are built with ``settings``."""
    token = _in_force.set(settings)
    try:
        yield
    finally:
        _in_force.reset(token)
