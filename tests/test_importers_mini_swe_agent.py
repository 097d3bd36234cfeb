"""memtape.lab.importers.mini_swe_agent: a mini-swe-agent trajectory, text mode or tool calls."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings

from memtape.core.errors import BadInput
from memtape.lab.importers import read_transcript
from tests.transcripts import any_records, fixture, turns_of, unpaired, write_json

TEXT = fixture("mini-swe-agent-text.traj.json")
TOOLS = fixture("mini-swe-agent-toolcall.traj.json")


def _messages(path: Path) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = json.loads(path.read_text("utf-8"))["messages"]
    return messages


def _trajectory(tmp_path: Path, *messages: dict[str, Any]) -> Path:
    document = {"info": {}, "messages": list(messages), "trajectory_format": "mini-swe-agent-1"}
    return write_json(tmp_path / "run.traj.json", document)


class TestTextMode:
    def test_each_output_after_a_command_is_a_tool_turn_answering_it(self) -> None:
        turns = turns_of(TEXT)
        assert [
            ("assistant", ("action.3",), ()),
            ("tool", (), ("action.3",)),
            ("assistant", ("action.5",), ()),
            ("tool", (), ("action.5",)),
            ("assistant", ("action.7",), ()),
            ("tool", (), ("action.7",)),
            ("assistant", (), ()),
        ] == [(t.role, t.calls, t.answers) for t in turns[2:]]
        assert [] == unpaired(turns)

    def test_the_texts_are_kept_verbatim(self) -> None:
        transcript = read_transcript(TEXT)
        messages = _messages(TEXT)
        assert ("mini-swe-agent", [m["content"] for m in messages]) == (
            transcript.format,
            [t.text for t in transcript.turns],
        )

    def test_as_written_keeps_them_user_turns(self) -> None:
        turns = turns_of(TEXT, observations="as-written", salient="user")
        expected = ["system", "user"] + ["assistant", "user"] * 3 + ["assistant"]
        assert expected == [t.role for t in turns]

    def test_the_pairing_is_said(self) -> None:
        (note,) = read_transcript(TEXT).notes
        assert note.startswith("3 user messages after an action read as its observation")


class TestBareMessages:
    """mini-swe-agent's messages saved alone, a JSON array without the document around them."""

    def _bare(self, tmp_path: Path) -> Path:
        return write_json(
            tmp_path / "messages.json",
            [
                {"role": "system", "content": "You run one shell command a reply."},
                {"role": "user", "content": "Why does make fail?"},
                {"role": "assistant", "content": "Look first.\n```bash\nmake 2>&1 | tail\n```"},
                {"role": "user", "content": "<returncode>2</returncode>\n<output>\nno rule\n"},
                {"role": "assistant", "content": "The Makefile lacks the target."},
            ],
        )

    def test_an_output_after_a_command_is_told_and_answers_it(self, tmp_path: Path) -> None:
        transcript = read_transcript(self._bare(tmp_path))
        assert ("mini-swe-agent", ("action.3",), ("action.3",)) == (
            transcript.format,
            transcript.turns[2].calls,
            transcript.turns[3].answers,
        )

    def test_a_chat_whose_user_says_returncode_later_in_a_line_stays_a_chat(
        self, tmp_path: Path
    ) -> None:
        path = write_json(
            tmp_path / "chat.json",
            [
                {"role": "user", "content": "What does <returncode> mean?"},
                {"role": "assistant", "content": "The exit status."},
            ],
        )
        assert "openai-chat" == read_transcript(path).format


class TestToolCalls:
    def test_every_call_and_result_is_kept_and_paired(self) -> None:
        messages = _messages(TOOLS)
        calls = [c["id"] for m in messages for c in m.get("tool_calls", [])]
        results = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
        turns = turns_of(TOOLS)
        assert (calls, results, []) == (
            [c for t in turns for c in t.calls],
            [a for t in turns for a in t.answers],
            unpaired(turns),
        )
        assert (4, 3, 9) == (len(calls), len(results), len(turns))

    def test_the_exit_message_is_left_out_and_counted(self) -> None:
        transcript = read_transcript(TOOLS)
        assert transcript.ledger is not None
        assert ((), [("exit message", 1)]) == (
            transcript.notes,
            [(kind.kind, kind.entries) for kind in transcript.ledger.left_out],
        )
        assert not any(turn.text == "Submitted" for turn in transcript.turns)


class TestMessages:
    def test_a_user_message_after_a_user_message_stays_a_user_turn(self, tmp_path: Path) -> None:
        path = _trajectory(
            tmp_path,
            {"role": "user", "content": "task"},
            {"role": "assistant", "content": "```bash\nls\n```"},
            {"role": "user", "content": "<returncode>0</returncode>"},
            {"role": "user", "content": "Please always give one command."},
        )
        assert ["user", "assistant", "tool", "user"] == [t.role for t in turns_of(path)]

    def test_a_role_it_does_not_know_is_refused_named(self, tmp_path: Path) -> None:
        path = _trajectory(tmp_path, {"role": "critic", "content": "no"})
        with pytest.raises(BadInput, match=r"messages\[0\]: role must be one of system"):
            read_transcript(path, "mini-swe-agent")

    def test_a_legacy_function_call_and_its_answer_import_paired(self, tmp_path: Path) -> None:
        call = {"name": "shell", "arguments": "{}"}
        path = _trajectory(
            tmp_path,
            {"role": "user", "content": "task"},
            {"role": "assistant", "content": None, "function_call": call},
            {"role": "function", "name": "shell", "content": "a.txt"},
        )
        transcript = read_transcript(path, "mini-swe-agent")
        assert (1, 1) == (transcript.calls, transcript.answers)

    def test_format_mini_swe_agent_forces_the_reader(self) -> None:
        assert "mini-swe-agent" == read_transcript(TEXT, "mini-swe-agent").format


class TestAnyRecords:
    @settings(max_examples=150, deadline=None)
    @given(records=any_records())
    @example(records=[{"type": None, "payload": None, "tool_calls": True}])
    def test_records_import_or_are_refused_in_one_line(self, records: list[dict[str, Any]]) -> None:
        with tempfile.TemporaryDirectory() as folder:
            path = write_json(
                Path(folder) / "run.traj.json",
                {"messages": records, "trajectory_format": "mini-swe-agent-1"},
            )
            try:
                read_transcript(path, "mini-swe-agent", observations="user-after-action")
            except BadInput as error:
                refused = str(error)
            else:
                refused = ""
        assert "\n" not in refused
