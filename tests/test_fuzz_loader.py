"""Fuzzing the run file loader (issue 3, point 8): damage ends in a clean load or one clear error.

Each example starts from a real run file (the three shipped scenarios, and a
fork of one, whose header lists epochs) and applies one to three random
damages: bytes flipped, inserted or deleted, a cut at any byte, lines
duplicated, dropped, swapped or moved, a JSON value anywhere in a line
replaced by one of another type or an extreme number (huge integers, -1, 0,
1e308, NaN and Infinity as text), keys renamed, dropped or added, the
control fields (``type``, ``v``, ``at``, ``step``, ``end``, ``command``, the
header's) changed, bytes that are not UTF-8, a whole file replaced by an
empty one or a header alone.

Whatever the damage, ``load_run`` and ``check_file`` return or raise
``BadInput``; ``memtape show --json`` exits 0 (with one warning line for a
torn tail) or 2 with one ``memtape: error:`` line; ``memtape check`` exits 0,
1 or 2 likewise; and the damaged file is never changed, nor anything written
beside it.
"""

import functools
import json
import math
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memtape.checking.check import CheckReport, check_file
from memtape.cli import main
from memtape.core.errors import BadInput
from memtape.core.events import EVENT_TYPES
from memtape.core.visible import visible
from memtape.policies.session import Session
from memtape.runs.files import LoadedRun, load_run, save_run
from memtape.scenarios import SHIPPED, load_scenario
from tests.suite_profile import examples

JsonPath = tuple[str | int, ...]
"""Where a value sits in a parsed JSON line: keys and indexes from the top."""

Damage = Callable[[st.DrawFn, bytes], tuple[str, bytes]]
"""One kind of damage: draws its place and kind, returns what it did and the damaged bytes."""

FORK = "refund-desk, forked at 3 with compaction.budget=60"
"""A fourth base run: a fork, so that the header's epochs and origin are damaged too."""

HUGE = "\ue000huge\ue000"
"""Stands for an integer of 5,000 digits, past what Python's int() reads from text."""

EXTREMES: tuple[Any, ...] = (
    0,
    1,
    -1,
    2,
    2**31,
    2**63,
    -(2**63) - 1,
    10**30,
    10**400,
    1e308,
    -1e308,
    5e-324,
    1e-300,
    0.5,
    -0.0,
    math.nan,
    math.inf,
    -math.inf,
    HUGE,
    True,
    False,
    None,
    "",
    "0",
    "1",
    "NaN",
    " ",
    "\n",
    [],
    {},
    [1],
    {"": None},
)
"""Values a damaged field may take: the edges of numbers, types that look alike, empties."""

CONTROL_FIELDS = (
    "type",
    "v",
    "at",
    "step",
    "end",
    "command",
    "event",
    "kind",
    "memtape",
    "format",
    "version",
    "events",
    "steps",
    "policies",
    "epochs",
    "scenario",
    "forked_from",
    "from",
)
"""The fields a reader steers by: those of event lines, commands and the header."""

SPECIAL_BYTES = (b"\n", b"\r", b"{", b"}", b"[", b'"', b",", b":", b"\\", b"\x00", b" ", b"0")
"""Bytes that matter to JSON lines."""

