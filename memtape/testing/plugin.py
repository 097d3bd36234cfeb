"""The pytest plugin: ``pytest --memtape-policy mypkg.module:Policy`` runs the kit on a policy.

Loaded by every pytest session of a project with memtape installed (the
``pytest11`` entry point), so it imports nothing of the kit until its option
is used. Each ``--memtape-policy`` adds one test item that runs
``PolicyMachine`` on that policy; a failure prints the broken invariant and
the path of the minimal counterexample, saved as a scenario file.

With ``--memtape-policy`` the session runs the kit and nothing else, wherever
pytest is started: a project's own suite (its ``testpaths``, the files under
the current directory) is not collected.
"""

from pathlib import Path
from typing import Any

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    """The kit's options."""
    group = parser.getgroup("memtape", "memtape's invariant kit")
    group.addoption(
        "--memtape-policy",
        action="append",
        default=[],
        metavar="MODULE:CLASS",
        help="run memtape's invariant kit on this policy (an import path or a registered name)",
    )
    group.addoption(
        "--memtape-counterexamples",
        default=None,
        metavar="DIR",
        help="where counterexamples are saved (default .memtape/counterexamples)",
    )


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """With ``--memtape-policy``, collect no file or folder: only the kit's items run."""
    if config.getoption("memtape_policy"):
        return True
    return None


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """One kit item per ``--memtape-policy``."""
    for policy in config.getoption("memtape_policy"):
        items.append(
            PolicyKitItem.from_parent(session, name=f"memtape-kit[{policy}]", policy=policy)
        )


class PolicyKitItem(pytest.Item):
    """The kit run on one policy."""

    def __init__(self, *, policy: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.policy = policy

    def runtest(self) -> None:
        """Run the state machine on the policy; a broken invariant fails the item."""
        from memtape.testing import PolicyMachine, kit_settings, run_kit  # noqa: PLC0415

        folder = self.config.getoption("memtape_counterexamples")
        machine = type(
            "PolicyUnderTest",
            (PolicyMachine,),
            {"policy": self.policy, "counterexamples": Path(folder) if folder else None},
        )
        run_kit(machine, kit_settings())

    def repr_failure(
        self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None
    ) -> str | Any:
        """The broken invariant, the counterexample's path and the steps, without a traceback."""
        from memtape.core.errors import BadInput  # noqa: PLC0415
        from memtape.testing import InvariantBroken, SalienceNeverVaries  # noqa: PLC0415

        error = excinfo.value
        if isinstance(error, InvariantBroken | SalienceNeverVaries | BadInput | ImportError):
            notes = getattr(error, "__notes__", [])
            return "\n".join([str(error), *notes])
        return super().repr_failure(excinfo, style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        """Where the item comes from: the option, not a file."""
        return self.path, None, f"memtape kit on {self.policy}"
