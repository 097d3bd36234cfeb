"""The kit as a test: ``run_kit`` runs a machine's sessions and then its verdict, and
``PolicyMachine.TestCase`` is the unittest case that runs it."""

import functools
import unittest
from typing import TYPE_CHECKING, ClassVar

from memtape.testing.profiles import kit_settings
from memtape.testing.requires import hypothesis_missing
from memtape.testing.salience import DrawnSalience
from memtape.testing.under_test import policy_name

try:
    from hypothesis import settings
    from hypothesis.stateful import run_state_machine_as_test
except ImportError as error:  # pragma: no cover (the test extra installs it)
    raise ImportError(hypothesis_missing()) from error

if TYPE_CHECKING:
    from memtape.testing.machine import PolicyMachine


class _KitCase(unittest.TestCase):
    """The kit on ``machine``'s policy as a unittest case: ``run_kit`` under ``settings``."""

    machine: ClassVar["type[PolicyMachine]"]
    settings: ClassVar[settings]

    def runTest(self) -> None:  # noqa: N802 (unittest's name)
        """Run the kit."""
        run_kit(self.machine, self.settings)


# So hypothesis's pytest plugin treats it as the hypothesis test it runs.
_KitCase.runTest.is_hypothesis_test = True  # type: ignore[attr-defined]


@functools.cache
def _case_of(machine: "type[PolicyMachine]") -> type[_KitCase]:
    """``machine``'s test case, made once (so its ``settings`` may be set)."""
    attributes = {
        "machine": machine,
        "settings": kit_settings(),
        "__qualname__": f"{machine.__qualname__}.TestCase",
    }
    return type(f"{machine.__name__}.TestCase", (_KitCase,), attributes)


class MachineCase:
    """``PolicyMachine.TestCase``: the test case of the machine it is read from, whose test
    is ``run_kit`` (hypothesis's own would run the sessions without the verdict after)."""

    def __get__(
        self, machine: "PolicyMachine | None", owner: "type[PolicyMachine] | None" = None
    ) -> type[_KitCase]:
        cls = type(machine) if machine is not None else owner
        assert cls is not None
        return _case_of(cls)


def run_kit(machine: "type[PolicyMachine]", settings: settings | None = None) -> None:
    """Run the kit on ``machine``'s policy, as its ``TestCase`` does.

    Every session hypothesis draws is checked after every step (a broken
    invariant raises ``InvariantBroken``); then, for a compaction policy,
    what it decided of the salience left to it across all of them
    (``SalienceNeverVaries`` when it never varied). ``settings`` default to
    the machine's ``TestCase.settings``: the kit's profile.
    """
    machine.drawn = DrawnSalience()
    chosen = settings if settings is not None else machine.TestCase.settings
    run_state_machine_as_test(machine, settings=chosen)
    failure = machine.drawn.verdict(policy_name(machine.policy, machine.axis))
    if failure is not None:
        raise failure
