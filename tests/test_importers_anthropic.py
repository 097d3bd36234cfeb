"""memtape.lab.importers.anthropic: Anthropic Messages as turns."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import json
from pathlib import Path
from typing import Any

import pytest

from memtape.core.errors import BadInput
from memtape.lab.importers import Compaction, read_transcript
from tests.transcripts import fixture, imported, turns_of, unpaired, write_lines

REQUEST = fixture("anthropic.json")
COMPACTED = fixture("anthropic-compaction.json")


def _blocks(kind: str) -> list[dict[str, Any]]:
    messages = json.loads(REQUEST.read_text("utf-8"))["messages"]
    return [
        block
        for message in messages
        if isinstance(message["content"], list)
        for block in message["content"]
        if block["type"] == kind
    ]


class TestFixture:
    def test_every_tool_use_and_result_is_kept_and_paired(self) -> None:
        uses = [block["id"] for block in _blocks("tool_use")]
        results = [block["tool_use_id"] for block in _blocks("tool_result")]
        turns = turns_of(REQUEST)
        assert (uses, results, []) == (
            [c for t in turns for c in t.calls],
            [a for t in turns for a in t.answers],
            unpaired(turns),
        )
        assert (4, 4) == (len(uses), len(results))

    def test_the_system_prompt_is_the_first_turn_and_pins(self) -> None:
        turns = turns_of(REQUEST, pin="system")
        assert ("system", True) == (turns[0].role, turns[0].pin)
        assert turns[0].text.startswith("You are the operations assistant of Ferro Logistics.")
        assert [False] * (len(turns) - 1) == [turn.pin for turn in turns[1:]]

    def test_an_assistant_message_is_one_turn_its_thinking_and_parallel_calls_in_order(
        self,
    ) -> None:
        turn = turns_of(REQUEST)[2]
        assert ("assistant", ("toolu_01RTM", "toolu_02ANR")) == (turn.role, turn.calls)
        assert [
            "[thinking] I need the stock of both warehouses; ask for both at once.",
            "Checking both warehouses.",
            'call get_stock({"sku": "FL-2207", "warehouse": "rotterdam"})',
            'call get_stock({"sku": "FL-2207", "warehouse": "antwerp"})',
        ] == turn.text.splitlines()

    def test_each_result_is_a_tool_turn_and_an_error_says_so(self) -> None:
        turns = turns_of(REQUEST)
        assert [("tool", ("toolu_01RTM",)), ("tool", ("toolu_02ANR",))] == [
            (t.role, t.answers) for t in turns[3:5]
        ]
        assert ("FL-2207 at rotterdam: 26 pallets, 4 reserved", True) == (
            turns[3].text,
            turns[4].text.startswith("[error] warehouse service timeout"),
        )

    def test_a_result_of_blocks_then_the_user_s_own_blocks(self) -> None:
        turns = turns_of(REQUEST)
        assert ("tool", "FL-2207 at antwerp: 19 pallets, 0 reserved") == (
            turns[6].role,
            turns[6].text,
        )
        assert ("user", "Here is this week's dock schedule too.\n[image: image/png]") == (
            turns[7].role,
            turns[7].text,
        )

    def test_redacted_thinking_is_noted(self) -> None:
        assert turns_of(REQUEST)[8].text.startswith("[redacted thinking]\n22 free pallets")


class TestMessages:
    def test_jsonl_of_messages_and_response_objects(self, tmp_path: Path) -> None:
        response = {
            "id": "msg_01",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [{"type": "text", "text": "Hello."}],
            "stop_reason": "end_turn",
        }
        path = write_lines(tmp_path / "m.jsonl", {"role": "user", "content": "Hi"}, response)
        transcript = read_transcript(path)
        assert ("anthropic", ["Hi", "Hello."]) == (
            transcript.format,
            [turn.text for turn in transcript.turns],
        )

    def test_a_user_message_of_results_and_text_splits_in_order(self, tmp_path: Path) -> None:
        call = {"type": "tool_use", "id": "t1", "name": "f", "input": {}}
        content = [
            {"type": "tool_result", "tool_use_id": "t1", "content": "r"},
            {"type": "text", "text": "and?"},
        ]
        path = write_lines(
            tmp_path / "m.jsonl",
            {"role": "assistant", "content": [call]},
            {"role": "user", "content": content},
        )
        turns = turns_of(path)
        assert [("assistant", "call f({})"), ("tool", "r"), ("user", "and?")] == [
            (t.role, t.text) for t in turns
        ]

    def test_a_server_tool_s_blocks_are_notes_in_the_assistant_s_turn(self, tmp_path: Path) -> None:
        """A web search the provider ran inside its reply: no call for the agent to answer."""
        search = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}
        found = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []}
        reply = [search, found, {"type": "text", "text": "It rained."}]
        path = write_lines(
            tmp_path / "m.jsonl",
            {"role": "user", "content": "weather?"},
            {"role": "assistant", "content": reply},
        )
        transcript = read_transcript(path)
        assert (
            ["weather?", "[server_tool_use: web_search]\n[web_search_tool_result]\nIt rained."],
            (),
        ) == ([turn.text for turn in transcript.turns], transcript.turns[1].calls)


class TestCompaction:
    def test_a_compaction_block_is_a_compaction_before_the_turn_after_it_never_a_turn(
        self,
    ) -> None:
        transcript = read_transcript(COMPACTED)
        (compaction,) = transcript.compactions
        summary = json.loads(COMPACTED.read_text("utf-8"))["messages"][5]["content"][0]["content"]
        assert Compaction(8, summary, f"{COMPACTED}: messages[5]: block 1") == compaction
        turn = transcript.turns[7]
        assert ("assistant", ("toolu_approve",)) == (turn.role, turn.calls)
        assert turn.text.startswith("Everything else is in order.")
        assert [] == [t for t in transcript.turns if "Claim EXP-3381 (Ingrid Dahl" in t.text]

    def test_the_scenario_is_headed_by_the_recorded_policy(self) -> None:
        table = imported(COMPACTED).policies.params()["compaction"]
        assert ("recorded", [8]) == (
            table["policy"],
            [record["before"] for record in table["compactions"]],
        )

    def test_every_call_and_result_is_kept_and_paired_across_it(self) -> None:
        transcript = read_transcript(COMPACTED)
        assert (3, 3, 0) == (
            transcript.calls,
            transcript.answers,
            len(unpaired(turns_of(COMPACTED))),
        )

    def test_a_message_of_only_a_compaction_adds_no_turn(self, tmp_path: Path) -> None:
        path = write_lines(
            tmp_path / "m.jsonl",
            {"role": "user", "content": "long story"},
            {"role": "assistant", "content": "noted"},
            {"role": "assistant", "content": [{"type": "compaction", "content": "the story"}]},
            {"role": "user", "content": "go on"},
        )
        transcript = read_transcript(path, "anthropic")
        assert (["long story", "noted", "go on"], [(3, "the story")]) == (
            [turn.text for turn in transcript.turns],
            [(c.before, c.summary) for c in transcript.compactions],
        )

    def test_a_failed_compaction_records_nothing_and_is_noted(self, tmp_path: Path) -> None:
        block = {"type": "compaction", "content": None}
        path = write_lines(
            tmp_path / "m.jsonl",
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [block, {"type": "text", "text": "hello"}]},
        )
        transcript = read_transcript(path, "anthropic")
        assert ((), ["hi", "hello"]) == (
            transcript.compactions,
            [turn.text for turn in transcript.turns],
        )
        assert [
            f"the compaction block at {path}:2: block 1 has no content (a compaction that "
            "failed, which the API treats as none): nothing recorded"
        ] == list(transcript.notes)


class TestRefusals:
    @pytest.mark.parametrize(
        ("message", "error"),
        [
            ({"role": "system", "content": "x"}, "role must be user or assistant"),
            ({"role": "user"}, "a message needs content"),
            (
                {"role": "assistant", "content": [{"type": "server_tool_usage", "id": "s"}]},
                "block 1 is 'server_tool_usage'",
            ),
            (
                {"role": "assistant", "content": [{"type": "tool_use", "name": "f"}]},
                "a tool_use block needs an id",
            ),
            (
                {"role": "user", "content": [{"type": "tool_result", "content": "x"}]},
                "a tool_result block needs a tool_use_id",
            ),
            (
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "nope"}]},
                "a tool result for call 'nope', which no earlier message made",
            ),
        ],
    )
    def test_a_malformed_message_names_its_line_and_block(
        self, tmp_path: Path, message: dict[str, Any], error: str
    ) -> None:
        path = write_lines(tmp_path / "m.jsonl", {"role": "user", "content": "hi"}, message)
        with pytest.raises(BadInput) as caught:
            read_transcript(path, "anthropic")
        assert str(caught.value).startswith(f"{path}:2")
        assert error in str(caught.value)
