"""The viewer's data: tables once, one small delta per event (memtape/viewer/payload.py).

That the page rebuilds ``show --json`` from these deltas at every event is
proven in the browser (tests/test_viewer_browser.py); here, their shape.
"""

from pathlib import Path

import attrs
import pytest

from memtape.core.commands import AddTurn, Query
from memtape.core.errors import BadInput
from memtape.core.events import (
    EVENT_TYPES,
    ClockAdvanced,
    CompactionTriggered,
    Queried,
    TurnAdded,
)
from memtape.core.state import SHORT_HOT, State
from memtape.policies.plumbing.protocols import CompactionPolicy
from memtape.policies.session import Policies, Session
from memtape.policies.window.no_compaction import NoCompaction
from memtape.policies.window.sliding_window import SlidingWindow
from memtape.policies.window.tool_clearing import ClearToolResults
from memtape.projections.metrics import compaction_metrics
from memtape.scenarios import load_scenario
from memtape.viewer import payload
from memtape.viewer.payload import (
    PayloadBuilder,
    event_row,
    run_payload,
    shift_append,
    state_delta,
)
from tests.agent_session import TURNS
from tests.blocked import blocked_session

QUERIES = Path(__file__).parent / "fixtures" / "dana-queries.toml"


def simulated(name: str, *settings: str) -> Session:
    scenario = load_scenario(name)
    session = Session(scenario.policies.with_settings(settings) if settings else scenario.policies)
    session.execute_all(scenario.steps)
    return session


class TestShiftAppend:
    @pytest.mark.parametrize(
        ("before", "after", "expected"),
        [
            ([1, 2, 3], [2, 3, 4], [1, [4]]),
            ([1, 2], [1, 2, 3], [0, [3]]),
            ([], [5], [0, [5]]),
            ([1, 2], [], [2, []]),
            ([1, 2], [3], [2, [3]]),
            ([1, 2, 3], [3], [2, []]),
        ],
    )
    def test_after_is_before_shifted_then_appended(
        self, before: list[int], after: list[int], expected: list[object]
    ) -> None:
        shift, added = shift_append(before, after)
        assert expected == [shift, added]
        assert after == before[shift:] + added


