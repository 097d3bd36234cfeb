"""Scenario files written from policies and commands load back to the same session."""

import math
import tomllib

import pytest
from hypothesis import given, settings

from memtape.core.commands import AddTurn, AdvanceClock, Command, ReadFact, WriteFact
from memtape.core.errors import BadInput
from memtape.scenarios import Scenario, parse_scenario
from memtape.scenarios.writer import scenario_text, toml_value
from memtape.testing.strategies import scenarios


class TestRoundTrip:
    @settings(max_examples=60, deadline=None)
    @given(scenarios())
    def test_a_written_scenario_loads_back_to_its_policies_and_steps(
        self, scenario: Scenario
    ) -> None:
        """Whatever policies and (loadable) commands go in, the same come out."""
        text = scenario_text("s", "about", scenario.policies.params(), scenario.steps)
        loaded = parse_scenario(text, "s.toml")
        assert (scenario.policies, scenario.steps) == (loaded.policies, loaded.steps)

    def test_the_comment_heads_the_file(self) -> None:
        """Each line of the comment becomes a TOML comment line, before the header."""
        text = scenario_text("s", "", {}, [AdvanceClock(1.0)], comment="found\nby the kit")
        assert ["# found", "# by the kit", ""] == text.splitlines()[:3]


class TestValues:
    @pytest.mark.parametrize(
        "value",
        ["plain", 'quote " and \\ back', "tab\tnew\nline", "\x00\x1f\x7f", "émoji 🙂", ""],
    )
    def test_a_string_reads_back_as_itself(self, value: str) -> None:
        """Escapes cover quotes, backslashes and every control character TOML forbids raw."""
        assert value == tomllib.loads(f"v = {toml_value(value)}")["v"]

    @pytest.mark.parametrize("value", [0.1, 1e-300, 1e300, -0.0, 5.0, math.inf, -math.inf])
    def test_a_float_reads_back_exactly(self, value: float) -> None:
        """Floats, infinities included, keep every bit."""
        assert value == tomllib.loads(f"v = {toml_value(value)}")["v"]

    def test_nested_tables_and_lists_read_back(self) -> None:
        """A consolidation rule (a list of tables holding a table) reads back whole."""
        rules = [{"pattern": "a(?P<x>b)", "semantic": {"key": "k", "text": "{x}", "n": 1}}]
        assert rules == tomllib.loads(f"rule = {toml_value(rules)}")["rule"]

    def test_a_value_toml_cannot_hold_is_refused(self) -> None:
        """None has no TOML spelling."""
        with pytest.raises(BadInput, match="None cannot be written as a TOML value"):
            toml_value(None)


class TestSteps:
    def test_optional_fields_are_written_only_when_set(self) -> None:
        """A turn without a salient flag and a write without supersedes omit them; a read by
        id writes the id."""
        steps: list[Command] = [AddTurn("user", "hi"), WriteFact("k", "t", 0.5), ReadFact(id=3)]
        text = scenario_text("s", "", {"forgetting": {"policy": "x"}}, steps)
        assert [
            {"turn": "user", "text": "hi"},
            {"write": "k", "text": "t", "importance": 0.5},
            {"read": 3},
        ] == tomllib.loads(text)["step"]
