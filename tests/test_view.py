"""memtape.projections.view: the JSON-ready view at one point of a run."""

import json
from typing import Any

import pytest

from memtape.core.commands import AdvanceClock, WriteFact
from memtape.core.events import EpisodeRecorded, ProceduralRule, SemanticFact, TurnAdded
from memtape.core.state import EMPTY_WINDOW, INITIAL_STATE, SHORT_HOT, Fact
from memtape.policies.session import Policies, Session
from memtape.policies.store.forgetting import ImportanceRecencyAccess
from memtape.policies.store.generative_agents import GenerativeAgents
from memtape.policies.window.no_compaction import NoCompaction
from memtape.projections.text import render_view
from memtape.projections.view import (
    episode_data,
    fact_data,
    procedural_data,
    semantic_data,
    store_data,
    turn_data,
    view_data,
    window_data,
)
from memtape.reducers import fold
from memtape.scenarios import SHIPPED, load_scenario
from tests.blocked import blocked_session


def _session(name: str) -> Session:
    scenario = load_scenario(name)
    session = Session(scenario.policies)
    session.execute_all(scenario.steps)
    return session


@pytest.fixture(scope="module")
def sessions() -> dict[str, Session]:
    return {name: _session(name) for name in SHIPPED}


def _view(sessions: dict[str, Session], name: str, at: int | None = None) -> dict[str, Any]:
    run = sessions[name].run
    position = len(run) if at is None else at
    return view_data(run.state_at(position), position, sessions[name].policies)


class TestViewData:
    @pytest.mark.parametrize("name", SHIPPED)
    def test_is_json_ready(self, sessions: dict[str, Session], name: str) -> None:
        view = _view(sessions, name)

        assert view == json.loads(json.dumps(view))

    def test_at_is_the_position_it_was_given(self, sessions: dict[str, Session]) -> None:
        assert 7 == _view(sessions, "dana-facts", 7)["at"]

    def test_clock_is_the_states_clock(self, sessions: dict[str, Session]) -> None:
        assert (0.0, 6.0) == (
            _view(sessions, "dana-facts", 4)["clock"],
            _view(sessions, "dana-facts", 5)["clock"],
        )

    def test_no_policies_means_every_part_is_null(self) -> None:
        view = view_data(INITIAL_STATE, 0, Policies())

        assert {
            "at": 0,
            "clock": 0.0,
            "window": None,
            "store": None,
            "episodes": None,
            "semantic": None,
            "procedural": None,
        } == view

    @pytest.mark.parametrize(
        ("name", "expected"),
        [
            ("refund-desk", ["window"]),
            ("dana-facts", ["store"]),
            ("sleep-pass", ["store", "episodes", "semantic", "procedural"]),
        ],
    )
    def test_only_the_parts_a_scenario_uses_are_present(
        self, sessions: dict[str, Session], name: str, expected: list[str]
    ) -> None:
        view = _view(sessions, name)
        parts = ["window", "store", "episodes", "semantic", "procedural"]

        assert expected == [part for part in parts if view[part] is not None]

    def test_an_empty_store_is_an_empty_ranking_not_null(self) -> None:
        policies = Policies(forgetting=ImportanceRecencyAccess(4, 4.0, 0.1))

        assert {"capacity": 4, "ranking": [], "retired": [], "evicted": []} == view_data(
            INITIAL_STATE, 0, policies
        )["store"]


