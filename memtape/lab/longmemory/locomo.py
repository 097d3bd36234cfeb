"""LoCoMo's file (``locomo10.json``) as scenarios.

A file is a JSON list of conversations between two people. Each is one
scenario, chosen with ``--sample`` (its ``sample_id``, or its place from 1;
a file of one needs none). Its ``conversation`` holds ``speaker_a``,
``speaker_b`` and the sessions ``session_1``, ``session_2``... (each a list of
``{"speaker", "dia_id", "text"}`` turns, an image's ``blip_caption`` read as
``[image: CAPTION]``), each dated by ``session_N_date_time`` (``1:56 pm on 8
May, 2023``). ``speaker_a``'s turns are user turns, ``speaker_b``'s assistant
turns, each written ``NAME: TEXT`` so both names stay in the text. Each of its
``qa`` is a probe asked after the last turn: its ``question``, its ``answer``,
its ``evidence`` (``dia_id``s, as turn numbers). An adversarial question
(category 5) has no answer, only the wrong one it baits (``adversarial_answer``):
it is left out, and counted in the scenario's comment.
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

FORMAT = "locomo"
"""The name ``--format`` gives this data set."""

_SESSION = re.compile(r"session_(\d+)", re.ASCII)
"""A session's key in a conversation."""

_DATE = re.compile(r"\s*(\d{1,2}):(\d{2})\s*([ap]m)\s+on\s+(\d{1,2})\s+(\w+),?\s+(\d{4})\s*", re.I)
"""A LoCoMo date: ``1:56 pm on 8 May, 2023``."""

_MONTHS = {
    name: number
    for number, name in enumerate(
        (
            "january",
            "february",
            "march",
            "april",
            "may",
            "june",
            "july",
            "august",
            "september",
            "october",
            "november",
            "december",
        ),
        start=1,
    )
}


def read(path: Path, sample: str | None) -> Benchmark:
    """The conversation ``sample`` of the LoCoMo file at ``path``."""
    items = read_items(path, "LoCoMo", "sample", "conversation", "sample_id")
    name, entry = choose(items, sample, path, "sample", "--sample")
    return _benchmark(entry, f"{path}: sample {name!r}", name)


def _benchmark(entry: Mapping[str, Any], where: str, name: str) -> Benchmark:
    conversation = entry["conversation"]
    if not isinstance(conversation, Mapping):
        raise BadInput(f"{where}: conversation must be an object, got {described(conversation)}")
    speaker_a = field_text(conversation, "speaker_a", f"{where}: conversation")
    sessions = []
    for key in _session_keys(conversation):
        place = f"{where}: {key}"
        turns = field_list(conversation, key, f"{where}: conversation")
        pairs, names = [], []
        for index, turn in enumerate(turns):
            at = f"{place}[{index}]"
            if not isinstance(turn, Mapping):
                raise BadInput(f"{at}: a turn is an object with speaker, dia_id and text")
            speaker = field_text(turn, "speaker", at)
            text = field_text(turn, "text", at) if turn.get("text") != "" else ""
            caption = turn.get("blip_caption")
            if isinstance(caption, str) and caption:
                text = f"{text}\n[image: {caption}]" if text else f"[image: {caption}]"
            role = "user" if speaker == speaker_a else "assistant"
            pairs.append((role, f"{speaker}: {text}"))
            names.append(str(turn.get("dia_id", f"{key}[{index}]")))
        date = conversation.get(f"{key}_date_time")
        dated = None if date is None else _date(date, f"{place}_date_time")
        sessions.append(Session(dated, tuple(pairs), tuple(names)))
    questions, adversarial = [], 0
    for index, qa in enumerate(field_list(entry, "qa", where)):
        at = f"{where}: qa[{index}]"
        if not isinstance(qa, Mapping):
            raise BadInput(f"{at}: a question is an object with question, answer and evidence")
        if "answer" not in qa and "adversarial_answer" in qa:
            adversarial += 1
            continue
        evidence = qa.get("evidence") or []
        if not isinstance(evidence, list):
            raise BadInput(f"{at}: evidence must be a list of dia_ids, got {described(evidence)}")
        references = tuple(str(reference) for reference in evidence)
        questions.append(
            Question(field_text(qa, "question", at), field_text(qa, "answer", at), references)
        )
    notes = (
        [f"{counted(adversarial, 'adversarial question')} (no answer, only a bait) left out"]
        if adversarial
        else []
    )
    names_of = f"{speaker_a} and {conversation.get('speaker_b', '?')}"
    return Benchmark(
        name,
        f"LoCoMo conversation {name} between {names_of}.",
        tuple(sessions),
        tuple(questions),
        notes=tuple(notes),
    )


def _session_keys(conversation: Mapping[str, Any]) -> list[str]:
    """The conversation's session keys in the order of their numbers, each key as the file
    writes it (``session_01`` and ``session_1`` are both read), compared as digits: a
    number too long for ``int()`` is still a number."""
    found = [
        (match.group(1).lstrip("0"), key)
        for key in map(str, conversation)
        if (match := _SESSION.fullmatch(key)) is not None
    ]
    found.sort(key=lambda pair: (len(pair[0]), pair[0], pair[1]))
    return [key for _, key in found]


def _date(value: Any, where: str) -> datetime:
    """A LoCoMo date, or one line naming it."""
    match = _DATE.fullmatch(value) if isinstance(value, str) else None
    try:
        if match is None:
            raise ValueError
        hour, minute, half, day, month, year = match.groups()
        clock = int(hour) % 12 + (12 if half.lower() == "pm" else 0)
        return datetime(int(year), _MONTHS[month.lower()], int(day), clock, int(minute))
    except (ValueError, KeyError):
        raise BadInput(
            f"{where}: a date is written 1:56 pm on 8 May, 2023, got {value!r}"
        ) from None
