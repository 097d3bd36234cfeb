"""policies.window.recorded: the compactions a transcript recorded, applied where they happened."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import json
from pathlib import Path
from typing import Any

import pytest

from memtape.checking.invariants import check_run
from memtape.cli import main
from memtape.core.commands import AddTurn
from memtape.core.errors import BadInput, NothingToApply
from memtape.core.events import CompactionTriggered, WarmItem
from memtape.lab.bench import Cell, parse_policy, run_cell
from memtape.policies.plumbing.promises import PINNED, RECENT_VERBATIM, WELL_FORMED
from memtape.policies.session import Policies, Session
from memtape.policies.text.tokenizers import O200kBase, WordCount
from memtape.policies.window.compaction_records import CompactionRecord
from memtape.policies.window.recorded import RecordedCompaction
from memtape.runs.files import load_run
from tests.playing import answering, calling, compaction, play, tool, user
from tests.transcripts import fixture

SESSION = fixture("claude-code-session.jsonl")

SUMMARY = "the user wants a refund for order ORD-9"


def _policy(*records: tuple[int, str], budget: int = 1000) -> RecordedCompaction:
    return RecordedCompaction(budget, tuple(CompactionRecord(b, s) for b, s in records))


def _imported(tmp_path: Path, *options: str) -> Path:
    out = tmp_path / "claude-session.toml"
    assert 0 == main(["import", str(SESSION), "--out", str(out), "--budget", "150", *options])
    return out


class TestDecide:
    def test_between_boundaries_it_never_compacts(self) -> None:
        state, decided = play(_policy((9, SUMMARY), budget=5), user(10), tool(10), user(3))
        assert [1, 1, 1] == [len(events) for events in decided]
        assert [1, 2, 3] == [t.turn for t in state.window.hot]

    def test_at_a_boundary_the_summary_is_the_one_warm_item_and_the_rest_goes_cold(
        self,
    ) -> None:
        state, decided = play(_policy((4, SUMMARY)), user(3), tool(3), user(3), user(2))
        event = compaction(decided[3])
        assert (
            CompactionTriggered(
                1000,
                (WarmItem(1, "", 0), WarmItem(2, "", 0), WarmItem(3, SUMMARY, 8)),
                (),
                2,
                "",
                0,
            )
            == event
        )
        window = state.window
        assert ((4,), (WarmItem(3, SUMMARY, 8),), [1, 2], "") == (
            tuple(t.turn for t in window.hot),
            window.warm,
            list(window.cold),
            window.gist,
        )
        assert 8 + 3 == window.tokens

    def test_a_later_boundary_sends_the_earlier_summary_cold(self) -> None:
        policy = _policy((3, "first summary"), (5, "second"))
        state, _ = play(policy, user(1), user(1), user(1), user(1), user(1))
        window = state.window
        assert ((WarmItem(4, "second", 1),), [1, 2, 3], (5,)) == (
            window.warm,
            list(window.cold),
            tuple(t.turn for t in window.hot),
        )

    def test_pinned_turns_stay_hot(self) -> None:
        pinned = AddTurn("system", "be brief", pin=True)
        state, _ = play(_policy((3, SUMMARY)), pinned, user(2), user(2))
        assert ((1, 3), (WarmItem(2, SUMMARY, 8),)) == (
            tuple(t.turn for t in state.window.hot),
            state.window.warm,
        )

    def test_a_boundary_while_a_call_waits_keeps_the_call_s_unit_whole(self) -> None:
        """Turn 4 arrives while turn 2's call waits: 2, 3 and 4 are one unit, so only turn 1
        folds (a real session never compacts mid-call, a generated one may)."""
        state, _ = play(_policy((4, SUMMARY)), user(2), calling("c1"), user(2), answering("c1"))
        assert ((2, 3, 4), (WarmItem(1, SUMMARY, 8),)) == (
            tuple(t.turn for t in state.window.hot),
            state.window.warm,
        )

    def test_the_turns_the_agent_preserved_stay_hot_and_only_the_others_fold(self) -> None:
        record = CompactionRecord(5, SUMMARY, preserved=(3, 4))
        state, decided = play(RecordedCompaction(1000, (record,)), *[user(2)] * 5)
        assert ((3, 4, 5), (WarmItem(2, SUMMARY, 8),), [1]) == (
            tuple(t.turn for t in state.window.hot),
            state.window.warm,
            list(state.window.cold),
        )
        assert [WarmItem(1, "", 0), WarmItem(2, SUMMARY, 8)] == list(compaction(decided[4]).warm)

    def test_a_preserved_turn_keeps_its_whole_unit_hot(self) -> None:
        """Turn 3 answers turn 2's call: preserving 3 alone keeps 2 with it; 1 and 4 fold."""
        record = CompactionRecord(5, SUMMARY, preserved=(3, 3))
        policy = RecordedCompaction(1000, (record,))
        state, _ = play(policy, user(2), calling("c1"), answering("c1"), user(2), user(2))
        assert ((2, 3, 5), (WarmItem(4, SUMMARY, 8),)) == (
            tuple(t.turn for t in state.window.hot),
            state.window.warm,
        )

    def test_an_empty_summary_is_no_warm_item(self) -> None:
        state, _ = play(_policy((3, "")), user(2), user(2), user(2))
        assert ((), [1, 2]) == (state.window.warm, list(state.window.cold))

    def test_the_summary_is_measured_by_the_policy_s_tokenizer(self) -> None:
        policy = RecordedCompaction(1000, (CompactionRecord(2, SUMMARY),), O200kBase())
        _, decided = play(policy, user(2), user(2))
        assert O200kBase().count(SUMMARY) == compaction(decided[1]).warm[-1].tokens

    def test_it_promises_the_newest_turn_verbatim_whole_units_pins_and_no_budget(self) -> None:
        policy = _policy((2, SUMMARY))
        assert (frozenset({RECENT_VERBATIM, WELL_FORMED, PINNED}), 1) == (
            policy.promises,
            policy.verbatim,
        )


