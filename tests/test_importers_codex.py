"""memtape.lab.importers.codex: a Codex CLI rollout's items, and its compactions."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings

from memtape.core.errors import BadInput
from memtape.lab.importers import Compaction, read_transcript
from tests.transcripts import any_records, fixture, imported, turns_of, unpaired, write_lines

ROLLOUT = fixture("codex-rollout.jsonl")


def _records() -> list[dict[str, Any]]:
    return [json.loads(line) for line in ROLLOUT.read_text("utf-8").splitlines()]


def _items(*kinds: str) -> list[dict[str, Any]]:
    return [
        r["payload"]
        for r in _records()
        if r["type"] == "response_item" and r["payload"]["type"] in kinds
    ]


def _record(kind: str, **payload: Any) -> dict[str, Any]:
    return {"timestamp": "2026-11-20T09:00:00.000Z", "type": kind, "payload": payload}


def _user(text: str) -> dict[str, Any]:
    content = [{"type": "input_text", "text": text}]
    return _record("response_item", type="message", role="user", content=content)


def _assistant(text: str) -> dict[str, Any]:
    content = [{"type": "output_text", "text": text}]
    return _record("response_item", type="message", role="assistant", content=content)


class TestFixture:
    def test_every_call_and_output_is_kept_and_paired(self) -> None:
        made = _items("function_call", "custom_tool_call", "local_shell_call")
        calls = [i["call_id"] for i in made]
        outputs = [i["call_id"] for i in _items("function_call_output", "custom_tool_call_output")]
        turns = turns_of(ROLLOUT)
        assert (calls, outputs, []) == (
            [c for t in turns for c in t.calls],
            [a for t in turns for a in t.answers],
            unpaired(turns),
        )
        assert (6, 6, 19) == (len(calls), len(outputs), len(turns))

    def test_one_response_is_one_turn_its_reasoning_and_parallel_calls_in_order(self) -> None:
        turn = turns_of(ROLLOUT)[3]
        assert ("assistant", ("call_Pq81", "call_Rk20")) == (turn.role, turn.calls)
        lines = turn.text.splitlines()
        assert "[reasoning] **Reading the failing test and the parser together**" == lines[0]
        assert lines[1].startswith('call shell_command({"command": "pytest tests/test_dates.py')

    def test_developer_messages_are_system_turns(self) -> None:
        assert ["system", "user", "user"] == [turn.role for turn in turns_of(ROLLOUT)[:3]]

    def test_apply_patch_and_a_local_shell_call_are_calls(self) -> None:
        turns = turns_of(ROLLOUT)
        assert turns[8].text.endswith("*** End Patch)")
        assert turns[10].text.startswith('call local_shell({"type": "exec", "command": ["pytest"')
        assert (("call_Ap47",), ("call_Ls52",)) == (turns[8].calls, turns[10].calls)

    def test_a_web_search_is_part_of_its_response(self) -> None:
        turn = turns_of(ROLLOUT)[14]
        expected = "[web search] python calendar.monthrange year range"
        assert ("assistant", expected) == (turn.role, turn.text.splitlines()[0])

    def test_the_compaction_is_a_compaction_before_the_turn_after_it_never_a_turn(self) -> None:
        transcript = read_transcript(ROLLOUT)
        (compaction,) = transcript.compactions
        history = next(r for r in _records() if r["type"] == "compacted")["payload"]
        summary = "\n".join(i["content"][0]["text"] for i in history["replacement_history"])
        assert Compaction(16, summary, f"{ROLLOUT}:32", None, 14897) == compaction
        assert "Now run the whole suite." == transcript.turns[15].text
        assert not any("Another language model" in t.text for t in transcript.turns)

    def test_a_token_count_is_the_usage_of_the_response_before_it(self) -> None:
        billed = [(i, t.usage) for i, t in enumerate(read_transcript(ROLLOUT).turns) if t.usage]
        assert [
            (3, {"input": 1056, "output": 311, "cache_read": 8064}),
            (14, {"input": 1855, "output": 242, "cache_read": 12800}),
        ] == [(i, usage.table()) for i, usage in billed]

    def test_the_scenario_is_headed_by_the_recorded_policy(self) -> None:
        table = imported(ROLLOUT, budget=300).policies.params()["compaction"]
        assert ("recorded", [16]) == (table["policy"], [c["before"] for c in table["compactions"]])

    def test_what_did_not_import_is_counted_by_kind_in_the_ledger(self) -> None:
        ledger = read_transcript(ROLLOUT).ledger
        assert ledger is not None
        assert [
            ("event_msg (agent_message)", 1),
            ("event_msg (agent_reasoning)", 1),
            ("event_msg (context_compacted)", 1),
            ("event_msg (exec_command_end)", 1),
            ("event_msg (task_complete)", 2),
            ("event_msg (token_count)", 2),
            ("event_msg (user_message)", 1),
            ("response_item (ghost_snapshot)", 1),
            ("session_meta", 1),
            ("turn_context", 3),
        ] == [(kind.kind, kind.entries) for kind in ledger.left_out]

    def test_the_ledger_balances(self) -> None:
        ledger = read_transcript(ROLLOUT).ledger
        assert ledger is not None
        left = sum(kind.entries for kind in ledger.left_out)
        assert (39, 19, 6, 6, 6, 6, 14) == (
            ledger.entries,
            ledger.turns,
            ledger.calls_in,
            ledger.calls_out,
            ledger.results_in,
            ledger.results_out,
            left,
        )


class TestItems:
    def test_a_failed_output_object_reads_as_an_error(self, tmp_path: Path) -> None:
        call = {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "c1"}
        output = {"content": "permission denied", "success": False}
        path = write_lines(
            tmp_path / "rollout.jsonl",
            _user("go"),
            _record("response_item", **call),
            _record("response_item", type="function_call_output", call_id="c1", output=output),
        )
        assert "[error] permission denied" == turns_of(path)[2].text

    def test_an_item_type_it_does_not_read_is_counted_not_dropped(self, tmp_path: Path) -> None:
        path = write_lines(
            tmp_path / "rollout.jsonl",
            _user("draw a cat"),
            _record("response_item", type="additional_tools", role="developer", tools=[]),
            _assistant("Here it is."),
        )
        transcript = read_transcript(path)
        assert transcript.ledger is not None
        left = [(kind.kind, kind.entries) for kind in transcript.ledger.left_out]
        assert (2, [("response_item (additional_tools)", 1)]) == (len(transcript.turns), left)

    def test_a_tool_search_pairs_with_its_output_by_call_id(self, tmp_path: Path) -> None:
        search = {"type": "tool_search_call", "call_id": "ts1", "execution": "server"}
        found = {"type": "tool_search_output", "call_id": "ts1", "status": "completed"}
        path = write_lines(
            tmp_path / "rollout.jsonl",
            _user("find a calendar tool"),
            _record("response_item", **search, arguments={"query": "calendar"}),
            _record("response_item", **found, execution="server", tools=[{"name": "cal_list"}]),
        )
        turns = turns_of(path)
        assert [
            ("assistant", 'call tool_search({"query": "calendar"})', ("ts1",), ()),
            ("tool", "1 tools found: cal_list", (), ("ts1",)),
        ] == [(t.role, t.text, t.calls, t.answers) for t in turns[1:]]

    def test_an_image_generation_is_part_of_its_response(self, tmp_path: Path) -> None:
        image = {"type": "image_generation_call", "status": "completed", "result": "iVBO"}
        path = write_lines(
            tmp_path / "rollout.jsonl",
            _user("draw a cat"),
            _record("response_item", **image, revised_prompt="a grey cat"),
            _assistant("Here it is."),
        )
        assert "[image generation: a grey cat]\nHere it is." == turns_of(path)[1].text

    def test_a_compaction_without_history_keeps_its_message(self, tmp_path: Path) -> None:
        path = write_lines(
            tmp_path / "rollout.jsonl",
            _user("one"),
            _assistant("two"),
            _record("compacted", message="We talked about one and two."),
            _user("three"),
        )
        (compaction,) = read_transcript(path).compactions
        assert (3, "We talked about one and two.") == (compaction.before, compaction.summary)

    def test_a_compaction_s_kept_calls_are_in_its_summary_never_made_again(
        self, tmp_path: Path
    ) -> None:
        call = {"type": "function_call", "name": "sh", "arguments": '{"cmd":"ls"}', "call_id": "c1"}
        output = {"type": "function_call_output", "call_id": "c1", "output": "a.txt"}
        history = [{"type": "message", "role": "user", "content": "list it"}, call, output]
        path = write_lines(
            tmp_path / "rollout.jsonl",
            _user("list it"),
            _record("response_item", **call),
            _record("response_item", **output),
            _record("compacted", message="", replacement_history=history),
            _user("thanks"),
        )
        transcript = read_transcript(path)
        assert ('list it\ncall sh({"cmd":"ls"})\na.txt', 1) == (
            transcript.compactions[0].summary,
            transcript.calls,
        )

    @pytest.mark.parametrize("item", [{"type": ["message"]}, {"type": "message", "role": ["u"]}])
    def test_a_history_item_of_the_wrong_shape_is_one_line(
        self, tmp_path: Path, item: dict[str, Any]
    ) -> None:
        path = write_lines(
            tmp_path / "rollout.jsonl",
            _user("go"),
            _record("compacted", message="", replacement_history=[item]),
            _user("on"),
        )
        with pytest.raises(BadInput, match=r"rollout\.jsonl:2"):
            read_transcript(path)

    def test_a_compaction_before_every_turn_is_the_first_turn(self, tmp_path: Path) -> None:
        compacted = _record("compacted", message="Earlier: a plan.")
        path = write_lines(tmp_path / "rollout.jsonl", compacted, _user("go"))
        transcript = read_transcript(path)
        assert ((), ["Earlier: a plan.", "go"]) == (
            transcript.compactions,
            [turn.text for turn in transcript.turns],
        )

    def test_format_codex_forces_the_reader(self, tmp_path: Path) -> None:
        path = write_lines(tmp_path / "rollout.jsonl", _user("hi"), _assistant("hello"))
        assert "codex" == read_transcript(path, "codex").format

    def test_a_record_without_a_payload_is_refused_named(self, tmp_path: Path) -> None:
        path = write_lines(tmp_path / "rollout.jsonl", _user("hi"), {"type": "response_item"})
        with pytest.raises(BadInput) as caught:
            read_transcript(path, "codex")
        assert f"{path}:2: a response_item record needs a payload object" == str(caught.value)

    def test_an_output_for_a_call_never_made_is_refused(self, tmp_path: Path) -> None:
        output = _record("response_item", type="function_call_output", call_id="c9", output="x")
        path = write_lines(tmp_path / "rollout.jsonl", _user("hi"), output)
        with pytest.raises(BadInput, match=r"rollout.jsonl:2: a tool result for call 'c9'"):
            read_transcript(path)


def _count(prompt: int, cached: int, output: int, total: int) -> dict[str, Any]:
    usage = {
        "input_tokens": prompt,
        "cached_input_tokens": cached,
        "output_tokens": output,
        "reasoning_output_tokens": 0,
        "total_tokens": total,
    }
    return _record("event_msg", type="token_count", info={"last_token_usage": usage})


class TestCountsAroundACompaction:
    """Codex writes a token count measuring no request before and after it compacts: every
    part zero, and a total that is no context's (past the model's window, on a real one)."""

    def _rollout(self, tmp_path: Path) -> Path:
        return write_lines(
            tmp_path / "rollout.jsonl",
            _user("one"),
            _assistant("two"),
            _count(2000, 1500, 120, 2120),
            _count(0, 0, 0, 940499),
            _record("compacted", message="We talked about one and two."),
            _count(0, 0, 0, 940499),
            _user("three"),
        )

    def test_the_agent_s_count_before_is_its_last_request_s(self, tmp_path: Path) -> None:
        (compaction,) = read_transcript(self._rollout(tmp_path)).compactions
        assert 2120 == compaction.pre_tokens

    def test_a_count_of_no_request_bills_no_turn(self, tmp_path: Path) -> None:
        usage = read_transcript(self._rollout(tmp_path)).turns[1].usage
        assert usage is not None
        assert {"input": 500, "output": 120, "cache_read": 1500} == usage.table()


class TestBeforeTheEnvelope:
    OLD = fixture("codex-rollout-2025.jsonl")

    def test_bare_items_read_as_the_enveloped_ones(self) -> None:
        turns = turns_of(self.OLD)
        assert [
            ("user", (), ()),
            ("user", (), ()),
            ("assistant", ("call_Mk3T",), ()),
            ("tool", (), ("call_Mk3T",)),
            ("assistant", (), ()),
        ] == [(t.role, t.calls, t.answers) for t in turns]
        assert turns[2].text.startswith("[reasoning] **Checking the Makefile targets**")

    def test_the_first_line_and_the_state_lines_are_counted(self) -> None:
        transcript = read_transcript(self.OLD)
        assert transcript.ledger is not None
        assert ("codex", [("record_type (state)", 3), ("session_meta", 1)]) == (
            transcript.format,
            [(kind.kind, kind.entries) for kind in transcript.ledger.left_out],
        )

    def test_a_state_line_in_an_enveloped_rollout_is_counted(self, tmp_path: Path) -> None:
        path = write_lines(tmp_path / "rollout.jsonl", _user("hi"), {"record_type": "state"})
        transcript = read_transcript(path)
        assert transcript.ledger is not None
        assert [("record_type (state)", 1)] == [
            (kind.kind, kind.entries) for kind in transcript.ledger.left_out
        ]


class TestAnyRecords:
    @settings(max_examples=150, deadline=None)
    @given(records=any_records())
    def test_records_import_or_are_refused_in_one_line(self, records: list[dict[str, Any]]) -> None:
        with tempfile.TemporaryDirectory() as folder:
            path = write_lines(Path(folder) / "rollout.jsonl", *records)
            try:
                read_transcript(path, "codex")
            except BadInput as error:
                refused = str(error)
            else:
                refused = ""
        assert "\n" not in refused
