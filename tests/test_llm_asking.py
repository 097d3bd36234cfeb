"""memtape.llm.asking: one model call through the cache, its answer capped."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import sqlite3
from pathlib import Path

import pytest

from memtape.llm.asking import ask, capped, prompt_hash
from memtape.llm.cache import caching
from memtape.llm.config import ModelConfig
from tests.llm_server import ChatServer

MESSAGES = [{"role": "user", "content": "summarize"}]


class TestCapped:
    def test_a_text_within_the_limit_is_kept_whole(self) -> None:
        assert ("a\u00e9b", 0) == capped("a\u00e9b", 4)

    def test_a_longer_text_is_cut_to_the_limits_bytes(self) -> None:
        assert ("abcd", 6) == capped("abcdefghij", 4)

    @pytest.mark.parametrize(
        ("limit", "kept"), [(9, "a\u00e9a\u00e9a\u00e9"), (8, "a\u00e9a\u00e9a")]
    )
    def test_a_cut_falls_on_a_character_boundary(self, limit: int, kept: str) -> None:
        text = "a\u00e9" * 10

        assert (kept, 20 - len(kept)) == capped(text, limit)

    def test_a_lone_surrogate_a_server_sent_is_cut_not_a_traceback(self) -> None:
        assert ("ab", 9) == capped("ab\ud800" + "c" * 8, 3)

    def test_a_cut_never_splits_a_four_byte_character(self) -> None:
        assert ("", 3) == capped("\U0001f600" * 3, 3)


@pytest.fixture
def huge(chat_server: ChatServer) -> ChatServer:
    """The server answering 100,000 characters of two bytes each (200,000 bytes)."""
    chat_server.answerer = lambda model, prompt: "\u00e9" * 100_000
    return chat_server


class TestAsk:
    def test_an_answer_over_the_cap_is_cut_and_says_so(self, huge: ChatServer) -> None:
        with caching(None):
            call = ask(ModelConfig("m", huge.url, max_retries=0), MESSAGES, prompt_hash("p"))

        assert ("\u00e9" * 32_768, 100_000 - 32_768) == (call.output, call.cut)

    def test_the_cap_is_a_setting(self, huge: ChatServer) -> None:
        config = ModelConfig("m", huge.url, max_retries=0, max_answer_bytes=11)
        with caching(None):
            call = ask(config, MESSAGES, prompt_hash("p"))

        assert ("\u00e9" * 5, 99_995) == (call.output, call.cut)

    def test_the_cache_keeps_the_cut_answer_and_its_cut(
        self, huge: ChatServer, tmp_path: Path
    ) -> None:
        config = ModelConfig("m", huge.url, max_retries=0, max_answer_bytes=11)
        with caching(tmp_path / "c.sqlite"):
            asked = ask(config, MESSAGES, prompt_hash("p"))
            cached = ask(config, MESSAGES, prompt_hash("p"))

        assert (1, True, asked.output, asked.cut) == (
            huge.requests,
            cached.cached,
            cached.output,
            cached.cut,
        )
        with sqlite3.connect(tmp_path / "c.sqlite") as db:
            stored = db.execute("SELECT output, cut FROM answers").fetchall()
        db.close()
        assert [("\u00e9" * 5, 99_995)] == stored

    def test_another_cap_is_asked_again(self, huge: ChatServer, tmp_path: Path) -> None:
        with caching(tmp_path / "c.sqlite"):
            ask(ModelConfig("m", huge.url, max_answer_bytes=11), MESSAGES, prompt_hash("p"))
            call = ask(ModelConfig("m", huge.url, max_answer_bytes=21), MESSAGES, prompt_hash("p"))

        assert (2, "\u00e9" * 10) == (huge.requests, call.output)