class TestWindowData:
    def test_without_a_compaction_policy_it_is_null(self) -> None:
        assert None is window_data(EMPTY_WINDOW, None)

    def test_the_empty_window(self, sessions: dict[str, Session]) -> None:
        compaction = sessions["refund-desk"].policies.compaction

        assert {
            "tokens": 0,
            "budget": 40,
            "over": False,
            "hot": [],
            "warm": [],
            "cold": {"turns": 0, "gist": "", "tokens": 0},
            "dropped": [],
            "recalled": [],
        } == window_data(EMPTY_WINDOW, compaction)

    def test_warm_items_name_the_turn_they_came_from(self, sessions: dict[str, Session]) -> None:
        warm = _view(sessions, "refund-desk", 11)["window"]["warm"]

        assert [2, 5] == [item["turn"] for item in warm]

    def test_hot_turns_say_whether_they_are_salient(self, sessions: dict[str, Session]) -> None:
        hot = _view(sessions, "refund-desk")["window"]["hot"]

        assert [(9, False), (10, True)] == [(t["turn"], t["salient"]) for t in hot]

    def test_a_hot_longer_than_short_hot_is_a_list_of_its_turns(self) -> None:
        turns = [TurnAdded(n, "user", f"turn {n}", 3, False) for n in range(1, SHORT_HOT + 3)]

        hot = json.loads(json.dumps(window_data(fold(turns).window, NoCompaction(40))))["hot"]

        assert [turn_data(turn) for turn in turns] == hot

    def test_turn_data(self) -> None:
        turn = TurnAdded(3, "tool", "lookup: ok", 3, True)

        assert {
            "turn": 3,
            "role": "tool",
            "text": "lookup: ok",
            "tokens": 3,
            "salient": True,
            "calls": [],
            "answers": [],
            "pinned": False,
        } == turn_data(turn)


class TestStoreData:
    def test_without_a_forgetting_policy_it_is_null(self) -> None:
        assert None is store_data(INITIAL_STATE, None)

    def test_each_ranked_fact_lists_its_factors(self, sessions: dict[str, Session]) -> None:
        ranking = _view(sessions, "dana-facts")["store"]["ranking"]

        assert [["importance", "recency", "access"]] * 4 == [list(f["factors"]) for f in ranking]

    def test_the_factors_are_also_fields_of_the_fact(self, sessions: dict[str, Session]) -> None:
        ranking = _view(sessions, "dana-facts")["store"]["ranking"]

        assert [f["factors"] for f in ranking] == [
            {name: f[name] for name in ("importance", "recency", "access")} for f in ranking
        ]

    def test_a_normalized_factor_does_not_hide_the_facts_importance(self) -> None:
        # Two facts: importance 0.8 and 0.2 normalize to 1 and 0.
        session = Session(Policies(forgetting=GenerativeAgents(4)))
        session.execute_all([WriteFact("a", "x", 0.8), WriteFact("b", "y", 0.2)])
        ranking = store_data(session.state, session.policies.forgetting)
        assert ranking is not None

        assert [(0.8, 1.0), (0.2, 0.0)] == [
            (f["importance"], f["factors"]["importance"]) for f in ranking["ranking"]
        ]

    @pytest.mark.parametrize(
        ("name", "factors"),
        [
            ("generative-agents", ["recency", "importance"]),
            ("memorybank", ["strength", "elapsed"]),
            ("lru", ["last_touch"]),
            ("lfu", ["reads"]),
            ("fifo", ["written_at"]),
        ],
    )
    def test_each_policy_shows_its_own_factors(self, name: str, factors: list[str]) -> None:
        policies = Policies.from_params({"forgetting": {"policy": name, "capacity": 3}})
        session = Session(policies)
        session.execute(WriteFact("a", "x", 0.8))
        ranking = store_data(session.state, policies.forgetting)
        assert ranking is not None

        assert [factors] == [list(f["factors"]) for f in ranking["ranking"]]

    @pytest.mark.parametrize("at", range(12))
    def test_each_score_is_the_product_of_its_factors(
        self, sessions: dict[str, Session], at: int
    ) -> None:
        ranking = _view(sessions, "dana-facts", at)["store"]["ranking"]

        assert [f["importance"] * f["recency"] * f["access"] for f in ranking] == [
            f["score"] for f in ranking
        ]

    @pytest.mark.parametrize("at", range(12))
    def test_the_ranking_is_highest_score_first(
        self, sessions: dict[str, Session], at: int
    ) -> None:
        scores = [f["score"] for f in _view(sessions, "dana-facts", at)["store"]["ranking"]]

        assert sorted(scores, reverse=True) == scores

    def test_access_is_one_plus_the_boost_per_read(self, sessions: dict[str, Session]) -> None:
        ranking = _view(sessions, "dana-facts", 7)["store"]["ranking"]

        assert [(2, 1 + 0.1 * 2), (0, 1.0), (0, 1.0), (0, 1.0)] == [
            (f["reads"], f["access"]) for f in ranking
        ]

    def test_a_retired_fact_says_when_and_by_what(self, sessions: dict[str, Session]) -> None:
        retired = _view(sessions, "dana-facts")["store"]["retired"]

        assert [(6.0, 5)] == [(f["retired_at"], f["superseded_by"]) for f in retired]

    def test_an_evicted_fact_says_when(self, sessions: dict[str, Session]) -> None:
        evicted = _view(sessions, "dana-facts")["store"]["evicted"]

        assert [6.0] == [f["evicted_at"] for f in evicted]

    def test_a_fact_is_written_at_the_clock(self, sessions: dict[str, Session]) -> None:
        ranking = _view(sessions, "dana-facts")["store"]["ranking"]

        assert {"contact": 6.0, "name": 0.0, "order": 0.0, "promo": 6.0} == {
            f["key"]: f["written_at"] for f in ranking
        }

    def test_fact_data(self) -> None:
        fact = Fact(3, "order", "ORD-3300", 0.7, 0.0, reads=1, last_read_at=2.0)

        assert {
            "id": 3,
            "key": "order",
            "text": "ORD-3300",
            "importance": 0.7,
            "reads": 1,
            "written_at": 0.0,
        } == fact_data(fact)


