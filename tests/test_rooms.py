"""The rooms of DESIGN.md's layout: no module imports a room above its own.

``core`` knows nothing of policies or projections; reducers know events and
state only; ``llm`` (asking a model) knows events; policies know state,
events, reducers and how to ask a model; projections read state; run files
(``runs``) sit beside storage, and checking above them. Imports inside functions count too.
"""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import ast
from pathlib import Path

import pytest

import memtape

PACKAGE = Path(memtape.__file__).parent

ALLOWED = {
    "core": {"core", "_version"},
    "reducers": {"core", "reducers"},
    "llm": {"core", "llm"},
    "policies": {"core", "reducers", "llm", "policies"},
    "projections": {"core", "reducers", "policies", "projections"},
    "storage": {"core", "storage"},
    "scenarios": {"core", "policies", "scenarios"},
    "runs": {"core", "reducers", "llm", "policies", "storage", "runs"},
    "checking": {"core", "reducers", "llm", "policies", "storage", "runs", "checking"},
    "testing": {"core", "reducers", "llm", "policies", "scenarios", "checking", "testing"},
    "capture": {"core", "_version", "capture"},
}
"""Each room, and the rooms (``memtape.<room>``) its modules may import."""


def _rooms_imported(path: Path, depth: int = 1) -> set[tuple[str, int]]:
    """The memtape rooms ``path`` imports, each with the line of one import of it: the
    ``depth`` names after ``memtape`` (``policies`` at 1, ``policies.window`` at 2)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom):
            names = [node.module] if node.module and node.level == 0 else []
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] == "memtape" and len(parts) > depth:
                found.add((".".join(parts[1 : depth + 1]), node.lineno))
    return found


@pytest.mark.parametrize("room", sorted(ALLOWED))
def test_a_room_imports_no_room_above_it(room: str) -> None:
    upward = sorted(
        f"{path.relative_to(PACKAGE.parent)}:{line} imports memtape.{imported}"
        for path in sorted((PACKAGE / room).rglob("*.py"))
        for imported, line in _rooms_imported(path)
        if imported not in ALLOWED[room]
    )
    assert [] == upward


def test_an_upward_import_is_seen(tmp_path: Path) -> None:
    """The check finds a function-level import of a higher room (it can fail)."""
    module = tmp_path / "m.py"
    module.write_text("def f() -> None:\n    from memtape.projections.meter import meter\n")
    assert {("projections", 2)} == _rooms_imported(module)


def test_no_module_is_left_loose_at_the_root() -> None:
    """Every module but the entry points (the package, the command line and ``python -m``'s
    way to it, the demo, the surface for writing a policy) lives in a room that says what
    it is."""
    loose = sorted(path.name for path in PACKAGE.glob("*.py"))
    assert ["__init__.py", "__main__.py", "_version.py", "cli.py", "demo.py", "policy.py"] == loose


def test_the_policy_surface_imports_only_what_a_policy_may() -> None:
    """``memtape.policy`` is the policies room's public face: it re-exports from the rooms a
    policy may import, and from none above them."""
    upward = sorted(
        f"memtape/policy.py:{line} imports memtape.{imported}"
        for imported, line in _rooms_imported(PACKAGE / "policy.py")
        if imported not in ALLOWED["policies"]
    )
    assert [] == upward


POLICY_ROOMS = {
    "plumbing": {"plumbing"},
    "text": {"plumbing", "text"},
    "store": {"plumbing", "store"},
    "window": {"plumbing", "text", "window"},
    "consolidation": {"plumbing", "text", "consolidation"},
}
"""The rooms inside ``memtape/policies`` and the ones each may import: the plumbing (what
a policy is, its parameters, the registry) at the bottom, text measures on it, the axes'
deciders above, and the zoo, the stand-ins, ``--set`` and the session on top."""


@pytest.mark.parametrize("room", sorted(POLICY_ROOMS))
def test_a_policy_room_imports_no_room_beside_or_above_it(room: str) -> None:
    allowed = {f"policies.{inner}" for inner in POLICY_ROOMS[room]}
    upward = sorted(
        f"{path.relative_to(PACKAGE.parent)}:{line} imports memtape.{imported}"
        for path in sorted((PACKAGE / "policies" / room).glob("*.py"))
        for imported, line in _rooms_imported(path, depth=2)
        if imported.startswith("policies.") and imported not in allowed
    )
    assert [] == upward


def test_every_policy_module_is_in_a_room_but_the_top() -> None:
    """Only the zoo, the session and what the session alone uses sit at the top."""
    top = sorted(path.name for path in (PACKAGE / "policies").glob("*.py"))
    assert ["__init__.py", "session.py", "settings.py", "unimported.py", "zoo.py"] == top
    rooms = sorted(
        path.name
        for path in (PACKAGE / "policies").iterdir()
        if path.is_dir() and not path.name.startswith("__")
    )
    assert sorted(POLICY_ROOMS) == rooms


@pytest.mark.parametrize("room", sorted(POLICY_ROOMS))
def test_a_policy_room_holds_at_most_twelve_modules(room: str) -> None:
    modules = [path.name for path in (PACKAGE / "policies" / room).glob("*.py")]
    assert len(modules) - 1 <= 12, modules  # its __init__ aside


SUB_ROOMS = {"window/replicas": {"plumbing", "text", "window"}}
"""Rooms inside a policy room, and the rooms each may import: the replicas of production
policies sit in the window's room, on the policies they are made of."""


