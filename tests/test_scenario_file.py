"""memtape.lab.scenario_file: the policies that head the generators' and importer's files."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import pytest

from memtape.core.errors import BadInput
from memtape.lab.scenario_file import MAX_COUNT, header
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


@pytest.mark.parametrize(
    ("budget", "hot_n", "message"),
    [
        (0, 8, "--budget"),
        (2000, -1, "--hot-n"),
        (True, 8, "--budget"),
        (MAX_COUNT + 1, 8, "--budget"),
    ],
)
def test_a_header_the_loader_would_refuse_is_refused(budget: int, hot_n: int, message: str) -> None:
    with pytest.raises(BadInput, match=f"^{message} must be an integer"):
        header(budget, hot_n)


def test_a_header_at_the_limits_loads() -> None:
    text = scenario_file("c", {"name": "n"}, header(1, 0), [{"turn": "user", "text": "hi"}])
    compaction = parse_scenario(text, "gen.toml").policies.params()["compaction"]
    assert (1, 0) == (compaction["budget"], compaction["hot_n"])