class TestMemoryData:
    def test_pending_episodes_in_order(self, sessions: dict[str, Session]) -> None:
        episodes = _view(sessions, "sleep-pass", 4)["episodes"]

        assert [1, 2, 3, 4] == [e["id"] for e in episodes]

    def test_episode_data(self) -> None:
        assert {"id": 2, "text": "a fee applies"} == episode_data(
            EpisodeRecorded(2, "a fee applies")
        )

    def test_semantic_data(self) -> None:
        fact = SemanticFact("user.name", "user.name = Dana", 0.9, 4)

        assert {
            "key": "user.name",
            "text": "user.name = Dana",
            "importance": 0.9,
            "episode": 4,
        } == semantic_data(fact)

    def test_procedural_data(self) -> None:
        assert {"text": "apply the fee", "episode": 2} == procedural_data(
            ProceduralRule("apply the fee", 2)
        )

    def test_distilled_facts_and_rules_name_their_episode(
        self, sessions: dict[str, Session]
    ) -> None:
        view = _view(sessions, "sleep-pass")

        assert ([4], [2]) == (
            [f["episode"] for f in view["semantic"]],
            [r["episode"] for r in view["procedural"]],
        )


class TestExpired:
    def _session(self) -> Session:
        session = Session(Policies(forgetting=ImportanceRecencyAccess(4, 4.0, 0.1)))
        session.execute(WriteFact("promo", "sale", 0.3, expires_at=5))
        return session

    def test_no_expired_list_while_nothing_expired(self) -> None:
        session = self._session()
        store = store_data(session.state, session.policies.forgetting)
        assert store is not None
        assert "expired" not in store

    def test_an_expired_fact_says_when_it_was_due_when_it_left_and_why(self) -> None:
        session = self._session()
        session.execute(AdvanceClock(7))
        store = store_data(session.state, session.policies.forgetting)
        assert store is not None
        assert [(1, 5.0, 7.0, "its own expires_at, due at t=5")] == [
            (f["id"], f["expires_at"], f["expired_at"], f["reason"]) for f in store["expired"]
        ]


class TestBlocks:
    def test_the_window_lists_each_block_with_its_size_and_version(self) -> None:
        session = blocked_session()
        window = view_data(session.state, len(session.run), session.policies)["window"]
        expected = {
            "label": "human",
            "value": "Name: Dana.\nLives in Porto.",
            "chars": 27,
            "limit": 60,
            "tokens": 5,
            "version": 3,
        }
        assert [expected] == window["blocks"]

    def test_a_window_without_blocks_has_no_blocks_key(self) -> None:
        assert "blocks" not in (window_data(EMPTY_WINDOW, NoCompaction(10)) or {})

    def test_show_prints_a_block_line_above_the_tiers(self) -> None:
        session = blocked_session()
        lines = list(render_view(view_data(session.state, 5, session.policies)))
        assert "  BLOCK human (v3, 27/60 chars): Name: Dana.\\nLives in Porto.  (5)" == lines[2]
