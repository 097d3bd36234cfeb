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


CLAUDE_ENTRIES = 20_000
"""Entries in the timed Claude Code session (50 times fewer in a smoke run)."""


def claude_session(count: int, seed: int = 24) -> list[dict[str, object]]:
    """About ``count`` entries of a Claude Code session, from ``seed``: each exchange a
    prompt (after a file-history snapshot), a response of one to three parallel calls
    written as chained entries, each call's result hanging off its own entry (a side
    branch, but for the last), a progress entry, and an answer; a compaction (a boundary
    and its summary) every 2,000 entries or so."""
    rng = random.Random(seed)
    entries: list[dict[str, object]] = []
    last: str | None = None
    number = 0

    def add(kind: str, parent: str | None, **fields: object) -> str:
        nonlocal number
        number += 1
        uuid = f"{number:08x}-0000-4000-8000-{seed:012x}"
        entries.append(
            {"parentUuid": parent, "isSidechain": False, "type": kind, "uuid": uuid, **fields}
        )
        return uuid

    def said(role: str, content: object, msg: str | None = None) -> dict[str, object]:
        message: dict[str, object] = {"role": role, "content": content}
        if msg is not None:
            message["id"] = msg
            message["usage"] = {"input_tokens": 3, "output_tokens": rng.randint(20, 400)}
        return message

    exchange = 0
    while len(entries) < count:
        exchange += 1
        if exchange % 60 == 0 and last is not None:
            boundary = add(
                "system",
                None,
                subtype="compact_boundary",
                logicalParentUuid=last,
                compactMetadata={"trigger": "auto", "preTokens": 150_000 + exchange},
            )
            last = add("user", boundary, message=said("user", _text(rng)), isCompactSummary=True)
        entries.append({"type": "file-history-snapshot", "messageId": f"m{exchange}"})
        last = add("user", last, message=said("user", _text(rng)))
        msg = f"msg_{exchange:06d}"
        last = add(
            "assistant",
            last,
            message=said("assistant", [{"type": "text", "text": _text(rng)}], msg),
        )
        made = []
        for index in range(rng.randint(1, 3)):
            call = f"toolu_{exchange}_{index}"
            use = {"type": "tool_use", "id": call, "name": "Read", "input": {"q": _text(rng)}}
            last = add("assistant", last, message=said("assistant", [use], msg))
            made.append((last, call))
        for entry, call in made:
            answer = {"type": "tool_result", "tool_use_id": call, "content": _text(rng)}
            result = add("user", entry, message=said("user", [answer]))
        progress = add("progress", result, data={"type": "hook_progress"})
        last = add(
            "assistant",
            progress,
            message=said("assistant", [{"type": "text", "text": _text(rng)}], msg + "b"),
        )
    return entries


