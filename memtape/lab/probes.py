r"""Probes for imported transcripts: planted by a rule (``auto``), or read from a file.

A probe is a string that must stay visible in the window (a HOT turn's text,
a WARM item or the gist) from a given turn on; ``bench`` reports the share
of checks passed and ``--losses`` the event that lost each lost one.

The ``auto`` rule
-----------------
``auto_probes`` scans the text of every ``user`` and ``tool`` turn (never
``system`` or ``assistant``: a probe is something the agent was *told*) for
six patterns, Python regular expressions in which ``NUMBER`` stands for
``\d+(?:[.,]\d+)*``, ``CODES`` for ``USD|EUR|GBP|JPY|CHF|CAD|AUD|INR`` and
``UNITS`` for the alternatives of the module's ``UNITS`` (time: ``ms``,
``sec``, ``min``, ``minutes``, ``hr``, ``hours``, ``days``, ``weeks``,
``months``, ``years``...; mass: ``mg``, ``g``, ``kg``, ``lb``, ``oz``...;
length: ``mm``, ``cm``, ``m``, ``km``, ``ft``, ``miles``...; volume: ``ml``,
``L``, ``gal``...; data: ``KB``, ``MB``, ``GB``, ``GiB``...; power and
more: ``kWh``, ``W``, ``V``, ``mAh``, ``Hz``, ``px``, ``percent``), matched
case-sensitively:

1. ``url``: ``https?://(?:\([^\s<>"'`()]*\)|[^\s<>"'`()])*``
   ``(?:\([^\s<>"'`()]*\)|[^\s<>"'`().,;:!?\]}])``: a web address, with
   its balanced brackets (``https://en.wikipedia.org/wiki/Tilde_(disambiguation)``)
   but without the punctuation that ends a sentence or closes a bracket after it.
2. ``email``:
   ``(?<![\w.%+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}(?![\w-])``.
3. ``path``: ``(?<![\w/.~:@-])/?(?:[\w.~-]+/)+[\w.-]*\w(?![\w/])``, kept
   only when its last part ends in an extension that starts with a letter
   (``\.[A-Za-z][A-Za-z0-9]{0,9}$``: ``src/app/main.py``, ``./run.sh``,
   ``~/.bashrc``) or it starts at ``/`` with two parts or more
   (``/etc/hosts``), and no folder in it but ``.`` and ``..`` ends in a dot:
   ``and/or``, ``24/7``, ``2026/11/12`` and ``e.g./i.e`` are not paths.
4. ``amount``: ``(?<![\w.,])(?:[$€£¥₹]NUMBER|(?:CODES)[ \u00a0]?NUMBER``
   ``|NUMBER[ \u00a0]?(?:[€£¥₹]|(?:CODES)\b))``: ``$180.00``, ``€12``,
   ``USD 40``, ``12,50 €``.
5. ``quantity``: ``(?<![\w.,$€£¥₹])NUMBER(?:[-–]NUMBER)?[ \u00a0]?(?:%|°[CF]|(?:UNITS)\b)``:
   a number or a range with its unit, ``3.5 kg``, ``45 minutes``, ``20%``,
   ``40L``, ``2-3 days``.
6. ``identifier``: ``(?<![\w-])(?:[A-Z][A-Z0-9]*(?:[-_][A-Z0-9]+)+|[A-Z]{2,}\d{3,}``
   ``|[a-z]{2,8}_[A-Za-z0-9]{4,}|[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12})(?![\w-])``
   ``|(?<![\w&#])#\d{2,}(?!\w)|(?<![\w.,$€£¥₹#-])\d{5,}(?!\w|[.,]\d)``,
   kept only when it holds a digit: an uppercase code in parts
   (``GX-20418``, ``ORD-1234``, ``JIRA-123``, ``INV-2024-0042``), capitals
   then digits (``PO12345``), a lowercase key id (``cus_Nffr2Hib``,
   ``acct_1032``), a UUID, a ticket number (``#4521``), or a run of five
   digits or more (an account or tracking number).

Matches are exact substrings of the turn's text, so each probe is found by
the bench's substring test. Within one turn, the matches of every pattern are
taken in order of where they start; of matches starting at the same place
the longest wins (then the pattern listed first); a match overlapping one
already taken is skipped, so ``GX-20418`` inside
``https://shop.example/orders/GX-20418`` is not a probe of its own there.

Turns are scanned in order, and a string is planted once, at its first
appearance in a user or tool turn, with ``from`` the turn after that one (the
first turn a later turn could need it). A string first stated in the last
turn is not planted: no later turn could need it. The probes come out in the
order of their first appearances (turn, then place in the text), so the same
turns always give the same probes in the same order.

A probe may be a substring of another (``GX-20418`` said by the user, and a
URL ending in it said later by a tool): each is planted at its own first
appearance, since each is a string a later turn may need. Visibility is a
substring test, as for every probe: while the URL shows, so does
``GX-20418``, which is then truly in the window.

A probes file
-------------
``--probes FILE`` reads a TOML file of ``[[probe]]`` tables (``text``,
``from``; nothing else) when FILE ends in ``.toml``, and a JSONL file of
``{"text": ..., "from": ...}`` objects, one a line, when it ends in
``.jsonl``. ``text`` is a non-empty string, ``from`` a turn number from 1 to
the transcript's last turn, and the text must occur in some turn of the
transcript (a probe found nowhere is a typo). Bad input is one line naming
``FILE:LINE`` (JSONL) or ``FILE: probe N`` (TOML) and the field.
"""

