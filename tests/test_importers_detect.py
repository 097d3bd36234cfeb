"""memtape.lab.importers.detect and .records: a transcript's format, told from its content."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

from pathlib import Path

import pytest

from memtape.core.errors import BadInput
from memtape.lab.importers import read_transcript
from memtape.lab.importers.detect import detect
from memtape.lab.importers.records import read_source
from memtape.lab.importers.wrappers import unwrapped
from tests.transcripts import fixture, write_json, write_lines

FIXTURES = {
    "support-chat.jsonl": "openai-chat",
    "openai-chat.json": "openai-chat",
    "openai-responses.jsonl": "openai-responses",
    "anthropic.json": "anthropic",
    "claude-code-session.jsonl": "claude-code",
    "langchain.json": "langchain",
    "codex-rollout.jsonl": "codex",
    "codex-rollout-2025.jsonl": "codex",
    "gemini-cli-session.json": "gemini-cli",
    "gemini-cli-session.jsonl": "gemini-cli",
    "swe-agent-function-calling.traj": "swe-agent",
    "swe-agent-text.traj": "swe-agent",
    "mini-swe-agent-text.traj.json": "mini-swe-agent",
    "mini-swe-agent-toolcall.traj.json": "mini-swe-agent",
}


class TestDetect:
    @pytest.mark.parametrize(("name", "format"), list(FIXTURES.items()))
    def test_each_fixture_is_told_its_format(self, name: str, format: str) -> None:
        assert format == detect(unwrapped(read_source(fixture(name))))

    def test_messages_no_format_marks_read_as_openai_chat(self, tmp_path: Path) -> None:
        path = write_lines(
            tmp_path / "plain.jsonl",
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [{"type": "text", "text": "hello"}]},
        )
        assert "openai-chat" == detect(read_source(path))

    def test_plain_messages_with_a_command_s_output_as_user_are_mini_swe_agent(
        self, tmp_path: Path
    ) -> None:
        path = write_lines(
            tmp_path / "plain.jsonl",
            {"role": "user", "content": "fix it"},
            {"role": "assistant", "content": "```bash\nls\n```"},
            {"role": "user", "content": "<returncode>0</returncode>\n<output>\na.py\n"},
        )
        assert "mini-swe-agent" == detect(read_source(path))

    def test_that_output_beside_another_format_s_marks_is_that_format(self, tmp_path: Path) -> None:
        path = write_lines(
            tmp_path / "chat.jsonl",
            {"role": "user", "content": "<returncode>0</returncode>"},
            {"role": "tool", "tool_call_id": "c1", "content": "ok"},
        )
        assert "openai-chat" == detect(read_source(path))

    def test_an_anthropic_response_is_not_a_responses_item(self, tmp_path: Path) -> None:
        path = write_lines(
            tmp_path / "m.jsonl",
            {"type": "message", "role": "assistant", "content": [{"type": "text", "text": "x"}]},
        )
        assert "anthropic" == detect(read_source(path))

    def test_a_responses_system_message_beside_its_items_is_responses(self, tmp_path: Path) -> None:
        path = write_lines(
            tmp_path / "items.jsonl",
            {"role": "system", "content": "be brief"},
            {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"},
        )
        assert "openai-responses" == detect(read_source(path))

    def test_a_session_id_beside_chat_messages_is_not_gemini_cli(self, tmp_path: Path) -> None:
        document = {"sessionId": "s1", "messages": [{"role": "user", "content": "hi"}]}
        assert "openai-chat" == detect(read_source(write_json(tmp_path / "chat.json", document)))

    def test_marks_of_two_formats_are_refused_naming_both(self, tmp_path: Path) -> None:
        path = write_lines(
            tmp_path / "mixed.jsonl",
            {"role": "tool", "tool_call_id": "c", "content": "x"},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c"}]},
        )
        with pytest.raises(BadInput) as caught:
            detect(read_source(path))
        expected = (
            f"{path}: cannot tell the format: it looks like openai-chat (at {path}:1) "
            f"and anthropic (at {path}:2)"
        )
        assert expected == str(caught.value)

    def test_a_record_no_format_reads_is_one_line_saying_what_was_seen(
        self, tmp_path: Path
    ) -> None:
        path = write_lines(tmp_path / "log.jsonl", {"level": "info", "msg": "started"})
        with pytest.raises(BadInput) as caught:
            detect(read_source(path))
        assert f"{path}:1: cannot tell the format: an object with level, msg" == str(caught.value)

    def test_format_forces_a_reader_which_refuses_what_it_cannot_read(self, tmp_path: Path) -> None:
        with pytest.raises(BadInput, match=r"anthropic.json: messages\[1\]: content part 1 is"):
            read_transcript(fixture("anthropic.json"), "openai-chat")


class TestRecords:
    def test_jsonl_records_are_named_by_line(self, tmp_path: Path) -> None:
        path = tmp_path / "c.jsonl"
        path.write_text('{"role": "user", "content": "a"}\n\n{"role": "user", "content": "b"}\n')
        assert [f"{path}:1", f"{path}:3"] == [r.where for r in read_source(path).records]

    def test_array_items_and_request_messages_are_named_by_index(self, tmp_path: Path) -> None:
        array = write_json(tmp_path / "a.json", [{"role": "user", "content": "a"}])
        request = write_json(tmp_path / "r.json", {"messages": [{"role": "user", "content": "a"}]})
        assert ([f"{array}: [0]"], [f"{request}: messages[0]"]) == (
            [r.where for r in read_source(array).records],
            [r.where for r in read_source(request).records],
        )

    def test_a_one_line_record_is_a_record_not_a_document(self, tmp_path: Path) -> None:
        path = write_lines(tmp_path / "c.jsonl", {"type": "custom_tool_call", "input": "ls"})
        source = read_source(path)
        assert (None, [f"{path}:1"]) == (source.document, [r.where for r in source.records])

    def test_a_json_value_that_holds_no_records_is_refused(self, tmp_path: Path) -> None:
        path = tmp_path / "n.json"
        path.write_text("42")
        with pytest.raises(BadInput, match=rf"^{path}: a transcript is JSON objects, got a number"):
            read_source(path)

    def test_a_missing_file_is_one_line(self, tmp_path: Path) -> None:
        with pytest.raises(BadInput, match="no such transcript"):
            read_source(tmp_path / "gone.jsonl")


class TestTracesAndCompactions:
    @pytest.mark.parametrize(
        ("name", "format"),
        [("otel-trace.json", "otel"), ("openinference-trace.json", "otel")],
    )
    def test_each_fixture_is_told_its_format(self, name: str, format: str) -> None:
        assert format == detect(read_source(fixture(name)))

    def test_a_compaction_block_marks_anthropic(self, tmp_path: Path) -> None:
        path = write_lines(
            tmp_path / "m.jsonl",
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [{"type": "compaction", "content": "s"}]},
        )
        assert "anthropic" == detect(read_source(path))

    def test_a_compaction_item_marks_openai_responses(self, tmp_path: Path) -> None:
        path = write_lines(
            tmp_path / "items.jsonl",
            {"role": "user", "content": "hi"},
            {"type": "compaction", "id": "cmp_1", "encrypted_content": "e"},
        )
        assert "openai-responses" == detect(read_source(path))
