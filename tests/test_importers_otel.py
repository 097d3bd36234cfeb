"""memtape.lab.importers.otel: OpenTelemetry traces of LLM calls (GenAI, OpenInference)."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import json
from pathlib import Path
from typing import Any

import pytest

from memtape.core.errors import BadInput
from memtape.lab.importers import Compaction, otel_turns, read_transcript
from memtape.scenarios.usage import Usage
from tests.transcripts import fixture, imported, turns_of, unpaired, write_json

TRACE = fixture("otel-trace.json")
OPENINFERENCE = fixture("openinference-trace.json")
OPENLLMETRY = fixture("openllmetry-trace.json")


def _text(role: str, content: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": content}]}


def _call(
    number: int,
    inputs: list[dict[str, Any]],
    output: dict[str, Any] | list[dict[str, Any]],
    conversation: str = "c1",
    **extra: Any,
) -> dict[str, Any]:
    """An LLM-call span whose messages are JSON strings, as many instrumentations write them."""
    attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.conversation.id": conversation,
        "gen_ai.input.messages": json.dumps(inputs),
        "gen_ai.output.messages": json.dumps(output if isinstance(output, list) else [output]),
        **extra,
    }
    return _span(number, attributes)


def _span(number: int, attributes: dict[str, Any]) -> dict[str, Any]:
    """A span of the trace ``ab...ab`` with these attributes."""
    return {
        "traceId": "ab" * 16,
        "spanId": f"{number:016x}",
        "name": "chat",
        "startTimeUnixNano": str(1_000_000_000 * number),
        "attributes": [
            {
                "key": key,
                "value": {"intValue": str(value)}
                if isinstance(value, int)
                else {"stringValue": value},
            }
            for key, value in attributes.items()
        ],
    }


def _trace(path: Path, *spans: dict[str, Any]) -> Path:
    return write_json(path, {"resourceSpans": [{"scopeSpans": [{"spans": list(spans)}]}]})


def _where(path: Path, index: int) -> str:
    return f"{path}:1: resourceSpans[0].scopeSpans[0].spans[{index}]"


class TestTrace:
    def test_it_is_told_from_the_content(self) -> None:
        assert "otel" == read_transcript(TRACE).format

    def test_each_message_imports_once_in_order_of_start_time(self) -> None:
        turns = read_transcript(TRACE).turns
        assert [
            "system",
            "user",
            "assistant",
            "tool",
            "assistant",
            "tool",
            "tool",
            "assistant",
            "user",
            "assistant",
            "tool",
            "assistant",
            "system",
            "user",
            "assistant",
            "tool",
            "assistant",
        ] == [turn.role for turn in turns]
        assert 1 == sum("Should we stop it?" in turn.text for turn in turns)
        assert turns[2].text.startswith("[reasoning] Look at the trend before deciding.\ncall ")

    def test_every_call_and_result_is_kept_and_paired(self) -> None:
        turns = turns_of(TRACE)
        calls = ["call_vib", "call_crew", "call_wind", "call_book", "call_spec"]
        assert (calls, calls, []) == (
            [c for t in turns for c in t.calls],
            [a for t in turns for a in t.answers],
            unpaired(turns),
        )

    def test_a_call_that_no_longer_sends_the_context_is_a_recorded_compaction(self) -> None:
        compaction = read_transcript(TRACE).compactions[0]
        summary = (
            "Summary of the work so far: NV-14's gearbox vibration rose to 7.2 mm/s (limit "
            "8.0); crew B is free on 3 March from 07:00 and the wind allows climbing."
        )
        where = f"{TRACE}:1: resourceSpans[1].scopeSpans[0].spans[7]"
        assert Compaction(9, summary, where, None, 2010, preserved=(8, 8)) == compaction
        assert [] == [t for t in read_transcript(TRACE).turns if t.text == summary]

    def test_a_new_conversation_begins_with_a_compaction_to_nothing(self) -> None:
        compaction = read_transcript(TRACE).compactions[1]
        assert (13, "", "new conversation") == (
            compaction.before,
            compaction.summary,
            compaction.trigger,
        )

    def test_a_span_without_a_conversation_id_takes_its_ancestor_s(self) -> None:
        notes = read_transcript(TRACE).notes
        assert "conversation 'conv_nv14_rating': 2 LLM calls, turns 13 to 17" in notes

    def test_other_spans_are_left_out_counted_by_operation(self) -> None:
        ledger = read_transcript(TRACE).ledger
        assert ledger is not None
        assert [("execute_tool span", 5), ("invoke_agent span", 2), ("other span", 1)] == [
            (kind.kind, kind.entries) for kind in ledger.left_out
        ]
        assert (15, 5, 5) == (ledger.entries, ledger.calls_in, ledger.calls_out)

    def test_repeated_and_replaced_messages_are_counted(self) -> None:
        notes = read_transcript(TRACE).notes
        assert "not imported: 18 messages resent with the context" in notes
        assert "not imported: 1 message standing for what a compaction dropped (its summary)" in (
            notes
        )

    def test_each_reply_keeps_its_usage_its_input_without_the_cached_tokens(self) -> None:
        turns = read_transcript(TRACE).turns
        assert [Usage(0, 64, 0, 1180), Usage(430, 96, 1200, 0), Usage(1190, 30)] == [
            turns[2].usage,
            turns[4].usage,
            turns[14].usage,
        ]

    def test_jsonl_of_export_requests_reads_the_same(self, tmp_path: Path) -> None:
        document = json.loads(TRACE.read_text("utf-8"))
        lines = [{"resourceSpans": [resource]} for resource in document["resourceSpans"]]
        path = tmp_path / "trace.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in lines), "utf-8")
        assert [t.text for t in read_transcript(TRACE).turns] == [
            t.text for t in read_transcript(path).turns
        ]

    def test_the_scenario_is_headed_by_the_recorded_policy(self) -> None:
        table = imported(TRACE).policies.params()["compaction"]
        assert ("recorded", [9, 13]) == (
            table["policy"],
            [record["before"] for record in table["compactions"]],
        )


class TestOpenInference:
    def test_flattened_messages_import_as_turns(self) -> None:
        turns = read_transcript(OPENINFERENCE).turns
        assert [
            ("system", (), ()),
            ("user", (), ()),
            ("assistant", ("call_plot17", "call_fees"), ()),
            ("tool", (), ("call_plot17",)),
            ("tool", (), ("call_fees",)),
            ("assistant", (), ()),
        ] == [(t.role, t.calls, t.answers) for t in turns]
        assert 'call get_plot({"plot": 17})\ncall get_fees({"season": 2026})' == turns[2].text

    def test_token_counts_are_the_usage(self) -> None:
        assert Usage(146, 38, 256) == read_transcript(OPENINFERENCE).turns[5].usage

    def test_other_kinds_are_left_out_counted(self) -> None:
        ledger = read_transcript(OPENINFERENCE).ledger
        assert ledger is not None
        assert [("CHAIN span", 1), ("TOOL span", 2)] == [
            (kind.kind, kind.entries) for kind in ledger.left_out
        ]


def _flat(number: int, **attributes: Any) -> dict[str, Any]:
    """An LLM-call span as OpenLLMetry flattens it (keys given with ``__`` for ``.``)."""
    given = {key.replace("__", "."): value for key, value in attributes.items()}
    return _span(number, {"llm.request.type": "chat", **given})


class TestOpenLLMetry:
    def test_flattened_prompts_and_completions_import_as_turns(self) -> None:
        turns = read_transcript(OPENLLMETRY).turns
        assert [
            ("system", (), ()),
            ("user", (), ()),
            ("assistant", ("call_sailings", "call_bikes"), ()),
            ("tool", (), ("call_sailings",)),
            ("tool", (), ("call_bikes",)),
            ("assistant", (), ()),
        ] == [(t.role, t.calls, t.answers) for t in turns]

    def test_every_call_and_result_is_counted_in_and_out(self) -> None:
        ledger = read_transcript(OPENLLMETRY).ledger
        assert ledger is not None
        assert (2, 2, 2, 2) == (
            ledger.calls_in,
            ledger.calls_out,
            ledger.results_in,
            ledger.results_out,
        )

    def test_the_older_token_counts_are_the_usage(self) -> None:
        turns = read_transcript(OPENLLMETRY).turns
        assert (Usage(212, 51), Usage(190, 44, 128)) == (turns[2].usage, turns[5].usage)

    def test_a_call_without_messages_and_traceloop_kinds_are_left_out_counted(self) -> None:
        ledger = read_transcript(OPENLLMETRY).ledger
        assert ledger is not None
        assert [("LLM call without messages", 1), ("tool span", 2), ("workflow span", 1)] == [
            (kind.kind, kind.entries) for kind in ledger.left_out
        ]

    def test_anthropic_blocks_pair_and_thinking_is_the_reply_s_reasoning(
        self, tmp_path: Path
    ) -> None:
        use = {"type": "tool_use", "id": "toolu_1", "name": "tide", "input": {"port": "Kiel"}}
        result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "high at 14:02"}
        first = _flat(
            1,
            gen_ai__prompt__0__role="user",
            gen_ai__prompt__0__content="When is high tide in Kiel?",
            gen_ai__completion__0__role="assistant",
            gen_ai__completion__0__tool_calls__0__id="toolu_1",
            gen_ai__completion__0__tool_calls__0__name="tide",
            gen_ai__completion__0__tool_calls__0__arguments='{"port": "Kiel"}',
        )
        second = _flat(
            2,
            gen_ai__prompt__0__role="user",
            gen_ai__prompt__0__content="When is high tide in Kiel?",
            gen_ai__prompt__1__role="assistant",
            gen_ai__prompt__1__content=json.dumps([use]),
            gen_ai__prompt__1__tool_calls__0__id="toolu_1",
            gen_ai__prompt__1__tool_calls__0__name="tide",
            gen_ai__prompt__1__tool_calls__0__arguments='{"port": "Kiel"}',
            gen_ai__prompt__2__role="user",
            gen_ai__prompt__2__content=json.dumps([result]),
            gen_ai__completion__0__role="thinking",
            gen_ai__completion__0__content="The tool said 14:02.",
            gen_ai__completion__1__role="assistant",
            gen_ai__completion__1__content="High tide in Kiel is at 14:02.",
        )
        turns = read_transcript(_trace(tmp_path / "t.json", first, second)).turns
        assert [
            ("user", (), ()),
            ("assistant", ("toolu_1",), ()),
            ("tool", (), ("toolu_1",)),
            ("assistant", (), ()),
        ] == [(t.role, t.calls, t.answers) for t in turns]
        assert "[reasoning] The tool said 14:02.\nHigh tide in Kiel is at 14:02." == turns[3].text

    def test_a_text_completion_s_prompt_is_the_user_s_and_its_completion_the_assistant_s(
        self, tmp_path: Path
    ) -> None:
        span = _flat(
            1,
            llm__request__type="completion",
            gen_ai__prompt__0__user="Tell me a haiku about ferries",
            gen_ai__completion__0__content="Grey water parting",
            gen_ai__completion__0__finish_reason="stop",
        )
        turns = read_transcript(_trace(tmp_path / "t.json", span)).turns
        assert [("user", "Tell me a haiku about ferries"), ("assistant", "Grey water parting")] == [
            (t.role, t.text) for t in turns
        ]

    def test_a_role_that_is_no_string_is_one_line_naming_span_and_attribute(
        self, tmp_path: Path
    ) -> None:
        span = _flat(1, gen_ai__prompt__0__role=3, gen_ai__prompt__0__content="hi")
        path = _trace(tmp_path / "t.json", span)
        with pytest.raises(BadInput) as caught:
            read_transcript(path)
        assert str(caught.value).startswith(f"{_where(path, 0)}: gen_ai.prompt.0.role: ")

    def test_a_tool_call_without_a_name_is_one_line_naming_it(self, tmp_path: Path) -> None:
        span = _flat(
            1,
            gen_ai__prompt__0__role="user",
            gen_ai__prompt__0__content="hi",
            gen_ai__completion__0__role="assistant",
            gen_ai__completion__0__tool_calls__0__id="c1",
        )
        path = _trace(tmp_path / "t.json", span)
        with pytest.raises(BadInput) as caught:
            read_transcript(path)
        assert str(caught.value).startswith(
            f"{_where(path, 0)}: gen_ai.completion.0.tool_calls.0.name: "
        )


class TestChatStyleMessages:
    def test_a_string_content_is_one_text_part(self, tmp_path: Path) -> None:
        inputs = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}]
        output = {"role": "assistant", "content": "hello", "finish_reason": "stop"}
        path = _trace(tmp_path / "t.json", _call(1, inputs, output))
        assert [("system", "Be brief."), ("user", "hi"), ("assistant", "hello")] == [
            (t.role, t.text) for t in read_transcript(path).turns
        ]

    def test_a_tool_message_s_string_content_answers_its_call(self, tmp_path: Path) -> None:
        asked: dict[str, Any] = {
            "role": "assistant",
            "parts": [{"type": "tool_call", "id": "c7", "name": "tide", "arguments": {}}],
        }
        inputs: list[dict[str, Any]] = [
            {"role": "user", "content": "tide?"},
            asked,
            {"role": "tool", "tool_call_id": "c7", "content": "14:02"},
        ]
        path = _trace(tmp_path / "t.json", _call(1, inputs, {"role": "assistant", "content": "ok"}))
        assert [
            ("user", (), ()),
            ("assistant", ("c7",), ()),
            ("tool", (), ("c7",)),
            ("assistant", (), ()),
        ] == [(t.role, t.calls, t.answers) for t in read_transcript(path).turns]

    def test_an_assistant_s_openai_tool_calls_are_its_calls(self, tmp_path: Path) -> None:
        call = {"id": "c7", "type": "function", "function": {"name": "tide", "arguments": "{}"}}
        inputs: list[dict[str, Any]] = [
            {"role": "user", "content": "tide?"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c7", "content": "14:02"},
        ]
        path = _trace(tmp_path / "t.json", _call(1, inputs, {"role": "assistant", "content": "ok"}))
        turns = read_transcript(path).turns
        assert [("assistant", ("c7",), "call tide({})"), ("tool", (), "14:02")] == [
            (t.role, t.calls, t.text) for t in turns[1:3]
        ]

    def test_a_message_with_neither_parts_nor_a_string_content_is_refused(
        self, tmp_path: Path
    ) -> None:
        inputs = [{"role": "user", "content": 7}]
        path = _trace(tmp_path / "t.json", _call(1, inputs, _text("assistant", "x")))
        with pytest.raises(BadInput) as caught:
            read_transcript(path)
        assert str(caught.value).startswith(f"{_where(path, 0)}: gen_ai.input.messages[0]: ")


class TestCompactions:
    def test_dropped_messages_with_nothing_in_their_place_are_an_empty_summary(
        self, tmp_path: Path
    ) -> None:
        first, reply = _text("user", "one"), _text("assistant", "ok one")
        second, reply2 = _text("user", "two"), _text("assistant", "ok two")
        path = _trace(
            tmp_path / "t.json",
            _call(1, [first], reply),
            _call(2, [first, reply, second], reply2),
            _call(3, [second, reply2, _text("user", "three")], _text("assistant", "ok three")),
        )
        transcript = read_transcript(path)
        assert ["one", "ok one", "two", "ok two", "three", "ok three"] == [
            turn.text for turn in transcript.turns
        ]
        assert [Compaction(5, "", _where(path, 2), preserved=(3, 4))] == list(
            transcript.compactions
        )
        assert (
            f"the compaction at {_where(path, 2)} dropped 2 messages and nothing replaced them: "
            "its summary is empty"
        ) in transcript.notes

    def test_a_result_rewritten_in_place_is_a_compaction_keeping_both_ends(
        self, tmp_path: Path
    ) -> None:
        ask = _text("user", "read the log")
        call = {
            "role": "assistant",
            "parts": [{"type": "tool_call", "id": "c1", "name": "read", "arguments": {}}],
        }

        def result(text: str) -> dict[str, Any]:
            return {
                "role": "tool",
                "parts": [{"type": "tool_call_response", "id": "c1", "response": text}],
            }

        seen, more = _text("assistant", "seen"), _text("user", "and now?")
        path = _trace(
            tmp_path / "t.json",
            _call(1, [ask], call),
            _call(2, [ask, call, result("4,000 lines of log")], seen),
            _call(3, [ask, call, result("[cleared]"), seen, more], _text("assistant", "done")),
        )
        transcript = read_transcript(path)
        assert [Compaction(5, "[cleared]", _where(path, 2), preserved=(4, 4))] == list(
            transcript.compactions
        )
        assert ["and now?", "done"] == [turn.text for turn in transcript.turns[4:]]
        assert (
            f"the compaction at {_where(path, 2)} kept 2 messages at the head verbatim; "
            "recorded folds those that are not pinned"
        ) in transcript.notes

    def test_calls_that_send_only_what_is_new_import_whole(self, tmp_path: Path) -> None:
        path = _trace(
            tmp_path / "t.json",
            _call(1, [_text("user", "one")], _text("assistant", "ok one")),
            _call(2, [_text("user", "two")], _text("assistant", "ok two")),
        )
        transcript = read_transcript(path)
        assert (["one", "ok one", "two", "ok two"], ()) == (
            [turn.text for turn in transcript.turns],
            transcript.compactions,
        )


class TestCalls:
    def test_calls_without_ids_are_given_ids_and_results_answer_the_oldest(
        self, tmp_path: Path
    ) -> None:
        question = _text("user", "weather in Oslo and Bergen?")
        calls = {
            "role": "assistant",
            "parts": [
                {"type": "tool_call", "name": "weather", "arguments": {"city": "Oslo"}},
                {"type": "tool_call", "name": "weather", "arguments": {"city": "Bergen"}},
            ],
        }
        results = {
            "role": "tool",
            "parts": [
                {"type": "tool_call_response", "response": "Oslo: 4 C"},
                {"type": "tool_call_response", "response": "Bergen: 7 C, rain"},
            ],
        }
        path = _trace(
            tmp_path / "t.json",
            _call(1, [question], calls),
            _call(2, [question, calls, results], _text("assistant", "Oslo 4 C, Bergen 7 C.")),
        )
        turns = read_transcript(path).turns
        made = ("call-without-id.1", "call-without-id.2")
        assert [made, (), (), ()] == [turn.calls for turn in turns[1:]]
        assert [(), (made[0],), (made[1],), ()] == [turn.answers for turn in turns[1:]]
        assert ["Oslo: 4 C", "Bergen: 7 C, rain"] == [turn.text for turn in turns[2:4]]

    def test_the_first_choice_imports_and_the_others_are_counted(self, tmp_path: Path) -> None:
        replies = [_text("assistant", "first"), _text("assistant", "second")]
        path = _trace(tmp_path / "t.json", _call(1, [_text("user", "hi")], replies))
        transcript = read_transcript(path)
        assert (["hi", "first"], "not imported: 1 other choice of a reply") == (
            [turn.text for turn in transcript.turns],
            transcript.notes[-1],
        )

    def test_a_call_recorded_again_around_a_nested_span_imports_once(self, tmp_path: Path) -> None:
        first = {
            "gen_ai.prompt.0.role": "user",
            "gen_ai.prompt.0.content": "hi",
            "gen_ai.completion.0.role": "assistant",
            "gen_ai.completion.0.content": "hello",
        }
        second = {
            **first,
            "gen_ai.prompt.1.role": "assistant",
            "gen_ai.prompt.1.content": "hello",
            "gen_ai.prompt.2.role": "user",
            "gen_ai.prompt.2.content": "bye",
            "gen_ai.completion.0.content": "ciao",
        }
        spans = [_flat(number, **given) for number, given in enumerate([first] * 2 + [second] * 2)]
        spans[1]["parentSpanId"] = spans[0]["spanId"]
        spans[3]["parentSpanId"] = spans[2]["spanId"]
        transcript = read_transcript(_trace(tmp_path / "t.json", *spans))
        assert transcript.ledger is not None
        assert (
            ["hi", "hello", "bye", "ciao"],
            (),
            [("LLM call recorded again around a nested span", 2)],
        ) == (
            [turn.text for turn in transcript.turns],
            tuple(transcript.compactions),
            [(kind.kind, kind.entries) for kind in transcript.ledger.left_out],
        )

    def test_a_call_without_messages_is_left_out_counted(self, tmp_path: Path) -> None:
        bare = _call(2, [], _text("assistant", "x"))
        bare["attributes"] = bare["attributes"][:2]
        path = _trace(
            tmp_path / "t.json", _call(1, [_text("user", "hi")], _text("assistant", "yo")), bare
        )
        ledger = read_transcript(path).ledger
        assert ledger is not None
        assert [("LLM call without messages", 1)] == [
            (kind.kind, kind.entries) for kind in ledger.left_out
        ]


class TestRefusals:
    def test_a_trace_whose_calls_record_no_messages_is_refused(self, tmp_path: Path) -> None:
        span = _call(1, [], _text("assistant", "x"))
        span["attributes"] = span["attributes"][:1]
        path = _trace(tmp_path / "t.json", span)
        with pytest.raises(BadInput, match="no LLM call span records its messages"):
            read_transcript(path)

    def test_messages_that_are_not_json_are_refused_naming_the_span(self, tmp_path: Path) -> None:
        span = _call(1, [_text("user", "hi")], _text("assistant", "hello"))
        span["attributes"][2] = {
            "key": "gen_ai.input.messages",
            "value": {"stringValue": "[{"},
        }
        path = _trace(tmp_path / "t.json", span)
        with pytest.raises(BadInput) as caught:
            read_transcript(path)
        assert str(caught.value).startswith(f"{_where(path, 0)}: gen_ai.input.messages: not JSON")

    def test_a_double_that_is_not_a_number_is_one_line(self, tmp_path: Path) -> None:
        span = _call(1, [_text("user", "hi")], _text("assistant", "hello"))
        span["attributes"].append({"key": "x.rate", "value": {"doubleValue": "abc"}})
        path = _trace(tmp_path / "t.json", span)
        with pytest.raises(BadInput, match="doubleValue 'abc' is not a number"):
            read_transcript(path)

    def test_a_result_for_a_call_never_made_is_refused(self, tmp_path: Path) -> None:
        result = {
            "role": "tool",
            "parts": [{"type": "tool_call_response", "id": "gone", "response": "x"}],
        }
        path = _trace(tmp_path / "t.json", _call(1, [result], _text("assistant", "ok")))
        with pytest.raises(BadInput, match="a tool result for call 'gone'"):
            read_transcript(path)


class TestLedger:
    def test_a_result_the_reader_takes_for_resent_is_named_from_the_spans(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The ledger counts the ids each span's own messages hold, not the messages the
        reader took as new: a reader that wrongly skips the tool results is refused."""
        difference = otel_turns.Reader._difference

        def losing(self: Any, context: Any, call: Any, pre_tokens: Any) -> Any:
            new, kept = difference(self, context, call, pre_tokens)
            results = [m for m in new if m.role == "tool"]
            return [m for m in new if m not in results], kept

        monkeypatch.setattr(otel_turns.Reader, "_difference", losing)
        with pytest.raises(BadInput) as caught:
            read_transcript(TRACE)
        expected = (
            f"{TRACE}:1: resourceSpans[0].scopeSpans[0].spans[4]: tool result for call "
            "'call_spec' is in the file but not in the imported turns: the import would lose it"
        )
        assert expected == str(caught.value)

    def test_a_resent_call_counts_once_and_a_new_conversation_s_again(self) -> None:
        ledger = read_transcript(TRACE).ledger
        assert ledger is not None
        assert (5, 5, 5, 5) == (
            ledger.calls_in,
            ledger.calls_out,
            ledger.results_in,
            ledger.results_out,
        )