@pytest.fixture(scope="module")
def sessions() -> Iterator[dict[int, Path]]:
    """Claude Code session files by size, written once per module."""
    with tempfile.TemporaryDirectory() as folder:
        files: dict[int, Path] = {}
        for size in (CLAUDE_ENTRIES, CLAUDE_ENTRIES // 50):
            path = Path(folder) / f"session-{size}.jsonl"
            lines = (json.dumps(entry) for entry in claude_session(size))
            path.write_text("\n".join(lines) + "\n", "utf-8")
            files[size] = path
        yield files


def test_import_a_long_claude_code_session(bench: Bench, sessions: dict[int, Path]) -> None:
    """Issue 24's target: at most 3 s a 10,000 entries, the whole tree followed and the
    ledger kept."""
    entries = bench.size(CLAUDE_ENTRIES)
    path = sessions[entries]
    bench.benchmark.group = "import"
    text = bench.measure(f"import-claude-{entries}", import_transcript, path, rounds=ROUNDS)

    assert "calls_in = " in text
    read = sum(1 for line in path.read_text("utf-8").splitlines() if line)
    assert f"entries_read = {read}\n" in text
    if bench.median is not None:
        per_10k = bench.median / read * 10_000
        bench.note(
            f"import a {read:,}-entry Claude Code session: {bench.median:.3f} s, "
            f"{per_10k:.3f} s/10k"
        )
        assert per_10k <= SECONDS_PER_10K, f"{per_10k:.2f} s a 10,000 entries"


CAPTURE_REQUESTS = 1_000
"""Requests in the timed capture (50 times fewer in a smoke run)."""

CAPTURE_SECONDS = 2.0
"""Issue 25's target: a 1,000-request capture imports in at most this."""

WINDOW = 40
"""The messages the captured agent keeps after its system prompt (it truncates the rest)."""


def capture_lines(requests: int, seed: int = 25) -> list[dict[str, object]]:
    """A capture of ``requests`` Chat Completions exchanges of one agent, from ``seed``:
    each request the last one, its reply and a new user message or tool result, the agent
    keeping its system prompt and the last ``WINDOW`` messages (a truncation at nearly every
    request once the window is full), a tool call in one reply in two."""
    rng = random.Random(seed)
    system = {"role": "system", "content": "You are a support agent."}
    kept: list[dict[str, object]] = [{"role": "user", "content": _text(rng)}]
    lines: list[dict[str, object]] = [
        {"memtape_capture": 1, "started": "2026-12-03T15:40:00Z", "recorder": "memtape 0.2.0"}
    ]
    for number in range(1, requests + 1):
        while len(kept) > WINDOW or kept[0]["role"] == "tool":
            kept.pop(0)
        reply: dict[str, object] = {"role": "assistant", "content": _text(rng)}
        call = f"call_{number}" if rng.random() < 0.5 else None
        if call is not None:
            function = {"name": "lookup", "arguments": json.dumps({"q": _text(rng)})}
            reply["tool_calls"] = [{"id": call, "type": "function", "function": function}]
        lines.append(
            {
                "exchange": number,
                "endpoint": "openai.chat",
                "method": "POST",
                "path": "/v1/chat/completions",
                "thread": "s-000000000001",
                "status": 200,
                "error": None,
                "stream": False,
                "timings": {"start": number, "first_byte": number + 0.1, "end": number + 0.5},
                "request_headers": {},
                "response_headers": {},
                "request": {"model": "gpt-test", "messages": [system, *kept]},
                "response": {
                    "id": f"chatcmpl-{number}",
                    "object": "chat.completion",
                    "choices": [{"index": 0, "message": reply, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 900 + number, "completion_tokens": 40},
                },
            }
        )
        kept.append(reply)
        if call is not None:
            kept.append({"role": "tool", "tool_call_id": call, "content": _text(rng)})
        else:
            kept.append({"role": "user", "content": _text(rng)})
    return lines


@pytest.fixture(scope="module")
def captures() -> Iterator[dict[int, Path]]:
    """Capture files by size, written once per module."""
    with tempfile.TemporaryDirectory() as folder:
        files: dict[int, Path] = {}
        for size in (CAPTURE_REQUESTS, CAPTURE_REQUESTS // 50):
            path = Path(folder) / f"capture-{size}.jsonl"
            lines = (json.dumps(line) for line in capture_lines(size))
            path.write_text("\n".join(lines) + "\n", "utf-8")
            files[size] = path
        yield files


def test_import_a_long_capture(bench: Bench, captures: dict[int, Path]) -> None:
    """Issue 25's target: a 1,000-request capture, its truncations detected, in at most 2 s."""
    requests = bench.size(CAPTURE_REQUESTS)
    path = captures[requests]
    bench.benchmark.group = "import"
    text = bench.measure(f"import-capture-{requests}", import_transcript, path, rounds=ROUNDS)

    assert f"entries_read = {requests + 1}\n" in text
    if requests > WINDOW:
        assert 'policy = "recorded"' in text
    if bench.median is not None:
        bench.note(f"import a {requests:,}-request capture: {bench.median:.3f} s")
        assert bench.median <= CAPTURE_SECONDS, f"{bench.median:.2f} s for {requests} requests"