NOT_UTF_8 = (b"\x80", b"\xff", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\xf4\x90\x80\x80")
"""Bytes and sequences that are not UTF-8: a continuation alone, 0xff, cut-short and
surrogate and out-of-range sequences."""

JSON_KINDS: dict[str, st.SearchStrategy[Any]] = {
    "NoneType": st.none(),
    "bool": st.booleans(),
    "number": st.integers() | st.floats(),
    "str": st.text(max_size=8),
    "list": st.lists(st.integers() | st.text(max_size=4) | st.none(), max_size=3),
    "dict": st.dictionaries(st.text(max_size=6), st.integers() | st.text(max_size=4), max_size=3),
}
"""A JSON value of each kind, NaN and the infinities included (json.dumps writes them as text)."""

json_values: st.SearchStrategy[Any] = st.one_of(*JSON_KINDS.values())
"""Any JSON value."""


def _base(name: str) -> tuple[Session, str]:
    if name == FORK:
        session, _ = _base("refund-desk")
        return session.fork(3, ["compaction.budget=60"]), "refund-desk"
    scenario = load_scenario(name)
    session = Session(scenario.policies)
    session.execute_all(scenario.steps)
    return session, scenario.name


@functools.cache
def valid_run_file(name: str) -> bytes:
    """The bytes of a valid run file: a shipped scenario's run, or ``FORK``."""
    session, scenario = _base(name)
    origin = {"run": "refund-desk.jsonl", "at": 3, "set": ["compaction.budget=60"]}
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "run.jsonl"
        save_run(session, path, scenario, origin=origin if name == FORK else None)
        return path.read_bytes()


BASES = (*SHIPPED, FORK)


# -- Damage to bytes ------------------------------------------------------------------------------


def _flip(draw: st.DrawFn, data: bytes) -> tuple[str, bytes]:
    if not data:
        return "flip: nothing to flip", data
    at = draw(st.integers(0, len(data) - 1))
    mask = draw(st.integers(1, 255))
    return f"flip byte {at} ^ {mask:#04x}", data[:at] + bytes([data[at] ^ mask]) + data[at + 1 :]


def _insert(draw: st.DrawFn, data: bytes) -> tuple[str, bytes]:
    at = draw(st.integers(0, len(data)))
    piece = draw(st.sampled_from(SPECIAL_BYTES + NOT_UTF_8) | st.binary(min_size=1, max_size=8))
    return f"insert {piece!r} at byte {at}", data[:at] + piece + data[at:]


def _delete(draw: st.DrawFn, data: bytes) -> tuple[str, bytes]:
    if not data:
        return "delete: nothing to delete", data
    at = draw(st.integers(0, len(data) - 1))
    size = draw(st.integers(1, 32))
    return f"delete bytes {at}..{at + size}", data[:at] + data[at + size :]


def _truncate(draw: st.DrawFn, data: bytes) -> tuple[str, bytes]:
    at = draw(st.integers(0, len(data)))
    return f"truncate at byte {at}", data[:at]


def _not_utf_8(draw: st.DrawFn, data: bytes) -> tuple[str, bytes]:
    at = draw(st.integers(0, len(data)))
    piece = draw(st.sampled_from(NOT_UTF_8))
    return f"insert non-UTF-8 {piece!r} at byte {at}", data[:at] + piece + data[at:]


# -- Damage to lines ------------------------------------------------------------------------------


def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True)


def _duplicate_line(draw: st.DrawFn, data: bytes) -> tuple[str, bytes]:
    lines = _lines(data)
    if not lines:
        return "duplicate: no line", data
    source = draw(st.integers(0, len(lines) - 1))
    target = draw(st.integers(0, len(lines)))
    lines.insert(target, lines[source])
    return f"copy line {source + 1} before line {target + 1}", b"".join(lines)


def _drop_line(draw: st.DrawFn, data: bytes) -> tuple[str, bytes]:
    lines = _lines(data)
    if not lines:
        return "drop: no line", data
    number = draw(st.integers(0, len(lines) - 1))
    del lines[number]
    return f"drop line {number + 1}", b"".join(lines)


def _swap_lines(draw: st.DrawFn, data: bytes) -> tuple[str, bytes]:
    lines = _lines(data)
    if len(lines) < 2:
        return "swap: fewer than two lines", data
    first = draw(st.integers(0, len(lines) - 1))
    second = draw(st.integers(0, len(lines) - 2))
    second += second >= first
    lines[first], lines[second] = lines[second], lines[first]
    return f"swap lines {first + 1} and {second + 1}", b"".join(lines)


def _move_line(draw: st.DrawFn, data: bytes) -> tuple[str, bytes]:
    lines = _lines(data)
    if not lines:
        return "move: no line", data
    source = draw(st.integers(0, len(lines) - 1))
    line = lines.pop(source)
    target = draw(st.integers(0, len(lines)))
    lines.insert(target, line)
    return f"move line {source + 1} to line {target + 1}", b"".join(lines)


