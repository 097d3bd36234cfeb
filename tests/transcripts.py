"""Helpers of the importer tests: a fixture's path, a transcript's scenario turns, and the
check that every result answers a call made before it."""

import json
from pathlib import Path
from typing import Any

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
