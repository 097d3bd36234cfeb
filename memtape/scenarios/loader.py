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
import tomllib
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import attrs
from immutables import Map

from memtape.core.commands import AddTurn, Command
from memtape.core.errors import BadInput
from memtape.core.paths import read_regular
from memtape.core.spelling import did_you_mean
from memtape.policies.plumbing.params import Params
from memtape.policies.session import Policies
from memtape.scenarios.cost import AXIS as COST
from memtape.scenarios.cost import Cost, is_cost_setting, read_cost, with_cost_settings
from memtape.scenarios.probes import Probe, check_evidence, read_probes
from memtape.scenarios.shipped import SHIPPED
from memtape.scenarios.steps import check_decider, read_blocks, read_step
from memtape.scenarios.usage import Usage, read_usage


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
    probes = read_probes(data.pop("probe", []), source)
    blocks = data.pop("block", [])
    imported = data.pop("import", None)
    if imported is not None and not isinstance(imported, dict):
        raise BadInput(f"{source}: [import] must be a table")
    cost = read_cost(data.pop(COST), source) if COST in data else Cost()
    policies = Policies.from_params(data, source)
    commands: list[Command] = list(read_blocks(blocks, source, policies))
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
        kind, command = read_step(step, where)
        if isinstance(command, AddTurn):
            turns += 1
            if billed is not None:
                usage[turns] = read_usage(billed, where)
        check_decider(command, kind, policies, where)
        commands.append(command)
    check_evidence(probes, turns, source)
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
