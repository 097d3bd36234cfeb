r"""Probes for imported transcripts: planted by a rule (``auto``), or read from a file.

A probe is a string that must stay visible in the window (a HOT turn's text,
a WARM item or the gist) from a given turn on; ``bench`` reports the share
of checks passed and ``--losses`` the event that lost each lost one, grouped
by the probe's kind.

The ``auto`` rule
-----------------
``auto_probes`` scans the text of every ``user`` and ``tool`` turn (never
``system`` or ``assistant``: a probe is something the agent was *told*) for
the patterns below, and every ``system`` turn and pinned turn for
constraints, and every ``user`` and ``assistant`` turn for decisions. Each
probe it plants is typed: its ``kind`` is one of ``path``, ``command``,
``number``, ``identifier``, ``url``, ``constraint``, ``decision``
(``memtape.scenarios.probes.PROBE_KINDS``).

The patterns are Python regular expressions in which ``NUMBER`` stands for
``\d+(?:[.,]\d+)*``, ``CODES`` for ``USD|EUR|GBP|JPY|CHF|CAD|AUD|INR``,
``PROGRAMS`` for the alternatives of the module's ``PROGRAMS`` (``git``,
``make``, ``npm``, ``pytest``, ``python``, ``docker``, ``kubectl``, ``curl``,
``ls``, ``grep``... or ``./`` and a script's name) and ``UNITS`` for the
alternatives of the module's ``UNITS`` (time: ``ms``,
``sec``, ``min``, ``minutes``, ``hr``, ``hours``, ``days``, ``weeks``,
``months``, ``years``...; mass: ``mg``, ``g``, ``kg``, ``lb``, ``oz``...;
length: ``mm``, ``cm``, ``m``, ``km``, ``ft``, ``miles``...; volume: ``ml``,
``L``, ``gal``...; data: ``KB``, ``MB``, ``GB``, ``GiB``...; power and
more: ``kWh``, ``W``, ``V``, ``mAh``, ``Hz``, ``px``, ``percent``), matched
case-sensitively; each is named, and gives probes of the kind after the arrow:

1. ``url`` → url: ``https?://(?:\([^\s<>"'`()]*\)|[^\s<>"'`()])*``
   ``(?:\([^\s<>"'`()]*\)|[^\s<>"'`().,;:!?\]}])``: a web address, with
   its balanced brackets (``https://en.wikipedia.org/wiki/Tilde_(disambiguation)``)
   but without the punctuation that ends a sentence or closes a bracket after it.
2. ``email`` → identifier:
   ``(?<![\w.%+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}(?![\w-])``.
3. ``command`` → command: ``(?<!`)`(?P<probe>(?:PROGRAMS) [^`\n]*[^`\s])`(?!`)``:
   the inside of an inline code span that starts with a program and gives it
   an argument (```make test```, ```git push origin main```, ```./run.sh --fast```).
4. ``prompt`` → command: ``(?<![^\n])[ \t]*\$ (?P<probe>(?:PROGRAMS) [^\n]*[^\s])``:
   a line that shows a shell prompt, ``$ pytest -x tests/``, without the prompt.
5. ``path`` → path: ``(?<![\w/.~:@-])/?(?:[\w.~-]+/)+[\w.-]*\w(?![\w/])``, kept
   only when its last part ends in an extension that starts with a letter
   (``\.[A-Za-z][A-Za-z0-9]{0,9}$``: ``src/app/main.py``, ``./run.sh``,
   ``~/.bashrc``) or it starts at ``/`` with two parts or more
   (``/etc/hosts``), and no folder in it but ``.`` and ``..`` ends in a dot:
   ``and/or``, ``24/7``, ``2026/11/12`` and ``e.g./i.e`` are not paths.
6. ``amount`` → number: ``(?<![\w.,])(?:[$€£¥₹]NUMBER|(?:CODES)[ \u00a0]?NUMBER``
   ``|NUMBER[ \u00a0]?(?:[€£¥₹]|(?:CODES)\b))``: ``$180.00``, ``€12``,
   ``USD 40``, ``12,50 €``.
7. ``quantity`` → number:
   ``(?<![\w.,$€£¥₹])NUMBER(?:[-–]NUMBER)?[ \u00a0]?(?:%|°[CF]|(?:UNITS)\b)``:
   a number or a range with its unit, ``3.5 kg``, ``45 minutes``, ``20%``,
   ``40L``, ``2-3 days``.
8. ``identifier`` → identifier:
   ``(?<![\w-])(?:[A-Z][A-Z0-9]*(?:[-_][A-Z0-9]+)+|[A-Z]{2,}\d{3,}``
   ``|[a-z]{2,8}_[A-Za-z0-9]{4,}|[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12})(?![\w-])``
   ``|(?<![\w&#])#\d{2,}(?!\w)|(?<![\w.,$€£¥₹#-])\d{5,}(?!\w|[.,]\d)``,
   kept only when it holds a digit: an uppercase code in parts
   (``GX-20418``, ``ORD-1234``, ``JIRA-123``, ``INV-2024-0042``), capitals
   then digits (``PO12345``), a lowercase key id (``cus_Nffr2Hib``,
   ``acct_1032``), a UUID, a ticket number (``#4521``), or a run of five
   digits or more (an account or tracking number).

A pattern with a group named ``probe`` plants that group, else its whole
match. Hex hashes (``3f2a9c1e``, a commit's forty digits) are no kind: no
pattern takes them, unless all their digits are decimal.

What is not a probe
-------------------
Tools print markers around what they show; before the patterns run, each
of these ``NOISE`` spans is blanked (so no probe holds or crosses one),
unless it lies inside a URL:

- ``grep``: ``(?<![^\n])(?:[^\s:]*/[^\s:/]+|[^\s:/]+\.[A-Za-z][A-Za-z0-9]{0,9})``
  ``(?P<noise>[:-]\d+[:-])``: the line-number marker of ``grep -n`` and
  ``rg`` output, at a line's start after a file name (``SKILL.md-378-``,
  ``src/app.py:42:``); the marker goes, so ``src/app.py`` is still a path,
  and ``SKILL.md-378`` is no probe.
- ``lines``: ``(?<![^\n])[ \t]*\d+(?:→|\t)``: a line number before an arrow or
  a tab (``    42→``, ``cat -n``).
- ``hunk``: ``(?<![^\n])@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@``: a diff hunk's
  header (``@@ -1,4 +1,5 @@``).
- ``diff``: ``(?<![^\n])(?:(?:---|\+\+\+) (?P<noise>[ab]/)|diff --git (?P<old>a/)\S* (?P<new>b/))``:
  the ``a/`` and ``b/`` of a diff's file names, so ``a/src/app.py`` plants
  ``src/app.py``.
- ``base64``: ``(?<![\w+/=])[A-Za-z0-9+/]{40,}={0,2}(?![\w+/=])``, blanked only
  when it holds an uppercase letter, a lowercase letter and a digit, and 24
  characters in a row without ``/`` (a long path has shorter parts): an
  encoded payload, a key, an image.

A pattern with named groups blanks those groups, else its whole match.

Constraints
-----------
A ``constraint`` is a sentence of a ``system`` turn or a pinned turn (a
system prompt, an instructions file) that holds ``must``, ``never``,
``always``, ``do not`` or ``don't`` as words, in any case (``CONSTRAINT``).
Each line of the turn (less a list marker or a heading's ``#``) is split
into sentences after ``.``, ``!`` or ``?`` and a space; a sentence of 3 to
50 words is planted whole, as written (``Never commit to main.``), a longer
one is taken for something else (a paragraph without stops, code).

Decisions
---------
A ``decision`` is a sentence of a ``user`` or ``assistant`` turn that says
something was settled: it holds ``decided``, ``decide to``, ``decision``,
``agreed``, ``let's go with`` or ``we'll go with`` (``DECISION``), in any
case. Sentences are split and measured as constraints are (3 to 50 words,
planted whole: ``We decided to keep the v1 export format.``). A decision does
not hide what the patterns find in it: a path or an amount it names is a
probe of its own.

Which string, and from when
---------------------------
Matches are exact substrings of the turn's text, so each probe is found by
the bench's substring test. Within one turn, the matches of every pattern are
taken in order of where they start; of matches starting at the same place
the longest wins (then the pattern listed first); a match overlapping one
already taken is skipped, so ``GX-20418`` inside
``https://shop.example/orders/GX-20418`` is not a probe of its own there.

Turns are scanned in order, and a string is planted once, at its first
appearance in a scanned turn, with ``from`` the turn after that one (the
first turn a later turn could need it) and the kind it was found as there.
A string first stated in the last turn is not planted: no later turn could
need it. The probes come out in the order of their first appearances (turn,
then place in the text), so the same turns always give the same probes in
the same order.

A probe may be a substring of another (``GX-20418`` said by the user, and a
URL ending in it said later by a tool): each is planted at its own first
appearance, since each is a string a later turn may need. Visibility is a
substring test, as for every probe: while the URL shows, so does
``GX-20418``, which is then truly in the window.

A probes file
-------------
``--probes FILE`` reads a TOML file of ``[[probe]]`` tables (``text``,
``from``, optionally ``kind``; nothing else) when FILE ends in ``.toml``, and a
JSONL file of ``{"text": ..., "from": ...}`` objects (``"kind"`` optional),
one a line, when it ends in ``.jsonl``. ``text`` is a non-empty string,
``from`` a turn number from 1 to the transcript's last turn, ``kind`` one of
the kinds above, and the text must occur in some turn of the
transcript (a probe found nowhere is a typo). Bad input is one line naming
``FILE:LINE`` (JSONL) or ``FILE: probe N`` (TOML) and the field.
"""

