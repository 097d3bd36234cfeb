"""A benchmark item as sessions and questions, and the scenario they make.

The turns of every session come in order of the sessions' dates (a file that
lists them otherwise, as LongMemEval's oracle file does, is sorted; sessions
of the same date keep the file's order). The logical clock counts hours from
the first session's date: an ``advance`` step before each later session, and
one after the last turn to the date the questions are asked, when the file
gives it. Each question is a probe asked after the last turn (``from``), with
its answer and the turns that hold its evidence; it names no ``text``, so the
bench's window checks leave it alone and the audit reads whether its evidence
turns are still in the window.
"""

from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import attrs
import orjson

from memtape.core.errors import BadInput
from memtape.core.paths import read_regular
from memtape.core.plural import counted
from memtape.lab.choices import DATA_SETS, DEFAULT_BUDGET, DEFAULT_HOT_N
from memtape.lab.scenario_file import header
from memtape.scenarios.writer import scenario_file

LONGMEMEVAL, LOCOMO = DATA_SETS
"""The ``--format`` of a LongMemEval file, and of a LoCoMo file."""

BENCHMARKS = DATA_SETS
"""The data sets ``import --format`` reads into scenarios with questions."""

HOUR = 3600.0
"""Seconds in the clock's unit."""


@attrs.frozen
class Session:
    """One session of a chat: its date (None when the file gives none) and its turns, each
    a role and a text, and the file's name for each turn (an evidence reference)."""

    date: datetime | None
    turns: tuple[tuple[str, str], ...]
    names: tuple[str, ...] = ()


@attrs.frozen
class Question:
    """A question asked after the sessions, its expected answer, and its evidence: the
    names of the turns that hold it (as ``Session.names`` give them)."""

    question: str
    answer: str
    evidence: tuple[str, ...] = ()


@attrs.frozen
class Benchmark:
    """One item of a data set: its name, what it is, its sessions and questions, the date
    the questions are asked (None when the file gives none), and notes on what it left out
    or could not place."""

    name: str
    about: str
    sessions: tuple[Session, ...]
    questions: tuple[Question, ...]
    asked: datetime | None = None
    notes: tuple[str, ...] = ()


def read_json(path: Path, what: str) -> Any:
    """The JSON document in the file at ``path``; one line naming the file otherwise."""
    data = read_regular(path, what)
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as error:
        raise BadInput(f"{path}: not a {what} (not JSON: {error})") from None


def read_items(
    path: Path, data_set: str, what: str, required: str, name_key: str
) -> list[tuple[str, Mapping[str, Any]]]:
    """The items of the ``data_set`` file at ``path``: a JSON list of objects (``what``s),
    each holding ``required``, named by its ``name_key`` (by its place from 1 when it has
    none); one line naming the file or the item otherwise."""
    data = read_json(path, f"{data_set} file")
    if not isinstance(data, list):
        raise BadInput(f"{path}: a {data_set} file is a list of {what}s, got {described(data)}")
    items = []
    for index, entry in enumerate(data):
        if not isinstance(entry, Mapping) or entry.get(required) is None:
            raise BadInput(f"{path}: [{index}]: a {what} is an object with a {required}")
        name = entry.get(name_key)
        items.append((str(name) if isinstance(name, str | int) else str(index + 1), entry))
    return items


