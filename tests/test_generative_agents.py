"""memtape.policies.store.generative_agents: Park et al.'s retrieval score as a forgetting policy.

score = w_recency x recency' + w_importance x importance' (+ w_relevance x relevance' for a
query), each primed factor min-max normalized over the active facts; recency = decay **
(now - last access).
"""

# Tests read `assert expected == actual`, which SIM300 would turn around.

from collections.abc import Sequence

import pytest

from memtape.core.commands import AdvanceClock, Command, Query, ReadFact, WriteFact
from memtape.core.errors import BadInput
from memtape.core.events import Evicted, FactWritten, Queried
from memtape.core.state import Fact
from memtape.policies.plumbing.promises import (
    CAPACITY,
    EVICTS_WEAKEST,
    EXPIRES,
    SUPERSEDES,
    VALID_AS_OF,
)
from memtape.policies.session import Policies, Session
from memtape.policies.store.generative_agents import GenerativeAgents, min_max

POLICY = GenerativeAgents(capacity=5)
R100 = 0.995**100.0
"""The raw recency of a fact last touched 100 time units ago."""


def _session(*commands: Command, policy: GenerativeAgents = POLICY) -> Session:
    session = Session(Policies(forgetting=policy))
    session.execute_all(commands)
    return session


def _three() -> list[Command]:
    """a (0.75) and b (0.25) at t=0, then c (0.5) at t=100."""
    return [
        WriteFact("name", "Dana", 0.75),
        WriteFact("contact", "Dana prefers email", 0.25),
        AdvanceClock(100.0),
        WriteFact("order", "ORD-3300", 0.5),
    ]


class TestMinMax:
    def test_values_are_scaled_onto_0_1(self) -> None:
        assert [0.0, 1.0, 0.5] == min_max([2.0, 4.0, 3.0])

    def test_equal_values_are_all_one_half(self) -> None:
        assert [0.5, 0.5] == min_max([0.7, 0.7])

    def test_nothing_scales_to_nothing(self) -> None:
        assert [] == min_max([])


class TestRanking:
    def test_hand_computed_scores_at_t100(self) -> None:
        # recency: a, b = 0.995 ** 100, c = 1 -> normalized 0, 0, 1
        # importance: 0.75, 0.25, 0.5 -> normalized 1, 0, 0.5
        # score: a = 0 + 1 = 1, b = 0 + 0 = 0, c = 1 + 0.5 = 1.5
        session = _session(*_three())
        ranking = POLICY.rank(session.state.store, session.state.clock)

        assert [(3, 1.5), (1, 1.0), (2, 0.0)] == [(s.fact.id, s.score) for s in ranking]

    def test_each_ranked_fact_shows_its_normalized_factors(self) -> None:
        session = _session(*_three())
        ranking = POLICY.rank(session.state.store, session.state.clock)

        assert [
            {"recency": 1.0, "importance": 0.5},
            {"recency": 0.0, "importance": 1.0},
            {"recency": 0.0, "importance": 0.0},
        ] == [s.factors for s in ranking]

    def test_recency_decays_per_time_unit_since_the_last_access(self) -> None:
        fact = Fact(1, "k", "v", 0.5, 0.0)

        assert 0.995**40.0 == POLICY.recency(fact, 40.0)

    def test_a_read_touches(self) -> None:
        session = _session(*_three(), ReadFact(key="contact"))
        fact = session.state.store.facts[2]

        assert (1.0, R100) == (
            POLICY.recency(fact, 100.0),
            POLICY.recency(session.state.store.facts[1], 100.0),
        )

    def test_one_active_fact_scores_one_half_per_factor(self) -> None:
        session = _session(WriteFact("a", "x", 0.3))

        assert [1.0] == [s.score for s in POLICY.rank(session.state.store, 0.0)]

    def test_weights_scale_each_normalized_factor(self) -> None:
        # Importance weighs 3: a = 0 + 3 x 1 = 3, c = 1 + 3 x 0.5 = 2.5, b = 0.
        policy = GenerativeAgents(5, importance_weight=3.0)
        session = _session(*_three(), policy=policy)

        assert [(1, 3.0), (3, 2.5), (2, 0.0)] == [
            (s.fact.id, s.score) for s in policy.rank(session.state.store, 100.0)
        ]

    def test_the_raw_score_is_the_weighted_sum_before_normalization(self) -> None:
        fact = Fact(1, "k", "v", 0.25, 0.0)

        assert R100 + 0.25 == POLICY.score(fact, 100.0).score