import re
import tomllib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import orjson

from memtape.core.commands import AddTurn
from memtape.core.errors import BadInput
from memtape.core.paths import read_regular
from memtape.lab.choices import AUTO
from memtape.scenarios.loader import Probe, read_probe
from memtape.scenarios.writer import Value

Turn = tuple[str, str] | AddTurn
"""A turn as an importer has it: ``(role, text)``, or the ``AddTurn`` it becomes."""

SCANNED_ROLES = frozenset({"user", "tool"})
"""The roles whose turns ``auto_probes`` scans: what the agent was told."""


NUMBER = r"\d+(?:[.,]\d+)*"
"""A number as the patterns read it: digits, with ``.`` or ``,`` between groups."""

CODES = "USD|EUR|GBP|JPY|CHF|CAD|AUD|INR"
"""The currency codes an ``amount`` may carry."""

UNITS = (
    "seconds|second|secs|sec|ms|minutes|minute|mins|min|hours|hour|hrs|hr|days|day|"
    "weeks|week|months|month|years|year|yrs|yr|"
    "tonnes|tonne|kg|mg|g|lbs|lb|oz|"
    "kilometres|kilometers|kilometre|kilometer|km|metres|meters|metre|meter|cm|mm|m|"
    "miles|mile|mi|feet|ft|inches|"
    "litres|liters|litre|liter|ml|mL|L|gallons|gallon|gal|"
    "KiB|MiB|GiB|TiB|KB|kB|MB|GB|TB|bytes|"
    "kWh|kW|W|V|mAh|GHz|MHz|kHz|Hz|px|percent"
)
"""The units a ``quantity`` may carry, longer spellings first; matched case-sensitively."""

TEMPLATES: tuple[tuple[str, str], ...] = (
    (
        "url",
        r"""https?://(?:\([^\s<>"'`()]*\)|[^\s<>"'`()])*"""
        r"""(?:\([^\s<>"'`()]*\)|[^\s<>"'`().,;:!?\]}])""",
    ),
    (
        "email",
        r"(?<![\w.%+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}(?![\w-])",
    ),
    ("path", r"(?<![\w/.~:@-])/?(?:[\w.~-]+/)+[\w.-]*\w(?![\w/])"),
    (
        "amount",
        r"(?<![\w.,])(?:[$€£¥₹]NUMBER|(?:CODES)[ \u00a0]?NUMBER"
        r"|NUMBER[ \u00a0]?(?:[€£¥₹]|(?:CODES)\b))",
    ),
    ("quantity", r"(?<![\w.,$€£¥₹])NUMBER(?:[-–]NUMBER)?[ \u00a0]?(?:%|°[CF]|(?:UNITS)\b)"),
    (
        "identifier",
        r"(?<![\w-])(?:[A-Z][A-Z0-9]*(?:[-_][A-Z0-9]+)+|[A-Z]{2,}\d{3,}"
        r"|[a-z]{2,8}_[A-Za-z0-9]{4,}|[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12})(?![\w-])"
        r"|(?<![\w&#])#\d{2,}(?!\w)|(?<![\w.,$€£¥₹#-])\d{5,}(?!\w|[.,]\d)",
    ),
)
"""Each pattern of the ``auto`` rule, by name, in the order that breaks ties, with
``NUMBER``, ``CODES`` and ``UNITS`` standing for those constants."""


def _compiled(template: str) -> re.Pattern[str]:
    for name, value in (("NUMBER", NUMBER), ("CODES", CODES), ("UNITS", UNITS)):
        template = template.replace(name, value)
    return re.compile(template)


PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, _compiled(template)) for name, template in TEMPLATES
)
"""The ``auto`` rule's patterns, compiled."""

_EXTENSION = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,9}$")
_DIGIT = re.compile(r"\d")


