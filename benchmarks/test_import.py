"""Importing a long transcript: a generated 20,000-message OpenAI chat file into a scenario.

The file is JSONL: users ask, assistants answer or call tools (one call in
three is two calls in parallel), tools report, every message 5 to 40 words;
the same seed gives the same file. ``memtape import`` is timed end to end:
reading, telling the format, pairing every result with its call, writing
the scenario's TOML. Issue 11's target: at most 3 s a 10,000 messages with
the word tokenizer, checked here on the timed median.
"""

import json
import random
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.conftest import Bench
from memtape.lab.importers import import_transcript

MESSAGES = 20_000
"""Messages in the timed file (50 times fewer in a smoke run)."""

SECONDS_PER_10K = 3.0
"""The target: seconds a 10,000 messages."""

ROUNDS = 3
"""Timed imports of the whole file."""

_PHRASE = (
    "order refund shipped carrier tracking warehouse invoice account ticket the a to is of "
    "please thanks delayed label address card policy days return status customer agent"
)
_WORDS = tuple(_PHRASE.split())


def chat_messages(count: int, seed: int = 11) -> list[dict[str, object]]:
    """``count`` chat messages of a support session with tool calls, from ``seed``."""
    rng = random.Random(seed)
    messages: list[dict[str, object]] = [{"role": "system", "content": "You are a support agent."}]
    calls = 0
    while len(messages) < count:
        messages.append({"role": "user", "content": _text(rng)})
        if rng.random() < 0.5:
            ids = [f"call_{calls + n}" for n in range(1 if rng.random() < 0.67 else 2)]
            calls += len(ids)
            tool_calls = [
                {
                    "id": call,
                    "type": "function",
                    "function": {"name": "lookup", "arguments": json.dumps({"q": _text(rng)})},
                }
                for call in ids
            ]
            messages.append({"role": "assistant", "content": _text(rng), "tool_calls": tool_calls})
            messages.extend({"role": "tool", "tool_call_id": i, "content": _text(rng)} for i in ids)
        messages.append({"role": "assistant", "content": _text(rng)})
    return messages[:count]


def _text(rng: random.Random) -> str:
    return " ".join(rng.choices(_WORDS, k=rng.randint(5, 40)))


@pytest.fixture(scope="module")
def transcripts() -> Iterator[dict[int, Path]]:
    """Chat files by size, written once per module in a folder of their own."""
    with tempfile.TemporaryDirectory() as folder:
        files: dict[int, Path] = {}
        for size in (MESSAGES, MESSAGES // 50):
            path = Path(folder) / f"chat-{size}.jsonl"
            lines = (json.dumps(message) for message in chat_messages(size))
            path.write_text("\n".join(lines) + "\n", "utf-8")
            files[size] = path
        yield files


def test_import_a_long_chat(bench: Bench, transcripts: dict[int, Path]) -> None:
    messages = bench.size(MESSAGES)
    path = transcripts[messages]
    bench.benchmark.group = "import"
    text = bench.measure(f"import-{messages}", import_transcript, path, rounds=ROUNDS)

    assert messages == text.count("[[step]]")
    if bench.median is not None:
        per_10k = bench.median / messages * 10_000
        bench.note(f"import {messages:,} chat messages: {bench.median:.3f} s, {per_10k:.3f} s/10k")
        assert per_10k <= SECONDS_PER_10K, f"{per_10k:.2f} s a 10,000 messages"
