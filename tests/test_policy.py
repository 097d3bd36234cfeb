"""memtape.policy: the one module a policy of one's own imports, and the example that does."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import ast
import inspect
import json
import subprocess
import sys
from pathlib import Path

import memtape.policy
from examples.keep_last import KeepLast
from memtape.policy import INITIAL_STATE, AddTurn, TurnAdded

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "keep_last.py"
TUTORIAL = ROOT / "docs" / "tutorial" / "your-policy.md"
HOW_TO = ROOT / "docs" / "how-to" / "test-your-policy.md"

IMPORTED = [
    "memtape",
    "memtape._version",
    "memtape.core",
    "memtape.core.commands",
    "memtape.core.errors",
    "memtape.core.events",
    "memtape.core.plural",
    "memtape.core.seq",
    "memtape.core.state",
    "memtape.policies",
    "memtape.policies.params",
    "memtape.policies.promises",
    "memtape.policies.protocols",
    "memtape.policies.querying",
    "memtape.policies.store_rules",
    "memtape.policies.tokenizers",
    "memtape.policies.turns",
    "memtape.policies.units",
    "memtape.policy",
    "memtape.reducers",
    "memtape.reducers.memory",
    "memtape.reducers.root",
    "memtape.reducers.store",
    "memtape.reducers.window",
]
"""Every memtape module ``import memtape.policy`` loads: no shipped policy, no session, no
projection. A new eager import fails the test."""

_LOADED = "import json, sys\nimport memtape.policy\nprint(json.dumps(sorted(sys.modules)))"


def _loaded() -> list[str]:
    """The modules a fresh interpreter holds once it has imported ``memtape.policy``."""
    result = subprocess.run(
        [sys.executable, "-c", _LOADED], capture_output=True, text=True, check=True
    )
    loaded: list[str] = json.loads(result.stdout.splitlines()[-1])
    return loaded


def _memtape_imports(path: Path) -> list[str]:
    """The memtape modules ``path`` imports, anywhere in it, in order."""
    found = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        found += [name for name in names if name.split(".")[0] == "memtape"]
    return found


class TestSurface:
    def test_every_name_is_there(self) -> None:
        assert [] == [name for name in memtape.policy.__all__ if not hasattr(memtape.policy, name)]

    def test_every_class_and_function_is_documented(self) -> None:
        """The API page is made from these docstrings."""
        undocumented = [
            name
            for name in memtape.policy.__all__
            if (inspect.isclass(obj := getattr(memtape.policy, name)) or inspect.isfunction(obj))
            and not inspect.getdoc(obj)
        ]
        assert [] == undocumented

    def test_importing_it_loads_exactly_these_memtape_modules(self) -> None:
        assert IMPORTED == [name for name in _loaded() if name.split(".")[0] == "memtape"]

    def test_importing_it_loads_no_optional_extra(self) -> None:
        """Only what the events and states are made of: attrs and immutables."""
        baseline = set(
            json.loads(
                subprocess.run(
                    [
                        sys.executable,
                        "-c",
                        "import json, sys; print(json.dumps(sorted(sys.modules)))",
                    ],
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout
            )
        )
        skip = set(sys.stdlib_module_names) | {"memtape", "__main__"}
        packages = {name.split(".")[0] for name in set(_loaded()) - baseline} - skip
        assert ["attr", "attrs", "immutables"] == sorted(packages)


class TestExample:
    def test_the_example_imports_nothing_of_memtape_but_memtape_policy(self) -> None:
        assert ["memtape.policy"] == _memtape_imports(EXAMPLE)

    def test_the_tutorial_shows_the_examples_imports(self) -> None:
        """The tutorial's policy block opens with the example's own import of memtape.policy."""
        source = EXAMPLE.read_text("utf-8")
        start = source.index("from memtape.policy import")
        statement = source[start : source.index(")\n", start) + 2]
        shown = TUTORIAL.read_text("utf-8").split("```python\n", 1)[1].split("```", 1)[0]
        assert shown.startswith(statement)

    def test_the_policy_pages_name_no_module_that_may_move(self) -> None:
        """The tutorial and the how-to send an author to memtape.policy, never behind it."""
        named = [
            (page.name, word)
            for page in (TUTORIAL, HOW_TO)
            for word in ("memtape.core", "memtape.policies")
            if word in page.read_text("utf-8")
        ]
        assert [] == named

    def test_a_tool_result_left_to_the_example_is_salient(self) -> None:
        """The shipped policies' rule: a tool result is salient, another turn chatter, unless
        the command says otherwise."""
        commands = [
            AddTurn("tool", "policy search: refunds within 30 days"),
            AddTurn("user", "thanks"),
            AddTurn("tool", "calculator: 180", salient=False),
            AddTurn("user", "the refund is $180", salient=True),
        ]
        decided = [KeepLast(40).decide(INITIAL_STATE, command)[0] for command in commands]
        assert all(isinstance(turn, TurnAdded) for turn in decided)
        assert [True, False, False, True] == [
            turn.salient for turn in decided if isinstance(turn, TurnAdded)
        ]
