"""LongMemEval's files (``longmemeval_s.json``, ``_m``, ``_oracle``) as scenarios.

A file is a JSON list of questions. Each is one scenario, chosen with
``--question ID`` (a file of one question needs none): its
``haystack_sessions`` (each a list of ``{"role": "user" | "assistant",
"content"}`` turns) are the sessions, dated by ``haystack_dates`` (``2023/05/20
(Sat) 02:21``) and named by ``haystack_session_ids``; its ``question`` and
``answer`` are one probe asked at ``question_date``, after the last turn. The
evidence is the turns marked ``has_answer``; when none is marked, every turn
of the ``answer_session_ids`` sessions (an id naming no session is counted in
the scenario's comment). An abstention question (its id ends
in ``_abs``) has none. Its ``question_type`` is said in the scenario's about.
"""

import re
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from memtape.core.errors import BadInput
from memtape.core.plural import counted
from memtape.lab.longmemory.sessions import (
    Benchmark,
    Question,
    Session,
    choose,
    described,
    field_list,
    field_text,
    read_items,
)

FORMAT = "longmemeval"
"""The name ``--format`` gives this data set."""

ROLES = ("user", "assistant")
"""The roles of a haystack turn."""

_DATE = re.compile(r"\s*(\d{4})/(\d{1,2})/(\d{1,2})\s*(?:\(\w+\))?\s*(\d{1,2}):(\d{2})\s*")
"""A LongMemEval date: ``2023/05/20 (Sat) 02:21`` (the weekday optional)."""


def read(path: Path, question: str | None) -> Benchmark:
    """The question ``question`` (its ``question_id``) of the LongMemEval file at ``path``."""
    items = read_items(path, "LongMemEval", "question", "question_id", "question_id")
    name, entry = choose(items, question, path, "question", "--question")
    return _benchmark(entry, f"{path}: question {name!r}", name)


def _benchmark(entry: Mapping[str, Any], where: str, name: str) -> Benchmark:
    sessions = field_list(entry, "haystack_sessions", where)
    dates = field_list(entry, "haystack_dates", where)
    ids = entry.get("haystack_session_ids")
    if not isinstance(ids, list):
        ids = [f"session {number}" for number in range(1, len(sessions) + 1)]
    if not len(sessions) == len(dates) == len(ids):
        raise BadInput(
            f"{where}: {len(sessions)} haystack_sessions, {len(dates)} haystack_dates and "
            f"{len(ids)} haystack_session_ids: one of each a session"
        )
    given = entry.get("answer_session_ids")
    answer_sessions = {str(i) for i in given if i is not None} if isinstance(given, list) else set()
    read_sessions, marked, whole = [], [], []
    for number, (turns, date, identity) in enumerate(zip(sessions, dates, ids, strict=True)):
        place = f"{where}: haystack_sessions[{number}]"
        if not isinstance(turns, list):
            raise BadInput(f"{place}: a session is a list of turns")
        pairs, names = [], []
        for index, turn in enumerate(turns):
            at = f"{place}[{index}]"
            if not isinstance(turn, Mapping) or turn.get("role") not in ROLES:
                role = turn.get("role") if isinstance(turn, Mapping) else None
                raise BadInput(f"{at}: a turn's role is user or assistant, got {role!r}")
            content = turn.get("content")
            if not isinstance(content, str):
                raise BadInput(f"{at}: content must be a string, got {described(content)}")
            pairs.append((str(turn["role"]), content))
            names.append(f"{number}:{index}")
            if turn.get("has_answer") is True:
                marked.append(names[-1])
            if str(identity) in answer_sessions:
                whole.append(names[-1])
        read_sessions.append(
            Session(_date(date, f"{where}: haystack_dates[{number}]"), tuple(pairs), tuple(names))
        )
    # Without marks, the answer sessions are the evidence: one the haystack lacks is said.
    unplaced = 0 if marked else len(answer_sessions - {str(identity) for identity in ids})
    notes = [f"{counted(unplaced, 'answer session id')} naming no session left out"]
    asked = entry.get("question_date")
    kind = entry.get("question_type")
    about = f"LongMemEval question {name}" + (f" ({kind})" if isinstance(kind, str) else "")
    question = Question(
        field_text(entry, "question", where),
        field_text(entry, "answer", where),
        tuple(marked or whole),
    )
    return Benchmark(
        name,
        about + ".",
        tuple(read_sessions),
        (question,),
        None if asked is None else _date(asked, f"{where}: question_date"),
        tuple(notes) if unplaced else (),
    )


def _date(value: Any, where: str) -> datetime:
    """A LongMemEval date, or one line naming it."""
    match = _DATE.fullmatch(value) if isinstance(value, str) else None
    try:
        if match is None:
            raise ValueError
        year, month, day, hour, minute = (int(group) for group in match.groups())
        return datetime(year, month, day, hour, minute)
    except ValueError:
        raise BadInput(
            f"{where}: a date is written 2023/05/20 (Sat) 02:21, got {value!r}"
        ) from None