class TestRunPayload:
    def test_one_frame_and_one_row_per_event_and_each_text_once(self) -> None:
        session = simulated("refund-desk")
        data = run_payload(session.run, session.policies_at, "refund-desk")
        run = session.run
        assert len(run) == len(data["frames"]) == len(data["rows"])
        turns = [e for e in run.events if isinstance(e, TurnAdded)]
        assert [[t.role, t.text, t.tokens, t.salient] for t in turns] == data["turns"]
        assert [run.batch(step)[1] for step in range(1, run.steps + 1)] == data["ends"]

    @pytest.mark.parametrize("policy", ["tiered", "none", "sliding-window", "rolling-summary"])
    def test_hot_rebuilt_from_the_deltas_is_hot_at_every_event(self, policy: str) -> None:
        """A turn ships as appended to HOT without comparing HOT; the rebuilt HOT is right."""
        session = simulated("refund-desk", f"compaction.policy={policy}")
        data = run_payload(session.run, session.policies_at, "refund-desk")
        hot: list[int] = []
        for at, frame in enumerate(data["frames"], start=1):
            if "h" in frame:
                shift, added = frame["h"]
                hot = hot[shift:] + added
            assert [t.turn for t in session.run.state_at(at).window.hot] == hot

    @pytest.mark.parametrize(
        "compaction",
        [NoCompaction(40), SlidingWindow(6 * (SHORT_HOT + 20)), ClearToolResults(100)],
        ids=["none", "sliding-window", "clear-tool-results"],
    )
    def test_a_hot_longer_than_short_hot_is_rebuilt_from_the_deltas(
        self, compaction: CompactionPolicy
    ) -> None:
        """Past ``SHORT_HOT`` turns HOT is a ``Seq``, compared and walked as the tuple was."""
        session = Session(Policies(compaction=compaction), snapshot_every=32)
        session.execute_all(
            AddTurn("tool" if n % 2 else "user", f"lookup {n} found nothing new")
            for n in range(1, 2 * SHORT_HOT + 60)
        )
        data = run_payload(session.run, session.policies_at, "long")
        hot: list[int] = []
        longest = 0
        for at, frame in enumerate(data["frames"], start=1):
            if "h" in frame:
                shift, added = frame["h"]
                hot = hot[shift:] + added
            expected = [t.turn for t in session.run.state_at(at).window.hot]
            assert expected == hot
            longest = max(longest, len(expected))
        assert longest > SHORT_HOT

    def test_a_compaction_ships_what_moved_not_the_window(self) -> None:
        session = simulated("refund-desk")
        data = run_payload(session.run, session.policies_at, "refund-desk")
        first = next(
            at for at, e in enumerate(session.run.events) if isinstance(e, CompactionTriggered)
        )
        # Turn 4 took the window to 41; the compaction kept 3 and 4, warmed 2, dropped 1.
        assert {
            "t": 29,
            "h": [2, []],
            "w": [0, [[2, "policy search: refunds within 30 days of purchase.", 8]]],
            "d": [1],
        } == data["frames"][first]

    @pytest.mark.parametrize("name", sorted(payload.PAGE_SCORERS))
    def test_a_forgetting_policy_the_page_scores_ships_no_ranking(self, name: str) -> None:
        session = simulated("dana-facts", f"forgetting.policy={name}")
        data = run_payload(session.run, session.policies_at, "dana-facts")
        assert all("R" not in frame for frame in data["frames"])
        assert name == data["params"]["scorer"]["policy"]

    @pytest.mark.parametrize("name", ["generative-agents", "memorybank"])
    def test_another_policy_ships_what_changed_in_its_ranking(
        self, name: str, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(payload, "PAGE_SCORERS", frozenset())
        session = simulated(str(QUERIES), f"forgetting.policy={name}", "forgetting.capacity=3")
        run = session.run
        data = run_payload(run, session.policies_at, name)
        assert data["params"]["scorer"] is None
        held: dict[int, list[object]] = {}
        for at, frame in enumerate(data["frames"], start=1):
            for ending in frame.get("x", []):
                del held[ending[0]]
            reset, rows = frame.get("R", [0, []])
            held = {} if reset else held
            held.update({row[0]: row for row in rows})
            state = run.state_at(at)
            forgetting = session.policies_at(at).forgetting
            assert forgetting is not None
            ranking = forgetting.rank(state.store, state.clock)
            assert {s.fact.id: [s.fact.id, s.score, s.factors] for s in ranking} == held
        # Each event ships only the rows that moved, not the whole ranking again.
        shipped = [len(frame["R"][1]) for frame in data["frames"] if "R" in frame]
        assert min(shipped) < 3

    def test_a_memorybank_clock_move_ships_the_clock_alone(self) -> None:
        # Every retention decays at a clock move; the page recomputes them all itself.
        session = simulated("dana-facts", "forgetting.policy=memorybank")
        data = run_payload(session.run, session.policies_at, "dana-facts")
        moves = [
            frame
            for event, frame in zip(session.run.events, data["frames"], strict=True)
            if isinstance(event, ClockAdvanced)
        ]
        assert moves
        assert all(["c"] == list(frame) for frame in moves)

    def test_a_fork_to_a_policy_the_page_cannot_score_ships_its_whole_ranking(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(payload, "PAGE_SCORERS", payload.PAGE_SCORERS - {"memorybank"})
        session = simulated(str(QUERIES))
        fork_at = session.run.batch(3)[1]
        forked = session.fork(fork_at, ["forgetting.policy=memorybank"])
        data = run_payload(forked.run, forked.policies_at, "what-if")
        assert all("R" not in frame for frame in data["frames"][:fork_at])
        reset, rows = data["frames"][fork_at]["R"]
        assert 1 == reset
        assert sorted(forked.run.state_at(fork_at + 1).store.active) == sorted(r[0] for r in rows)
        assert 3 <= len(rows)

    def test_a_fork_ships_its_new_parameters_where_its_epoch_starts(self) -> None:
        session = simulated("refund-desk")
        fork_at = session.run.batch(5)[1]
        forked = session.fork(fork_at, ["compaction.budget=60"])
        data = run_payload(forked.run, forked.policies_at, "what-if")
        changed = [at for at, frame in enumerate(data["frames"], start=1) if "P" in frame]
        assert [fork_at + 1] == changed
        assert 60 == data["frames"][fork_at]["P"]["budget"]
        assert 40 == data["params"]["budget"]

    def test_the_payload_is_the_same_for_the_same_run(self) -> None:
        first, second = simulated("sleep-pass"), simulated("sleep-pass")
        assert run_payload(first.run, first.policies_at, "a") == run_payload(
            second.run, second.policies_at, "a"
        )


@attrs.frozen
class Unheard:
    """An event type the viewer was never taught."""

    id: int = 1


class TestEveryEventType:
    def test_the_viewer_follows_every_event_type_of_the_kernel(self) -> None:
        # A new event type fails here until payload.py learns to ship it.
        assert set(EVENT_TYPES.values()) == set(payload.FOLLOWED)

    def test_an_unknown_event_is_one_clear_bad_input(self) -> None:
        session = simulated("dana-facts")
        state: State = session.run.state
        with pytest.raises(BadInput, match="cannot show a Unheard event") as caught:
            event_row(1, Unheard(), state, state)  # type: ignore[arg-type]
        assert "\n" not in str(caught.value)

    def test_an_unknown_event_that_touches_the_store_is_bad_input(self) -> None:
        session = simulated("dana-facts")
        before = session.run.state_at(0)
        after = session.run.state
        with pytest.raises(BadInput, match="cannot follow a store change by Unheard"):
            state_delta(Unheard(), before, after)  # type: ignore[arg-type]


class TestPayloadBuilder:
    def test_a_step_with_an_unknown_event_adds_nothing(self) -> None:
        session = simulated("refund-desk")
        run = session.run
        built = PayloadBuilder("r", session.policies_at(0), run.state_at(0))
        start, end = run.batch(1)
        built.add_step(run.events[start:end], session.policies_at)
        before = built.payload()
        turn = run.events[run.batch(2)[0]]
        with pytest.raises(BadInput, match="cannot show a Unheard event"):
            built.add_step([turn, Unheard()], session.policies_at)  # type: ignore[list-item]
        assert before == built.payload()
        assert [] == built.since(end)["rows"]

    def test_since_the_end_of_each_command_appends_to_the_whole(self) -> None:
        session = simulated(str(QUERIES))
        run = session.run
        whole = run_payload(run, session.policies_at, "q")
        built = PayloadBuilder("q", session.policies_at(0), run.state_at(0))
        events = run.events
        for step in range(1, run.steps + 1):
            start, end = run.batch(step)
            built.add_step(events[start:end], session.policies_at)
        for step in range(run.steps + 1):
            held = len(events) if step == run.steps else run.batch(step + 1)[0]
            chunk = built.since(held)
            origin = chunk.pop("from")
            assert (held, step) == (origin["events"], origin["steps"])
            marks = {"ends": step, "rows": held, "frames": held}
            marks.update(turns=origin["turns"], facts=origin["facts"])
            for key, mark in marks.items():
                assert whole[key][:mark] + chunk[key] == whole[key], key
            assert (whole["name"], whole["params"]) == (chunk["name"], chunk["params"])
        # The tables' marks are the tables' lengths at that command's end.
        middle = run.batch(3)[1]
        turns = sum(isinstance(e, TurnAdded) for e in events[:middle])
        assert turns == built.since(middle)["from"]["turns"]

    @pytest.mark.parametrize(
        ("since", "error"),
        [
            (-1, r"since=-1 is out of range 0\.\.\d+"),
            (10_000, r"since=10000 is out of range"),
        ],
    )
    def test_since_out_of_range_is_refused(self, since: int, error: str) -> None:
        session = simulated("refund-desk")
        built = PayloadBuilder("r", session.policies_at(0), session.run.state_at(0))
        built.add_step(session.run.events, session.policies_at)
        with pytest.raises(BadInput, match=error):
            built.since(since)

    def test_since_inside_a_command_is_refused(self) -> None:
        session = simulated("refund-desk")
        run = session.run
        built = PayloadBuilder("r", session.policies_at(0), run.state_at(0))
        for step in range(1, run.steps + 1):
            start, end = run.batch(step)
            built.add_step(run.events[start:end], session.policies_at)
        inside = next(end - 1 for start, end in map(run.batch, range(1, 11)) if end - start > 1)
        with pytest.raises(BadInput, match=f"since={inside} falls inside a command"):
            built.since(inside)


class TestQueries:
    def test_a_query_ships_the_reads_of_its_results_and_what_it_asked(self) -> None:
        session = simulated(str(QUERIES))
        data = run_payload(session.run, session.policies_at, "dana-queries")
        queried = [(at, e) for at, e in enumerate(session.run.events) if isinstance(e, Queried)]
        assert queried
        for at, event in queried:
            after = session.run.state_at(at + 1).store
            assert {"r": [[i, after.facts[i].reads] for i in event.results]} == data["frames"][at]
            found = [[i, score] for i, score in zip(event.results, event.scores, strict=True)]
            assert [event.text, event.key, event.k, found] == data["rows"][at][3]
        # The first query expects 'contact' and reads two facts.
        assert "how should we contact Dana" == data["rows"][queried[0][0]][3][0]
        assert 2 == len(data["rows"][queried[0][0]][3][3])

    def test_a_query_that_finds_nothing_ships_no_reads(self) -> None:
        policies = Policies.from_params({"forgetting": {"policy": "lru", "capacity": 2}})
        session = Session(policies)
        session.execute(Query("anything", "k", 2))
        data = run_payload(session.run, session.policies_at, "empty")
        assert [{}] == [{k: v for k, v in f.items() if k != "R"} for f in data["frames"]]
        assert ["anything", "k", 2, []] == data["rows"][0][3]


class TestPolicyNames:
    @pytest.mark.parametrize(
        ("settings", "expected"),
        [
            ((), ("importance-recency-access", "key")),
            (("forgetting.policy=lfu",), ("lfu", "key")),
            (("forgetting.supersession=add-only",), ("importance-recency-access", "add-only")),
        ],
    )
    def test_the_params_name_the_policies_and_the_supersession_rule(
        self, settings: tuple[str, ...], expected: tuple[str, str]
    ) -> None:
        session = simulated("dana-facts", *settings)
        params = run_payload(session.run, session.policies_at, "d")["params"]
        assert expected == (params["forgetting"], params["supersession"])
        assert params["compaction"] is None


class TestClearedInPlace:
    def test_a_clearing_in_place_ships_what_each_cleared_turn_reads(self) -> None:
        """``z`` carries each cleared turn's new text; with the turn table it rebuilds HOT's
        texts at every event."""
        policies = Policies.from_params(
            {"compaction": {"policy": "clear-tool-results", "budget": 60, "keep": 1}}
        )
        session = Session(policies)
        session.execute_all(TURNS[:120])
        data = run_payload(session.run, session.policies_at, "cleared")
        texts = {number: row[1] for number, row in enumerate(data["turns"], start=1)}
        shipped = 0
        for at, frame in enumerate(data["frames"], start=1):
            for turn, text, _tokens in frame.get("z", []):
                texts[turn] = text
                shipped += 1
            hot = session.run.state_at(at).window.hot
            assert [t.text for t in hot] == [texts[t.turn] for t in hot]
        assert shipped > 0


class TestProbes:
    def test_the_scenarios_probes_ship_with_where_each_showed_and_was_lost(self) -> None:
        scenario = load_scenario("refund-desk")
        session = simulated("refund-desk")
        data = run_payload(session.run, session.policies_at, "refund-desk", scenario.probes)
        assert [["$180.00", 8], ["restocking fee", 5]] == data["probes"]
        assert [
            [1, 6, 1, 5, None],
            [0, 11, 1, 8, None],
            [1, 15, 0, 10, "CompactionTriggered"],
        ] == data["changes"]

    def test_the_losses_are_bench_losses(self) -> None:
        scenario = load_scenario("refund-desk")
        session = simulated("refund-desk", "compaction.budget=30")
        data = run_payload(session.run, session.policies_at, "refund-desk", scenario.probes)
        texts = [text for text, _ in data["probes"]]
        losses = compaction_metrics(session.run, scenario.probes).losses
        assert losses
        assert [(loss.probe, loss.turn, loss.at, loss.event) for loss in losses] == [
            (texts[probe], turn, at, event)
            for probe, at, kept, turn, event in data["changes"]
            if not kept
        ]

    def test_a_run_without_probes_ships_none(self) -> None:
        session = simulated("refund-desk")
        data = run_payload(session.run, session.policies_at, "refund-desk")
        assert ([], []) == (data["probes"], data["changes"])

    def test_since_ships_the_changes_after_the_events_held(self) -> None:
        scenario = load_scenario("refund-desk")
        built = PayloadBuilder(
            "rd", scenario.policies, Session(scenario.policies).state, scenario.probes
        )
        session = Session(scenario.policies)
        for command in scenario.steps:
            built.add_step(session.execute(command), session.policies_at, command)
        whole = built.payload()
        middle = whole["ends"][7]
        chunk = built.since(middle)
        held = [change for change in whole["changes"] if change[1] <= middle]
        assert len(held) == chunk["from"]["changes"]
        assert whole["changes"] == held + chunk["changes"]


class TestBlocks:
    def test_each_block_edit_ships_the_block_whole(self) -> None:
        session = blocked_session()
        frames = run_payload(session.run, session.policies_at, "blocked")["frames"]
        expected = [
            ["human", "Name: Dana.", 2, 1, 60],
            ["human", "Name: Dana.\nLives in Lisbon.", 5, 2, 60],
            ["human", "Name: Dana.\nLives in Porto.", 5, 3, 60],
        ]
        assert expected == [frame["b"] for frame in frames if "b" in frame]
