"""A scenario's probes: what must stay visible in the window, and the questions asked of a
session with their answers and evidence (``memtape.scenarios.loader`` shows the tables)."""

from typing import Any

import attrs

from memtape.core.errors import BadInput
from memtape.policies.plumbing.params import MAX_INT, Params

PROBE_KINDS = ("path", "command", "number", "identifier", "url", "constraint", "decision")
"""What a probe may say it is (``memtape.lab.probes`` says how ``--probes auto`` tells)."""


@attrs.frozen
class Probe:
    """A string that must stay visible in the window from turn ``start`` on; ``kind``
    (one of ``PROBE_KINDS``, or None when the file did not say) is what the string is.

    A judged probe also carries a ``question`` asked at turn ``start`` and its expected
    ``answer`` (both or neither), and ``evidence``, the turns (numbered from 1) that
    hold what answers it. A question probe may have no ``text``: nothing is looked for
    in the window, and what it keeps is its evidence turns."""

    text: str | None
    start: int
    kind: str | None = None
    question: str | None = None
    answer: str | None = None
    evidence: tuple[int, ...] = ()


def read_probes(tables: Any, source: str) -> tuple[Probe, ...]:
    """The ``[[probe]]`` tables of the scenario ``source``, each read by ``read_probe``."""
    if not isinstance(tables, list):
        raise BadInput(f"{source}: probes are written as [[probe]] tables")
    probes = []
    for number, table in enumerate(tables, start=1):
        probes.append(read_probe(table, f"{source}: probe {number}"))
    return tuple(probes)


def check_evidence(probes: tuple[Probe, ...], turns: int, source: str) -> None:
    """Refuse an evidence turn past the scenario's last turn, naming the probe."""
    for number, probe in enumerate(probes, start=1):
        late = [turn for turn in probe.evidence if turn > turns]
        if late:
            raise BadInput(
                f"{source}: probe {number}: evidence turn {late[0]} is past the last turn ({turns})"
            )


def read_probe(table: Any, where: str) -> Probe:
    """One probe's table ``{text, from, kind, question, answer, evidence}``: a non-empty
    string, a turn number of at least 1, optionally one of ``PROBE_KINDS``, a non-empty
    question and answer (both or neither; with them ``text`` may be left out) and a list
    of distinct turn numbers of at least 1; nothing else. A refusal names ``where`` and
    the field."""
    if not isinstance(table, dict):
        raise BadInput(f"{where}: must be a table")
    params = Params(table, where)
    question, answer = _words(params, "question"), _words(params, "answer")
    if (question is None) != (answer is None):
        given, missing = ("question", "answer") if answer is None else ("answer", "question")
        raise BadInput(f"{where}: {given} needs its {missing} (both or neither)")
    text = params.text("text") if question is None else _words(params, "text")
    if text == "":
        raise params.error("text", "must not be empty")
    start = params.integer("from", minimum=1)
    kind = params.optional("kind")
    if kind is not None and kind not in PROBE_KINDS:
        raise params.error("kind", f"must be one of {', '.join(PROBE_KINDS)}, got {kind!r}")
    evidence = _evidence(params)
    params.done()
    return Probe(text, start, kind, question, answer, evidence)


def _words(params: Params, name: str) -> str | None:
    """An optional string field: None when absent, refused when empty or not a string."""
    value = params.optional(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise params.error(name, f"must be a string, got {value!r}")
    if name != "text" and not value.strip():
        raise params.error(name, "must not be empty")
    return value


def _evidence(params: Params) -> tuple[int, ...]:
    """A probe's evidence turns: distinct turn numbers of at least 1 (absent: none)."""
    turns = params.optional("evidence")
    if turns is None:
        return ()
    if not isinstance(turns, list) or not all(
        isinstance(turn, int) and not isinstance(turn, bool) and 1 <= turn <= MAX_INT
        for turn in turns
    ):
        raise params.error("evidence", f"must be a list of turn numbers >= 1, got {turns!r}")
    if len(set(turns)) != len(turns):
        raise params.error("evidence", f"names a turn twice: {turns!r}")
    return tuple(turns)
