"""memtape.lab.importers.openai_chat: OpenAI Chat Completions messages as turns."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import json
from pathlib import Path

import pytest

from memtape.core.errors import BadInput
from memtape.lab.importers import read_transcript
from tests.transcripts import fixture, turns_of, unpaired, write_json, write_lines

REQUEST = fixture("openai-chat.json")
SUPPORT = fixture("support-chat.jsonl")


def _messages() -> list[dict[str, object]]:
    data = json.loads(REQUEST.read_text("utf-8"))
    messages: list[dict[str, object]] = data["messages"]
    return messages


class TestRequestFixture:
    def test_every_tool_call_and_result_is_kept_and_paired(self) -> None:
        messages = _messages()
        calls = [c["id"] for m in messages for c in m.get("tool_calls") or []]  # type: ignore[attr-defined]
        results = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
        turns = turns_of(REQUEST)
        assert (calls, results, []) == (
            [c for t in turns for c in t.calls],
            [a for t in turns for a in t.answers],
            unpaired(turns),
        )
        assert (len(messages), 5, 5) == (len(turns), len(calls), len(results))

    def test_calls_are_kept_beside_a_string_content(self) -> None:
        """The bug: an assistant message with content and tool_calls lost its calls."""
        turn = turns_of(REQUEST)[2]
        assert ("assistant", ("call_lat_eu", "call_deploys")) == (turn.role, turn.calls)
        assert [
            "Let me check the latency dashboard and the recent deploys.",
            'call get_latency({"region": "eu-west-1", "service": "checkout"})',
            'call list_deploys({"since": "09:00"})',
        ] == turn.text.splitlines()

    def test_calls_are_kept_beside_an_empty_content(self) -> None:
        turn = turns_of(REQUEST)[5]
        assert (("call_notes",), 'call release_notes({"version": "v4.12.0"})') == (
            turn.calls,
            turn.text,
        )

    def test_a_developer_message_is_a_system_turn_and_a_name_heads_the_text(self) -> None:
        turns = turns_of(REQUEST)
        assert "system" == turns[0].role
        assert "sam: Checkout is slow for EU customers since 09:40. Can you see why?" == (
            turns[1].text
        )

    def test_a_tool_result_of_parts_is_its_text(self) -> None:
        turn = turns_of(REQUEST)[6]
        assert (("call_notes",), "v4.12.0: EU tax lookups moved to the new pricing-svc") == (
            turn.answers,
            turn.text,
        )

    def test_a_jsonl_and_an_array_of_the_same_messages_import_alike(self, tmp_path: Path) -> None:
        lines = write_lines(tmp_path / "chat.jsonl", *_messages())
        array = write_json(tmp_path / "chat.json", _messages())
        assert turns_of(REQUEST) == turns_of(lines) == turns_of(array)


class TestSupportChat:
    """The older fixture, one JSON message a line, imports as it always did."""

    def test_every_message_becomes_a_turn_in_order(self) -> None:
        messages = [json.loads(line) for line in SUPPORT.read_text("utf-8").splitlines()]
        turns = turns_of(SUPPORT)
        assert [m["role"] for m in messages] == [turn.role for turn in turns]
        assert 19 == len(turns)

    def test_string_content_is_kept_verbatim(self) -> None:
        turns = turns_of(SUPPORT)
        assert turns[1].text.startswith("Hi, this is Priya Raman. My order GX-20418")
        assert "$134.95 ($129.00 item + $5.95 shipping)" in turns[15].text

    def test_text_parts_are_joined_by_lines(self) -> None:
        turn = turns_of(SUPPORT)[8]
        assert 2 == len(turn.text.splitlines())
        assert turn.text.endswith("which may miss your weekend.")

    def test_a_tool_calling_message_reads_as_its_calls(self) -> None:
        turn = turns_of(SUPPORT)[2]
        assert ('call lookup_order({"order_id": "GX-20418"})', ("call_1",)) == (
            turn.text,
            turn.calls,
        )

    def test_tool_results_answer_their_calls(self) -> None:
        turns = turns_of(SUPPORT)
        assert ["call_1", "call_2", "call_3", "call_4"] == [a for t in turns for a in t.answers]
        assert [] == unpaired(turns)


class TestParts:
    def test_images_audio_files_and_refusals_read_as_notes(self, tmp_path: Path) -> None:
        content = [
            {"type": "text", "text": "what is this?"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
            {"type": "image_url", "image_url": {"url": "https://example.com/a.jpg"}},
            {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
            {"type": "file", "file": {"filename": "invoice.pdf", "file_data": "JVBERi0="}},
        ]
        path = write_lines(
            tmp_path / "chat.jsonl",
            {"role": "user", "content": content},
            {"role": "assistant", "content": [{"type": "refusal", "refusal": "I can't."}]},
            {"role": "assistant", "content": None, "refusal": "Not that either."},
        )
        turns = turns_of(path)
        assert [
            "what is this?\n[image: image/png]\n[image: https://example.com/a.jpg]\n"
            "[audio: wav]\n[file: invoice.pdf]",
            "[refusal] I can't.",
            "[refusal] Not that either.",
        ] == [turn.text for turn in turns]

    def test_a_legacy_function_call_is_answered_by_the_function_message(
        self, tmp_path: Path
    ) -> None:
        path = write_lines(
            tmp_path / "chat.jsonl",
            {"role": "user", "content": "weather?"},
            {
                "role": "assistant",
                "content": None,
                "function_call": {"name": "w", "arguments": "{}"},
            },
            {"role": "function", "name": "w", "content": "sunny"},
        )
        turns = turns_of(path)
        assert (("function_call.2",), ("function_call.2",), "w: sunny") == (
            turns[1].calls,
            turns[2].answers,
            turns[2].text,
        )

    def test_custom_tool_calls_are_calls(self, tmp_path: Path) -> None:
        call = {"id": "c1", "type": "custom", "custom": {"name": "sql", "input": "select 1"}}
        path = write_lines(
            tmp_path / "chat.jsonl",
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": "1"},
        )
        assert ["call sql(select 1)", "1"] == [turn.text for turn in turns_of(path)]


class TestRefusals:
    @pytest.mark.parametrize(
        ("line", "message"),
        [
            ("{not json", "not a JSON object"),
            ("[1, 2]", "a record is a JSON object, got an array"),
            ('{"content": "hi"}', "role must be one of system, developer, user, assistant, tool"),
            ('{"role": "the user", "content": "hi"}', "got 'the user'"),
            ('{"role": "user"}', "a message needs content"),
            ('{"role": "user", "content": 5}', "content must be a string"),
            ('{"role": "user", "content": null}', "content must be a string, parts, or null with"),
            ('{"role": "user", "content": [{"type": "video"}]}', "content part 1 is 'video'"),
            ('{"role": "user", "content": [{"type": "image_url"}]}', "needs image_url.url"),
            ('{"role": "user", "content": "\\ud800"}', "not a JSON object"),
            ('{"role": "assistant", "content": null, "tool_calls": [{}]}', "tool call 1: a tool"),
            ('{"role": "assistant", "content": "", "tool_calls": [{"id": "x"}]}', "a function"),
            ('{"role": "tool", "content": "42"}', "a tool message needs the tool_call_id"),
            ('{"role": "tool", "tool_call_id": "nope", "content": "42"}', "which no earlier"),
            ('{"role": "function", "content": "42"}', "no earlier function_call is unanswered"),
        ],
    )
    def test_a_malformed_line_names_file_and_line(
        self, tmp_path: Path, line: str, message: str
    ) -> None:
        path = tmp_path / "chat.jsonl"
        path.write_text('{"role": "user", "content": "hello"}\n' + line + "\n", "utf-8")
        with pytest.raises(BadInput) as caught:
            read_transcript(path, "openai-chat")
        assert str(caught.value).startswith(f"{path}:2: ")
        assert message in str(caught.value)

    def test_a_call_id_made_again_while_its_call_waits_is_refused_naming_both_places(
        self, tmp_path: Path
    ) -> None:
        call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        path = write_lines(
            tmp_path / "chat.jsonl",
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "assistant", "content": None, "tool_calls": [call]},
        )
        with pytest.raises(BadInput) as caught:
            read_transcript(path)
        expected = (
            f"{path}:2: tool call id 'c1' is made twice (first at {path}:1, which still waits "
            "for its result)"
        )
        assert expected == str(caught.value)

    def test_a_second_result_for_one_call_is_refused(self, tmp_path: Path) -> None:
        call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        path = write_lines(
            tmp_path / "chat.jsonl",
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": "a"},
            {"role": "tool", "tool_call_id": "c1", "content": "b"},
        )
        with pytest.raises(BadInput, match=rf"^{path}:3: a second tool result for call 'c1'"):
            read_transcript(path)

    def test_a_message_of_a_request_is_named_by_its_index(self, tmp_path: Path) -> None:
        path = write_json(
            tmp_path / "request.json",
            {"messages": [{"role": "user", "content": "hi"}, {"role": "user", "content": 5}]},
        )
        with pytest.raises(BadInput, match=rf"^{path}: messages\[1\]: content must be"):
            read_transcript(path, "openai-chat")

    def test_invalid_utf8_names_its_line(self, tmp_path: Path) -> None:
        path = tmp_path / "chat.jsonl"
        path.write_bytes(
            b'{"role": "user", "content": "ok"}\n{"role": "user", "content": "\xff"}\n'
        )
        with pytest.raises(BadInput, match=rf"^{path}:2: not a JSON object"):
            read_transcript(path)

    def test_an_empty_file_has_no_messages(self, tmp_path: Path) -> None:
        path = tmp_path / "chat.jsonl"
        path.write_text("\n", "utf-8")
        with pytest.raises(BadInput, match="no messages"):
            read_transcript(path)
