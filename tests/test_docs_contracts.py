"""The JSON contracts docs/reference/json.md states are the fields memtape writes now."""

import contextlib
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

from memtape.cli import main

PAGE = Path(__file__).parent.parent / "docs" / "reference" / "json.md"
OPAQUE = frozenset({"factors", "event", "params"})
"""Fields whose own fields the contract leaves to the policy or the event type."""


def _stated(section: str) -> set[str]:
    """The quoted field names of a section of the page (its schema and its sentences)."""
    text = PAGE.read_text("utf-8").split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r'"(\w+)"', text)) | set(re.findall(r"`(\w+)`", text))


def _schema(section: str) -> set[str]:
    """The field names the section's schema (its first block, or its one line) lists."""
    text = PAGE.read_text("utf-8").split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    block = text.split("```text\n", 1)[1].split("```", 1)[0] if "```text" in text else text
    return set(re.findall(r'"(\w+)"', block))


def _names(value: Any) -> set[str]:
    """Every field name in ``value``, at any depth, but not inside the opaque fields, nor a
    ranked fact's factors beside its own fields (each policy has its own)."""
    found: set[str] = set()
    if isinstance(value, dict):
        factors = set(value.get("factors") or {}) - {"importance", "reads", "written_at"}
        for key, inner in value.items():
            if key in factors:
                continue
            found.add(key)
            if key not in OPAQUE:
                found |= _names(inner)
    elif isinstance(value, list):
        for inner in value:
            found |= _names(inner)
    return found


def _json(argv: list[str]) -> Any:
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert 0 == main(argv)
    return json.loads(printed.getvalue())


@pytest.fixture
def chat(tmp_path: Path) -> Path:
    """A transcript with tool calls, imported: its HOT turns have calls and answers."""
    fixture = Path(__file__).parent / "fixtures" / "openai-chat.json"
    scenario = tmp_path / "chat.toml"
    with contextlib.redirect_stdout(io.StringIO()):
        assert 0 == main(["import", str(fixture), "--out", str(scenario)])
    return scenario


class TestContracts:
    def test_show_writes_the_fields_the_page_lists_and_no_other(self, chat: Path) -> None:
        written = set().union(
            *(
                _names(_json(["show", *target, "--json"]))
                for target in (
                    ["refund-desk"],
                    ["dana-facts"],
                    ["sleep-pass"],
                    ["sleep-pass", "--at", "3"],
                    [str(chat), "--at", "4"],
                    [str(Path(__file__).parent.parent / "examples" / "session-notes.toml")],
                    [str(Path(__file__).parent.parent / "examples" / "core-memory.toml")],
                )
            )
        )
        assert _schema("memtape show --json") == written

    def test_timeline_writes_the_fields_the_page_lists(self) -> None:
        written = _names(_json(["timeline", "refund-desk", "--json"]))
        assert _schema("memtape timeline --json") == written

    def test_bench_writes_the_fields_the_page_lists(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.chdir(tmp_path)
        argv = ["bench", "refund-desk", "dana-facts", "--policy", "tiered", "--policy", "lru"]
        with contextlib.redirect_stdout(io.StringIO()):
            assert 0 == main([*argv, "-q", "--jobs", "1", "--json", "bench.json"])
        written = _names(json.loads((tmp_path / "bench.json").read_text("utf-8")))
        assert _stated("memtape bench --json") >= written
        assert _schema("memtape bench --json") <= written
