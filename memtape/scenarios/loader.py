"""Load a scenario: a TOML header naming the policies, then one step per command.

```toml
[scenario]
name = "my-scenario"
about = "what it shows"

[compaction]
policy = "tiered"
budget = 40

[[step]]
turn = "user"             # a turn: its role, text, and optional salient flag
text = "Hi, I'm Dana."
```

A turn's role is one of system, user, assistant, tool. A turn may also say
``calls = ["id", ...]`` (the tool calls it makes), ``answers = ["id", ...]``
(the calls whose results it carries), ``pin = true`` (no policy moves it)
and ``usage = {input = .., output = .., cache_read = .., cache_write = ..}``
(what the provider billed for the response, kept beside the turn for a cost
model: ``memtape.scenarios.usage``; no policy reads it) and ``tokens = N``
(what the turn costs, measured outside memtape: ``import --tokenizer recorded``
writes the provider's count; the policy's tokenizer then does not count it).

The other steps: ``advance = 6`` (the clock), ``write = "key"`` with
``text``, ``importance`` and optional ``supersedes`` and ``expires_at`` (the
clock at which the fact leaves the store), ``valid_from`` and ``valid_to``
(when it was true in the world); ``read = "key"`` or
``read = 3`` (an id); ``query = "text"`` with optional ``expect = "key"`` and
``k`` (default 3) and ``as_of`` / ``known_at`` (a bi-temporal query), or
``expect = "key"`` alone (a query without text);
``episode = "text"``; ``consolidate = true``; ``edit = "label"`` with ``op``
(``replace``, ``append`` or ``find-replace``), ``text`` and, for a
find-and-replace, ``find`` (a memory block edited); ``block = "label"`` with
``limit`` and optional ``value`` (a block created mid-session).

Memory blocks, pinned in the window (``memtape.policies.window.blocks``), are
created before the first step by ``[[block]]`` tables::

    [[block]]
    label = "human"
    limit = 200               # characters; an edit past it is refused
    value = "Name: Dana."
    read_only = true          # optional: no edit may change it (default false)

A scenario may plant probes, strings that must stay visible in the window
(HOT text, WARM items or the gist) from a given turn on::

    [[probe]]
    text = "$180.00"
    from = 8                  # checked after turn 8 and every turn after it

A probe may also carry a question about the session and its answer (both or
neither), and the turns that hold the evidence for it; a question probe may
leave out ``text`` (then what it keeps is its evidence turns, not a string)::

    [[probe]]
    question = "Where did Dana move?"
    answer = "Lisbon"
    from = 12                 # the turn at which it is asked
    evidence = [3, 7]         # turn numbers, each at least 1 and at most the last turn

An imported scenario carries an ``[import]`` table: the ledger of the import
(what the transcript held and what became of it, ``memtape.lab.importers.
ledger``). It is kept as data (``Scenario.imported``), checked to be a
table, and decides nothing. A ``[cost]`` table names the model its runs are
priced as (``memtape.scenarios.cost``), data beside the steps too.
"""

import json
import math
import tomllib
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import attrs
from immutables import Map

from memtape.core.commands import (
    BLOCK_OPS,
    COMMAND_TYPES,
    AddTurn,
    AdvanceClock,
    Command,
    Consolidate,
    CreateBlock,
    EditBlock,
    Query,
    ReadFact,
    Recall,
    RecordEpisode,
    WriteFact,
    role_error,
)
from memtape.core.errors import BadInput
from memtape.core.paths import read_regular
from memtape.core.spelling import did_you_mean
from memtape.core.values import MAX_TOKENS
from memtape.policies.plumbing.params import MAX_INT, Params
from memtape.policies.session import Policies
from memtape.policies.zoo import AXIS_OF
from memtape.scenarios.cost import AXIS as COST
from memtape.scenarios.cost import Cost, is_cost_setting, read_cost, with_cost_settings
from memtape.scenarios.shipped import SHIPPED
from memtape.scenarios.usage import Usage, read_usage

_KINDS = tuple(COMMAND_TYPES)

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