class TestQueries:
    def test_relevance_joins_the_sum_when_a_query_carries_text(self) -> None:
        # "contact email": b holds both words (overlap 1), a and c none -> normalized 1, 0, 0.
        # With relevance weighing 2: b = 0 + 0 + 2 = 2 tops c = 1.5 and a = 1.
        policy = GenerativeAgents(5, relevance_weight=2.0)
        session = _session(*_three(), policy=policy)

        (event,) = session.execute(Query("contact email", "contact", 2))

        assert Queried("contact email", "contact", 2, (2, 3), (2.0, 1.5)) == event

    def test_a_query_without_text_ranks_by_recency_and_importance(self) -> None:
        session = _session(*_three())

        (event,) = session.execute(Query("", "contact", 1))

        assert Queried("", "contact", 1, (3,), (1.5,)) == event

    def test_the_relevance_factor_shows_in_a_query_ranking(self) -> None:
        session = _session(*_three())
        ranking = POLICY.rank(session.state.store, 100.0, "contact email")

        assert {"recency", "importance", "relevance"} == set(ranking[0].factors)

    def test_jaccard_relevance_can_be_chosen(self) -> None:
        # "dana": a {name, dana} -> 1/2, b {contact, dana, prefers, email} -> 1/4, c 0.
        policy = GenerativeAgents(5, relevance="jaccard")
        session = _session(*_three(), policy=policy)
        ranking = policy.rank(session.state.store, 100.0, "dana")

        assert {1: 1.0, 2: 0.5, 3: 0.0} == {s.fact.id: s.factors["relevance"] for s in ranking}

    def test_a_returned_fact_is_touched_at_the_query(self) -> None:
        session = _session(*_three(), AdvanceClock(150.0), Query("", "", 1))

        assert 150.0 == session.state.store.facts[3].last_read_at


class TestEviction:
    def test_the_ranking_decides_not_the_raw_score(self) -> None:
        # y (1.0) at t=0, z (0.2) at t=5, x (0.0) at t=10, capacity 2. Raw scores put x
        # lowest (1.0 + 0.0); normalized, z is lowest: its recency sits between, scaled
        # (0.995 ** 5 - 0.995 ** 10) / (1 - 0.995 ** 10), and its importance is 0.2.
        policy = GenerativeAgents(2)
        session = _session(
            WriteFact("y", "y", 1.0),
            AdvanceClock(5.0),
            WriteFact("z", "z", 0.2),
            AdvanceClock(10.0),
            policy=policy,
        )
        z_recency = (0.995**5.0 - 0.995**10.0) / (1.0 - 0.995**10.0)

        events = session.execute(WriteFact("x", "x", 0.0))

        assert (FactWritten(3, "x", "x", 0.0), Evicted(2, z_recency + 0.2)) == events

    def test_the_evicted_fact_is_the_last_of_the_ranking_just_before(self) -> None:
        policy = GenerativeAgents(2)
        session = _session(*_three()[:3], policy=policy)
        before = session.state
        session.execute(WriteFact("order", "ORD-3300", 0.5))
        (evicted,) = [e for e in session.run.events if isinstance(e, Evicted)]
        store = before.store
        store_with_new = session.run.state_at(len(session.run) - 1).store

        assert (2, store.facts[2].key) == (evicted.id, "contact")
        assert evicted.id == policy.rank(store_with_new, 100.0)[-1].fact.id


class TestParameters:
    def test_capacity_alone_builds_it_with_the_defaults(self) -> None:
        policy = GenerativeAgents.from_params({"capacity": 3}, "here")

        assert GenerativeAgents(3, 0.995, 1.0, 1.0, 1.0, "overlap", "key") == policy

    def test_params_read_back_to_the_same_policy(self) -> None:
        policy = GenerativeAgents(3, 0.9, 0.5, 2.0, 1.5, "jaccard", "add-only")
        data = policy.params()
        del data["policy"]

        assert policy == GenerativeAgents.from_params(data, "here")

    @pytest.mark.parametrize(
        ("data", "problem"),
        [
            ({"decay": 0}, r"decay must be a number in \(0, 1\]"),
            ({"decay": 1.5}, r"decay must be a number in \(0, 1\]"),
            ({"recency_weight": -1}, r"recency_weight must be a number in \[0, 1e\+06\]"),
            ({"relevance": "cosine"}, "relevance must be one of overlap, jaccard, got 'cosine'"),
            ({"supersession": "never"}, "supersession must be one of key, add-only"),
        ],
        ids=repr,
    )
    def test_an_impossible_parameter_is_named_with_its_place(
        self, data: dict[str, object], problem: str
    ) -> None:
        with pytest.raises(BadInput, match=rf"^here: {problem}"):
            GenerativeAgents.from_params({"capacity": 3, **data}, "here")

    @pytest.mark.parametrize(
        ("supersession", "promises"),
        [
            ("key", {CAPACITY, EVICTS_WEAKEST, EXPIRES, SUPERSEDES, VALID_AS_OF}),
            ("add-only", {CAPACITY, EVICTS_WEAKEST, EXPIRES, VALID_AS_OF}),
        ],
    )
    def test_promises(self, supersession: str, promises: Sequence[str]) -> None:
        assert frozenset(promises) == GenerativeAgents(3, supersession=supersession).promises