class TestWhatACaptureSaw:
    def test_dropped_turns_are_dropped_with_nothing_warm_for_them(self) -> None:
        record = CompactionRecord(5, "", dropped=((2, 3),), label="exchange 4: truncation")
        state, decided = play(RecordedCompaction(1000, (record,)), *[user(2)] * 5)
        assert ((1, 4, 5), (), [2, 3], ()) == (
            tuple(t.turn for t in state.window.hot),
            state.window.warm,
            list(state.window.dropped),
            tuple(state.window.cold),
        )
        assert (2, 3) == compaction(decided[4]).dropped

    def test_only_the_folded_turns_fold_into_the_summary(self) -> None:
        record = CompactionRecord(5, SUMMARY, folded=((2, 3),))
        state, _ = play(RecordedCompaction(1000, (record,)), *[user(2)] * 5)
        assert ((1, 4, 5), (WarmItem(3, SUMMARY, 8),), [2]) == (
            tuple(t.turn for t in state.window.hot),
            state.window.warm,
            list(state.window.cold),
        )

    def test_a_cleared_turn_stays_hot_in_place_reading_its_new_text(self) -> None:
        record = CompactionRecord(4, "", cleared=((2, "[cleared]"),))
        policy = RecordedCompaction(1000, (record,))
        state, decided = play(policy, user(2), calling("c1"), answering("c1"), user(2))
        assert ((1, 2, 3, 4), "[cleared]", (WarmItem(2, "[cleared]", 1),)) == (
            tuple(t.turn for t in state.window.hot),
            state.window.hot[1].text,
            compaction(decided[3]).cleared,
        )

    def test_a_unit_moves_only_when_every_turn_of_it_is_named(self) -> None:
        record = CompactionRecord(5, "", dropped=((1, 2),))
        policy = RecordedCompaction(1000, (record,))
        state, _ = play(policy, user(2), calling("c1"), answering("c1"), user(2), user(2))
        assert ((2, 3, 4, 5), [1]) == (
            tuple(t.turn for t in state.window.hot),
            list(state.window.dropped),
        )

    def test_its_reason_is_the_label_of_the_record_before_that_turn(self) -> None:
        record = CompactionRecord(5, "", dropped=((2, 3),), label="exchange 4: truncation")
        policy = RecordedCompaction(1000, (record,))
        assert ("exchange 4: truncation", None) == (policy.reason(5), policy.reason(4))

    def test_the_new_fields_read_back_and_a_record_that_moves_needs_no_summary(self) -> None:
        record = CompactionRecord(
            9,
            "",
            folded=((1, 2),),
            dropped=((3, 4),),
            cleared=((5, "[x]"),),
            label="exchange 7",
        )
        policy = RecordedCompaction(60, (record,), WordCount())
        table = policy.params()
        assert {
            "before": 9,
            "folded": [[1, 2]],
            "dropped": [[3, 4]],
            "cleared": [{"turn": 5, "text": "[x]"}],
            "label": "exchange 7",
        } == table["compactions"][0]
        assert policy == Policies.from_params({"compaction": table}).compaction

    @pytest.mark.parametrize(
        ("record", "message"),
        [
            ({"before": 4, "dropped": [2, 3]}, r"dropped: must be a list of \[FIRST, LAST\]"),
            ({"before": 4, "dropped": [[2, 4]]}, "dropped must be runs of turns"),
            ({"before": 4, "folded": [[3, 2]], "summary": "s"}, "folded must be runs of turns"),
            ({"before": 4, "cleared": [{"turn": 4, "text": "x"}]}, "cleared must be turns"),
            ({"before": 4, "cleared": [{"turn": 2}]}, r"cleared\[0\]: missing parameter text"),
            ({"before": 4, "summary": "s", "label": 3}, "label must be a string"),
        ],
    )
    def test_a_malformed_record_names_its_field(self, record: Any, message: str) -> None:
        with pytest.raises(BadInput, match=message):
            RecordedCompaction.from_params({"budget": 60, "compactions": [record]}, "here")


