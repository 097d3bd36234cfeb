"""The kit's state machine catches broken policies with minimal counterexamples, and passes
every shipped policy."""

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from memtape.cli import main
from memtape.core.errors import BadInput
from memtape.policies.zoo import COMPACTION, CONSOLIDATION, FORGETTING
from memtape.scenarios import load_scenario
from memtape.testing import (
    InvariantBroken,
    PolicyMachine,
    SalienceNeverVaries,
    axis_of,
    kit_settings,
    policy_name,
    run_kit,
)
from tests.llm_server import ChatServer
from tests.playing import OWN_PARAMS
from tests.suite_profile import examples

CI = settings.get_profile("memtape-ci")
"""Derandomized, 50 examples: the same counterexample on every run."""

PASSING = settings(CI, max_examples=examples(CI.max_examples), deadline=None)
"""For a policy that must pass: a share of CI's examples in `make test`, all of them in the
slow job (a policy that must fail keeps :data:`CI`: its counterexample must be found)."""


def machine_for(policy: Any, folder: Path | None = None, **attributes: Any) -> type[PolicyMachine]:
    """A machine subclass running the kit on ``policy``."""
    return type(
        "Machine", (PolicyMachine,), {"policy": policy, "counterexamples": folder, **attributes}
    )


def caught(policy: str, folder: Path) -> InvariantBroken:
    """The kit's verdict on a policy that must fail."""
    with pytest.raises(InvariantBroken) as raised:
        run_kit(machine_for(policy, folder), CI)
    return raised.value