def benchmark_scenario(
    benchmark: Benchmark,
    path: Path,
    format: str,
    *,
    budget: int = DEFAULT_BUDGET,
    hot_n: int = DEFAULT_HOT_N,
    tokenizer: str,
) -> str:
    """The scenario file's text for ``benchmark``, read from ``path`` in ``format``."""
    policies = header(budget, hot_n, tokenizer)
    sessions = sorted(
        benchmark.sessions, key=lambda session: session.date or datetime.min
    )  # stable: same-date sessions keep the file's order
    dates = [session.date for session in sessions if session.date is not None]
    first = dates[0] if dates else None
    steps: list[dict[str, Any]] = []
    number_of: dict[str, int] = {}
    clock, turns = 0.0, 0
    for session in sessions:
        clock = _advance(steps, first, session.date, clock)
        for index, (role, text) in enumerate(session.turns):
            steps.append({"turn": role, "text": text})
            turns += 1
            if index < len(session.names):
                number_of.setdefault(session.names[index], turns)
    if not turns:
        raise BadInput(f"{path}: {benchmark.name}: its sessions hold no turn")
    _advance(steps, first, benchmark.asked, clock)
    probes, unplaced = [], 0
    for question in benchmark.questions:
        evidence = sorted({number_of[name] for name in question.evidence if name in number_of})
        unplaced += sum(1 for name in question.evidence if name not in number_of)
        probe: dict[str, Any] = {
            "from": turns,
            "question": question.question,
            "answer": question.answer,
        }
        if evidence:
            probe["evidence"] = evidence
        probes.append(probe)
    notes = list(benchmark.notes)
    if unplaced:
        notes.append(
            f"{counted(unplaced, 'evidence reference')} naming no turn of the sessions left out"
        )
    comment = "\n".join(
        [
            f"Imported from {path.name} ({format}): {benchmark.name}, "
            f"{counted(len(sessions), 'session')}, {counted(turns, 'turn')}, "
            f"{counted(len(probes), 'question')} asked after turn {turns}.",
            "The clock counts hours from the first session's date.",
            *notes,
        ]
    )
    info = {"name": _name(benchmark.name), "about": benchmark.about}
    imported = {
        "file": path.name,
        "format": format,
        "item": benchmark.name,
        "sessions": len(sessions),
        "turns_written": turns,
        "questions": len(probes),
    }
    return scenario_file(comment, info, policies, steps, probes, imported=imported)


def _advance(
    steps: list[dict[str, Any]], first: datetime | None, date: datetime | None, clock: float
) -> float:
    """Add an ``advance`` step to ``date`` (hours from ``first``) when it is later than
    ``clock``; the clock as it then stands."""
    if first is None or date is None:
        return clock
    hours = (date - first).total_seconds() / HOUR
    if hours > clock:
        steps.append({"advance": hours})
        return hours
    return clock


def _name(name: str) -> str:
    """A scenario name from an item's name: its characters kept where a file name may hold
    them, the others made ``-``."""
    kept = "".join(char if char.isalnum() or char in "-_." else "-" for char in name)
    return kept.strip("-.") or "benchmark"


def choose(
    items: Sequence[tuple[str, Any]], item: str | None, path: Path, what: str, option: str
) -> tuple[str, Any]:
    """The item named ``item`` (by its name, or by its place from 1) of ``items`` (name,
    data); the only one when ``item`` is None and there is one. A name the file lacks is
    refused with the closest one, or the names."""
    from memtape.core.spelling import did_you_mean  # noqa: PLC0415 (a refusal only)

    names = [name for name, _ in items]
    if not items:
        raise BadInput(f"{path}: no {what} in the file")
    if item is None:
        if len(items) == 1:
            return items[0]
        raise BadInput(f"{path}: {len(items)} {what}s: choose one with {option} ({_listed(names)})")
    for name, data in items:
        if name == item:
            return name, data
    # ASCII digits, few enough for int(): a place, not a 5,000-digit ValueError or "\u0662".
    if item.isascii() and item.isdigit() and len(item) <= 18 and 1 <= int(item) <= len(items):
        return items[int(item) - 1]
    hint = did_you_mean(item, names)
    known = hint or f" (the file's: {_listed(names)})"
    raise BadInput(f"{path}: {option} {item!r}: no such {what}{known}")


def _listed(names: Sequence[str], shown: int = 5) -> str:
    """The first ``shown`` names, and how many more."""
    more = f", and {len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more


def field_list(entry: Mapping[str, Any], key: str, where: str) -> list[Any]:
    """The list under ``key``, or one line naming it."""
    value = entry.get(key)
    if not isinstance(value, list):
        raise BadInput(f"{where}: {key} must be a list, got {described(value)}")
    return value


def field_text(entry: Mapping[str, Any], key: str, where: str) -> str:
    """The non-empty text under ``key`` (a number is written as it reads), or one line
    naming it."""
    value = entry.get(key)
    if isinstance(value, bool) or not isinstance(value, str | int | float) or str(value) == "":
        raise BadInput(f"{where}: {key} must be a non-empty string, got {described(value)}")
    return str(value)


def described(value: Any) -> str:
    """What ``value`` is, in a refusal: nothing, an object, a list, or its type and the
    start of it."""
    if value is None:
        return "nothing"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list):
        return "a list"
    return f"{type(value).__name__} {str(value)[:40]!r}"
