"""memtape.lab.importers.langchain: LangChain message dicts as turns."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import json
from pathlib import Path
from typing import Any

import pytest

from memtape.core.errors import BadInput
from memtape.lab.importers import read_transcript
from tests.transcripts import fixture, turns_of, unpaired, write_json, write_lines

DICTS = fixture("langchain.json")


def _dicts() -> list[dict[str, Any]]:
    dicts: list[dict[str, Any]] = json.loads(DICTS.read_text("utf-8"))
    return dicts


class TestFixture:
    def test_every_tool_call_and_result_is_kept_and_paired(self) -> None:
        data = [entry["data"] for entry in _dicts()]
        calls = [call["id"] for d in data for call in d.get("tool_calls", [])]
        results = [d["tool_call_id"] for d in data if d["type"] == "tool"]
        turns = turns_of(DICTS)
        assert (calls, results, []) == (
            [c for t in turns for c in t.calls],
            [a for t in turns for a in t.answers],
            unpaired(turns),
        )
        assert (3, 3, 8) == (len(calls), len(results), len(turns))

    def test_types_map_onto_roles(self) -> None:
        roles = [turn.role for turn in turns_of(DICTS)]
        expected = ["system", "user", "assistant", "tool", "tool", "assistant", "tool", "assistant"]
        assert expected == roles

    def test_parallel_tool_calls_read_after_the_content(self) -> None:
        turn = turns_of(DICTS)[2]
        assert (("call_bill", "call_usage"), 2) == (turn.calls, len(turn.text.splitlines()))
        assert turn.text.startswith('call get_bill({"account": "LE-55310", "month": "2026-03"})')

    def test_a_provider_s_tool_use_block_for_a_tool_call_shows_once(self) -> None:
        turn = turns_of(DICTS)[5]
        assert (("toolu_reading",), 1) == (turn.calls, turn.text.count("call request_reading("))

    def test_an_error_status_and_the_tool_s_name_head_the_text(self) -> None:
        turn = turns_of(DICTS)[4]
        assert "get_usage: [error] meter LE-55310-M1 sent no readings after 2026-01-31" == (
            turn.text
        )

    def test_model_dump_dicts_import_as_messages_to_dict_ones(self, tmp_path: Path) -> None:
        flat = write_lines(tmp_path / "dumped.jsonl", *(entry["data"] for entry in _dicts()))
        state = write_json(tmp_path / "state.json", {"messages": [e["data"] for e in _dicts()]})
        expected = [(t.role, t.text, t.calls, t.answers) for t in turns_of(DICTS)]
        for path in (flat, state):
            assert expected == [(t.role, t.text, t.calls, t.answers) for t in turns_of(path)]


class TestMessages:
    def test_calls_kept_only_in_additional_kwargs_are_read(self, tmp_path: Path) -> None:
        call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        path = write_lines(
            tmp_path / "old.jsonl",
            {"type": "ai", "content": "", "additional_kwargs": {"tool_calls": [call]}},
            {"type": "tool", "content": "done", "tool_call_id": "c1"},
        )
        turns = turns_of(path)
        assert [(("c1",), ()), ((), ("c1",))] == [(t.calls, t.answers) for t in turns]

    def test_invalid_tool_calls_are_calls_marked_invalid(self, tmp_path: Path) -> None:
        invalid = {"name": "f", "args": "{oops", "id": "c1", "error": "bad JSON"}
        path = write_lines(
            tmp_path / "m.jsonl",
            {"type": "ai", "content": "", "tool_calls": [], "invalid_tool_calls": [invalid]},
        )
        (turn,) = turns_of(path)
        assert (("c1",), "[invalid] call f({oops) bad JSON") == (turn.calls, turn.text)

    def test_reasoning_and_thinking_blocks_are_marked(self, tmp_path: Path) -> None:
        content = [
            {"type": "reasoning", "reasoning": "check the meter first"},
            {"type": "thinking", "thinking": "then the bill"},
            "plain text",
        ]
        path = write_lines(tmp_path / "m.jsonl", {"type": "ai", "content": content})
        (turn,) = turns_of(path)
        assert "[reasoning] check the meter first\n[thinking] then the bill\nplain text" == (
            turn.text
        )

    def test_a_chat_message_takes_its_role(self, tmp_path: Path) -> None:
        path = write_lines(
            tmp_path / "m.jsonl", {"type": "chat", "role": "developer", "content": "be brief"}
        )
        assert ["system"] == [turn.role for turn in turns_of(path)]

    @pytest.mark.parametrize(
        ("record", "error"),
        [
            ({"type": "remove", "id": "x"}, "a remove message is an instruction to a graph"),
            ({"type": "tool", "content": "x"}, "a tool message needs the tool_call_id"),
            ({"type": "ai", "content": [{"type": "video"}]}, "content block 1 is 'video'"),
            ({"type": "ai", "content": "", "tool_calls": [{"name": "f"}]}, "needs an id"),
            ({"type": "chat", "role": "narrator", "content": "x"}, "got 'narrator'"),
        ],
    )
    def test_a_malformed_message_names_its_index(
        self, tmp_path: Path, record: dict[str, Any], error: str
    ) -> None:
        path = write_json(tmp_path / "m.json", [{"type": "human", "content": "hi"}, record])
        with pytest.raises(BadInput) as caught:
            read_transcript(path, "langchain")
        assert str(caught.value).startswith(f"{path}: [1]")
        assert error in str(caught.value)
