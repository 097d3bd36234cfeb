"""memtape.lab.importers.gemini_cli: a Gemini CLI chat, as a document or as JSONL."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings

from memtape.core.errors import BadInput
from memtape.lab.importers import Compaction, read_transcript
from tests.transcripts import any_records, fixture, turns_of, unpaired, write_json, write_lines

CHAT = fixture("gemini-cli-session.json")
LINES = fixture("gemini-cli-session.jsonl")


def _messages() -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = json.loads(CHAT.read_text("utf-8"))["messages"]
    return messages


def _chat(tmp_path: Path, *messages: dict[str, Any]) -> Path:
    return write_json(
        tmp_path / "session.json",
        {"sessionId": "s1", "projectHash": "p1", "messages": list(messages)},
    )


class TestDocument:
    def test_every_tool_call_and_result_is_kept_and_paired(self) -> None:
        calls = [c["id"] for m in _messages() for c in m.get("toolCalls", [])]
        turns = turns_of(CHAT)
        assert (calls, calls, []) == (
            [c for t in turns for c in t.calls],
            [a for t in turns for a in t.answers],
            unpaired(turns),
        )
        assert (7, 15) == (len(calls), len(turns))

    def test_a_gemini_message_is_its_thoughts_its_text_and_its_calls(self) -> None:
        turn = turns_of(CHAT)[1]
        lines = turn.text.splitlines()
        assert (
            "[thinking] Locating the orders route: I need the handler and the existing tests "
            "before changing the query."
        ) == lines[0]
        assert "I'll look at the route and its tests first." == lines[1]
        assert lines[2].startswith('call glob({"pattern": "**/orders*.py"})')
        assert ("glob-1763733669001-a41", "read_file-1763733669002-b07") == turn.calls

    def test_a_gemini_message_s_tokens_are_its_turn_s_usage(self) -> None:
        # The fixture's tokens: input 5120, output 88, cached 0, thoughts 40.
        usage = read_transcript(CHAT).turns[1].usage
        assert usage is not None
        assert {"input": 5120, "output": 128, "cache_read": 0} == usage.table()

    def test_the_results_follow_their_message_as_tool_turns(self) -> None:
        roles = [turn.role for turn in turns_of(CHAT)[1:4]]
        assert ["assistant", "tool", "tool"] == roles

    def test_an_error_a_cancelled_call_and_a_result_kept_only_as_shown(self) -> None:
        turns = turns_of(CHAT)
        assert turns[7].text.startswith("[error] Command exited with code 1")
        assert "[cancelled] [Operation Cancelled] Reason: User did not allow tool call" == (
            turns[14].text
        )
        assert "7 passed in 0.41s" == turns[10].text

    def test_a_thought_part_reads_as_thinking(self) -> None:
        lines = turns_of(CHAT)[11].text.splitlines()
        assert "[thinking] Weighing whether to add a test for per_page above 200." == lines[0]

    def test_what_the_interface_showed_is_counted_not_imported(self) -> None:
        transcript = read_transcript(CHAT)
        assert transcript.ledger is not None
        assert [("info", 1), ("warning", 1)] == [
            (kind.kind, kind.entries) for kind in transcript.ledger.left_out
        ]
        assert not any("Checkpoint saved" in turn.text for turn in transcript.turns)


class TestLines:
    def test_the_last_version_of_a_message_counts_and_a_rewind_drops_a_branch(self) -> None:
        transcript = read_transcript(LINES)
        expected = [t.text for t in read_transcript(CHAT).turns[:12]]
        assert expected == [turn.text for turn in transcript.turns]

    def test_what_was_left_out_is_counted_and_the_calls_balance(self) -> None:
        ledger = read_transcript(LINES).ledger
        assert ledger is not None
        assert [
            ("$rewindTo", 1, 0),
            ("$set", 1, 0),
            ("info", 1, 0),
            ("rewound message", 2, 0),
            ("session metadata", 1, 0),
            ("superseded message", 1, 2),
        ] == [(kind.kind, kind.entries, kind.calls) for kind in ledger.left_out]
        assert (8, 6, 6, 6) == (
            ledger.calls_in,
            ledger.calls_out,
            ledger.results_in,
            ledger.results_out,
        )

    def test_a_record_of_no_known_shape_is_refused_named(self, tmp_path: Path) -> None:
        path = write_lines(
            tmp_path / "session.jsonl",
            {"sessionId": "s1", "projectHash": "p1"},
            {"level": "debug"},
        )
        with pytest.raises(BadInput) as caught:
            read_transcript(path)
        assert str(caught.value).startswith(f"{path}:2: a Gemini CLI record is a message")

    def test_a_rewind_to_a_message_the_file_lacks_is_refused_naming_it(
        self, tmp_path: Path
    ) -> None:
        """Not a silent drop of every message before it: the rewind cannot be applied."""
        path = write_lines(
            tmp_path / "session.jsonl",
            {"sessionId": "s1", "projectHash": "p1"},
            {"id": "m1", "type": "user", "content": "hello"},
            {"id": "m2", "type": "gemini", "content": "hi"},
            {"$rewindTo": "m9"},
        )
        with pytest.raises(BadInput) as caught:
            read_transcript(path)
        expected = (
            f"{path}:4: $rewindTo names message 'm9', which no message before it has: the "
            "rewind cannot be applied (it would drop the whole chat)"
        )
        assert expected == str(caught.value)


def _read_file_call(identity: str) -> dict[str, Any]:
    response = {"id": identity, "name": "read_file", "response": {"output": "port = 80"}}
    return {
        "id": identity,
        "name": "read_file",
        "args": {"path": "app.ini"},
        "result": [{"functionResponse": response}],
        "status": "success",
    }


class TestMessagesSet:
    """A record setting the chat's messages whole: ``{"$set": {"messages": [...]}}``."""

    def test_a_set_after_the_metadata_is_the_chat_s_messages(self, tmp_path: Path) -> None:
        path = write_lines(
            tmp_path / "session.jsonl",
            {"sessionId": "s1", "projectHash": "p1"},
            {
                "$set": {
                    "messages": [
                        {"id": "m1", "type": "user", "content": "Which port?"},
                        {
                            "id": "m2",
                            "type": "gemini",
                            "content": "",
                            "toolCalls": [_read_file_call("c1")],
                        },
                    ]
                }
            },
            {"id": "m3", "type": "user", "content": "Thanks."},
        )
        transcript = read_transcript(path)
        ledger = transcript.ledger
        assert ledger is not None
        assert (["user", "assistant", "tool", "user"], (1, 1, 1, 1)) == (
            [turn.role for turn in transcript.turns],
            (ledger.calls_in, ledger.calls_out, ledger.results_in, ledger.results_out),
        )

    def test_a_set_keeping_every_message_read_replaces_their_versions(self, tmp_path: Path) -> None:
        path = write_lines(
            tmp_path / "session.jsonl",
            {"sessionId": "s1", "projectHash": "p1"},
            {"id": "m1", "type": "user", "content": "Which port?"},
            {"id": "m2", "type": "gemini", "content": "Looking."},
            {
                "$set": {
                    "messages": [
                        {"id": "m1", "type": "user", "content": "Which port?"},
                        {"id": "m2", "type": "gemini", "content": "It is 80."},
                    ]
                }
            },
        )
        assert ["Which port?", "It is 80."] == [t.text for t in read_transcript(path).turns]

    def test_a_set_taking_back_the_last_messages_is_a_rollback_counted(
        self, tmp_path: Path
    ) -> None:
        first = {"id": "m1", "type": "user", "content": "Which port?"}
        answer = {"id": "m2", "type": "gemini", "content": "It is 80."}
        path = write_lines(
            tmp_path / "session.jsonl",
            {"sessionId": "s1", "projectHash": "p1"},
            first,
            answer,
            {"id": "m3", "type": "user", "content": "And the host?"},
            {"id": "m4", "type": "gemini", "content": "It is"},
            {"$set": {"messages": [first, answer]}},
        )
        transcript = read_transcript(path)
        assert transcript.ledger is not None
        assert (
            ["Which port?", "It is 80."],
            [("$set rolling back", 1), ("rewound message", 2), ("session metadata", 1)],
        ) == (
            [t.text for t in transcript.turns],
            [
                (k.kind, k.entries)
                for k in transcript.ledger.left_out
                if k.kind != "superseded message"
            ],
        )

    def test_the_metadata_s_messages_are_the_chat_s_first(self, tmp_path: Path) -> None:
        path = write_lines(
            tmp_path / "session.jsonl",
            {
                "sessionId": "s1",
                "projectHash": "p1",
                "messages": [{"id": "m1", "type": "user", "content": "Which port?"}],
            },
            {"id": "m2", "type": "gemini", "content": "It is 80."},
        )
        assert ["Which port?", "It is 80."] == [t.text for t in read_transcript(path).turns]


