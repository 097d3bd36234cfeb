"""memtape.policy: the one module a policy of one's own imports, and the example that does."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import ast
import inspect
import json
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import attrs
from hypothesis import settings

import memtape.policy
from examples.keep_last import KeepLast
from memtape.policy import (
    CAPACITY,
    EVICTS_WEAKEST,
    INITIAL_STATE,
    SUPERSEDES,
    AddTurn,
    Event,
    Fact,
    Params,
    Query,
    ReadFact,
    Scored,
    State,
    Store,
    TurnAdded,
    WriteFact,
    by_rank,
    decide_by_rank,
)
from memtape.testing import PolicyMachine, kit_settings, run_kit
from tests.suite_profile import examples

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
    "memtape.core.events.memory",
    "memtape.core.events.parts",
    "memtape.core.events.store",
    "memtape.core.events.window",
    "memtape.core.integers",
    "memtape.core.packing",
    "memtape.core.plural",
    "memtape.core.reprs",
    "memtape.core.seq",
    "memtape.core.state",
    "memtape.core.values",
    "memtape.policies",
    "memtape.policies.plumbing",
    "memtape.policies.plumbing.params",
    "memtape.policies.plumbing.promises",
    "memtape.policies.plumbing.protocols",
    "memtape.policies.store",
    "memtape.policies.store.expiry",
    "memtape.policies.store.querying",
    "memtape.policies.store.rules",
    "memtape.policies.store.temporal",
    "memtape.policies.text",
    "memtape.policies.text.tokenizers",
    "memtape.policies.window",
    "memtape.policies.window.turns",
    "memtape.policies.window.units",
    "memtape.policy",
    "memtape.reducers",
    "memtape.reducers.blocks",
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

    def test_the_types_of_a_windows_tiers_are_there(self) -> None:
        """A policy that reads HOT or WARM names their types from here, not from core."""
        assert {"Hot", "Warm", "Seq"} <= set(memtape.policy.__all__)

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


@attrs.frozen
class NewestFirst:
    """A forgetting policy written from memtape.policy alone: the newest write scores
    highest, the store's rules are the shipped ones."""

    name: ClassVar[str] = "newest-first"
    axis: ClassVar[str] = "forgetting"
    capacity: int
    supersession: str = "key"

    @classmethod
    def from_params(cls, data: Mapping[str, Any], where: str) -> "NewestFirst":
        """Only a capacity."""
        params = Params(data, where)
        capacity = params.integer("capacity", minimum=1)
        params.done()
        return cls(capacity)

    @property
    def promises(self) -> frozenset[str]:
        """What the shipped store rules keep."""
        return frozenset({CAPACITY, EVICTS_WEAKEST, SUPERSEDES})

    def params(self) -> dict[str, Any]:
        """The capacity."""
        return {"policy": self.name, "capacity": self.capacity}

    def score(self, fact: Fact, now: float) -> Scored:
        """The time of the write."""
        return Scored(fact, {"written": fact.written_at}, fact.written_at)

    def rank(self, store: Store, now: float, query: str = "") -> list[Scored]:
        """The active facts, newest write first."""
        return by_rank(self.score(store.facts[i], now) for i in store.active)

    def decide(self, state: State, command: WriteFact | ReadFact | Query) -> tuple[Event, ...]:
        """The shipped rules, under this ranking."""
        return decide_by_rank(self, state, command)


class TestOwnForgetting:
    def test_a_forgetting_policy_from_memtape_policy_alone_keeps_its_promises(
        self, tmp_path: Path
    ) -> None:
        """The surface is enough for the store axis: ``decide_by_rank`` does the rest."""
        machine = type(
            "Machine", (PolicyMachine,), {"policy": NewestFirst, "counterexamples": tmp_path}
        )
        profile = settings(
            kit_settings(), max_examples=examples(40), derandomize=True, deadline=None
        )
        run_kit(machine, profile)
        assert [] == list(tmp_path.iterdir())
