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


def _rooms_imported(path: Path) -> set[tuple[str, int]]:
    """The memtape rooms ``path`` imports, each with the line of one import of it."""
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
            if parts[0] == "memtape" and len(parts) > 1:
                found.add((parts[1], node.lineno))
    return found


@pytest.mark.parametrize("room", sorted(ALLOWED))
def test_a_room_imports_no_room_above_it(room: str) -> None:
    upward = sorted(
        f"{path.relative_to(PACKAGE.parent)}:{line} imports memtape.{imported}"
        for path in sorted((PACKAGE / room).glob("*.py"))
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
    """Every module but the entry points (the package, the command line, the demo, the
    surface for writing a policy) lives in a room that says what it is."""
    loose = sorted(path.name for path in PACKAGE.glob("*.py"))
    assert ["__init__.py", "_version.py", "cli.py", "demo.py", "policy.py"] == loose


def test_the_policy_surface_imports_only_what_a_policy_may() -> None:
    """``memtape.policy`` is the policies room's public face: it re-exports from the rooms a
    policy may import, and from none above them."""
    upward = sorted(
        f"memtape/policy.py:{line} imports memtape.{imported}"
        for imported, line in _rooms_imported(PACKAGE / "policy.py")
        if imported not in ALLOWED["policies"]
    )
    assert [] == upward
