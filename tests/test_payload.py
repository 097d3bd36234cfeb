"""The viewer's data: tables once, one small delta per event (memtape/viewer/payload.py).

That the page rebuilds ``show --json`` from these deltas at every event is
proven in the browser (tests/test_viewer_browser.py); here, their shape.
"""

import pytest

from memtape.core.events import CompactionTriggered, TurnAdded
from memtape.policies.session import Session
from memtape.scenarios import load_scenario
from memtape.viewer import payload
from memtape.viewer.payload import run_payload, shift_append


def simulated(name: str) -> Session:
    scenario = load_scenario(name)
    session = Session(scenario.policies)
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

    def test_the_forgetting_policy_the_page_scores_ships_no_ranking(self) -> None:
        session = simulated("dana-facts")
        data = run_payload(session.run, session.policies_at, "dana-facts")
        assert all("R" not in frame for frame in data["frames"])
        assert "importance-recency-access" == data["params"]["scorer"]["policy"]

    def test_another_policy_ships_its_ranking_where_it_changes(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(payload, "PAGE_SCORERS", frozenset())
        session = simulated("dana-facts")
        data = run_payload(session.run, session.policies_at, "dana-facts")
        forgetting = session.policies.forgetting
        assert forgetting is not None
        final = forgetting.rank(session.run.state.store, session.run.state.clock)
        last = [frame["R"] for frame in data["frames"] if "R" in frame][-1]
        assert [[s.fact.id, s.score, s.factors] for s in final] == last
        assert data["params"]["scorer"] is None

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