import re
import tomllib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from memtape.core.commands import AddTurn
from memtape.core.errors import BadInput
from memtape.core.paths import read_regular
from memtape.lab.choices import AUTO
from memtape.scenarios.probes import Probe, read_probe
from memtape.scenarios.writer import probe_fields

Turn = tuple[str, str] | AddTurn
"""A turn as an importer has it: ``(role, text)``, or the ``AddTurn`` it becomes (whose
``pin`` says whether its constraints are scanned)."""

SCANNED_ROLES = frozenset({"user", "tool"})
"""The roles whose turns the patterns scan: what the agent was told."""

CONSTRAINT_ROLES = frozenset({"system"})
"""The roles whose turns are scanned for constraints (and so is every pinned turn)."""

DECISION_ROLES = frozenset({"user", "assistant"})
"""The roles whose turns are scanned for decisions: what was settled, by either side."""


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

PROGRAMS = (
    r"git|gh|make|npm|npx|pnpm|yarn|node|deno|bun|python3?|pip3?|pipx|uvx?|poetry|"
    r"pytest|tox|nox|ruff|mypy|black|cargo|rustc|go|gcc|clang|cmake|"
    r"docker|podman|kubectl|helm|terraform|aws|gcloud|az|curl|wget|ssh|scp|rsync|"
    r"ls|cd|cat|grep|rg|sed|awk|find|mkdir|rm|cp|mv|chmod|tar|brew|apt-get|apt|sudo|"
    r"bash|sh|zsh|source|export|java|mvn|gradle|dotnet|bundle|rails|rake|php|composer|"
    r"psql|mysql|sqlite3|systemctl|journalctl|memtape|\./[\w.-]+"
)
"""The programs a ``command`` or a ``prompt`` starts with (or ``./`` and a script)."""

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
    ("command", r"(?<!`)`(?P<probe>(?:PROGRAMS) [^`\n]*[^`\s])`(?!`)"),
    ("prompt", r"(?<![^\n])[ \t]*\$ (?P<probe>(?:PROGRAMS) [^\n]*[^\s])"),
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
``NUMBER``, ``CODES``, ``UNITS`` and ``PROGRAMS`` standing for those constants."""

KIND_OF = {
    "url": "url",
    "email": "identifier",
    "command": "command",
    "prompt": "command",
    "path": "path",
    "amount": "number",
    "quantity": "number",
    "identifier": "identifier",
}
"""The kind of probe each pattern plants."""

NOISE: tuple[tuple[str, str], ...] = (
    (
        "grep",
        r"(?<![^\n])(?:[^\s:]*/[^\s:/]+|[^\s:/]+\.[A-Za-z][A-Za-z0-9]{0,9})"
        r"(?P<noise>[:-]\d+[:-])",
    ),
    ("lines", r"(?<![^\n])[ \t]*\d+(?:→|\t)"),
    ("hunk", r"(?<![^\n])@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@"),
    (
        "diff",
        r"(?<![^\n])(?:(?:---|\+\+\+) (?P<noise>[ab]/)|diff --git (?P<old>a/)\S* (?P<new>b/))",
    ),
    ("base64", r"(?<![\w+/=])[A-Za-z0-9+/]{40,}={0,2}(?![\w+/=])"),
)
"""The markers blanked before the patterns run, by name (see the module's docstring)."""

CONSTRAINT = re.compile(r"\b(?:must|never|always|do not|don[’']t)\b", re.IGNORECASE)
"""The words that make a sentence of a system or pinned turn a constraint."""

CONSTRAINT_WORDS = range(3, 51)
"""How many words a constraint may have."""

DECISION = re.compile(
    r"\b(?:decided|decide to|decision|agreed|let[’']s go with|we[’']ll go with)\b", re.IGNORECASE
)
"""The words that make a sentence of a user or assistant turn a decision."""


def _compiled(template: str) -> re.Pattern[str]:
    for name, value in (("NUMBER", NUMBER), ("CODES", CODES), ("UNITS", UNITS)):
        template = template.replace(name, value)
    return re.compile(template.replace("(?:PROGRAMS)", f"(?:{PROGRAMS})"))


PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, _compiled(template)) for name, template in TEMPLATES
)
"""The ``auto`` rule's patterns, compiled."""