@attrs.frozen
class Scenario:
    """A named session to run: its policies, its steps (one command each), its probes."""

    name: str
    about: str
    policies: Policies
    steps: tuple[Command, ...]
    source: str
    probes: tuple[Probe, ...] = ()
    usage: Mapping[int, Usage] = Map()
    """What the provider billed for each turn that says (an imported assistant turn's
    response), by turn number: data beside the steps, no part of them."""
    imported: Mapping[str, Any] | None = attrs.field(default=None, eq=False)
    """The ``[import]`` table of an imported scenario (its ledger), as written; None for
    a scenario not imported. Not part of a scenario's equality: it decides nothing."""
    cost: Cost = attrs.field(factory=Cost)
    """The model its runs are priced as (``[cost]``; ``memtape.scenarios.cost``)."""


def with_settings(scenario: Scenario, settings: Sequence[str]) -> Scenario:
    """``scenario`` with ``AXIS.PARAM=VALUE`` settings on top: the ``cost.`` ones change the
    priced model (``memtape.scenarios.cost``), the ``block.`` ones its memory blocks
    (``memtape.scenarios.block_settings``), the others its policies."""
    if not settings:
        return scenario
    from memtape.scenarios.block_settings import is_block_setting, with_block_settings  # noqa: PLC0415

    cost = with_cost_settings(scenario.cost, settings, "--set")
    steps = with_block_settings(scenario.steps, settings)
    others = [s for s in settings if not is_cost_setting(s) and not is_block_setting(s)]
    policies = scenario.policies.with_settings(others) if others else scenario.policies
    return attrs.evolve(scenario, policies=policies, cost=cost, steps=steps)


def load_scenario(name_or_path: str) -> Scenario:
    """A shipped scenario by name, or a scenario file by path."""
    return parse_scenario(read_scenario(name_or_path), name_or_path)


