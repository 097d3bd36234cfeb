"""memtape.projections.audit: the life of a turn or a fact, with the numbers behind each step."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import json
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from memtape.core.commands import AddTurn, AdvanceClock, Query, ReadFact, WriteFact
from memtape.core.errors import BadInput
from memtape.core.events import Event, Evicted
from memtape.core.run import Run
from memtape.core.state import State
from memtape.policies.session import Policies, Session
from memtape.policies.store.forgetting import ImportanceRecencyAccess
from memtape.policies.window.compaction_records import CompactionRecord
from memtape.policies.window.recorded import RecordedCompaction
from memtape.policies.window.rolling_summary import RollingSummary
from memtape.policies.window.tiered import TieredCompaction
from memtape.projections.audit import (
    BlockTarget,
    FactTarget,
    KeyTarget,
    Life,
    TurnTarget,
    audit,
    life_data,
    parse_target,
    render_life,
)
from memtape.projections.audit import lives as seeking
from memtape.reducers import fold
from memtape.scenarios import load_scenario, parse_scenario
from tests.blocked import blocked_session


def _session(name: str) -> Session:
    scenario = load_scenario(name)
    session = Session(scenario.policies)
    session.execute_all(scenario.steps)
    return session


def _why(session: Session, target: str) -> Life:
    return audit(session.run, session.policies, parse_target(target))


def score(importance: float, age: float, reads: int) -> float:
    """The seed's formula with dana-facts' parameters (half_life 4, access_boost 0.1)."""
    recency: float = 0.5 ** (age / 4.0)
    return importance * recency * (1 + 0.1 * reads)


@pytest.fixture(scope="module")
def refund() -> Session:
    return _session("refund-desk")


@pytest.fixture(scope="module")
def dana() -> Session:
    return _session("dana-facts")


class TestParseTarget:
    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("turn:5", TurnTarget(5)),
            ("turn:12", TurnTarget(12)),
            ("3", FactTarget(3)),
            ("chitchat", KeyTarget("chitchat")),
            ("user.name", KeyTarget("user.name")),
            ("turn5", KeyTarget("turn5")),
            ("fact:session.topic", KeyTarget("session.topic")),
            ("fact:42", KeyTarget("42")),
            ("fact:turn:5", KeyTarget("turn:5")),
        ],
    )
    def test_turns_ids_and_keys(self, text: str, expected: Any) -> None:
        assert expected == parse_target(text)

    @pytest.mark.parametrize(
        ("text", "fragment"),
        [
            ("turn:x", "turn:N with N a whole number >= 1, got 'turn:x'"),
            ("turn:0", "turn:N with N a whole number >= 1, got 'turn:0'"),
            ("turn:-1", "turn:N with N a whole number >= 1, got 'turn:-1'"),
            ("turn:", "turn:N with N a whole number >= 1, got 'turn:'"),
            ("turn: 5", "turn:N with N a whole number >= 1, got 'turn: 5'"),
            ("", "got an empty string"),
            ("   ", "got an empty string"),
            ("0", "a fact id is a whole number >= 1, got '0'"),
        ],
    )
    def test_impossible_targets_are_bad_input(self, text: str, fragment: str) -> None:
        with pytest.raises(BadInput) as raised:
            parse_target(text)

        assert fragment in str(raised.value)


class TestWhyEvictedChitchat:
    def test_one_subject_fact_4(self, dana: Session) -> None:
        life = _why(dana, "chitchat")

        assert [("fact", 4)] == [(s.kind, s.id) for s in life.subjects]

    def test_written_then_evicted(self, dana: Session) -> None:
        (subject,) = _why(dana, "chitchat").subjects

        assert [(4, 4, "FactWritten"), (11, 9, "Evicted")] == [
            (s.at, s.step, s.type) for s in subject.steps
        ]

    def test_written_at_t0_with_importance_0_2(self, dana: Session) -> None:
        written = _why(dana, "chitchat").subjects[0].steps[0]

        assert ("written at t=0, importance 0.2", {"importance": 0.2, "clock": 0.0}) == (
            written.what,
            written.numbers,
        )

    def test_the_eviction_line_reads_the_lowest_of_5_actives(self, dana: Session) -> None:
        lines = list(render_life(_why(dana, "chitchat")))

        assert (
            "   11  step    9  Evicted             evicted at t=6, score 0.0707, the lowest of "
            "5 actives: contact 0.6000, name 0.3818, order 0.2475, promo 0.1500"
        ) == lines[2]

    def test_the_rendered_life(self, dana: Session) -> None:
        assert [
            "fact 4 'chitchat': Dana mentioned that it is raining today.",
            "    4  step    4  FactWritten         written at t=0, importance 0.2",
            "   11  step    9  Evicted             evicted at t=6, score 0.0707, the lowest of "
            "5 actives: contact 0.6000, name 0.3818, order 0.2475, promo 0.1500",
            " " * 37 + " = importance 0.2000 × recency 0.3536 × access 1.0000",
            "       now evicted (since t=6, with score 0.0707)",
        ] == list(render_life(_why(dana, "chitchat")))

    def test_json_scores_every_active_exactly_by_the_formula(self, dana: Session) -> None:
        evicted = life_data(_why(dana, "chitchat"))["subjects"][0]["steps"][1]["numbers"]

        assert [
            {"id": 5, "key": "contact", "score": score(0.6, 0, 0)},
            {"id": 1, "key": "name", "score": score(0.9, 6, 2)},
            {"id": 3, "key": "order", "score": score(0.7, 6, 0)},
            {"id": 6, "key": "promo", "score": score(0.15, 0, 0)},
            {"id": 4, "key": "chitchat", "score": score(0.2, 6, 0)},
        ] == evicted["actives"]

    def test_json_score_and_factors_of_the_evicted_fact(self, dana: Session) -> None:
        evicted = life_data(_why(dana, "chitchat"))["subjects"][0]["steps"][1]["numbers"]

        assert (
            score(0.2, 6, 0),
            {"importance": 0.2, "recency": 0.5**1.5, "access": 1.0},
            True,
            4,
        ) == (evicted["score"], evicted["factors"], evicted["lowest"], evicted["capacity"])

    def test_ends_evicted_at_t6(self, dana: Session) -> None:
        now = _why(dana, "chitchat").subjects[0].now

        assert ("evicted", {"status": "evicted", "ended_at": 6.0, "score": score(0.2, 6, 0)}) == (
            now.status,
            dict(now.numbers),
        )

    def test_by_id_is_the_same_life_as_by_key(self, dana: Session) -> None:
        assert _why(dana, "chitchat").subjects == _why(dana, "4").subjects


class TestWhyScoresAreRecomputed:
    def test_a_hand_edited_eviction_score_is_shown_beside_the_recomputed_one(
        self, dana: Session
    ) -> None:
        run = Run(fold)
        for step, command in enumerate(dana.run.commands, start=1):
            events: list[Event] = list(dana.run.events[slice(*dana.run.batch(step))])
            events = [Evicted(e.id, 0.5) if isinstance(e, Evicted) else e for e in events]
            run.append(command, events)
        evicted = audit(run, dana.policies, KeyTarget("chitchat")).subjects[0].steps[1]

        assert (score(0.2, 6, 0), 0.5, True) == (
            evicted.numbers["score"],
            evicted.numbers["recorded_score"],
            evicted.what.endswith("promo 0.1500 (the log recorded 0.5000)"),
        )


class TestWhyContact:
    def test_both_facts_that_had_the_key_in_id_order(self, dana: Session) -> None:
        life = _why(dana, "contact")

        assert [2, 5] == [s.id for s in life.subjects]

    def test_the_email_fact_is_written_then_superseded_by_the_phone_fact(
        self, dana: Session
    ) -> None:
        email = _why(dana, "contact").subjects[0]

        assert [
            ("FactWritten", "written at t=0, importance 0.6", {"importance": 0.6, "clock": 0.0}),
            (
                "Superseded",
                "superseded at t=6 by fact 5 ('contact'): retired, kept, never ranked",
                {"by": 5},
            ),
        ] == [(s.type, s.what, s.numbers) for s in email.steps]

    def test_the_email_fact_ends_retired(self, dana: Session) -> None:
        email = _why(dana, "contact").subjects[0]

        assert "now retired (since t=6, superseded by fact 5)" == email.now.what

    def test_the_phone_fact_is_written_at_t6_and_ranks_first(self, dana: Session) -> None:
        phone = _why(dana, "contact").subjects[1]

        assert (
            [(8, "FactWritten", "written at t=6, importance 0.6")],
            {
                "status": "active",
                "score": 0.6,
                "factors": {"importance": 0.6, "recency": 1.0, "access": 1.0},
                "rank": 1,
                "of": 4,
            },
        ) == ([(s.at, s.type, s.what) for s in phone.steps], dict(phone.now.numbers))


class TestWhyReads:
    def test_each_read_counts_and_scores(self, dana: Session) -> None:
        name = _why(dana, "name").subjects[0]

        assert [(1, score(0.9, 6, 1)), (2, score(0.9, 6, 2))] == [
            (s.numbers["reads"], s.numbers["score"]) for s in name.steps if s.type == "FactRead"
        ]

    def test_the_read_line_gives_the_count_and_the_score(self, dana: Session) -> None:
        name = _why(dana, "name").subjects[0]

        assert "read at t=6, 2 reads now, score 0.3818" == name.steps[2].what


class TestWhyQueried:
    def test_a_query_that_returned_the_fact_is_a_step_of_its_life(self) -> None:
        session = Session(Policies(forgetting=ImportanceRecencyAccess(4, 4.0, 0.1)))
        session.execute_all([WriteFact("a", "x", 0.2), WriteFact("b", "y", 0.9)])
        session.execute(Query("who", "a", 2))

        step = _why(session, "a").subjects[0].steps[-1]

        assert ("Queried", {"rank": 2, "score": 0.2, "reads": 1, "k": 2}) == (
            step.type,
            step.numbers,
        )
        assert "returned by query 'who' at t=0, rank 2 of 2 (top 2), score 0.2000, 1 read now" == (
            step.what
        )

    def test_a_query_that_did_not_return_the_fact_is_not_in_its_life(self) -> None:
        session = Session(Policies(forgetting=ImportanceRecencyAccess(4, 4.0, 0.1)))
        session.execute_all([WriteFact("a", "x", 0.2), WriteFact("b", "y", 0.9)])
        session.execute(Query("who", "b", 1))

        assert ["FactWritten"] == [s.type for s in _why(session, "a").subjects[0].steps]


class TestWhyTurn5:
    def test_arrived_stayed_hot_folded_warm_pushed_cold(self, refund: Session) -> None:
        (subject,) = _why(refund, "turn:5").subjects

        assert [
            (6, 5, "TurnAdded"),
            (8, 6, "CompactionTriggered"),
            (11, 8, "CompactionTriggered"),
            (15, 10, "CompactionTriggered"),
        ] == [(s.at, s.step, s.type) for s in subject.steps]

    def test_the_rendered_life(self, refund: Session) -> None:
        assert [
            "turn 5 (tool, salient): tool: policy search: after the window a 10% restocking "
            "fee applies.",
            "    6  step    5  TurnAdded           arrived with 11 tokens: window 29 → 40, "
            "budget 40, not over",
            "    8  step    6  CompactionTriggered turn 6's compaction: stayed HOT (kept "
            "verbatim: 5, 6), window 49 → 28, budget 40",
            "   11  step    8  CompactionTriggered turn 8's compaction: folded to WARM "
            "(10 tokens), window 49 → 39, budget 40",
            "   15  step   10  CompactionTriggered turn 10's compaction: pushed COLD "
            "(gist '[2 earlier turns summarized]'), window 47 → 32, budget 40",
            "       now COLD (gist '[2 earlier turns summarized]'); window 32 tokens",
        ] == list(render_life(_why(refund, "turn:5")))

    def test_arrival_numbers(self, refund: Session) -> None:
        arrived = _why(refund, "turn:5").subjects[0].steps[0]

        assert {
            "tokens": 11,
            "window_before": 29,
            "window_after": 40,
            "budget": 40,
            "over": False,
        } == arrived.numbers

    def test_each_compaction_moves_it_one_tier_down(self, refund: Session) -> None:
        steps = _why(refund, "turn:5").subjects[0].steps[1:]

        assert [(6, "hot", "hot"), (8, "hot", "warm"), (10, "warm", "cold")] == [
            (s.numbers["trigger"], s.numbers["tier_before"], s.numbers["tier_after"]) for s in steps
        ]

    def test_folded_to_warm_as_10_tokens(self, refund: Session) -> None:
        folded = _why(refund, "turn:5").subjects[0].steps[2]

        assert (10, 49, 39) == (
            folded.numbers["warm_tokens"],
            folded.numbers["window_before"],
            folded.numbers["window_after"],
        )

    def test_pushed_cold_with_the_gist_for_2_turns(self, refund: Session) -> None:
        pushed = _why(refund, "turn:5").subjects[0].steps[3]

        assert ("[2 earlier turns summarized]", 47, 32, 40, False) == (
            pushed.numbers["gist"],
            pushed.numbers["window_before"],
            pushed.numbers["window_after"],
            pushed.numbers["budget"],
            pushed.numbers["over"],
        )

    def test_ends_cold(self, refund: Session) -> None:
        now = _why(refund, "turn:5").subjects[0].now

        assert ("cold", {"tier": "cold", "gist": "[2 earlier turns summarized]"}) == (
            now.status,
            dict(now.numbers),
        )


class TestWhyTurn1:
    def test_dropped_as_chatter_at_turn_4s_compaction(self, refund: Session) -> None:
        assert [
            "turn 1 (user, chatter): user: Hi, this is Dana. Can you look up order ORD-3300?",
            "    1  step    1  TurnAdded           arrived with 11 tokens: window 0 → 11, "
            "budget 40, not over",
            "    5  step    4  CompactionTriggered turn 4's compaction: dropped as chatter, "
            "window 41 → 29, budget 40",
            "       now DROPPED; window 32 tokens",
        ] == list(render_life(_why(refund, "turn:1")))


class TestWhyOtherTurns:
    def test_a_turn_that_arrives_over_budget_says_so(self, refund: Session) -> None:
        arrived = _why(refund, "turn:4").subjects[0].steps[0]

        assert (41, True) == (arrived.numbers["window_after"], arrived.numbers["over"])

    def test_a_turn_still_hot_ends_hot(self, refund: Session) -> None:
        subject = _why(refund, "turn:10").subjects[0]

        assert (["TurnAdded", "CompactionTriggered"], "hot") == (
            [s.type for s in subject.steps],
            subject.now.status,
        )

    def test_a_warm_turn_ends_warm_with_its_tokens(self, refund: Session) -> None:
        now = _why(refund, "turn:8").subjects[0].now

        assert {"tier": "warm", "warm_tokens": 9} == dict(now.numbers)

    def test_folded_and_pushed_cold_in_one_compaction(self) -> None:
        session = Session(Policies(compaction=TieredCompaction(budget=10, hot_n=1)))
        session.execute_all([AddTurn("tool", "a b c d e"), AddTurn("user", "f g h i j")])
        pushed = _why(session, "turn:1").subjects[0].steps[1]

        assert (
            "turn 2's compaction: folded to WARM (5 tokens), then pushed COLD "
            "(gist '[1 earlier turn summarized]'), window 12 → 10, budget 10"
        ) == pushed.what


class TestSummarized:
    """A turn a summarizing policy folds is told as folded into the summary, not as COLD
    under an empty gist."""

    def test_a_recorded_boundary_folds_the_turns_before_into_its_summary(self) -> None:
        policy = RecordedCompaction(1000, (CompactionRecord(3, "the user wants a refund"),))
        session = Session(Policies(compaction=policy))
        session.execute_all([AddTurn("user", "a b"), AddTurn("tool", "c d"), AddTurn("user", "e")])
        subject = _why(session, "turn:1").subjects[0]

        assert (
            "turn 3's compaction: folded into the summary (WARM under turn 2, 5 tokens) "
            "and pushed COLD, window 8 → 7, budget 1000",
            "now COLD (no gist); window 7 tokens",
        ) == (subject.steps[1].what, subject.now.what)

    def test_an_empty_recorded_summary_says_nothing_stands_for_the_turn(self) -> None:
        policy = RecordedCompaction(1000, (CompactionRecord(2, ""),))
        session = Session(Policies(compaction=policy))
        session.execute_all([AddTurn("user", "a b"), AddTurn("user", "c")])
        step = _why(session, "turn:1").subjects[0].steps[1]

        assert step.what.startswith(
            "turn 2's compaction: pushed COLD, with no summary or gist standing for it"
        )

    def test_a_rolling_summary_s_earlier_summary_folds_into_the_next(self) -> None:
        session = Session(Policies(compaction=RollingSummary(budget=12, keep=1)))
        session.execute_all([AddTurn("tool", f"result {n} x y z") for n in range(1, 7)])
        steps = _why(session, "turn:1").subjects[0].steps
        compactions = [step.what for step in steps if step.type == "CompactionTriggered"]

        assert compactions
        assert all("folded into the summary (WARM under turn" in what for what in compactions)


class TestUnknownTargets:
    @pytest.mark.parametrize(
        ("name", "target", "message"),
        [
            ("refund-desk", "turn:11", "no turn 11: the run has turns 1..10"),
            ("dana-facts", "turn:1", "no turn 1: the run has no turns"),
            ("dana-facts", "weather", "no fact has key 'weather'"),
            ("dana-facts", "7", "no fact has id 7: the run has facts 1..6"),
            ("refund-desk", "3", "no fact has id 3: the run has no facts"),
        ],
    )
    def test_bad_input_names_what_exists(self, name: str, target: str, message: str) -> None:
        session = _session(name)

        with pytest.raises(BadInput) as raised:
            _why(session, target)

        assert message == str(raised.value)

    def test_a_fact_needs_a_forgetting_policy_to_score_it(self, dana: Session) -> None:
        with pytest.raises(BadInput) as raised:
            audit(dana.run, Policies(), KeyTarget("name"))

        assert "needs a [forgetting] policy" in str(raised.value)


class TestLifeData:
    def test_survives_json_exactly(self, dana: Session) -> None:
        data = life_data(_why(dana, "contact"))

        assert data == json.loads(json.dumps(data))

    def test_field_names(self, refund: Session) -> None:
        data = life_data(_why(refund, "turn:5"))
        subject = data["subjects"][0]

        assert (
            {"kind": "turn", "turn": 5},
            ["kind", "id", "label", "steps", "now"],
            ["at", "step", "type", "clock", "what", "numbers"],
            ["status", "what", "numbers"],
        ) == (
            data["target"],
            list(subject),
            list(subject["steps"][0]),
            list(subject["now"]),
        )

    @pytest.mark.parametrize(
        ("target", "expected"),
        [("4", {"kind": "fact", "id": 4}), ("chitchat", {"kind": "key", "key": "chitchat"})],
    )
    def test_fact_targets(self, dana: Session, target: str, expected: dict[str, Any]) -> None:
        assert expected == life_data(_why(dana, target))["target"]


def _counting(counter: list[int], inner: Callable[[Sequence[Event], State], State]) -> Any:
    def counted(events: Sequence[Event], state: State) -> State:
        counter[0] += len(events)
        return inner(events, state)

    return counted


class TestCost:
    def test_a_fact_read_on_every_step_costs_one_pass(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        folded = [0]
        policies = Policies(forgetting=ImportanceRecencyAccess(4, 4.0, 0.1))
        run = Run(_counting(folded, fold), snapshot_every=16)
        session = Session(policies, run=run)
        session.execute(WriteFact("name", "Dana", 0.9))
        session.execute(AdvanceClock(1))
        session.execute_all(ReadFact(key="name") for _ in range(300))
        monkeypatch.setattr(seeking, "fold", _counting(folded, fold))
        folded[0] = 0

        life = audit(run, policies, KeyTarget("name"))

        assert (301, True) == (len(life.subjects[0].steps), folded[0] <= len(run))

    def test_a_late_turn_seeks_near_it_instead_of_folding_from_the_start(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        folded = [0]
        policies = Policies(compaction=TieredCompaction(budget=10, hot_n=1))
        run = Run(_counting(folded, fold), snapshot_every=16)
        session = Session(policies, run=run)
        session.execute_all(AddTurn("user", "a b c d") for _ in range(500))
        monkeypatch.setattr(seeking, "fold", _counting(folded, fold))
        folded[0] = 0

        life = audit(run, policies, TurnTarget(400))

        assert (["arrived", "dropped"], True) == (
            [s.numbers.get("tier_after", "arrived") for s in life.subjects[0].steps],
            folded[0] <= 16 + 2,
        )


class TestWhyClearedInPlace:
    """A tool result cleared in place stays HOT: why tells the clearing and what it reads."""

    def _cleared(self) -> Session:
        session = Session(
            Policies.from_params(
                {"compaction": {"policy": "clear-tool-results", "budget": 20, "keep": 1}}
            )
        )
        session.execute_all(
            [
                AddTurn("assistant", "get_order(42)", calls=("c1",)),
                AddTurn("tool", " ".join(["row"] * 10), answers=("c1",)),
                AddTurn("assistant", "get_order(43)", calls=("c2",)),
                AddTurn("tool", "ok", answers=("c2",)),
                AddTurn("user", "and the third?"),
                AddTurn("assistant", "get_order(44)", calls=("c3",)),
                AddTurn("tool", "none found", answers=("c3",)),
                AddTurn("user", "thanks"),
            ]
        )
        return session

    def test_the_clearing_is_a_step_and_the_turn_ends_hot_and_cleared(self) -> None:
        subject = _why(self._cleared(), "turn:2").subjects[0]
        clearing = subject.steps[-1]
        assert (
            "cleared in place: stays HOT, reading '[tool result cleared]' (3 tokens)"
            in clearing.what,
            3,
            "hot",
            "now HOT, cleared in place (3 tokens)",
        ) == (
            True,
            clearing.numbers["cleared_tokens"],
            subject.now.status,
            subject.now.what.split(";")[0],
        )


class TestWhyDistilled:
    """A semantic fact a consolidation wrote names the episode and the consolidation."""

    def test_the_write_names_its_episode_and_consolidation(self) -> None:
        life = _why(_session("sleep-pass"), "user.name")
        (written,) = [s for s in life.subjects[0].steps if s.type == "FactWritten"]

        assert (
            "written at t=0, importance 0.9; distilled from episode 4 "
            "('The user confirmed their name is Dana.') by the consolidation at event 5"
        ) == written.what
        assert (4, 5) == (written.numbers["episode"], written.numbers["consolidated_at"])

    def test_a_fact_the_user_wrote_names_no_episode(self, dana: Session) -> None:
        life = _why(dana, "chitchat")
        (written,) = [s for s in life.subjects[0].steps if s.type == "FactWritten"]

        assert "episode" not in written.numbers
        assert "distilled" not in written.what


class TestWhyExpired:
    SCENARIO = """
