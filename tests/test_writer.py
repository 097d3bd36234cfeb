"""Scenario files written from policies and commands load back to the same session."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import math
import tomllib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memtape.core.commands import AddTurn, AdvanceClock, Command, ReadFact, WriteFact
from memtape.core.errors import BadInput
from memtape.scenarios import Probe, Scenario, parse_scenario
from memtape.scenarios.writer import (
    Value,
    probe_fields,
    scenario_file,
    scenario_text,
    step_fields,
    toml_string,
    toml_value,
)
from memtape.testing.strategies import scenarios
from tests.suite_profile import examples

# Text a Python string can hold and UTF-8 can write: anything but lone surrogates.
writable = st.text(st.characters(exclude_categories=["Cs"]), max_size=40)


class TestRoundTrip:
    @settings(max_examples=examples(60), deadline=None)
    @given(scenarios())
    def test_a_written_scenario_loads_back_to_its_policies_steps_and_probes(
        self, scenario: Scenario
    ) -> None:
        """Whatever policies, (loadable) commands and probes go in, the same come out: a
        turn's recorded count and a question's answer and evidence among them."""
        info = {"name": "s", "about": "about"}
        steps = [step_fields(command) for command in scenario.steps]
        probes = [probe_fields(probe) for probe in scenario.probes]
        text = scenario_file("", info, scenario.policies.params(), steps, probes)
        loaded = parse_scenario(text, "s.toml")
        assert (scenario.policies, scenario.steps, scenario.probes) == (
            loaded.policies,
            loaded.steps,
            loaded.probes,
        )

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

    @settings(max_examples=examples(200), deadline=None)
    @given(text=writable)
    def test_any_text_reads_back_exactly(self, text: str) -> None:
        """Whatever a string holds, its TOML spelling reads back to it."""
        assert text == tomllib.loads(f"value = {toml_string(text)}")["value"]

    def test_control_characters_are_escaped(self) -> None:
        """Control characters get their short escape or a lower-case \\u escape."""
        assert '"a\\tb\\u0000c\\u007f\\n"' == toml_string("a\tb\x00c\x7f\n")

    def test_scalars_keep_their_type(self) -> None:
        """A bool stays a bool (not 1), an int an int, a float a float."""
        values: list[Value] = [True, 3, 0.1, 1e-05, "x"]
        data = tomllib.loads("\n".join(f"v{i} = {toml_value(v)}" for i, v in enumerate(values)))
        assert values == list(data.values())

    def test_a_key_toml_cannot_hold_bare_is_quoted(self) -> None:
        """A key with a dot or a space is written as a quoted key, not a dotted one."""
        text = scenario_file("", {"name": "n"}, {"forgetting": {"a.b c": 1}}, [])
        assert {"a.b c": 1} == tomllib.loads(text)["forgetting"]

    def test_a_value_toml_cannot_hold_is_refused(self) -> None:
        """None has no TOML spelling."""
        with pytest.raises(BadInput, match="None cannot be written as a TOML value"):
            toml_value(None)


class TestFile:
    def test_a_file_reads_back_as_its_steps_and_probes(self) -> None:
        """Step and probe tables written as fields load back in order, with the header."""
        text = scenario_file(
            "two\nlines",
            {"name": "n", "about": "a"},
            {"compaction": {"policy": "tiered", "budget": 100, "hot_n": 2}},
            [{"turn": "tool", "text": 'say "$5"'}, {"turn": "user", "text": "ok", "salient": True}],
            [{"text": "$5", "from": 1}],
        )
        scenario = parse_scenario(text, "gen.toml")
        assert text.startswith("# two\n# lines\n\n[scenario]\n")
        assert ("n", "a", (Probe("$5", 1),)) == (scenario.name, scenario.about, scenario.probes)
        assert [("tool", 'say "$5"', None), ("user", "ok", True)] == [
            (step.role, step.text, step.salient)  # type: ignore[union-attr]
            for step in scenario.steps
        ]

    def test_without_a_comment_the_file_starts_with_its_header(self) -> None:
        """No comment, no leading blank line; each table ends with one blank line."""
        text = scenario_text("s", "a", {}, [AdvanceClock(2.0)])
        assert '[scenario]\nname = "s"\nabout = "a"\n\n[[step]]\nadvance = 2.0\n' == text


class TestProbes:
    def test_a_question_probe_reads_back_as_itself(self) -> None:
        """Question, answer and evidence are written, and a probe without text leaves it out."""
        probes = (
            Probe("$5", 1, "number"),
            Probe(None, 2, None, "How much?", "$5", (1,)),
            Probe("ok", 2, None, "Said?", "ok", (1, 2)),
        )
        tables = [probe_fields(probe) for probe in probes]
        text = scenario_file(
            "",
            {"name": "n"},
            {"compaction": {"policy": "tiered", "budget": 100, "hot_n": 2}},
            [{"turn": "tool", "text": "$5"}, {"turn": "user", "text": "ok"}],
            tables,
        )
        assert probes == parse_scenario(text, "gen.toml").probes

    def test_a_measured_turn_reads_back_with_its_tokens(self) -> None:
        text = scenario_text(
            "s",
            "",
            {"compaction": {"policy": "tiered", "budget": 9}},
            [AddTurn("user", "hi", tokens=7)],
        )
        assert (AddTurn("user", "hi", tokens=7),) == parse_scenario(text, "s.toml").steps

    @settings(max_examples=examples(100), deadline=None)
    @given(
        text=st.none() | writable.filter(bool),
        question=st.none() | writable.filter(str.strip),
        answer=writable.filter(str.strip),
        evidence=st.lists(st.integers(1, 2), unique=True, max_size=2),
    )
    def test_any_probe_reads_back_as_itself(
        self, text: str | None, question: str | None, answer: str, evidence: list[int]
    ) -> None:
        if question is None:
            text = text or "x"
        probe = Probe(
            text, 2, None, question, None if question is None else answer, tuple(evidence)
        )
        written = scenario_file(
            "",
            {"name": "n"},
            {"compaction": {"policy": "tiered", "budget": 100, "hot_n": 2}},
            [{"turn": "user", "text": "a"}, {"turn": "user", "text": "b"}],
            [probe_fields(probe)],
        )
        assert (probe,) == parse_scenario(written, "gen.toml").probes

    def test_a_plain_probe_is_written_as_before_questions(self) -> None:
        assert {"text": "$5", "from": 1} == probe_fields(Probe("$5", 1))


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