# Each runs the kit until it shrinks a counterexample: seconds apiece, so the slow job's.
@pytest.mark.slow
class TestBrokenPolicies:
    @pytest.mark.parametrize(
        ("policy", "invariant", "most"),
        [
            ("tests.broken_policies:NeverCompacts", "budget", 2),
            ("tests.broken_policies:EvictsStrongest", "eviction", 2),
            # Ranking a retired fact shows in a plain query (ranking) or in one asked as of
            # a time (valid-as-of), whichever the search draws first.
            ("tests.broken_policies:RanksRetired", ("ranking", "valid-as-of"), 2),
            ("tests.broken_policies:StampsTurns", "determinism", 1),
            ("tests.broken_policies:SplitsCalls", "well-formed", 3),
            ("tests.broken_policies:MovesPinned", "pinned", 3),
            ("tests.broken_policies:TakesAnyAnswer", "well-formed", 1),
            ("tests.broken_policies:OvershootsOnHugeTurns", "budget", 3),
            ("tests.broken_policies:FloorWithoutBlocks", "budget", 3),
        ],
    )
    def test_each_is_caught_with_a_minimal_scenario_naming_the_invariant(
        self, tmp_path: Path, policy: str, invariant: str | tuple[str, ...], most: int
    ) -> None:
        """The first broken invariant is the bug's own, and the saved scenario is as short as
        the bug allows and names the policy by its import path, so it builds it again."""
        broken = caught(policy, tmp_path)
        assert broken.path is not None
        scenario = load_scenario(str(broken.path))
        own = (invariant,) if isinstance(invariant, str) else invariant
        assert (True, broken.steps) == (
            broken.violation.invariant in own,
            len(scenario.steps),
        ), broken.violation.invariant
        assert 1 <= len(scenario.steps) <= most
        tables = scenario.policies.params()
        assert [policy] == [table["policy"] for table in tables.values()]

    def test_memtape_run_replays_the_counterexample(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """``memtape run FILE --out run.jsonl`` records the counterexample, and ``memtape
        check`` finds the same broken invariant in it."""
        broken = caught("tests.broken_policies:NeverCompacts", tmp_path)
        out = tmp_path / "run.jsonl"
        assert 0 == main(["run", str(broken.path), "--out", str(out)])
        assert out.is_file()
        main(["check", "--trust", str(out)])
        assert ": budget: " in capsys.readouterr().out

    def test_the_failure_message_gives_the_path_and_the_replay_command(
        self, tmp_path: Path
    ) -> None:
        """The message a user reads says what broke, where the scenario is, how to run it."""
        broken = caught("tests.broken_policies:NeverCompacts", tmp_path)
        lines = str(broken).splitlines()
        assert lines[0].startswith("tests.broken_policies:NeverCompacts breaks budget: event ")
        assert f"replay it: memtape run {broken.path} --out run.jsonl" == lines[2]


class TestSalience:
    @pytest.mark.parametrize(
        ("policy", "seen"),
        [
            ("tests.broken_policies:ToolsAsChatter", r"none of the \d+ drawn turns left to it"),
            ("tests.broken_policies:AllSalient", r"all \d+ drawn turns left to it"),
        ],
    )
    def test_a_salience_that_never_varies_is_reported_once_the_run_is_over(
        self, tmp_path: Path, policy: str, seen: str
    ) -> None:
        """A policy marking every drawn turn left to it alike, tool results and the rest,
        fails the run, naming the policy and what it marked."""
        with pytest.raises(SalienceNeverVaries) as raised:
            run_kit(machine_for(policy, tmp_path), CI)
        message = str(raised.value)
        assert re.match(rf"{re.escape(policy)} marked {seen} salient \(\d+ of them ", message)
        assert "its salience rule never fires" in message
        assert [] == list(tmp_path.iterdir())

    def test_the_test_case_reports_it(self, tmp_path: Path) -> None:
        """The three-line test a user writes (``TestCase``) runs the verdict too."""
        case = machine_for("tests.broken_policies:ToolsAsChatter", tmp_path).TestCase
        case.settings = CI
        with pytest.raises(SalienceNeverVaries):
            case().runTest()

    def test_a_policy_constant_by_design_passes(self, tmp_path: Path) -> None:
        """``salience_may_be_constant = True`` on the policy's class takes it out of the
        verdict."""
        run_kit(machine_for("tests.broken_policies:ChatterByDesign", tmp_path), PASSING)
        assert [] == list(tmp_path.iterdir())

    def test_a_run_counts_its_own_turns_alone(self, tmp_path: Path) -> None:
        """Each run starts its count afresh: turns a machine counted before (here, varied
        ones) do not hide what this run's policy did."""
        machine = machine_for("tests.broken_policies:ToolsAsChatter", tmp_path)
        machine.drawn.seen.update({("tool", True): 1, ("user", False): 1})
        with pytest.raises(SalienceNeverVaries):
            run_kit(machine, CI)


SHIPPED = [
    *(("compaction", name) for name in sorted(COMPACTION)),
    *(("forgetting", name) for name in sorted(FORGETTING)),
    *(("consolidation", name) for name in sorted(CONSOLIDATION) if name != "llm"),
]
"""Every registered policy that builds from a budget or a capacity alone (``llm``
consolidation also needs a model: ``test_the_llm_consolidation_keeps_its_promises``)."""


def first_episode_fact(model: str, prompt: str) -> str:
    """A model that distills the first episode a prompt lists into one fact."""
    found = re.search(r"^\[(\d+)\] ", prompt, re.MULTILINE)
    semantic = (
        [
            {
                "key": f"k{found.group(1)}",
                "text": "t",
                "importance": 0.5,
                "episode": int(found.group(1)),
            }
        ]
        if found
        else []
    )
    return json.dumps({"semantic": semantic, "procedural": []})


class TestShippedPolicies:
    @pytest.mark.parametrize(("axis", "name"), SHIPPED)
    def test_every_registered_policy_keeps_its_promises(
        self, tmp_path: Path, axis: str, name: str
    ) -> None:
        """Each policy of the registries, built from just a budget or a capacity (and what
        it cannot be built without: recorded's compactions), passes."""
        assert axis == axis_of(name)
        params = OWN_PARAMS.get(name, {}) if axis == "compaction" else {}
        run_kit(machine_for(name, tmp_path, params=params), PASSING)
        assert [] == list(tmp_path.iterdir())

    @pytest.mark.usefixtures("llm_env")
    def test_the_llm_consolidation_keeps_its_promises(
        self, tmp_path: Path, chat_server: ChatServer
    ) -> None:
        """Against a model server: each decision decided twice gets the first one's answers."""
        chat_server.answerer = first_episode_fact
        table = {"model": "kit", "base_url": chat_server.url, "max_retries": 0}
        found = tmp_path / "found"

        run_kit(machine_for("llm", found, llm=table), PASSING)
        assert not found.exists()
        assert chat_server.requests > 0


class TestNaming:
    def test_a_registered_class_goes_by_its_name_and_another_by_its_path(self) -> None:
        """The tiered class is "tiered"; a subclass is its import path."""
        from tests.broken_policies import StampsTurns  # noqa: PLC0415

        tiered = COMPACTION["tiered"]
        names = (policy_name(tiered, "compaction"), policy_name(StampsTurns))
        assert ("tiered", "tests.broken_policies:StampsTurns") == names

    def test_a_policy_without_an_axis_is_refused_with_a_clear_message(self) -> None:
        """A class the registries do not hold and that names no axis cannot be tested."""
        with pytest.raises(BadInput, match=r"say which axis tests\.test_testing_machine:Axisless"):
            axis_of(Axisless)

    def test_an_unknown_name_is_refused_as_unknown_not_as_axisless(self) -> None:
        """A name no registry holds is a typo or a missing import path, and says so."""
        with pytest.raises(BadInput, match=r"no policy is registered as 'tiredd'.*tiered"):
            axis_of("tiredd")

    def test_an_axis_on_the_machine_overrides(self) -> None:
        """The machine may name the axis a policy serves."""
        assert "forgetting" == axis_of(Axisless, "forgetting")


class TestSettings:
    def test_the_profile_the_environment_names(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("MEMTAPE_KIT_PROFILE", "memtape-thorough")
        assert 1000 == kit_settings().max_examples

    def test_an_unknown_profile_is_one_clear_line(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """A typo in the variable names the variable, not hypothesis's internals."""
        monkeypatch.setenv("MEMTAPE_KIT_PROFILE", "memtape-thorogh")
        with pytest.raises(BadInput, match=r"^MEMTAPE_KIT_PROFILE='memtape-thorogh' names no"):
            kit_settings()


class Axisless:
    """A class that says nothing of its axis."""


class TestExample:
    def test_the_docs_show_the_examples_test_as_it_is(self) -> None:
        """The three lines the how-to shows are the example's whole test file."""
        root = Path(__file__).resolve().parent.parent
        page = (root / "docs" / "how-to" / "test-your-policy.md").read_text("utf-8")
        shown = page.split("```python\n", 1)[1].split("```", 1)[0]
        assert (root / "examples" / "test_keep_last.py").read_text("utf-8") == shown
