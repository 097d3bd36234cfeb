"""memtape.lab.importers.openai_responses: OpenAI Responses items as turns."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import json
from pathlib import Path

import pytest

from memtape.core.errors import BadInput
from memtape.lab.importers import read_transcript
from tests.transcripts import fixture, imported, turns_of, unpaired, write_json, write_lines

ITEMS = fixture("openai-responses.jsonl")
COMPACTED = fixture("openai-responses-compaction.jsonl")


def _items() -> list[dict[str, object]]:
    return [json.loads(line) for line in ITEMS.read_text("utf-8").splitlines()]


class TestFixture:
    def test_every_call_and_output_is_kept_and_paired(self) -> None:
        items = _items()
        calls = [i["call_id"] for i in items if i["type"] == "function_call"]
        outputs = [i["call_id"] for i in items if i["type"] == "function_call_output"]
        turns = turns_of(ITEMS)
        assert (calls, outputs, []) == (
            [c for t in turns for c in t.calls],
            [a for t in turns for a in t.answers],
            unpaired(turns),
        )
        assert (4, 4) == (len(calls), len(outputs))

    def test_one_response_is_one_turn_its_reasoning_and_parallel_calls_in_order(self) -> None:
        turn = turns_of(ITEMS)[2]
        assert ("assistant", ("call_trains", "call_hotels")) == (turn.role, turn.calls)
        lines = turn.text.splitlines()
        assert (
            "[reasoning] Two independent lookups, trains and hotels: run them together."
            == (lines[0])
        )
        assert lines[1].startswith('call search_trains({"from":"Lyon Part-Dieu"')
        assert lines[2].startswith('call search_hotels({"near":"Torino Porta Nuova"')

    def test_the_turns_follow_the_grouping(self) -> None:
        roles = [turn.role for turn in turns_of(ITEMS)]
        assert [
            "system",
            "user",
            "assistant",
            "tool",
            "tool",
            "assistant",
            "user",
            "assistant",
            "tool",
            "assistant",
            "tool",
            "assistant",
        ] == roles

    def test_encrypted_reasoning_is_noted_and_joins_the_message_after_it(self) -> None:
        turn = turns_of(ITEMS)[-1]
        assert turn.text.startswith("[reasoning]\nThe train is booked (PNR QX7K2M, seat 14A).")


class TestDocuments:
    def test_a_request_with_instructions_and_a_string_input(self, tmp_path: Path) -> None:
        path = write_json(
            tmp_path / "request.json",
            {"model": "gpt-5", "instructions": "Be terse.", "input": "What is 2 + 2?"},
        )
        turns = turns_of(path)
        assert [("system", "Be terse."), ("user", "What is 2 + 2?")] == [
            (t.role, t.text) for t in turns
        ]

    def test_a_response_object_reads_its_output(self, tmp_path: Path) -> None:
        output = [
            {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
        ]
        path = write_json(tmp_path / "response.json", {"object": "response", "output": output})
        (turn,) = turns_of(path)
        assert (("c1",), "call f({})") == (turn.calls, turn.text)

    def test_custom_tool_calls_and_their_outputs_pair(self, tmp_path: Path) -> None:
        path = write_lines(
            tmp_path / "items.jsonl",
            {"type": "custom_tool_call", "call_id": "c1", "name": "sh", "input": "ls"},
            {"type": "custom_tool_call_output", "call_id": "c1", "output": "a.txt"},
        )
        turns = turns_of(path)
        assert [("call sh(ls)", ("c1",), ()), ("a.txt", (), ("c1",))] == [
            (t.text, t.calls, t.answers) for t in turns
        ]


class TestCompaction:
    def test_an_encrypted_compaction_is_a_compaction_with_a_placeholder_never_a_turn(
        self,
    ) -> None:
        transcript = read_transcript(COMPACTED)
        (compaction,) = transcript.compactions
        assert (
            9,
            f"{COMPACTED}:9",
            "[encrypted compaction cmp_0aa17: 104 characters, opaque]",
        ) == (
            compaction.before,
            compaction.where,
            compaction.summary,
        )
        assert ("assistant", ("call_ship",)) == (
            transcript.turns[8].role,
            transcript.turns[8].calls,
        )
        assert [] == [turn for turn in transcript.turns if "gAAAA" in turn.text]

    def test_an_encrypted_compaction_is_noted_as_opaque(self) -> None:
        assert (
            f"the compaction at {COMPACTED}:9 is encrypted: what it kept is opaque, and its "
            "summary is a placeholder of what is known"
        ) in read_transcript(COMPACTED).notes

    def test_a_compaction_with_summary_parts_keeps_their_text(self, tmp_path: Path) -> None:
        summary = [{"type": "summary_text", "text": "The user wants the rollout."}]
        path = write_lines(
            tmp_path / "items.jsonl",
            {"role": "user", "content": "ship"},
            {"type": "message", "role": "assistant", "content": "ok"},
            {"type": "compaction", "id": "c", "encrypted_content": "x", "summary": summary},
            {"role": "user", "content": "status?"},
        )
        transcript = read_transcript(path)
        assert ([(3, "The user wants the rollout.")], ()) == (
            [(c.before, c.summary) for c in transcript.compactions],
            transcript.notes,
        )

    def test_the_scenario_is_headed_by_the_recorded_policy(self) -> None:
        table = imported(COMPACTED).policies.params()["compaction"]
        assert ("recorded", [9]) == (
            table["policy"],
            [record["before"] for record in table["compactions"]],
        )


class TestRefusals:
    def test_an_item_of_a_built_in_tool_is_refused_by_its_index(self, tmp_path: Path) -> None:
        path = write_json(
            tmp_path / "items.json",
            [{"role": "user", "content": "news?"}, {"type": "web_search_call", "id": "ws_1"}],
        )
        with pytest.raises(BadInput, match=rf"^{path}: \[1\]: an item of type 'web_search_call'"):
            read_transcript(path)

    def test_an_output_for_no_call_is_refused(self, tmp_path: Path) -> None:
        path = write_lines(
            tmp_path / "items.jsonl",
            {"type": "function_call_output", "call_id": "gone", "output": "x"},
        )
        with pytest.raises(BadInput, match=rf"^{path}:1: a tool result for call 'gone'"):
            read_transcript(path)

    def test_a_part_of_another_type_is_refused(self, tmp_path: Path) -> None:
        path = write_lines(
            tmp_path / "items.jsonl",
            {"type": "message", "role": "user", "content": [{"type": "input_video"}]},
        )
        with pytest.raises(BadInput, match=r":1: content part 1 is 'input_video'"):
            read_transcript(path, "openai-responses")
