"""Thread keys of captured exchanges (memtape.capture.threads)."""

import hashlib

from memtape.capture.threads import (
    OTHER,
    Threads,
    content_text,
    first_user_text,
    system_text,
    thread_key,
)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:12]


class TestFingerprint:
    def test_a_chat_is_keyed_by_its_system_prompt_and_first_user_message(self) -> None:
        request = {
            "messages": [
                {"role": "developer", "content": "Be terse."},
                {"role": "user", "content": [{"type": "text", "text": "Hi"}]},
                {"role": "user", "content": "later"},
            ]
        }
        assert "f-" + _digest("Be terse.\x00Hi") == thread_key(
            "openai.chat", request, headers={}, seen={}
        )

    def test_an_anthropic_request_reads_its_system_blocks(self) -> None:
        request = {
            "system": [{"type": "text", "text": "A"}, {"type": "text", "text": "B"}],
            "messages": [{"role": "user", "content": "Q"}],
        }
        expected = "f-" + _digest("A\nB\x00Q")
        assert expected == thread_key("anthropic.messages", request, headers={}, seen={})

    def test_a_responses_request_reads_its_instructions_and_string_input(self) -> None:
        request = {"instructions": "Sys", "input": "Go"}
        assert "f-" + _digest("Sys\x00Go") == thread_key(
            "openai.responses", request, headers={}, seen={}
        )

    def test_later_turns_keep_the_thread(self) -> None:
        first = {"messages": [{"role": "system", "content": "S"}, {"role": "user", "content": "U"}]}
        later = {"messages": [*first["messages"], {"role": "assistant", "content": "A"}]}
        assert thread_key("openai.chat", first, headers={}, seen={}) == thread_key(
            "openai.chat", later, headers={}, seen={}
        )

    def test_a_subagent_with_its_own_system_prompt_gets_its_own_thread(self) -> None:
        main = {"system": "main", "messages": [{"role": "user", "content": "U"}]}
        sub = {"system": "sub", "messages": [{"role": "user", "content": "U"}]}
        assert thread_key("anthropic.messages", main, headers={}, seen={}) != thread_key(
            "anthropic.messages", sub, headers={}, seen={}
        )

    def test_another_endpoint_or_no_body_is_the_thread_of_others(self) -> None:
        assert [OTHER, OTHER] == [
            thread_key("other", {"messages": []}, headers={}, seen={}),
            thread_key("openai.chat", None, headers={}, seen={}),
        ]


class TestSessionKey:
    def test_anthropic_user_id_keys_the_thread_with_the_system_prompt(self) -> None:
        request = {"system": "S", "metadata": {"user_id": "u1"}, "messages": []}
        expected = "s-" + _digest("u1\x00S")
        assert expected == thread_key("anthropic.messages", request, headers={}, seen={})

    def test_a_compaction_that_rewrites_the_messages_keeps_the_session_thread(self) -> None:
        before = {
            "system": "S",
            "metadata": {"user_id": "u1"},
            "messages": [{"role": "user", "content": "first"}],
        }
        after = {
            "system": "S",
            "metadata": {"user_id": "u1"},
            "messages": [{"role": "user", "content": "summary of it all"}],
        }
        assert thread_key("anthropic.messages", before, headers={}, seen={}) == thread_key(
            "anthropic.messages", after, headers={}, seen={}
        )

    def test_a_session_header_keys_the_thread(self) -> None:
        request = {"input": "x"}
        expected = "s-" + _digest("abc\x00")
        actual = thread_key("openai.responses", request, headers={"session_id": "abc"}, seen={})
        assert expected == actual

    def test_a_session_header_is_read_whatever_its_case(self) -> None:
        request = {"messages": [{"role": "user", "content": "hi"}]}
        expected = "s-" + _digest("abc\x00")
        assert expected == thread_key("openai.chat", request, headers={"X-Session-Id": "abc"})

    def test_a_session_id_body_field_keys_the_thread(self) -> None:
        request = {"session_id": "z", "messages": []}
        assert "s-" + _digest("z\x00") == thread_key("openai.chat", request, headers={}, seen={})


class TestPreviousResponse:
    def test_a_known_previous_response_names_its_thread(self) -> None:
        request = {"previous_response_id": "resp_1", "input": "next"}
        assert "f-older" == thread_key(
            "openai.responses", request, headers={}, seen={"resp_1": "f-older"}
        )

    def test_threads_remember_each_response_for_its_successor(self) -> None:
        threads = Threads()
        first = threads.key(
            "openai.responses", {"instructions": "S", "input": "hi"}, {"id": "resp_1"}
        )
        second = threads.key(
            "openai.responses",
            {"instructions": "S", "input": "next", "previous_response_id": "resp_1"},
            {"id": "resp_2"},
        )
        assert ("f-" + _digest("S\x00hi"), first) == (first, second)

    def test_an_unknown_previous_response_falls_back_to_the_fingerprint(self) -> None:
        request = {"previous_response_id": "resp_9", "input": "next"}
        expected = "f-" + _digest("\x00next")
        assert expected == thread_key(
            "openai.responses", request, headers={}, seen={"resp_1": "f-older"}
        )


class TestContentText:
    def test_a_tool_result_block_is_not_text(self) -> None:
        content = [{"type": "tool_result", "content": "out"}, {"type": "text", "text": "t"}]
        assert "t" == content_text(content)

    def test_responses_input_text_parts_are_text(self) -> None:
        assert "a\nb" == content_text([{"type": "input_text", "text": "a"}, {"text": "b"}])


class TestTexts:
    def test_the_system_prompt_of_each_endpoint(self) -> None:
        chat = {"messages": [{"role": "developer", "content": [{"type": "text", "text": "Brief"}]}]}
        blocks = {"system": [{"type": "text", "text": "A"}, {"type": "text", "text": "B"}]}
        responses = {"input": [{"role": "system", "content": "Sys"}]}
        assert ["Brief", "A\nB", "Sys"] == [
            system_text("openai.chat", chat),
            system_text("anthropic.messages", blocks),
            system_text("openai.responses", responses),
        ]

    def test_the_first_user_message_skips_the_system_one(self) -> None:
        chat = {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]}
        assert "u" == first_user_text("openai.chat", chat)