def _whole_file(draw: st.DrawFn, data: bytes) -> tuple[str, bytes]:
    lines = _lines(data)
    header = lines[0] if lines else b""
    choices = {
        "an empty file": b"",
        "a newline alone": b"\n",
        "blank lines": b"\n\n\n",
        "the header alone": header,
        "the header alone, no newline": header.rstrip(b"\n"),
        "the header twice": header + header,
        "the header and the first event line": b"".join(lines[:2]),
        "a UTF-8 byte order mark first": b"\xef\xbb\xbf" + data,
        "CRLF line ends": data.replace(b"\n", b"\r\n"),
        "no newline at all": data.replace(b"\n", b""),
        "a blank line after each line": data.replace(b"\n", b"\n\n"),
        "the last newline dropped": data.removesuffix(b"\n"),
    }
    label = draw(st.sampled_from(sorted(choices)))
    return label, choices[label]


# -- Damage to JSON values ------------------------------------------------------------------------


def _parsed_lines(data: bytes) -> list[tuple[int, Any]]:
    """The (index, value) of each line that still parses as JSON."""
    parsed = []
    for index, raw in enumerate(_lines(data)):
        try:
            parsed.append((index, json.loads(raw)))
        except (ValueError, RecursionError):
            continue
    return parsed


def _paths(value: Any, path: JsonPath = ()) -> Iterator[JsonPath]:
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*path, index))


def _get(value: Any, path: JsonPath) -> Any:
    for part in path:
        value = value[part]
    return value


def _set(value: Any, path: JsonPath, new: Any) -> Any:
    """``value`` with the value at ``path`` replaced by ``new`` (in place below the top)."""
    if not path:
        return new
    _get(value, path[:-1])[path[-1]] = new
    return value


def _dumps(value: Any) -> bytes:
    """``value`` as a JSON line, as the writer writes it; lone surrogates as ``\\ud800`` escapes."""
    for ascii_only in (False, True):
        text = json.dumps(value, ensure_ascii=ascii_only)
        text = text.replace(json.dumps(HUGE, ensure_ascii=ascii_only), "9" * 5000)
        try:
            return text.encode()
        except UnicodeEncodeError:
            continue
    raise AssertionError("unreachable: an ASCII-only dump always encodes")  # pragma: no cover


def _with_line(data: bytes, index: int, value: Any) -> bytes:
    lines = _lines(data)
    ending = b"\n" if lines[index].endswith(b"\n") else b""
    lines[index] = _dumps(value) + ending
    return b"".join(lines)


def _kind(value: Any) -> str:
    return "number" if type(value) in (int, float) else type(value).__name__


def _json_damage(
    edit: Callable[[st.DrawFn, Any], tuple[str, Any]],
) -> Damage:
    """A damage that edits the parsed JSON of one line that still parses, and writes it back."""

    def damage(draw: st.DrawFn, data: bytes) -> tuple[str, bytes]:
        parsed = _parsed_lines(data)
        if not parsed:
            return "no JSON line left to edit", data
        index, value = draw(st.sampled_from(parsed))
        label, value = edit(draw, value)
        return f"line {index + 1}: {label}", _with_line(data, index, value)

    return damage


def _other_type(draw: st.DrawFn, value: Any) -> tuple[str, Any]:
    path = draw(st.sampled_from(list(_paths(value))))
    old = _get(value, path)
    kind = draw(st.sampled_from(sorted(set(JSON_KINDS) - {_kind(old)})))
    new = draw(JSON_KINDS[kind])
    return f"{list(path)}: {old!r:.40} -> {new!r:.40}", _set(value, path, new)


def _extreme(draw: st.DrawFn, value: Any) -> tuple[str, Any]:
    path = draw(st.sampled_from(list(_paths(value))))
    new = draw(st.sampled_from(EXTREMES))
    return f"{list(path)} -> {new!r:.40}", _set(value, path, new)


def _numbers(value: Any) -> list[JsonPath]:
    return [p for p in _paths(value) if type(_get(value, p)) in (int, float)]