NOISE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(template)) for name, template in NOISE
)
"""The markers' patterns, compiled."""

_URL = PATTERNS[0][1]
_EXTENSION = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,9}$")
_DIGIT = re.compile(r"\d")
_BASE64_STRETCH = re.compile(r"[^/]{24}")
_BLANK = "\n"
"""What a marker's characters become: no pattern takes a newline, so no match crosses one."""
_LIST_MARKER = re.compile(r"^\s*(?:[-*+•]|\d+[.)]|#+)\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


class Found(NamedTuple):
    """A string the ``auto`` rule found in a turn, and its kind."""

    kind: str
    text: str


def auto_probes(turns: Iterable[Turn]) -> list[Probe]:
    """The probes the ``auto`` rule plants on ``turns`` (see the module's docstring)."""
    first: dict[str, tuple[int, str]] = {}
    count = 0
    for number, turn in enumerate(turns, start=1):
        count = number
        role, text, pinned = (
            (turn.role, turn.text, turn.pin) if isinstance(turn, AddTurn) else (*turn, False)
        )
        spans = _pattern_spans(text) if role in SCANNED_ROLES else []
        if role in CONSTRAINT_ROLES or pinned:
            spans.extend(_sentence_spans(text, CONSTRAINT, "constraint"))
        # A decision is resolved apart: the path or the amount it names is planted too.
        settled = _sentence_spans(text, DECISION, "decision") if role in DECISION_ROLES else []
        for *_, (kind, string) in sorted(_unoverlapped(spans) + _unoverlapped(settled)):
            first.setdefault(string, (number, kind))
    # Insertion order is the order of first appearances (turn, then place in the text).
    return [Probe(text, turn + 1, kind) for text, (turn, kind) in first.items() if turn < count]


def candidates(text: str) -> list[Found]:
    """The strings the ``auto`` rule's patterns find in one turn's text, with their kinds, in
    order of where they start, overlaps resolved to the longest match (then the pattern
    listed first); no string holds or crosses a marker."""
    return _resolved(_pattern_spans(text))


def constraints(text: str) -> list[Found]:
    """The sentences of ``text`` that are constraints (see the module's docstring), in order."""
    return _resolved(_sentence_spans(text, CONSTRAINT, "constraint"))


def decisions(text: str) -> list[Found]:
    """The sentences of ``text`` that are decisions (see the module's docstring), in order."""
    return _resolved(_sentence_spans(text, DECISION, "decision"))


def blanked(text: str) -> str:
    """``text`` with every marker of ``NOISE`` outside a URL turned into newlines, character
    for character, so that what the patterns find there is found at the same place."""
    urls = [match.span() for match in _URL.finditer(text)]
    chars: list[str] | None = None
    for name, pattern in NOISE_PATTERNS:
        for match in pattern.finditer(text):
            if name == "base64" and not _encoded(match.group()):
                continue
            groups = [key for key, value in match.groupdict().items() if value is not None]
            for start, end in [match.span(key) for key in groups] or [match.span()]:
                if any(start < last and first < end for first, last in urls):
                    continue
                if chars is None:
                    chars = list(text)
                chars[start:end] = _BLANK * (end - start)
    return text if chars is None else "".join(chars)


Span = tuple[int, int, int, Found]
"""A found string as the rule orders them: where it starts, minus its length, the rank of
its pattern (constraints after every pattern), and the string."""


def _pattern_spans(text: str) -> list[Span]:
    """Every match the patterns keep in ``text`` with its markers blanked."""
    scanned = blanked(text)
    spans = []
    for rank, (name, pattern) in enumerate(PATTERNS):
        group = "probe" if "probe" in pattern.groupindex else 0
        for match in pattern.finditer(scanned):
            string = match.group(group)
            if _kept(name, string):
                spans.append((match.start(group), -len(string), rank, Found(KIND_OF[name], string)))
    return spans


def _sentence_spans(text: str, words: re.Pattern[str], kind: str) -> list[Span]:
    """Every sentence of ``text`` that holds one of ``words``, as a probe of ``kind``."""
    spans = []
    offset = 0
    for line in text.split("\n"):
        marker = _LIST_MARKER.match(line)
        start = marker.end() if marker else 0
        ends = [(found.start(), found.end()) for found in _SENTENCE_END.finditer(line, start)]
        for end, after in [*ends, (len(line), len(line))]:
            piece = line[start:end]
            sentence = piece.strip()
            if words.search(sentence) and len(sentence.split()) in CONSTRAINT_WORDS:
                at = offset + start + len(piece) - len(piece.lstrip())
                found = Found(kind, sentence)
                spans.append((at, -len(sentence), len(PATTERNS), found))
            start = after
        offset += len(line) + 1
    return spans


def _resolved(spans: list[Span]) -> list[Found]:
    """The found strings of ``spans`` by where they start, the longest (then the first
    ranked) of those starting together, none overlapping one taken before it."""
    return [item for *_, item in _unoverlapped(spans)]


def _unoverlapped(spans: list[Span]) -> list[Span]:
    """``_resolved``'s spans, with where each starts."""
    spans.sort()
    kept = []
    end = 0
    for span in spans:
        start, length, *_ = span
        if start >= end:
            kept.append(span)
            end = start - length
    return kept


def _encoded(run: str) -> bool:
    """Whether a run of base64 characters reads as encoded data rather than a long path."""
    return (
        any(char.isupper() for char in run)
        and any(char.islower() for char in run)
        and _DIGIT.search(run) is not None
        and _BASE64_STRETCH.search(run) is not None
    )


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
    late = [turn for turn in probe.evidence if turn > len(texts)]
    if late:
        raise BadInput(
            f"{where}: evidence turn {late[0]} is past the transcript's last turn ({len(texts)})"
        )
    if probe.text is not None and not any(probe.text in text for text in texts):
        raise BadInput(f"{where}: text {probe.text!r} occurs in no turn of the transcript")


def planted(spec: str | None, turns: Sequence[Turn]) -> list[dict[str, Any]]:
    """The ``[[probe]]`` tables an import writes for ``--probes spec`` on ``turns``:
    none for None, the ``auto`` rule's for ``auto``, a file's (checked against the
    turns) otherwise. A file named ``auto`` is given as ``./auto``."""
    if spec is None:
        return []
    probes = auto_probes(turns) if spec == AUTO else probes_from_file(Path(spec), turns)
    return [probe_fields(probe) for probe in probes]