def _compressed(tmp_path: Path, *after: dict[str, Any]) -> Path:
    """A chat of four messages (a call and its result among them) that Gemini CLI
    compressed: a summary, the model's acknowledgement, the last two kept; then ``after``."""
    kept = [
        {"id": "m3", "type": "user", "content": "And the host?"},
        {"id": "m4", "type": "gemini", "content": "localhost"},
    ]
    return write_lines(
        tmp_path / "session.jsonl",
        {"sessionId": "s1", "projectHash": "p1"},
        {"id": "m1", "type": "user", "content": "Which port?"},
        {"id": "m2", "type": "gemini", "content": "", "toolCalls": [_read_file_call("c1")]},
        *kept,
        {
            "$set": {
                "messages": [
                    {
                        "id": "s",
                        "type": "user",
                        "content": "<state_snapshot>port 80</state_snapshot>",
                    },
                    {"id": "g", "type": "gemini", "content": [{"text": "Got it."}]},
                    *kept,
                ]
            }
        },
        *after,
    )


class TestCompression:
    """A ``$set`` of messages that rewrites the chat: Gemini CLI compressed it."""

    def test_it_is_a_recorded_compaction_its_summary_the_new_leading_messages(
        self, tmp_path: Path
    ) -> None:
        path = _compressed(tmp_path, {"id": "m5", "type": "user", "content": "Thanks."})
        transcript = read_transcript(path)
        assert (
            ["user", "assistant", "tool", "user", "assistant", "user"],
            [
                Compaction(
                    6,
                    "<state_snapshot>port 80</state_snapshot>\nGot it.",
                    f"{path}:6",
                    preserved=(4, 5),
                )
            ],
        ) == ([t.role for t in transcript.turns], list(transcript.compactions))

    def test_every_call_and_result_balances_and_the_kept_copies_are_counted(
        self, tmp_path: Path
    ) -> None:
        ledger = read_transcript(
            _compressed(tmp_path, {"id": "m5", "type": "user", "content": "Thanks."})
        ).ledger
        assert ledger is not None
        assert ((1, 1, 1, 1), [("$set compressing", 1), ("message a compression kept", 2)]) == (
            (ledger.calls_in, ledger.calls_out, ledger.results_in, ledger.results_out),
            [(k.kind, k.entries) for k in ledger.left_out if k.kind.startswith(("$", "message"))],
        )

    def test_a_later_set_listing_the_compressed_chat_again_imports_nothing_twice(
        self, tmp_path: Path
    ) -> None:
        later = {"id": "m5", "type": "user", "content": "Thanks."}
        again = [
            {"id": "s", "type": "user", "content": "<state_snapshot>port 80</state_snapshot>"},
            {"id": "g", "type": "gemini", "content": [{"text": "Got it."}]},
            {"id": "m3", "type": "user", "content": "And the host?"},
            {"id": "m4", "type": "gemini", "content": "localhost"},
            later,
        ]
        path = _compressed(tmp_path, later, {"$set": {"messages": again}})
        assert 6 == len(read_transcript(path).turns)

    def test_a_rewind_past_the_compression_is_refused_naming_it(self, tmp_path: Path) -> None:
        path = _compressed(tmp_path, {"$rewindTo": "m3"})
        with pytest.raises(BadInput) as caught:
            read_transcript(path)
        assert str(caught.value).startswith(
            f"{path}:7: the chat is taken back to before message 'm3'"
        )