def _extreme_number(draw: st.DrawFn, value: Any) -> tuple[str, Any]:
    numbers = _numbers(value)
    if not numbers:
        return "no number to replace", value
    path = draw(st.sampled_from(numbers))
    new = draw(st.sampled_from([e for e in EXTREMES if type(e) in (int, float) or e == HUGE]))
    return f"{list(path)} -> {new!r:.40}", _set(value, path, new)


def _nudge(draw: st.DrawFn, value: Any) -> tuple[str, Any]:
    numbers = _numbers(value)
    if not numbers:
        return "no number to nudge", value
    path = draw(st.sampled_from(numbers))
    old = _get(value, path)
    new = old + draw(st.sampled_from((-1, 1))) if type(old) is int else old * 1.000001
    return f"{list(path)}: {old!r} -> {new!r}", _set(value, path, new)


def _objects(value: Any) -> list[JsonPath]:
    return [p for p in _paths(value) if isinstance(_get(value, p), dict)]


def _rename_key(draw: st.DrawFn, value: Any) -> tuple[str, Any]:
    owners = [p for p in _objects(value) if _get(value, p)]
    if not owners:
        return "no key to rename", value
    owner = _get(value, draw(st.sampled_from(owners)))
    old = draw(st.sampled_from(sorted(owner)))
    new = draw(st.sampled_from(CONTROL_FIELDS) | st.text(max_size=6) | st.just(old.upper()))
    items = [(new if key == old else key, item) for key, item in owner.items()]
    owner.clear()
    owner.update(items)
    return f"rename key {old!r} -> {new!r}", value


def _drop_key(draw: st.DrawFn, value: Any) -> tuple[str, Any]:
    owners = [p for p in _objects(value) if _get(value, p)]
    if not owners:
        return "no key to drop", value
    owner = _get(value, draw(st.sampled_from(owners)))
    key = draw(st.sampled_from(sorted(owner)))
    del owner[key]
    return f"drop key {key!r}", value


def _add_key(draw: st.DrawFn, value: Any) -> tuple[str, Any]:
    owners = _objects(value)
    if not owners:
        return "no object to add a key to", value
    owner = _get(value, draw(st.sampled_from(owners)))
    key = draw(st.sampled_from(CONTROL_FIELDS) | st.text(max_size=6))
    owner[key] = draw(st.sampled_from(EXTREMES) | json_values)
    return f"add key {key!r} = {owner[key]!r:.40}", value


def _control_field(draw: st.DrawFn, value: Any) -> tuple[str, Any]:
    """Set or drop a field a reader steers by, at the top of the line or in its command."""
    if not isinstance(value, dict):
        return "not an object", value
    owner = value
    if isinstance(value.get("command"), dict) and draw(st.booleans()):
        owner = value["command"]
    field = draw(st.sampled_from(CONTROL_FIELDS))
    if field in owner and draw(st.booleans()):
        del owner[field]
        return f"drop field {field!r}", value
    new = draw(
        st.integers(-2, 20)
        | st.sampled_from(EXTREMES)
        | st.sampled_from(sorted(EVENT_TYPES))
        | st.sampled_from(("turn", "clock", "write", "read", "episode", "consolidate", "run"))
        | json_values
    )
    owner[field] = new
    return f"field {field!r} = {new!r:.40}", value


DAMAGES: dict[str, Damage] = {
    "flip": _flip,
    "insert": _insert,
    "delete": _delete,
    "truncate": _truncate,
    "not-utf-8": _not_utf_8,
    "duplicate-line": _duplicate_line,
    "drop-line": _drop_line,
    "swap-lines": _swap_lines,
    "move-line": _move_line,
    "whole-file": _whole_file,
    "other-type": _json_damage(_other_type),
    "extreme": _json_damage(_extreme),
    "extreme-number": _json_damage(_extreme_number),
    "nudge": _json_damage(_nudge),
    "rename-key": _json_damage(_rename_key),
    "drop-key": _json_damage(_drop_key),
    "add-key": _json_damage(_add_key),
    "control-field": _json_damage(_control_field),
}
"""Every kind of damage, by name."""