def auto_probes(turns: Iterable[Turn]) -> list[Probe]:
    """The probes the ``auto`` rule plants on ``turns`` (see the module's docstring)."""
    texts = [(turn.role, turn.text) if isinstance(turn, AddTurn) else turn for turn in turns]
    first: dict[str, int] = {}
    for number, (role, text) in enumerate(texts, start=1):
        if role in SCANNED_ROLES:
            for found in candidates(text):
                first.setdefault(found, number)
    # Insertion order is the order of first appearances (turn, then place in the text).
    return [Probe(text, turn + 1) for text, turn in first.items() if turn < len(texts)]


def candidates(text: str) -> list[str]:
    """The strings the ``auto`` rule finds in one turn's text, in order of where they
    start, overlaps resolved to the longest match (then the pattern listed first)."""
    spans = []
    for rank, (name, pattern) in enumerate(PATTERNS):
        for match in pattern.finditer(text):
            if _kept(name, match.group()):
                spans.append((match.start(), -len(match.group()), rank, match.group()))
    spans.sort()
    found = []
    end = 0
    for start, length, _, string in spans:
        if start >= end:
            found.append(string)
            end = start - length
    return found


def _kept(name: str, string: str) -> bool:
    """Whether a match of pattern ``name`` is one the rule keeps."""
    if name == "path":
        *folders, last = string.split("/")
        if any(folder.endswith(".") and folder not in {".", ".."} for folder in folders):
            return False
        return _EXTENSION.search(last) is not None or (string.startswith("/") and len(folders) >= 2)
    if name == "identifier":
        return _DIGIT.search(string) is not None
    return True


def probes_from_file(path: Path, turns: Sequence[Turn] | None = None) -> list[Probe]:
    """The probes a TOML (``.toml``) or JSONL (``.jsonl``) file lists, in its order.

    With ``turns`` (the transcript's), each probe is also checked against
    them: ``from`` at most the last turn, and its text found in some turn.
    """
    if path.suffix not in {".toml", ".jsonl"}:
        raise BadInput(
            f"--probes {path}: write auto, or a file ending in .toml ([[probe]] tables) "
            'or .jsonl (one {"text", "from"} object a line)'
        )
    data = read_regular(path, "probes file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise BadInput(f"{path}: cannot read it: {error}") from None
    entries = _toml(text, path) if path.suffix == ".toml" else _jsonl(text, path)
    if not entries:
        raise BadInput(f"{path}: no probes")
    if turns is not None:
        texts = [turn.text if isinstance(turn, AddTurn) else turn[1] for turn in turns]
        for where, probe in entries:
            _check(where, probe, texts)
    return [probe for _, probe in entries]


def _toml(text: str, path: Path) -> list[tuple[str, Probe]]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise BadInput(f"{path}: not valid TOML: {error}") from None
    except (ValueError, RecursionError) as error:
        raise BadInput(f"{path}: cannot read it: {error}") from None
    tables = data.pop("probe", [])
    if data:
        raise BadInput(f"{path}: only [[probe]] tables, found {', '.join(sorted(data))}")
    if not isinstance(tables, list):
        raise BadInput(f"{path}: probes are written as [[probe]] tables")
    entries = []
    for number, table in enumerate(tables, start=1):
        where = f"{path}: probe {number}"
        entries.append((where, read_probe(table, where)))
    return entries


def _jsonl(text: str, path: Path) -> list[tuple[str, Probe]]:
    entries = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            data: Any = orjson.loads(line)
        except orjson.JSONDecodeError as error:
            raise BadInput(f"{where}: not a JSON object: {error}") from None
        if not isinstance(data, dict):
            raise BadInput(f'{where}: a probe is an object {{"text": ..., "from": ...}}')
        entries.append((where, read_probe(data, where)))
    return entries


def _check(where: str, probe: Probe, texts: Sequence[str]) -> None:
    """Refuse a probe the transcript could not show: due past its end, or found nowhere."""
    if probe.start > len(texts):
        raise BadInput(
            f"{where}: from {probe.start} is past the transcript's last turn ({len(texts)})"
        )
    if not any(probe.text in text for text in texts):
        raise BadInput(f"{where}: text {probe.text!r} occurs in no turn of the transcript")


def planted(spec: str | None, turns: Sequence[Turn]) -> list[dict[str, Value]]:
    """The ``[[probe]]`` tables an import writes for ``--probes spec`` on ``turns``:
    none for None, the ``auto`` rule's for ``auto``, a file's (checked against the
    turns) otherwise. A file named ``auto`` is given as ``./auto``."""
    if spec is None:
        return []
    probes = auto_probes(turns) if spec == AUTO else probes_from_file(Path(spec), turns)
    return [{"text": probe.text, "from": probe.start} for probe in probes]
