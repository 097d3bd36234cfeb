"""memtape.lab.importers.capture: a capture's threads, and what the agent did to its context."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import json
import tempfile
import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memtape.capture.threads import ANTHROPIC, CHAT, RESPONSES
from memtape.cli import main
from memtape.core.errors import BadInput
from memtape.lab.importers import Compaction, Thread, Transcript, read_transcript
from memtape.lab.importers.fields import UnreadCount
from memtape.lab.importers.records import UnfinishedLine
from memtape.scenarios.usage import Usage
from tests.captures import (
    SYSTEM,
    calling,
    chat,
    chat_reply,
    exchange,
    item,
    message_reply,
    messages,
    response,
    responses,
    result,
    said,
    text,
    use,
    write_capture,
)
from tests.transcripts import any_records

S = said("system", SYSTEM)
U1 = said("user", "Refund order ORD-9 please")
A1 = calling("call_1")
T1 = result("call_1", "ORD-9: shipped on 2 May, 40 EUR")
A2 = said("assistant", "It shipped; the refund is issued.")
U2 = said("user", "And ORD-10?")
A3 = said("assistant", "ORD-10 is pending.")
U3 = said("user", "Thanks, bye")
A4 = said("assistant", "Bye!")


def _chat_session(*requests: list[dict[str, Any]], replies: list[dict[str, Any]]) -> list[Any]:
    return [
        exchange(n, CHAT, chat(*request), chat_reply(reply, prompt=100 * n))
        for n, (request, reply) in enumerate(zip(requests, replies, strict=True), start=1)
    ]


def _extending() -> list[Any]:
    """Four chat requests, each the one before, its reply and a new message."""
    return _chat_session(
        [S, U1],
        [S, U1, A1, T1],
        [S, U1, A1, T1, A2, U2],
        [S, U1, A1, T1, A2, U2, A3, U3],
        replies=[A1, A2, A3, A4],
    )


def _read(path: Path, **options: Any) -> Transcript:
    return read_transcript(path, **options)


def _only(transcript: Transcript) -> Compaction:
    assert 1 == len(transcript.compactions), transcript.compactions
    return transcript.compactions[0]


def _calls_and_results(folder: Path, lines: list[Any]) -> tuple[int, int, int, int]:
    """The ledger of a capture of ``lines``: calls in and out, results in and out."""
    ledger = _read(write_capture(folder / "cap.jsonl", *lines)).ledger
    assert ledger is not None
    return (ledger.calls_in, ledger.calls_out, ledger.results_in, ledger.results_out)


class TestFormat:
    def test_the_header_line_tells_the_format(self, tmp_path: Path) -> None:
        path = write_capture(tmp_path / "cap.jsonl", *_extending())
        assert "capture" == _read(path).format

    def test_format_capture_on_a_file_without_its_header_is_refused_naming_line_1(
        self, tmp_path: Path
    ) -> None:
        path = write_capture(tmp_path / "cap.jsonl", *_extending(), header=False)
        with pytest.raises(BadInput, match=r"cap\.jsonl:1: a capture begins with its header"):
            _read(path, format="capture")

    def test_a_later_capture_version_is_refused_naming_its_line(self, tmp_path: Path) -> None:
        path = tmp_path / "cap.jsonl"
        path.write_text(json.dumps({"memtape_capture": 2}) + "\n", "utf-8")
        with pytest.raises(BadInput, match=r"cap\.jsonl:1: capture version 2"):
            _read(path)


class TestTurns:
    def test_each_message_is_a_turn_where_it_first_appears_and_each_response_too(
        self, tmp_path: Path
    ) -> None:
        path = write_capture(tmp_path / "cap.jsonl", *_extending())
        turns = _read(path).turns
        assert [
            ("system", SYSTEM),
            ("user", "Refund order ORD-9 please"),
            ("assistant", 'looking it up\ncall lookup({"q": "call_1"})'),
            ("tool", "ORD-9: shipped on 2 May, 40 EUR"),
            ("assistant", "It shipped; the refund is issued."),
            ("user", "And ORD-10?"),
            ("assistant", "ORD-10 is pending."),
            ("user", "Thanks, bye"),
            ("assistant", "Bye!"),
        ] == [(turn.role, turn.text) for turn in turns]
        assert (("call_1",), ("call_1",)) == (turns[2].calls, turns[3].answers)

    def test_a_response_s_usage_is_its_turn_s_without_the_cached_prompt(
        self, tmp_path: Path
    ) -> None:
        path = write_capture(tmp_path / "cap.jsonl", *_extending())
        turns = _read(path).turns
        assert Usage(100, 10, 100) == turns[4].usage
        assert [None, None, None, None] == [turns[i].usage for i in (0, 1, 3, 5)]

    def test_a_usage_count_that_is_no_count_is_said_naming_the_exchange_and_field(
        self, tmp_path: Path
    ) -> None:
        """A count past 64 bits is read by orjson as a float; it was dropped unsaid."""
        lines = _extending()
        lines[1]["response"]["usage"]["completion_tokens"] = 10**30
        path = write_capture(tmp_path / "cap.jsonl", *lines)
        with pytest.warns(UnreadCount) as caught:
            turns = _read(path).turns
        assert [
            f"{path}:3: response.usage.completion_tokens: not a token count, read as none: 1e+30"
        ] == [str(warning.message) for warning in caught]
        assert Usage(100, None, 100) == turns[4].usage

    def test_cached_tokens_past_the_prompt_keep_the_prompt_as_the_other_importers_do(
        self, tmp_path: Path
    ) -> None:
        """fields.inclusive_usage reads them as counted apart; the capture's own copy of the
        sum made the uncached prompt 0, so the same response billed apart per importer."""
        lines = _extending()
        lines[1]["response"]["usage"]["prompt_tokens_details"]["cached_tokens"] = 500
        path = write_capture(tmp_path / "cap.jsonl", *lines)
        assert Usage(200, 10, 500) == _read(path).turns[4].usage

    def test_an_exchange_without_a_response_adds_its_request_s_turns_only(
        self, tmp_path: Path
    ) -> None:
        failed = exchange(2, CHAT, chat(S, U1, A1, T1), None, status=500)
        retried = exchange(3, CHAT, chat(S, U1, A1, T1), chat_reply(A2))
        path = write_capture(tmp_path / "cap.jsonl", _extending()[0], failed, retried)
        transcript = _read(path)
        assert ["system", "user", "assistant", "tool", "assistant"] == [
            t.role for t in transcript.turns
        ]
        assert () == transcript.compactions
        assert any("1 exchange got no response" in note for note in transcript.notes)

    def test_a_response_cut_short_by_a_dropped_connection_is_no_turn(self, tmp_path: Path) -> None:
        cut = exchange(
            2,
            CHAT,
            chat(S, U1, A1, T1),
            chat_reply(said("assistant", "It shi")),
            error="connection dropped after 1,204 bytes",
        )
        retried = exchange(3, CHAT, chat(S, U1, A1, T1), chat_reply(A2))
        path = write_capture(tmp_path / "cap.jsonl", _extending()[0], cut, retried)
        transcript = _read(path)
        assert (["It shipped; the refund is issued."], ()) == (
            [t.text for t in transcript.turns if t.text.startswith("It shi")],
            transcript.compactions,
        )

    def test_a_responses_request_naming_its_previous_response_sends_only_what_is_new(
        self, tmp_path: Path
    ) -> None:
        first = exchange(
            1,
            RESPONSES,
            responses(item("user", "hi")),
            response("resp_1", item("assistant", "hello")),
        )
        second = exchange(
            2,
            RESPONSES,
            responses(item("user", "and then?"), previous_response_id="resp_1"),
            response("resp_2", item("assistant", "then nothing")),
        )
        path = write_capture(tmp_path / "cap.jsonl", first, second)
        transcript = _read(path)
        assert ["system", "user", "assistant", "user", "assistant"] == [
            t.role for t in transcript.turns
        ]
        assert () == transcript.compactions

    def test_a_server_tool_s_blocks_are_notes_in_the_assistant_s_turn(self, tmp_path: Path) -> None:
        search = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search"}
        found = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []}
        line = exchange(
            1, ANTHROPIC, messages(said("user", "news?")), message_reply(search, found, text("ok"))
        )
        path = write_capture(tmp_path / "cap.jsonl", line)
        assert "[server_tool_use: web_search]\n[web_search_tool_result]\nok" == (
            _read(path).turns[-1].text
        )


class TestDetection:
    def test_a_reply_resent_with_null_content_where_it_had_empty_is_no_change(
        self, tmp_path: Path
    ) -> None:
        replied = {**calling("call_1", ""), "content": ""}
        resent = {**calling("call_1", ""), "content": None}
        lines = [
            exchange(1, CHAT, chat(S, U1), chat_reply(replied)),
            exchange(2, CHAT, chat(S, U1, resent, T1), chat_reply(A2)),
        ]
        path = write_capture(tmp_path / "cap.jsonl", *lines)
        assert () == _read(path).compactions

    def test_a_request_that_extends_the_last_one_and_its_reply_is_no_compaction(
        self, tmp_path: Path
    ) -> None:
        path = write_capture(tmp_path / "cap.jsonl", *_extending())
        assert () == _read(path).compactions

    def test_a_dropped_prefix_is_a_truncation_at_the_request_that_dropped_it(
        self, tmp_path: Path
    ) -> None:
        lines = _chat_session(
            [S, U1],
            [S, U1, A1, T1],
            [S, U1, A1, T1, A2, U2],
            [S, U2, A3, U3],
            replies=[A1, A2, A3, A4],
        )
        path = write_capture(tmp_path / "cap.jsonl", *lines)
        compaction = _only(_read(path))
        assert (8, ((2, 5),), None, "", "truncation") == (
            compaction.before,
            compaction.dropped,
            compaction.folded,
            compaction.summary,
            compaction.trigger,
        )
        assert compaction.label is not None
        assert compaction.label.startswith("exchange 4, ")
        assert "cap.jsonl:5: truncation: 4 turns dropped" in compaction.label

    def test_earlier_turns_replaced_by_a_new_message_are_a_summary_of_its_text(
        self, tmp_path: Path
    ) -> None:
        summary = said("user", "Summary: ORD-9 was refunded 40 EUR.")
        lines = _chat_session(
            [S, U1],
            [S, U1, A1, T1],
            [S, U1, A1, T1, A2, U2],
            [S, summary, U2, A3, U3],
            replies=[A1, A2, A3, A4],
        )
        path = write_capture(tmp_path / "cap.jsonl", *lines)
        transcript = _read(path)
        compaction = _only(transcript)
        assert (8, ((2, 5),), (), "Summary: ORD-9 was refunded 40 EUR.", "summary") == (
            compaction.before,
            compaction.folded,
            compaction.dropped,
            compaction.summary,
            compaction.trigger,
        )
        assert (compaction.label or "").startswith("exchange 4, ")
        assert "Summary: ORD-9" not in [turn.text for turn in transcript.turns]

    def test_a_tool_result_rewritten_in_place_is_a_clearing_at_that_request(
        self, tmp_path: Path
    ) -> None:
        cleared = result("call_1", "[cleared]")
        lines = _chat_session(
            [S, U1],
            [S, U1, A1, T1],
            [S, U1, A1, T1, A2, U2],
            [S, U1, A1, cleared, A2, U2, A3, U3],
            replies=[A1, A2, A3, A4],
        )
        path = write_capture(tmp_path / "cap.jsonl", *lines)
        compaction = _only(_read(path))
        assert (8, ((4, "[cleared]"),), (), None, "clearing") == (
            compaction.before,
            compaction.cleared,
            compaction.dropped,
            compaction.folded,
            compaction.trigger,
        )
        assert (compaction.label or "").startswith("exchange 4, ")

    def test_anthropic_context_management_clears_the_oldest_results_it_counts_before_its_reply(
        self, tmp_path: Path
    ) -> None:
        u1 = said("user", "Read both files")
        a1 = {"role": "assistant", "content": [use("toolu_1"), use("toolu_2")]}
        edits = {
            "applied_edits": [
                {
                    "type": "clear_tool_uses_20250919",
                    "cleared_tool_uses": 1,
                    "cleared_input_tokens": 5000,
                }
            ]
        }
        both = {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "first file"},
                {"type": "tool_result", "tool_use_id": "toolu_2", "content": "second file"},
            ],
        }
        lines = [
            exchange(1, ANTHROPIC, messages(u1), message_reply(use("toolu_1"), use("toolu_2"))),
            exchange(
                2,
                ANTHROPIC,
                messages(u1, a1, both),
                message_reply(text("Both read."), identity="msg_2", context_management=edits),
            ),
        ]
        path = write_capture(tmp_path / "cap.jsonl", *lines)
        transcript = _read(path)
        compaction = _only(transcript)
        assert ["system", "user", "assistant", "tool", "tool", "assistant"] == [
            t.role for t in transcript.turns
        ]
        assert (6, ((4, "[tool result cleared]"),), "context management") == (
            compaction.before,
            compaction.cleared,
            compaction.trigger,
        )
        assert compaction.label is not None
        assert compaction.label.startswith("exchange 2, ")
        assert "1 tool use cleared, 5,000 input tokens" in compaction.label
        assert (5470, 470) == (compaction.pre_tokens, compaction.post_tokens)

    def test_context_management_spares_the_results_of_the_tools_it_excludes(
        self, tmp_path: Path
    ) -> None:
        u1 = said("user", "Read, then grep")
        calls = [use("toolu_1"), {**use("toolu_2"), "name": "Grep"}]
        a1 = {"role": "assistant", "content": calls}
        both = {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "read"},
                {"type": "tool_result", "tool_use_id": "toolu_2", "content": "grepped"},
            ],
        }
        config = {"edits": [{"type": "clear_tool_uses_20250919", "exclude_tools": ["Read"]}]}
        edits = {"applied_edits": [{"type": "clear_tool_uses_20250919", "cleared_tool_uses": 1}]}
        lines = [
            exchange(1, ANTHROPIC, messages(u1), message_reply(*calls)),
            exchange(
                2,
                ANTHROPIC,
                messages(u1, a1, both, context_management=config),
                message_reply(text("Done."), identity="msg_2", context_management=edits),
            ),
        ]
        path = write_capture(tmp_path / "cap.jsonl", *lines)
        assert ((5, "[tool result cleared]"),) == _only(_read(path)).cleared

    def test_an_anthropic_compaction_block_folds_every_turn_before_its_reply(
        self, tmp_path: Path
    ) -> None:
        u1, u2 = said("user", "Plan the migration"), said("user", "Go on")
        block = {"type": "compaction", "content": "Summary: migrate the orders table."}
        lines = [
            exchange(1, ANTHROPIC, messages(u1), message_reply(text("Step one: back up."))),
            exchange(
                2,
                ANTHROPIC,
                messages(u1, said("assistant", "Step one: back up."), u2),
                message_reply(block, text("Step two: copy."), identity="msg_2"),
            ),
            exchange(
                3,
                ANTHROPIC,
                messages(
                    u1,
                    said("assistant", "Step one: back up."),
                    u2,
                    {"role": "assistant", "content": [block, text("Step two: copy.")]},
                    said("user", "Then?"),
                ),
                message_reply(text("Step three: switch."), identity="msg_3"),
            ),
        ]
        path = write_capture(tmp_path / "cap.jsonl", *lines)
        transcript = _read(path)
        compaction = _only(transcript)
        assert (5, ((2, 4),), "Summary: migrate the orders table.", "compaction block") == (
            compaction.before,
            compaction.folded,
            compaction.summary,
            compaction.trigger,
        )
        assert (compaction.label or "").startswith("exchange 2, ")
        assert ["system", "user", "assistant", "user", "assistant", "user", "assistant"] == [
            t.role for t in transcript.turns
        ]

    def test_an_openai_compaction_item_in_place_of_earlier_items_is_its_summary(
        self, tmp_path: Path
    ) -> None:
        u1, a1 = item("user", "Plan the migration"), item("assistant", "Step one: back up.")
        u2, a2 = item("user", "Go on"), item("assistant", "Step two: copy.")
        compacted = {
            "type": "compaction",
            "id": "cmp_1",
            "summary": [{"type": "summary_text", "text": "Summary: migrate orders."}],
        }
        lines = [
            exchange(1, RESPONSES, responses(u1), response("resp_1", a1)),
            exchange(2, RESPONSES, responses(u1, a1, u2), response("resp_2", a2)),
            exchange(
                3,
                RESPONSES,
                responses(compacted, item("user", "Then?")),
                response("resp_3", item("assistant", "Step three.")),
            ),
        ]
        path = write_capture(tmp_path / "cap.jsonl", *lines)
        compaction = _only(_read(path))
        assert (6, ((2, 5),), "Summary: migrate orders.", "compaction item") == (
            compaction.before,
            compaction.folded,
            compaction.summary,
            compaction.trigger,
        )
        assert (compaction.label or "").startswith("exchange 3, ")


class TestThreads:
    def _listed(self, path: Path, **options: Any) -> tuple[list[Thread], Transcript]:
        heard: list[Thread] = []
        transcript = read_transcript(path, threads=heard.extend, **options)
        return heard, transcript

    def test_a_subagent_s_requests_are_a_thread_apart_and_the_longest_imports(
        self, tmp_path: Path
    ) -> None:
        helper = said("system", "You summarise files.")
        sub = exchange(
            3,
            CHAT,
            chat(helper, said("user", "Summarise a.txt")),
            chat_reply(said("assistant", "ok")),
        )
        lines = _extending()
        path = write_capture(tmp_path / "cap.jsonl", lines[0], lines[1], sub, lines[2], lines[3])
        heard, transcript = self._listed(path)
        assert [(1, 4, 9, True), (2, 1, 3, False)] == [
            (t.number, t.requests, t.turns, t.chosen) for t in heard
        ]
        assert "Summarise a.txt" == heard[1].first
        assert 9 == len(transcript.turns)

    def test_thread_by_number_or_by_key_imports_that_one(self, tmp_path: Path) -> None:
        helper = said("system", "You summarise files.")
        sub = exchange(
            2,
            CHAT,
            chat(helper, said("user", "Summarise a.txt")),
            chat_reply(said("assistant", "ok")),
        )
        path = write_capture(tmp_path / "cap.jsonl", *_extending(), sub)
        heard, by_number = self._listed(path, thread="2")
        _, by_key = self._listed(path, thread=heard[1].key)
        assert ["You summarise files.", "Summarise a.txt", "ok"] == [
            t.text for t in by_number.turns
        ]
        assert by_number.turns == by_key.turns

    def test_an_unknown_thread_is_one_line_naming_those_there_are(self, tmp_path: Path) -> None:
        path = write_capture(tmp_path / "cap.jsonl", *_extending())
        heard, _ = self._listed(path)
        with pytest.raises(BadInput) as refused:
            read_transcript(path, thread="7")
        assert f"--thread '7': no such thread; the capture has 1 ({heard[0].key})" in str(
            refused.value
        )
        assert "\n" not in str(refused.value)

    @pytest.mark.parametrize("thread", ["\u0661", "9" * 5000, "01"])
    def test_a_thread_number_is_ascii_digits_as_listed(self, tmp_path: Path, thread: str) -> None:
        """An Arabic-Indic one picked thread 1 (str.isdigit), 5,000 digits were int()'s
        ValueError traceback, and 01 is no number the list shows."""
        path = write_capture(tmp_path / "cap.jsonl", *_extending())
        heard, _ = self._listed(path)
        with pytest.raises(BadInput) as refused:
            read_transcript(path, thread=thread)
        assert (
            f"{path}: --thread {thread!r}: no such thread; the capture has 1 ({heard[0].key})"
            == (str(refused.value))
        )

    def test_responses_chained_by_previous_response_id_are_one_thread(self, tmp_path: Path) -> None:
        first = exchange(
            1, RESPONSES, responses(item("user", "hi")), response("resp_1", item("assistant", "yo"))
        )
        other = exchange(
            2,
            RESPONSES,
            responses(item("user", "unrelated")),
            response("resp_x", item("assistant", "k")),
        )
        second = exchange(
            3,
            RESPONSES,
            responses(item("user", "next"), previous_response_id="resp_1"),
            response("resp_2", item("assistant", "sure")),
        )
        path = write_capture(tmp_path / "cap.jsonl", first, other, second)
        heard, _ = self._listed(path)
        assert [2, 1] == [t.requests for t in heard]

    def test_a_session_key_keeps_the_thread_when_the_first_message_is_rewritten(
        self, tmp_path: Path
    ) -> None:
        meta = {"user_id": "session-42"}
        u1 = said("user", "Plan the migration")
        lines = [
            exchange(1, ANTHROPIC, messages(u1, metadata=meta), message_reply(text("Back up."))),
            exchange(
                2,
                ANTHROPIC,
                messages(said("user", "Summary: back up done. Go on."), metadata=meta),
                message_reply(text("Copy."), identity="msg_2"),
            ),
        ]
        path = write_capture(tmp_path / "cap.jsonl", *lines)
        heard, transcript = self._listed(path)
        assert 1 == len(heard)
        assert heard[0].key.startswith("s-")
        assert 1 == len(transcript.compactions)

    def test_without_a_session_key_a_rewritten_first_message_is_joined_to_its_thread(
        self, tmp_path: Path
    ) -> None:
        summary = said("user", "Summary: ORD-9 was refunded.")
        lines = _chat_session(
            [S, U1],
            [S, U1, A1, T1],
            [S, summary, U2],
            replies=[A1, A2, A3],
        )
        path = write_capture(tmp_path / "cap.jsonl", *lines)
        heard, transcript = self._listed(path)
        compaction = _only(transcript)
        assert [3] == [t.requests for t in heard]
        assert ("Summary: ORD-9 was refunded.", 6) == (compaction.summary, compaction.before)
        assert any("goes on from" in note for note in transcript.notes)


class TestLedger:
    def test_each_call_and_result_counts_once_however_often_it_is_resent(
        self, tmp_path: Path
    ) -> None:
        path = write_capture(tmp_path / "cap.jsonl", *_extending())
        ledger = _read(path).ledger
        assert ledger is not None
        assert (5, 9, 1, 1, 1, 1) == (
            ledger.entries,
            ledger.turns,
            ledger.calls_in,
            ledger.calls_out,
            ledger.results_in,
            ledger.results_out,
        )

    def test_a_call_id_a_reply_uses_again_after_its_first_call_left_is_a_call_of_its_own(
        self, tmp_path: Path
    ) -> None:
        """A provider that numbers calls per reply (``call_0`` each time): once the first
        call and its result left the context, the next ``call_0`` and its result are new."""
        again, answer = calling("call_1", "again"), result("call_1", "second")
        lines = _chat_session(
            [S, U1],
            [S, U1, A1, T1],
            [S, U2],
            [S, U2, again, answer],
            replies=[A1, A2, again, A4],
        )
        assert (2, 2, 2, 2) == _calls_and_results(tmp_path, lines)

    def test_a_call_and_result_sent_again_after_they_left_are_turns_again_counted_again(
        self, tmp_path: Path
    ) -> None:
        """An agent that builds each request from a store (retrieval) sends an old call
        and its result again: turns where they come back, and in the ledger there too."""
        lines = _chat_session(
            [S, U1],
            [S, U1, A1, T1],
            [S, U2],
            [S, U2, A3, A1, T1, U3],
            replies=[A1, A3, A3, A4],
        )
        assert (2, 2, 2, 2) == _calls_and_results(tmp_path, lines)

    def test_the_calls_of_a_reply_cut_short_are_left_out_with_it(self, tmp_path: Path) -> None:
        """A stream dropped once the model had begun a call: the retry's reply is the turn,
        the cut reply's call is no call of the session's."""
        cut = exchange(1, CHAT, chat(S, U1), chat_reply(calling("call_cut")))
        cut["error"] = "connection dropped after 310 bytes"
        retried = _chat_session([S, U1], [S, U1, A1, T1], replies=[A1, A2])
        for number, line in enumerate(retried, start=2):
            line["exchange"] = number
        ledger = _read(write_capture(tmp_path / "cap.jsonl", cut, *retried)).ledger
        assert ledger is not None
        assert ({"capture header": (1, 0, 0), "failed reply": (1, 1, 0)}, 2, 1) == (
            {kind.kind: (kind.entries, kind.calls, kind.results) for kind in ledger.left_out},
            ledger.calls_in,
            ledger.calls_out,
        )

    def test_headers_other_endpoints_and_other_threads_are_left_out_by_kind(
        self, tmp_path: Path
    ) -> None:
        models = exchange(5, "other", None, None, method="GET")
        helper = said("system", "You summarise files.")
        tool_call = calling("call_9")
        sub = exchange(6, CHAT, chat(helper, said("user", "Sum")), chat_reply(tool_call))
        path = write_capture(tmp_path / "cap.jsonl", *_extending(), models, sub)
        ledger = _read(path).ledger
        assert ledger is not None
        assert {"capture header": 1, "other endpoint": 1, "other thread": 1} == {
            kind.kind: kind.entries for kind in ledger.left_out
        }
        assert (2, 1) == (ledger.calls_in, ledger.calls_out)

    @pytest.mark.parametrize("tool_calls", [5, True, 1.5, "call_1"])
    def test_a_failed_reply_whose_tool_calls_are_no_list_is_left_out_holding_none(
        self, tmp_path: Path, tool_calls: Any
    ) -> None:
        """A failed reply is no turn, so nothing read its body but the ledger's count,
        which iterated its ``tool_calls`` as they came: a number was a traceback."""
        broken = exchange(2, CHAT, chat(S, U1), chat_reply({"tool_calls": tool_calls}), status=500)
        path = write_capture(tmp_path / "cap.jsonl", *_chat_session([S, U1], replies=[A2]), broken)
        ledger = _read(path).ledger
        assert ledger is not None
        assert {"capture header": (1, 0, 0)} == {
            kind.kind: (kind.entries, kind.calls, kind.results) for kind in ledger.left_out
        }


class TestLines:
    def test_a_half_written_last_line_is_skipped_with_a_warning(self, tmp_path: Path) -> None:
        path = write_capture(tmp_path / "cap.jsonl", *_extending())
        with path.open("a", encoding="utf-8") as file:
            file.write('{"exchange": 5, "endpoint": "openai.chat", "requ')
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            transcript = _read(path)
        assert 9 == len(transcript.turns)
        assert [UnfinishedLine] == [w.category for w in caught]

    def test_a_malformed_line_is_refused_naming_file_and_line(self, tmp_path: Path) -> None:
        path = write_capture(tmp_path / "cap.jsonl", *_extending())
        lines = path.read_text("utf-8").splitlines()
        lines[2] = "{not json"
        path.write_text("\n".join(lines) + "\n", "utf-8")
        with pytest.raises(BadInput, match=r"cap\.jsonl:3: not a JSON object"):
            _read(path)

    def test_an_exchange_without_its_endpoint_is_refused_naming_its_line(
        self, tmp_path: Path
    ) -> None:
        path = write_capture(tmp_path / "cap.jsonl", {"exchange": 1, "request": {}})
        with pytest.raises(BadInput, match=r"cap\.jsonl:2: an exchange needs its endpoint"):
            _read(path)


class TestCommandLine:
    def _truncating(self, tmp_path: Path) -> Path:
        lines = _chat_session(
            [S, U1],
            [S, U1, A1, T1],
            [S, U1, A1, T1, A2, U2],
            [S, U2, A3, U3],
            replies=[A1, A2, A3, A4],
        )
        return write_capture(tmp_path / "cap.jsonl", *lines)

    def test_import_lists_the_threads_then_the_ledger(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        path = self._truncating(tmp_path)
        out = tmp_path / "cap.toml"
        assert 0 == main(["import", str(path), "--out", str(out), "--tokenizer", "words"])
        printed = capsys.readouterr().out.splitlines()
        listed = [line for line in printed if "thread 1" in line]
        assert 1 == len(listed)
        assert listed[0].startswith("* thread 1 f-")
        assert listed[0].endswith(": 4 requests, 9 turns: Refund order ORD-9 please")
        assert "tool calls: 1 in, 1 out" in printed

    def test_a_first_message_s_escapes_are_listed_visible_not_acted_on(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        hostile = said("user", "\x1b]0;owned\x07\x1b[2Jhi\u202e")
        line = exchange(1, CHAT, chat(S, hostile), chat_reply(A4))
        path = write_capture(tmp_path / "cap.jsonl", line)
        assert 0 == main(["import", str(path), "--out", str(tmp_path / "cap.toml")])
        listed = next(out for out in capsys.readouterr().out.splitlines() if "thread 1" in out)
        assert listed.endswith(": 1 request, 3 turns: \\x1b]0;owned\\x07\\x1b[2Jhi\\u202e")

    def test_a_thread_s_line_is_cut_to_the_terminal_s_width(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("COLUMNS", "60")
        path = self._truncating(tmp_path)
        assert 0 == main(["import", str(path), "--out", str(tmp_path / "cap.toml")])
        listed = next(out for out in capsys.readouterr().out.splitlines() if "thread 1" in out)
        assert (60, "...") == (len(listed), listed[-3:])

    def test_thread_on_a_file_that_is_no_capture_is_refused(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        path = tmp_path / "chat.json"
        path.write_text(json.dumps([U1, A4]), "utf-8")
        assert 0 != main(["import", str(path), "--out", str(tmp_path / "c.toml"), "--thread", "1"])
        assert "--thread is for capture files, and this is openai-chat" in capsys.readouterr().err

    def test_an_unknown_thread_is_one_line_on_stderr_and_nothing_written(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        path = self._truncating(tmp_path)
        out = tmp_path / "cap.toml"
        assert 0 != main(["import", str(path), "--out", str(out), "--thread", "3"])
        err = capsys.readouterr().err
        assert 1 == len(err.strip().splitlines())
        assert "no such thread; the capture has 1 (f-" in err
        assert not out.exists()

    def test_bench_puts_a_recorded_row_beside_tiered(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        path = self._truncating(tmp_path)
        out = tmp_path / "cap.toml"
        assert 0 == main(["import", str(path), "--out", str(out), "--tokenizer", "words"])
        capsys.readouterr()
        assert 0 == main(["bench", str(out), "--policy", "recorded", "--policy", "tiered"])
        rows = [line.split() for line in capsys.readouterr().out.splitlines()]
        assert [["cap", "recorded"], ["cap", "tiered"]] == [
            row[:2] for row in rows if row[:1] == ["cap"]
        ]
        recorded = next(row for row in rows if row[:2] == ["cap", "recorded"])
        assert "compactions=1" in recorded

    def test_why_on_a_dropped_turn_names_the_exchange_where_it_left(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        path = self._truncating(tmp_path)
        scenario, run = tmp_path / "cap.toml", tmp_path / "cap.run.jsonl"
        assert 0 == main(["import", str(path), "--out", str(scenario), "--tokenizer", "words"])
        assert 0 == main(["run", str(scenario), "--out", str(run)])
        capsys.readouterr()
        assert 0 == main(["why", str(run), "turn:3"])
        said_of_it = capsys.readouterr().out
        assert "(exchange 4, " in said_of_it
        assert "truncation: 4 turns dropped): dropped," in said_of_it
        assert "now DROPPED" in said_of_it


ACTIONS = ("extend", "truncate", "summarize", "clear")
"""What the simulated agent does to its context before a request."""


def _agent(actions: list[tuple[str, int, bool]]) -> tuple[list[Any], dict[int, str], int]:
    """A chat agent's capture: before request k it does ``actions[k - 2]`` to its context
    (cut at the ``n``-th place it can, ``calls``: its reply calls a tool). Returns the
    exchange lines, the kind of compaction expected at each exchange, and the turns."""
    context: list[dict[str, Any]] = [S, said("user", "task 1")]
    turns = 2
    replies: list[Any] = []
    expected: dict[int, str] = {}
    summaries: set[str] = set()
    for number, (action, n, calls) in enumerate([("extend", 0, False), *actions], start=1):
        if action in ("truncate", "summarize"):
            starts = [i for i in range(2, len(context) - 1) if context[i]["role"] == "user"]
            if starts:
                cut = starts[n % len(starts)]
                gone = [m for m in context[1:cut] if m.get("content") not in summaries]
                kept = context[cut:]
                summary = [said("user", f"summary {number}")] if action == "summarize" else []
                summaries.update(m["content"] for m in summary)
                context = [S, *summary, *kept]
                if gone:
                    expected[number] = "summary" if summary else "truncation"
        elif action == "clear":
            results = [i for i, m in enumerate(context[:-1]) if m["role"] == "tool"]
            if results:
                at = results[n % len(results)]
                context[at] = result(context[at]["tool_call_id"], f"[cleared {number}]")
                expected[number] = "clearing"
        reply = (
            calling(f"call_{number}", f"reply {number}")
            if calls
            else said("assistant", f"reply {number}")
        )
        replies.append(exchange(number, CHAT, chat(*context), chat_reply(reply)))
        turns += 1
        following = (
            result(f"call_{number}", f"result {number}")
            if calls
            else said("user", f"task {number + 1}")
        )
        context = [*context, reply, following]
        turns += 1
    return replies, expected, turns - 1


class TestAnyAgent:
    @given(
        st.lists(st.tuples(st.sampled_from(ACTIONS), st.integers(0, 5), st.booleans()), max_size=12)
    )
    @settings(max_examples=60, deadline=None)
    def test_each_change_is_detected_at_its_request_and_every_message_is_one_turn(
        self, actions: list[tuple[str, int, bool]]
    ) -> None:
        lines, expected, turns = _agent(actions)
        with tempfile.TemporaryDirectory() as folder:
            transcript = _read(write_capture(Path(folder) / "cap.jsonl", *lines))
        found = {
            int((c.label or "").split(",")[0].removeprefix("exchange ")): c.trigger
            for c in transcript.compactions
        }
        ledger = transcript.ledger
        assert ledger is not None
        assert expected == found
        assert turns == len(transcript.turns)
        assert (ledger.calls_in, ledger.results_in) == (ledger.calls_out, ledger.results_out)


class TestAnyLines:
    @given(
        st.lists(
            st.tuples(
                st.sampled_from((CHAT, RESPONSES, ANTHROPIC, "other")),
                any_records(),
                any_records(),
                st.sampled_from((None, 200, 500, "x")),
                st.booleans(),
            ),
            max_size=4,
        )
    )
    @settings(max_examples=150, deadline=None)
    def test_lines_import_or_are_refused_in_one_line(
        self, lines: list[tuple[str, Any, Any, Any, bool]]
    ) -> None:
        written = [
            exchange(
                number,
                endpoint,
                {"messages": sent, "input": sent, "system": "s"},
                {"content": got, "output": got, "choices": [{"message": m} for m in got]}
                if answered
                else None,
                status=status,
            )
            for number, (endpoint, sent, got, status, answered) in enumerate(lines, start=1)
        ]
        with tempfile.TemporaryDirectory() as folder:
            path = write_capture(Path(folder) / "cap.jsonl", *written)
            try:
                read_transcript(path, "capture")
            except BadInput as error:
                refused = str(error)
            else:
                refused = ""
        assert "\n" not in refused