class TestMessages:
    def test_a_call_without_a_result_is_made_and_said(self, tmp_path: Path) -> None:
        call = {"id": "c1", "name": "read_file", "args": {}, "status": "executing"}
        path = _chat(
            tmp_path,
            {"id": "1", "type": "user", "content": "read it"},
            {"id": "2", "type": "gemini", "content": "", "toolCalls": [call]},
        )
        transcript = read_transcript(path)
        assert (("c1",), ("1 tool calls have no result in the file",)) == (
            transcript.turns[1].calls,
            transcript.notes,
        )

    def test_a_document_s_messages_are_all_kept_even_under_one_id(self, tmp_path: Path) -> None:
        path = _chat(
            tmp_path,
            {"id": "1", "type": "user", "content": "one"},
            {"id": "1", "type": "user", "content": "two"},
        )
        assert ["one", "two"] == [t.text for t in turns_of(path, salient="all")]

    def test_an_image_part_is_a_note(self, tmp_path: Path) -> None:
        image = {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}
        path = _chat(tmp_path, {"id": "1", "type": "user", "content": [{"text": "this"}, image]})
        assert "this\n[inline data: image/png]" == turns_of(path, salient="all")[0].text

    def test_an_unknown_message_type_is_refused(self, tmp_path: Path) -> None:
        path = _chat(tmp_path, {"id": "1", "type": "model", "content": "hi"})
        with pytest.raises(BadInput, match=r"messages\[0\]: a message's type is one of user"):
            read_transcript(path)

    def test_format_gemini_cli_forces_the_reader(self, tmp_path: Path) -> None:
        path = write_lines(tmp_path / "chat.jsonl", {"id": "1", "type": "user", "content": "hi"})
        assert "gemini-cli" == read_transcript(path, "gemini-cli").format


class TestAnyRecords:
    @settings(max_examples=150, deadline=None)
    @given(records=any_records())
    def test_records_import_or_are_refused_in_one_line(self, records: list[dict[str, Any]]) -> None:
        with tempfile.TemporaryDirectory() as folder:
            path = write_lines(Path(folder) / "chat.jsonl", *records)
            try:
                read_transcript(path, "gemini-cli")
            except BadInput as error:
                refused = str(error)
            else:
                refused = ""
        assert "\n" not in refused