class TestParams:
    def test_params_read_back(self) -> None:
        records = (
            CompactionRecord(5, SUMMARY, "auto", 155000, 12000, (2, 4)),
            CompactionRecord(9, ""),
        )
        policy = RecordedCompaction(60, records, WordCount())
        table = policy.params()
        assert {
            "policy": "recorded",
            "budget": 60,
            "tokenizer": "words",
            "compactions": [
                {
                    "before": 5,
                    "summary": SUMMARY,
                    "trigger": "auto",
                    "pre_tokens": 155000,
                    "post_tokens": 12000,
                    "preserved": [2, 4],
                },
                {"before": 9, "summary": ""},
            ],
        } == table
        assert policy == Policies.from_params({"compaction": table}).compaction

    def test_a_table_without_compactions_has_nothing_to_apply(self) -> None:
        with pytest.raises(NothingToApply) as caught:
            RecordedCompaction.from_params({"budget": 60}, "s.toml: [compaction]")
        assert (
            "s.toml: [compaction]: nothing to apply: the scenario recorded no compaction",
            "the scenario recorded no compaction",
        ) == (str(caught.value), caught.value.reason)

    @pytest.mark.parametrize(
        ("compactions", "message"),
        [
            ("all", "compactions must be a list of tables"),
            ([5], r"compactions\[0\]: a compaction is a table with before and summary"),
            ([{"summary": "s"}], r"compactions\[0\]: missing parameter before"),
            ([{"before": 1, "summary": "s"}], r"compactions\[0\]: before must be an integer >= 2"),
            ([{"before": 3}], r"compactions\[0\]: missing parameter summary"),
            ([{"before": 3, "summary": "s", "at": 1}], r"compactions\[0\]: unknown parameter"),
            ([{"before": 3, "summary": "s", "pre_tokens": -1}], "pre_tokens must be an integer"),
            ([{"before": 3, "summary": "s", "trigger": 1}], "trigger must be a string"),
            ([{"before": 3, "summary": "s", "post_tokens": "x"}], "post_tokens must be an integer"),
            (
                [{"before": 3, "summary": "s", "preserved": [2]}],
                r"preserved must be \[FIRST, LAST\]",
            ),
            (
                [{"before": 3, "summary": "s", "preserved": [2, 3]}],
                "preserved must be two turns FIRST <= LAST before turn 3",
            ),
            (
                [{"before": 5, "summary": "s", "preserved": [3, 2]}],
                "preserved must be two turns FIRST <= LAST",
            ),
            (
                [{"before": 4, "summary": "a"}, {"before": 4, "summary": "b"}],
                r"compactions\[1\]: before must be at least 2 and each greater than the last",
            ),
        ],
    )
    def test_a_malformed_table_names_the_entry(self, compactions: Any, message: str) -> None:
        with pytest.raises(BadInput, match=message):
            RecordedCompaction.from_params({"budget": 60, "compactions": compactions}, "here")

    def test_run_set_to_recorded_on_a_scenario_without_compactions_says_so(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        argv = ["run", "refund-desk", "--set", "compaction.policy=recorded"]
        status = main([*argv, "--out", str(tmp_path / "r.jsonl")])
        captured = capsys.readouterr()
        assert (2, "", 1) == (status, captured.out, len(captured.err.splitlines()))
        assert "nothing to apply: the scenario recorded no compaction" in captured.err
        assert not (tmp_path / "r.jsonl").exists()


class TestClaudeSession:
    def test_the_run_compacts_at_the_boundary_with_the_summary_warm(self, tmp_path: Path) -> None:
        scenario = _imported(tmp_path)
        run = tmp_path / "run.jsonl"
        assert 0 == main(["run", str(scenario), "--out", str(run)])
        events = [json.loads(line) for line in run.read_text("utf-8").splitlines()[1:]]
        compactions = [
            (i, e) for i, e in enumerate(events) if e.get("type") == "CompactionTriggered"
        ]
        ((index, compacted),) = compactions
        summary = json.loads(SESSION.read_text("utf-8").splitlines()[21])["message"]["content"]
        after = load_run(run).session.run.state_at(compacted["at"])
        assert (11, 11, [11]) == (
            compacted["step"],
            events[index - 1]["event"]["turn"],
            [turn.turn for turn in after.window.hot],
        )
        warm = compacted["event"]["warm"]
        assert ([10, summary], 9) == (
            [warm[-1]["turn"], warm[-1]["text"]],
            compacted["event"]["cold"],
        )

    def test_check_on_the_recorded_run_is_ok(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        run = tmp_path / "run.jsonl"
        assert 0 == main(["run", str(_imported(tmp_path)), "--out", str(run)])
        capsys.readouterr()
        assert 0 == main(["check", str(run)])
        assert capsys.readouterr().out.startswith(f"{run}: ok: ")

    def test_the_kernel_s_invariants_hold_on_a_long_recorded_session(self) -> None:
        records = tuple(CompactionRecord(b, f"summary up to {b - 1}") for b in range(7, 400, 37))
        session = Session(Policies(compaction=RecordedCompaction(50, records)), snapshot_every=16)
        session.execute_all(
            AddTurn("tool" if n % 3 == 0 else "user", f"turn {n} text") for n in range(1, 420)
        )
        assert [] == check_run(session.run, session.policies, checkpoint=8)
        assert len(records) == sum(isinstance(e, CompactionTriggered) for e in session.run.events)

    def test_bench_puts_recorded_beside_memtape_s_policies(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        scenario = str(_imported(tmp_path))
        out = tmp_path / "bench.json"
        argv = ["bench", scenario, "--policy", "recorded", "--policy", "tiered:hot_n=8"]
        assert 0 == main([*argv, "--policy", "sliding-window", "--json", str(out), "--jobs", "1"])
        rows = capsys.readouterr().out.splitlines()
        results = json.loads(out.read_text("utf-8"))["results"]
        assert ["recorded", "tiered", "sliding-window"] == [r["policy"] for r in results]
        recorded = results[0]
        assert (1, 150, 11) == (
            recorded["metrics"]["compactions"],
            recorded["params"]["budget"],
            recorded["params"]["compactions"][0]["before"],
        )
        (row,) = [line for line in rows if " recorded " in line]
        assert "budget=150 tokenizer=o200k_base compactions=1" in row

    def test_recorded_on_a_scenario_that_recorded_none_says_so_in_its_cell(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        out = tmp_path / "bench.json"
        argv = ["bench", "refund-desk", "--policy", "recorded", "--policy", "tiered"]
        assert 0 == main([*argv, "--json", str(out), "--jobs", "1"])
        rows = capsys.readouterr().out.splitlines()
        (row,) = [line for line in rows if " recorded " in line]
        assert "nothing to apply: the scenario recorded no compaction" in row
        first = json.loads(out.read_text("utf-8"))["results"][0]
        assert ("recorded", None, {None}) == (
            first["policy"],
            first["params"],
            set(first["metrics"].values()),
        )
        assert not any("did not apply" in line for line in rows)

    def test_a_cell_with_nothing_to_apply_carries_the_reason(self) -> None:
        cell = Cell("refund-desk", parse_policy("recorded"), (), ())
        result = run_cell(cell)
        assert ("the scenario recorded no compaction", None) == (result.idle, result.params)

    def test_recorded_alone_on_scenarios_that_recorded_none_still_says_why(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        assert 0 == main(["bench", "refund-desk", "--policy", "recorded", "--jobs", "1"])
        assert "nothing to apply" in capsys.readouterr().out

    def test_plotting_leaves_a_cell_with_nothing_to_apply_out(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        plot = tmp_path / "meter.png"
        argv = ["bench", "refund-desk", "--policy", "recorded", "--plot", str(plot), "--jobs", "1"]
        assert 2 == main(argv)
        assert "no scenario has turns, so there is no meter" in capsys.readouterr().err