@pytest.mark.parametrize("room", sorted(SUB_ROOMS))
def test_a_sub_room_imports_no_room_beside_or_above_it(room: str) -> None:
    allowed = {f"policies.{inner}" for inner in SUB_ROOMS[room]}
    upward = sorted(
        f"{path.relative_to(PACKAGE.parent)}:{line} imports memtape.{imported}"
        for path in sorted((PACKAGE / "policies" / room).glob("*.py"))
        for imported, line in _rooms_imported(path, depth=2)
        if imported.startswith("policies.") and imported not in allowed
    )
    assert [] == upward


@pytest.mark.parametrize("room", sorted(SUB_ROOMS))
def test_a_sub_room_holds_at_most_twelve_modules(room: str) -> None:
    modules = [path.name for path in (PACKAGE / "policies" / room).glob("*.py")]
    assert 1 < len(modules) <= 13, modules  # its __init__ aside


def test_no_policy_module_is_over_400_lines() -> None:
    long = sorted(
        f"{path.relative_to(PACKAGE.parent)}: {lines} lines"
        for path in (PACKAGE / "policies").rglob("*.py")
        if (lines := len(path.read_text("utf-8").splitlines())) > 400
    )
    assert [] == long


def test_no_invariants_module_is_over_400_lines() -> None:
    """The invariants are split by promise (issue 27), each module short enough to read."""
    long = sorted(
        f"{path.relative_to(PACKAGE.parent)}: {lines} lines"
        for path in (PACKAGE / "checking").rglob("*.py")
        if (lines := len(path.read_text("utf-8").splitlines())) > 400
    )
    assert [] == long


LONG_MODULES = {
    # Not split yet.
    "memtape/core/codec.py",
    "memtape/lab/probes.py",
    "memtape/lab/table.py",
    "memtape/runs/redact.py",
    "memtape/storage/sqlite.py",
    "memtape/viewer/payload.py",
    "memtape/viewer/serve.py",
}
"""The modules still over 400 lines: the list only shrinks."""


def _long_modules() -> list[str]:
    """Every module of ``memtape/`` over 400 lines, as ``memtape/PATH``."""
    return sorted(
        path.relative_to(PACKAGE.parent).as_posix()
        for path in PACKAGE.rglob("*.py")
        if len(path.read_text("utf-8").splitlines()) > 400
    )


def test_no_module_is_over_400_lines_but_the_listed_ones() -> None:
    """A module says one job in a few hundred lines; a longer one is split by job."""
    assert [] == [path for path in _long_modules() if path not in LONG_MODULES]


def test_every_listed_module_is_still_over_400_lines() -> None:
    """A module split under the bound leaves the list, so the list only shrinks."""
    assert [] == sorted(LONG_MODULES - set(_long_modules()))


def test_an_import_beside_a_policy_room_is_seen(tmp_path: Path) -> None:
    """The inner check reads two names deep (it can fail)."""
    module = tmp_path / "m.py"
    module.write_text("from memtape.policies.window.units import Unit\n")
    assert {("policies.window", 1)} == _rooms_imported(module, depth=2)
