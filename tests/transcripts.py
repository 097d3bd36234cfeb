"""Helpers of the importer tests: a fixture's path, a transcript's scenario turns, and the
check that every result answers a call made before it."""

import json
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from memtape.core.commands import AddTurn
from memtape.lab.importers import import_transcript
from memtape.scenarios import Scenario, parse_scenario

FIXTURES = Path(__file__).parent / "fixtures"


def fixture(name: str) -> Path:
    """The path of a fixture file."""
    return FIXTURES / name


def imported(path: Path, **options: Any) -> Scenario:
    """The scenario ``memtape import`` writes for ``path``, loaded back."""
    return parse_scenario(import_transcript(path, **options), f"{path.stem}.toml")


def turns_of(path: Path, **options: Any) -> list[AddTurn]:
    """The turn steps of the scenario imported from ``path``."""
    steps = imported(path, **options).steps
    assert all(isinstance(step, AddTurn) for step in steps)
    return [step for step in steps if isinstance(step, AddTurn)]


def unpaired(turns: list[AddTurn]) -> list[str]:
    """Every pairing fault: a result for a call no earlier turn made, a call id made twice,
    a call answered twice. Empty when the pairing is exact."""
    called: set[str] = set()
    answered: set[str] = set()
    faults = []
    for number, turn in enumerate(turns, start=1):
        for call in turn.calls:
            if call in called:
                faults.append(f"turn {number} makes call {call} again")
            called.add(call)
        for answer in turn.answers:
            if answer not in called or answer in answered:
                faults.append(f"turn {number} answers {answer}")
            answered.add(answer)
    return faults


def write_lines(path: Path, *records: Any) -> Path:
    """``records`` as a JSONL file at ``path``."""
    path.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    return path


def write_json(path: Path, document: Any) -> Path:
    """``document`` as a JSON file at ``path``."""
    path.write_text(json.dumps(document, indent=1), "utf-8")
    return path


KEYS = (
    "type", "payload", "role", "content", "id", "toolCalls", "tool_calls", "tool_call_id",
    "tool_call_ids", "call_id", "name", "arguments", "output", "summary", "result",
    "resultDisplay", "status", "thoughts", "message", "replacement_history", "$rewindTo",
    "$set", "sessionId", "record_type", "timestamp", "thinking_blocks", "action", "input",
    "args", "function", "text", "thought", "info", "encrypted_content",
)  # fmt: skip
"""Keys the importers read, for records made up to try them."""

WORDS = (
    "response_item", "message", "user", "assistant", "gemini", "tool", "system", "developer",
    "function_call", "function_call_output", "custom_tool_call", "local_shell_call",
    "web_search_call", "reasoning", "compacted", "event_msg", "token_count", "input_text",
    "output_text", "text", "summary_text", "exit", "info", "error", "cancelled", "c1", "c2",
)  # fmt: skip
"""Values the importers look for."""


def any_records() -> "st.SearchStrategy[list[dict[str, Any]]]":
    """Lists of records made of the keys and values the importers read, nested at random."""
    values = st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=4) | st.sampled_from(WORDS),
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=4)
        ),
        max_leaves=12,
    )
    return st.lists(st.dictionaries(st.sampled_from(KEYS), values, max_size=6), max_size=6)
