"""memtape.lab.scenario_file: the TOML the generators and the importer write."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import tomllib

from hypothesis import given, settings
from hypothesis import strategies as st

from memtape.lab.scenario_file import Value, header, scenario_text, toml_string, toml_value
from memtape.scenarios import Probe, parse_scenario

# Text a Python string can hold and UTF-8 can write: anything but lone surrogates.
writable = st.text(st.characters(exclude_categories=["Cs"]), max_size=40)


@settings(max_examples=200)
@given(text=writable)
def test_any_text_reads_back_exactly(text: str) -> None:
    assert text == tomllib.loads(f"value = {toml_string(text)}")["value"]


def test_control_characters_are_escaped() -> None:
    assert '"a\\tb\\u0000c\\u007f\\n"' == toml_string("a\tb\x00c\x7f\n")


def test_values_keep_their_type() -> None:
    values: list[Value] = [True, 3, 0.1, 1e-05, "x"]
    data = tomllib.loads("\n".join(f"v{i} = {toml_value(v)}" for i, v in enumerate(values)))
    assert values == list(data.values())


def test_the_header_is_tiered_2000_8_and_the_seed_forgetting() -> None:
    text = scenario_text("c", {"name": "n"}, header(), [{"turn": "user", "text": "hi"}])
    policies = parse_scenario(text, "gen.toml").policies.params()
    assert {"policy": "tiered", "budget": 2000, "hot_n": 8, "tokenizer": "words"} == policies[
        "compaction"
    ]
    assert {
        "policy": "importance-recency-access",
        "capacity": 4,
        "half_life": 4.0,
        "access_boost": 0.1,
        "supersession": "key",
    } == policies["forgetting"]


def test_a_file_reads_back_as_its_steps_and_probes() -> None:
    text = scenario_text(
        "two\nlines",
        {"name": "n", "about": "a"},
        header(100, 2),
        [{"turn": "tool", "text": 'say "$5"'}, {"turn": "user", "text": "ok", "salient": True}],
        [{"text": "$5", "from": 1}],
    )
    scenario = parse_scenario(text, "gen.toml")
    assert text.startswith("# two\n# lines\n")
    assert ("n", "a", (Probe("$5", 1),)) == (scenario.name, scenario.about, scenario.probes)
    assert [("tool", 'say "$5"', None), ("user", "ok", True)] == [
        (step.role, step.text, step.salient)  # type: ignore[union-attr]
        for step in scenario.steps
    ]
