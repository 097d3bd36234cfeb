"""memtape.lab.scenario_file: the policies that head the generators' and importer's files."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

from memtape.lab.scenario_file import header
from memtape.scenarios import parse_scenario
from memtape.scenarios.writer import scenario_file


def test_the_header_is_tiered_2000_8_and_the_seed_forgetting() -> None:
    text = scenario_file("c", {"name": "n"}, header(), [{"turn": "user", "text": "hi"}])
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