[forgetting]
policy = "importance-recency-access"
capacity = 4
ttl = {"session.*" = 3600}

[[step]]
write = "session.topic"
text = "ORD-3300"
importance = 0.6

[[step]]
advance = 4000
"""

    def test_the_write_says_when_and_the_expiry_why(self) -> None:
        scenario = parse_scenario(self.SCENARIO, "s.toml")
        session = Session(scenario.policies)
        session.execute_all(scenario.steps)
        life = _why(session, "fact:session.topic")
        (subject,) = life.subjects
        assert [
            "written at t=0, importance 0.6, to expire at t=3600 (by ttl 'session.*')",
            "expired at t=4000: ttl 3600 for keys 'session.*' from its write at t=0, due at "
            "t=3600; kept, never ranked again",
        ] == [step.what for step in subject.steps]

    def test_now_says_expired_and_why(self) -> None:
        scenario = parse_scenario(self.SCENARIO, "s.toml")
        session = Session(scenario.policies)
        session.execute_all(scenario.steps)
        (subject,) = _why(session, "fact:session.topic").subjects
        assert (
            "expired",
            "ttl 3600 for keys 'session.*' from its write at t=0, due at t=3600",
        ) == (
            subject.now.status,
            subject.now.numbers["reason"],
        )


class TestWhyBlock:
    def test_block_label_parses_as_a_block(self) -> None:
        assert BlockTarget("human") == parse_target("block:human")

    def test_each_version_is_a_step_with_what_it_cost_the_window(self) -> None:
        life = _why(blocked_session(), "block:human")
        expected = [
            "created, version 1: Name: Dana.  (11/60 characters, 2 tokens; window 0 → 2)",
            "appended to, version 2: Name: Dana.\\nLives in Lisbon.  "
            "(28/60 characters, 5 tokens; window 15 → 18)",
            "found and replaced in, version 3: Name: Dana.\\nLives in Porto.  "
            "(27/60 characters, 5 tokens; window 18 → 18)",
        ]
        assert expected == [step.what for step in life.subjects[0].steps]

    def test_it_ends_pinned_in_the_window(self) -> None:
        now = _why(blocked_session(), "block:human").subjects[0].now
        assert ("pinned", {"version": 3, "tokens": 5, "chars": 27}) == (now.status, now.numbers)

    def test_the_json_names_the_target_by_its_label(self) -> None:
        data = life_data(_why(blocked_session(), "block:human"))
        assert ({"kind": "block", "label": "human"}, "block") == (
            data["target"],
            data["subjects"][0]["kind"],
        )

    def test_an_unknown_label_is_one_line_naming_the_blocks(self) -> None:
        with pytest.raises(
            BadInput, match=r"no memory block is labelled 'persona' \(blocks: 'human'\)"
        ):
            _why(blocked_session(), "block:persona")