def read_scenario(name_or_path: str) -> str:
    """The text ``load_scenario`` parses: a shipped scenario's, or a file's with universal
    newlines (a bench ships it to workers that cannot open the file)."""
    if name_or_path in SHIPPED:
        return resources.files(__package__).joinpath(f"{name_or_path}.toml").read_text("utf-8")
    shipped = ", ".join(SHIPPED)
    hint = shipped_hint(name_or_path)
    missing = f"no such scenario file, and not a shipped scenario ({shipped}){hint}"
    data = read_regular(Path(name_or_path), "scenario file", missing=missing)
    recorded = _recorded(data)
    if recorded is not None:
        raise BadInput(
            f"{name_or_path}: {recorded}, not a scenario: this takes a shipped scenario or a "
            "TOML scenario file (show, timeline, diff and fork open a recorded run)"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise BadInput(f"{name_or_path}: cannot read it: {error}") from None
    # Universal newlines, as a file opened in text mode reads them.
    return text.replace("\r\n", "\n").replace("\r", "\n")


def shipped_hint(name: str) -> str:
    """``": did you mean 'refund-desk'?"`` for a bare name close to a shipped scenario's
    (not for a path: a file's name is its own)."""
    if Path(name).name != name or Path(name).suffix:
        return ""
    return did_you_mean(name, SHIPPED)


_SQLITE = b"SQLite format 3\x00"
"""How an SQLite database, a store of runs, begins."""


def _recorded(data: bytes) -> str | None:
    """What ``data`` is when it holds recorded runs rather than a scenario, or None."""
    if data.startswith(_SQLITE):
        return "a store of runs (SQLite)"
    first = data.partition(b"\n")[0].strip()
    if not first.startswith(b"{"):
        return None
    try:
        header = json.loads(first)
    except ValueError:
        return None
    if isinstance(header, dict) and header.get("memtape") == "run":
        return "a run file"
    return None


def parse_scenario(text: str, source: str) -> Scenario:
    """Parse a scenario's TOML text; ``source`` names it in error messages."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise BadInput(f"{source}: not valid TOML: {error}") from None
    except (ValueError, RecursionError) as error:
        # Numbers past Python's digit limit, or nesting past its recursion limit.
        raise BadInput(f"{source}: cannot read it: {error}") from None
    header = data.pop("scenario", {})
    if not isinstance(header, dict):
        raise BadInput(f"{source}: [scenario] must be a table")
    info = Params(header, f"{source}: [scenario]")
    name = info.text("name", Path(source).stem)
    about = info.text("about", "")
    info.done()
    steps = data.pop("step", [])
    if not isinstance(steps, list):
        raise BadInput(f"{source}: steps are written as [[step]] tables")
    probes = _probes(data.pop("probe", []), source)
    blocks = data.pop("block", [])
    imported = data.pop("import", None)
    if imported is not None and not isinstance(imported, dict):
        raise BadInput(f"{source}: [import] must be a table")
    cost = read_cost(data.pop(COST), source) if COST in data else Cost()
    policies = Policies.from_params(data, source)
    commands: list[Command] = list(_blocks(blocks, source, policies))
    usage: dict[int, Usage] = {}
    turns = 0
    for number, step in enumerate(steps, start=1):
        where = f"{source}: step {number}"
        if not isinstance(step, dict):
            raise BadInput(f"{where}: must be a table")
        billed = step.get("usage")
        if billed is not None and "turn" not in step:
            raise BadInput(f"{where}: usage belongs to a turn step")
        if billed is not None:
            step = {key: value for key, value in step.items() if key != "usage"}  # noqa: PLW2901
        kind, command = _command(step, where)
        if isinstance(command, AddTurn):
            turns += 1
            if billed is not None:
                usage[turns] = read_usage(billed, where)
        _check_decider(command, kind, policies, where)
        commands.append(command)
    _check_evidence(probes, turns, source)
    if probes and policies.compaction is None:
        raise BadInput(
            f"{source}: probe 1: a probe is checked in the window, "
            "which needs a [compaction] policy"
        )
    if not commands:
        raise BadInput(f"{source}: no [[step]] tables: nothing to run")
    return Scenario(
        name, about, policies, tuple(commands), source, probes, Map(usage), imported, cost
    )


def _blocks(tables: Any, source: str, policies: Policies) -> tuple[CreateBlock, ...]:
    """The ``[[block]]`` tables, each a block created before the first step: a label not
    taken by another, a limit of at least 1, a value within it (and a [compaction] policy
    to count them)."""
    if not isinstance(tables, list):
        raise BadInput(f"{source}: memory blocks are written as [[block]] tables")
    if tables and policies.compaction is None:
        raise BadInput(f"{source}: block 1: a memory block needs a [compaction] policy")
    created: list[CreateBlock] = []
    for number, table in enumerate(tables, start=1):
        where = f"{source}: block {number}"
        if not isinstance(table, dict):
            raise BadInput(f"{where}: must be a table")
        params = Params(table, where)
        block = _block(params, params.text("label"))
        params.done()
        if any(made.label == block.label for made in created):
            raise params.error("label", f"{block.label!r} names an earlier block too")
        created.append(block)
    return tuple(created)


def _block(params: Params, label: str) -> CreateBlock:
    """A block's label, limit, value and whether it is read-only, read and checked (the
    limit holds the value)."""
    if not label.strip():
        raise params.error("label", "must not be empty")
    limit = params.integer("limit", minimum=1)
    value = params.text("value", "")
    read_only = params.flag("read_only", False)
    if len(value) > limit:
        raise params.error("value", f"is {len(value)} characters, over the limit of {limit}")
    return CreateBlock(label, limit, value, read_only)


def _block_step(kind: str, params: Params) -> CreateBlock | EditBlock:
    """A ``block`` step (a block created) or an ``edit`` step (one edited: its op, text and,
    for a find-replace, the text to find)."""
    if kind == "block":
        return _block(params, params.text("block"))
    op = params.text("op")
    if op not in BLOCK_OPS:
        raise params.error("op", f"must be one of {', '.join(BLOCK_OPS)}, got {op!r}")
    find = params.text("find", "") if op == "find-replace" else ""
    if op == "find-replace" and not find:
        raise params.error("find", "a find-replace needs the text to find")
    return EditBlock(params.text("edit"), op, params.text("text"), find)


def _probes(tables: Any, source: str) -> tuple[Probe, ...]:
    if not isinstance(tables, list):
        raise BadInput(f"{source}: probes are written as [[probe]] tables")
    probes = []
    for number, table in enumerate(tables, start=1):
        probes.append(read_probe(table, f"{source}: probe {number}"))
    return tuple(probes)


def _check_evidence(probes: tuple[Probe, ...], turns: int, source: str) -> None:
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


def _turn(params: Params) -> AddTurn:
    """A turn step: its role, text, salience, the calls it makes and answers, its pin."""
    salient = params.optional("salient")
    if salient is not None and not isinstance(salient, bool):
        raise params.error("salient", f"must be true or false, got {salient!r}")
    role = params.text("turn")
    wrong = role_error(role)
    if wrong is not None:
        raise params.error("turn", wrong)
    calls, answers = _ids(params, "calls"), _ids(params, "answers")
    pin = params.optional("pin")
    if pin is not None and not isinstance(pin, bool):
        raise params.error("pin", f"must be true or false, got {pin!r}")
    tokens = params.optional("tokens")
    if tokens is not None and (
        isinstance(tokens, bool) or not isinstance(tokens, int) or not 0 <= tokens <= MAX_TOKENS
    ):
        raise params.error("tokens", f"must be an integer in 0..{MAX_TOKENS}, got {tokens!r}")
    return AddTurn(role, params.text("text"), salient, calls, answers, pin is True, tokens)


def _ids(params: Params, name: str) -> tuple[str, ...]:
    """A list of distinct, non-empty tool call ids (absent: none)."""
    ids = params.optional(name)
    if ids is None:
        return ()
    if not isinstance(ids, list) or not all(isinstance(i, str) and i for i in ids):
        raise params.error(name, f"must be a list of non-empty ids (strings), got {ids!r}")
    if len(set(ids)) != len(ids):
        raise params.error(name, f"names an id twice: {ids!r}")
    return tuple(ids)


def _check_decider(command: Command, kind: str, policies: Policies, where: str) -> None:
    """Refuse a step no policy of the header would decide."""
    axis = AXIS_OF[type(command)]
    if axis is not None and getattr(policies, axis) is None:
        raise BadInput(f"{where}: a {kind} step needs a [{axis}] policy in the header")
    if isinstance(command, Recall) and policies.recall is None:
        raise BadInput(f'{where}: a recall step needs recall = "bm25" in the [compaction] table')


def _command(step: Mapping[str, Any], where: str) -> tuple[str, Command]:
    kinds = [kind for kind in _KINDS if kind in step]
    if not kinds and "expect" in step:
        kinds = ["query"]  # a query may name only the key it expects
    if len(kinds) != 1:
        raise BadInput(f"{where}: name exactly one of {', '.join(_KINDS)}, found {kinds or 'none'}")
    kind = kinds[0]
    params = Params(step, where)
    command: Command
    if kind == "turn":
        command = _turn(params)
    elif kind == "advance":
        command = AdvanceClock(params.number("advance", minimum=0.0))
    elif kind == "write":
        supersedes = params.optional("supersedes")
        if supersedes is not None and not isinstance(supersedes, str):
            raise params.error("supersedes", f"must be a key (a string), got {supersedes!r}")
        key, text = params.text("write"), params.text("text")
        importance = params.number("importance", minimum=0.0, maximum=1.0)
        expires_at = params.number("expires_at", minimum=0.0) if "expires_at" in step else None
        valid_from, valid_to = (
            params.number(name, minimum=-math.inf) if name in step else None
            for name in ("valid_from", "valid_to")
        )
        command = WriteFact(key, text, importance, supersedes, expires_at, valid_from, valid_to)
    elif kind == "read":
        target = params.raw("read")
        if isinstance(target, str):
            command = ReadFact(key=target)
        elif isinstance(target, int) and not isinstance(target, bool):
            command = ReadFact(id=target)
        else:
            raise params.error("read", f"must be a key (a string) or an id, got {target!r}")
    elif kind == "query":
        text, expect = params.text("query", ""), params.text("expect", "")
        k = params.integer("k", 3, minimum=1)
        as_of, known_at = (
            params.number(name, minimum=-math.inf) if name in step else None
            for name in ("as_of", "known_at")
        )
        command = Query(text, expect, k, as_of, known_at)
    elif kind in ("block", "edit"):
        command = _block_step(kind, params)
    elif kind == "episode":
        command = RecordEpisode(params.text("episode"))
    elif kind == "recall":
        command = Recall(params.text("recall"), params.integer("k", 3, minimum=1))
    else:
        if params.raw("consolidate") is not True:
            raise params.error("consolidate", "must be true")
        command = Consolidate()
    params.done()
    return kind, command
