"""memtape.lab.importers.swe_agent: a SWE-agent trajectory's history, in either mode."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings

from memtape.core.errors import BadInput
from memtape.lab.importers import read_transcript, swe_agent
from tests.transcripts import any_records, fixture, turns_of, unpaired, write_json

CALLING = fixture("swe-agent-function-calling.traj")
TEXT = fixture("swe-agent-text.traj")


def _history(path: Path) -> list[dict[str, Any]]:
    history: list[dict[str, Any]] = json.loads(path.read_text("utf-8"))["history"]
    return history


def _traj(tmp_path: Path, *history: dict[str, Any]) -> Path:
    return write_json(tmp_path / "run.traj", {"trajectory": [], "history": list(history)})


class TestFunctionCalling:
    def test_every_call_and_result_is_kept_and_paired(self) -> None:
        history = _history(CALLING)
        calls = [c["id"] for m in history for c in m.get("tool_calls", [])]
        results = [i for m in history for i in m.get("tool_call_ids", [])]
        turns = turns_of(CALLING)
        assert (calls, results, []) == (
            [c for t in turns for c in t.calls],
            [a for t in turns for a in t.answers],
            unpaired(turns),
        )
        assert (5, 12) == (len(calls), len(turns))

    def test_one_turn_a_history_message_in_order(self) -> None:
        roles = [turn.role for turn in turns_of(CALLING)]
        assert ["system", "user"] + ["assistant", "tool"] * 5 == roles

    def test_an_assistant_turn_is_its_thinking_its_thought_and_its_call(self) -> None:
        lines = turns_of(CALLING)[2].text.splitlines()
        assert [
            "[thinking] The ticket is about a missing last row; start from the reader.",
            "I'll find where read_rows is defined.",
        ] == lines[:2]
        assert lines[2].startswith('call bash({"command": "grep -rn')

    def test_the_trajectory_steps_are_not_read_and_said(self) -> None:
        transcript = read_transcript(CALLING)
        note = "the trajectory's 5 steps repeat the history's messages: not read"
        assert ((note,), 12) == (transcript.notes, len(transcript.turns))


class TestTextMode:
    def test_an_observation_after_an_action_is_a_tool_turn_answering_it(self) -> None:
        turns = turns_of(TEXT)
        assert [
            ("assistant", ("action.4",), ()),
            ("tool", (), ("action.4",)),
        ] == [(t.role, t.calls, t.answers) for t in turns[3:5]]
        assert ([], 4) == (unpaired(turns), sum(1 for t in turns if t.role == "tool"))

    def test_the_observation_is_salient_the_task_and_the_demonstration_are_not(self) -> None:
        turns = turns_of(TEXT)
        assert [None, None, None] == [t.salient for t in turns[:3]]
        assert ["system", "user", "user"] == [t.role for t in turns[:3]]
        assert turns[4].text.startswith('Found 1 matches for "def read_rows"')

    def test_as_written_keeps_the_observations_user_turns(self) -> None:
        turns = turns_of(TEXT, observations="as-written")
        assert ({"system", "user", "assistant"}, 0) == (
            {t.role for t in turns},
            sum(len(t.calls) for t in turns),
        )

    def test_the_ledger_counts_the_pairs_the_reader_made(self) -> None:
        ledger = read_transcript(TEXT).ledger
        assert ledger is not None
        assert (11, 4, 4, 4, 4) == (
            ledger.entries,
            ledger.calls_in,
            ledger.calls_out,
            ledger.results_in,
            ledger.results_out,
        )


class TestMessages:
    def test_a_tool_message_answers_every_id_it_names(self, tmp_path: Path) -> None:
        call = {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}
        path = _traj(
            tmp_path,
            {"role": "user", "content": "go", "message_type": "observation"},
            {"role": "assistant", "content": "", "tool_calls": [call], "message_type": "action"},
            {
                "role": "tool",
                "content": "ok",
                "tool_call_ids": ["c1"],
                "message_type": "observation",
            },
        )
        assert ("c1",) == turns_of(path)[2].answers

    def test_a_role_outside_the_history_s_is_refused_named(self, tmp_path: Path) -> None:
        path = _traj(tmp_path, {"role": "critic", "content": "no", "message_type": "thought"})
        with pytest.raises(BadInput) as caught:
            read_transcript(path)
        expected = (
            f"{path}: history[0]: a history message's role is one of system, user, "
            "assistant, tool, got 'critic'"
        )
        assert expected == str(caught.value)

    def test_format_swe_agent_forces_the_reader(self) -> None:
        assert "swe-agent" == read_transcript(TEXT, "swe-agent").format


class TestLedger:
    def test_a_call_the_reader_loses_is_named_from_the_file(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The ledger reads the ids from the history itself: a reader that built no call and
        no answer (as if it missed the fields) is refused, not trusted."""
        monkeypatch.setattr(swe_agent, "listed", lambda data, key, where: [])
        monkeypatch.setattr(swe_agent, "_answers", lambda data, where: [])
        first = _history(CALLING)[2]["tool_calls"][0]["id"]
        with pytest.raises(BadInput) as caught:
            read_transcript(CALLING)
        expected = (
            f"{CALLING}: history[2]: tool call {first!r} is in the file but not in the "
            "imported turns: the import would lose it"
        )
        assert expected == str(caught.value)


class TestAnyRecords:
    @settings(max_examples=150, deadline=None)
    @given(records=any_records())
    def test_records_import_or_are_refused_in_one_line(self, records: list[dict[str, Any]]) -> None:
        with tempfile.TemporaryDirectory() as folder:
            path = write_json(Path(folder) / "run.traj", {"trajectory": [], "history": records})
            try:
                read_transcript(path, "swe-agent", observations="user-after-action")
            except BadInput as error:
                refused = str(error)
            else:
                refused = ""
        assert "\n" not in refused
