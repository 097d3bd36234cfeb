"""memtape.capture.threads: which conversation an exchange belongs to."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import hashlib

from memtape.capture.threads import (
    ANTHROPIC,
    CHAT,
    OTHER,
    RESPONSES,
    Threads,
    first_user_text,
    system_text,
    thread_key,
)

SYSTEM = "You are a coding agent."


def _digest(first: str, second: str) -> str:
    return hashlib.sha256(f"{first}\x00{second}".encode()).hexdigest()[:12]


def _anthropic(first: str, system: str = SYSTEM, **more: object) -> dict[str, object]:
    return {"system": system, "messages": [{"role": "user", "content": first}], **more}


class TestFingerprint:
    def test_it_hashes_the_system_prompt_and_the_first_user_message(self) -> None:
        assert "f-" + _digest(SYSTEM, "fix the bug") == thread_key(
            ANTHROPIC, _anthropic("fix the bug")
        )

    def test_a_subagent_s_own_system_prompt_gives_it_its_own_thread(self) -> None:
        main = thread_key(ANTHROPIC, _anthropic("fix the bug"))
        sub = thread_key(ANTHROPIC, _anthropic("fix the bug", system="You search files."))
        assert main != sub

    def test_later_requests_of_a_conversation_keep_its_key(self) -> None:
        first = _anthropic("fix the bug")
        later = {
            "system": SYSTEM,
            "messages": [
                {"role": "user", "content": "fix the bug"},
                {"role": "assistant", "content": "done"},
                {"role": "user", "content": "thanks"},
            ],
        }
        assert thread_key(ANTHROPIC, first) == thread_key(ANTHROPIC, later)


class TestSessionKey:
    def test_metadata_user_id_keys_the_thread_with_the_system_prompt(self) -> None:
        request = _anthropic("fix the bug", metadata={"user_id": "u-1"})
        assert "s-" + _digest("u-1", SYSTEM) == thread_key(ANTHROPIC, request)

    def test_a_rewritten_first_message_keeps_the_session_s_thread(self) -> None:
        before = _anthropic("fix the bug", metadata={"user_id": "u-1"})
        after = _anthropic("Summary: the bug is fixed.", metadata={"user_id": "u-1"})
        assert thread_key(ANTHROPIC, before) == thread_key(ANTHROPIC, after)

    def test_a_session_header_keys_the_thread_whatever_its_case(self) -> None:
        request = {"messages": [{"role": "user", "content": "hi"}]}
        assert "s-" + _digest("abc", "") == thread_key(
            CHAT, request, headers={"X-Session-Id": "abc"}
        )


class TestPreviousResponse:
    def test_a_response_s_successor_is_in_its_thread(self) -> None:
        threads = Threads()
        first = threads.key(
            RESPONSES, {"instructions": SYSTEM, "input": "hi"}, {"id": "resp_1", "output": []}
        )
        second = threads.key(
            RESPONSES,
            {"instructions": SYSTEM, "input": "next", "previous_response_id": "resp_1"},
            {"id": "resp_2", "output": []},
        )
        assert first == second

    def test_a_previous_response_never_seen_falls_back_to_the_fingerprint(self) -> None:
        request = {"instructions": SYSTEM, "input": "next", "previous_response_id": "resp_9"}
        assert "f-" + _digest(SYSTEM, "next") == thread_key(RESPONSES, request, seen={})


class TestTexts:
    def test_the_system_prompt_of_each_endpoint(self) -> None:
        chat = {
            "messages": [{"role": "developer", "content": [{"type": "text", "text": "Be brief."}]}]
        }
        blocks = {"system": [{"type": "text", "text": "A"}, {"type": "text", "text": "B"}]}
        responses = {"input": [{"role": "system", "content": "Sys"}]}
        assert ["Be brief.", "A\nB", "Sys"] == [
            system_text(CHAT, chat),
            system_text(ANTHROPIC, blocks),
            system_text(RESPONSES, responses),
        ]

    def test_the_first_user_message_skips_the_system_one(self) -> None:
        chat = {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]}
        assert "u" == first_user_text(CHAT, chat)

    def test_another_endpoint_or_no_body_is_the_other_thread(self) -> None:
        assert [OTHER, OTHER] == [thread_key("other", {}), thread_key(CHAT, None)]