@attrs.frozen
class Damaged:
    """A run file after damage: where it came from, what was done, and its bytes."""

    base: str
    damage: tuple[str, ...]
    data: bytes = attrs.field(repr=lambda data: f"<{len(data)} bytes>")


@st.composite
def damaged_runs(draw: st.DrawFn) -> Damaged:
    """A valid run file with one to three random damages applied in turn."""
    base = draw(st.sampled_from(BASES))
    data = valid_run_file(base)
    done = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(sorted(DAMAGES)))
        label, data = DAMAGES[kind](draw, data)
        done.append(f"{kind}: {label}")
    return Damaged(base, tuple(done), data)


# -- What each reader may do ----------------------------------------------------------------------


def _loaded(path: Path) -> LoadedRun | BadInput:
    try:
        return load_run(path)
    except BadInput as error:
        return error


def _checked(path: Path) -> CheckReport | BadInput:
    try:
        return check_file(path)
    except BadInput as error:
        return error


def _one_line(error: BadInput) -> str:
    """The message as the CLI prints it (the controls in user data escaped): one line."""
    message = visible(str(error), "message")
    assert "\n" not in message, f"the message is more than one line: {message!r}"
    assert message, "the message is empty"
    return message


def expect_load(path: Path) -> None:
    """``load_run`` gives a run, or one line of ``BadInput``; no other exception."""
    outcome = _loaded(path)
    if isinstance(outcome, BadInput):
        _one_line(outcome)
    else:
        run = outcome.session.run
        assert run.state == run.state_at(len(run))
        assert all("\n" not in said for said in outcome.dropped), "what was dropped is not one line"


def expect_check(path: Path) -> None:
    """``check_file`` gives a report, or the same ``BadInput`` as reading the file for a load."""
    outcome = _checked(path)
    if isinstance(outcome, BadInput):
        loaded = _loaded(path)
        assert isinstance(loaded, BadInput)
        assert str(loaded) == str(outcome)
    else:
        assert outcome.ok == (not outcome.problems)
        assert all(isinstance(line, str) for line in outcome.lines())


def expect_show(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``memtape show --json`` prints JSON (warning once for a torn tail, once for steps past
    the chain head) or one error line."""
    loaded = _loaded(path)
    capsys.readouterr()
    status = main(["show", str(path), "--json"])
    out, err = capsys.readouterr()
    if isinstance(loaded, BadInput):
        assert (2, "", f"memtape: error: {_one_line(loaded)}\n") == (status, out, err)
        return
    assert 0 == status
    json.loads(out)
    warned = "".join(
        f"memtape: warning: {visible(f'{path}: {said}', 'message')}\n" for said in loaded.dropped
    )
    assert warned == err
    assert len(loaded.dropped) == err.count("\n")


def expect_check_command(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``memtape check`` prints the report and exits 0 or 1, or one error line and exits 2."""
    checked = _checked(path)
    capsys.readouterr()
    status = main(["check", str(path)])
    out, err = capsys.readouterr()
    if isinstance(checked, BadInput):
        assert (2, "", f"memtape: error: {_one_line(checked)}\n") == (status, out, err)
        return
    expected = "".join(visible(line, "message") + "\n" for line in checked.lines())
    assert (0 if checked.ok else 1, expected, "") == (status, out, err)


def _in_a_fresh_folder(data: bytes, read: Callable[[Path], None]) -> None:
    """Write ``data`` to a run file in a folder of its own, read it, and see nothing changed."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "run.jsonl"
        path.write_bytes(data)
        read(path)
        assert data == path.read_bytes(), "the damaged file was changed"
        assert ["run.jsonl"] == os.listdir(folder), "something was written beside the file"


FUZZ = settings(
    max_examples=examples(250),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
"""About a second per test on two cores, for the four tests below."""


class TestRandomDamage:
    @FUZZ
    @given(damaged=damaged_runs())
    def test_load_run_loads_or_raises_one_line_of_bad_input(self, damaged: Damaged) -> None:
        _in_a_fresh_folder(damaged.data, expect_load)

    @FUZZ
    @given(damaged=damaged_runs())
    def test_check_file_reports_or_raises_the_loaders_bad_input(self, damaged: Damaged) -> None:
        _in_a_fresh_folder(damaged.data, expect_check)

    @FUZZ
    @given(damaged=damaged_runs())
    def test_show_prints_json_or_one_error_line(
        self, capsys: pytest.CaptureFixture[str], damaged: Damaged
    ) -> None:
        _in_a_fresh_folder(damaged.data, lambda path: expect_show(path, capsys))

    @FUZZ
    @given(damaged=damaged_runs())
    def test_check_prints_its_report_or_one_error_line(
        self, capsys: pytest.CaptureFixture[str], damaged: Damaged
    ) -> None:
        _in_a_fresh_folder(damaged.data, lambda path: expect_check_command(path, capsys))


# -- Regressions: what the fuzzer found -----------------------------------------------------------


def _edited(base: str, number: int, edit: Callable[[Any], None]) -> bytes:
    """The valid run file ``base`` with its line ``number`` (1: the header) changed by ``edit``."""
    data = valid_run_file(base)
    value = json.loads(_lines(data)[number - 1])
    edit(value)
    return _with_line(data, number - 1, value)


def _setter(*path: str | int, value: Any) -> Callable[[Any], None]:
    def edit(line: Any) -> None:
        _set(line, path, value)

    return edit


FOUND: dict[str, bytes] = {}
"""Filled on first use by ``_found``: each damage the fuzzer found a reader failing on."""


def _found(name: str) -> bytes:
    newline = "a\nb"
    cases: dict[str, Callable[[], bytes]] = {
        "a float parameter past a float's range": lambda: _edited(
            "dana-facts", 1, _setter("policies", "forgetting", "half_life", value=10**400)
        ),
        "an event field name with a newline": lambda: _edited(
            "refund-desk", 2, _setter("event", newline, value=1)
        ),
        "a command field name with a newline": lambda: _edited(
            "refund-desk", 2, _setter("command", newline, value=1)
        ),
        "a policies section name with a newline": lambda: _edited(
            "refund-desk", 1, _setter("policies", newline, value={})
        ),
        "a policy parameter name with a newline": lambda: _edited(
            "refund-desk", 1, _setter("policies", "compaction", newline, value=1)
        ),
        "a rule's group name with a newline": lambda: _edited(
            "sleep-pass",
            1,
            _setter("policies", "consolidation", "rule", 0, "semantic", "key", value="{a\nb}"),
        ),
        "an epoch's section name with a newline": lambda: _edited(
            FORK, 1, _setter("epochs", 0, "policies", newline, value={})
        ),
    }
    if name not in FOUND:
        FOUND[name] = cases[name]()
    return FOUND[name]


FOUND_NAMES = (
    "a float parameter past a float's range",
    "an event field name with a newline",
    "a command field name with a newline",
    "a policies section name with a newline",
    "a policy parameter name with a newline",
    "a rule's group name with a newline",
    "an epoch's section name with a newline",
)


class TestFoundByFuzzing:
    """Damage the fuzzer found a reader failing on, kept as plain tests."""

    @pytest.mark.parametrize("name", FOUND_NAMES)
    def test_load_run_loads_or_raises_one_line_of_bad_input(self, name: str) -> None:
        _in_a_fresh_folder(_found(name), expect_load)

    @pytest.mark.parametrize("name", FOUND_NAMES)
    def test_check_file_reports_or_raises_the_loaders_bad_input(self, name: str) -> None:
        _in_a_fresh_folder(_found(name), expect_check)

    @pytest.mark.parametrize("name", FOUND_NAMES)
    def test_show_prints_json_or_one_error_line(
        self, capsys: pytest.CaptureFixture[str], name: str
    ) -> None:
        _in_a_fresh_folder(_found(name), lambda path: expect_show(path, capsys))

    @pytest.mark.parametrize("name", FOUND_NAMES)
    def test_check_prints_its_report_or_one_error_line(
        self, capsys: pytest.CaptureFixture[str], name: str
    ) -> None:
        _in_a_fresh_folder(_found(name), lambda path: expect_check_command(path, capsys))
