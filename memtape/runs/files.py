"""Saving a session to a run file, and loading one back with its policies.

A run file is data (DESIGN.md, the trust model): loading one imports no
policy its header names by import path unless the caller says the run is
trusted; a stand-in that knows only the recorded table takes its place.
"""

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from memtape.core.errors import BadInput, CorruptLog
from memtape.core.logfile import write_run
from memtape.core.reprs import fields_repr
from memtape.core.run import Run
from memtape.policies.plumbing.trust import TRUST_HINT
from memtape.policies.session import Epoch, Policies, Session
from memtape.reducers import fold
from memtape.storage import is_sqlite, read_address


@attrs.frozen
class LoadedRun:
    """A session rebuilt from a run file, the scenario it recorded, any torn tail
    dropped, whether its texts were redacted (then it cannot be re-decided), and any
    steps dropped for coming after its header's chain head (``uncovered``)."""

    __repr__ = fields_repr

    session: Session
    scenario: str
    path: Path
    torn: str | None = None
    redacted: bool = False
    uncovered: str | None = None
    cost: Mapping[str, Any] | None = None
    """The ``[cost]`` table the run is priced by (``memtape.scenarios.cost``), as its scenario
    or its header gave it; None when none names a model."""

    @property
    def dropped(self) -> tuple[str, ...]:
        """What was left out of the run as read, each said in one line for a warning."""
        return tuple(said for said in (self.uncovered, self.torn) if said is not None)

    def unimported(self) -> tuple[str, ...]:
        """The import paths its header names that were not imported (each once)."""
        paths = (path for epoch in self.session.epochs for path in epoch.policies.unimported())
        return tuple(dict.fromkeys(paths))

    def require_code(self, what: str) -> None:
        """Refuse, in one line, to ``what`` (re-decide, fork...) a run whose policies were
        not imported: deciding needs their code, and a run file's code is not trusted."""
        require_code(self.path, self.session.epochs, what)


def require_code(path: Path, epochs: Sequence[Epoch], what: str) -> None:
    """Refuse, in one line, to ``what`` the run at ``path`` if any of its ``epochs`` has a
    policy that was only stood in for (named by import path, and not imported)."""
    paths = dict.fromkeys(name for epoch in epochs for name in epoch.policies.unimported())
    if paths:
        named = ", ".join(repr(name) for name in paths)
        raise BadInput(
            f"{path}: line 1: to {what} it, memtape would import {named}, which the run "
            f"names by import path; run files are data, so it imports no code they name: "
            f"{TRUST_HINT}"
        )


TRUST_ENV = "MEMTAPE_TRUST"
"""The environment variable that, set to 1, trusts every run's code as ``--trust`` does."""


def trusted(flag: bool = False) -> bool:
    """Whether the user said runs are trusted: ``flag`` (``--trust``) or ``MEMTAPE_TRUST=1``."""
    return flag or os.environ.get(TRUST_ENV) == "1"


def save_run(
    session: Session,
    path: Path,
    scenario: str,
    *,
    origin: Mapping[str, Any] | None = None,
    cost: Mapping[str, Any] | None = None,
) -> str:
    """Write the session's run, its policies and scenario name (and the ``[cost]`` table
    that prices it, when given); the run's address.

    A path ending in ``.db`` adds the run to that SQLite store, whole in one
    transaction, and the address is ``path#ID``; any other path
    is written as one JSONL file, atomically. A session whose policies
    changed along the way (a fork) also records each epoch, and ``origin``
    says where a fork came from.
    """
    header: dict[str, Any] = {"scenario": scenario, "policies": session.policies.params()}
    if len(session.epochs) > 1:
        header["epochs"] = [
            {"from": epoch.start, "policies": epoch.policies.params()} for epoch in session.epochs
        ]
    if origin is not None:
        header["forked_from"] = dict(origin)
    if cost is not None:
        header["cost"] = dict(cost)
    run = session.run
    if not is_sqlite(path):
        write_run(path, header, run)
        return str(path)
    from memtape.storage.sqlite import SqliteStore  # noqa: PLC0415 (a .jsonl run needs no sqlite3)

    store = SqliteStore(path, create=True)
    try:
        run_id = store.add_run(header, run)
    finally:
        store.close()
    return f"{path}#{run_id}"


def load_run(address: Path | str, *, trust: bool = False) -> LoadedRun:
    """Read a run (a JSONL file, ``runs.db`` or ``runs.db#ID``), rebuild its policies
    and fold its events (deciding nothing).

    A policy the header names by import path is imported only when ``trust``
    is true; otherwise a stand-in (``memtape.policies.unimported``) takes its
    place, enough to show the run but not to decide it again, and the
    ``[llm]`` tables are read as recorded: shown, never asked.
    """
    path = Path(address)
    stored = read_address(str(address))
    policies_data = stored.header.get("policies")
    if not isinstance(policies_data, dict):
        raise BadInput(f"{path}: line 1: the header names no policies")
    recorded = None if trust else str(address)
    policies = Policies.from_params(
        policies_data, f"{path}: line 1: policies", imports=trust, recorded=recorded
    )
    run = Run(fold)
    for batch in stored.batches:
        try:
            run.append(batch.command, batch.events)
        except CorruptLog as error:
            raise BadInput(f"{path}: step {batch.step} (line {batch.line}): {error}") from None
    scenario = stored.header.get("scenario")
    epochs = epochs_from_header(
        stored.header.get("epochs"),
        policies,
        f"{path}: line 1: epochs",
        run,
        imports=trust,
        recorded=recorded,
    )
    session = Session(policies, run=run, epochs=epochs)
    redacted = stored.header.get("redacted") is True
    scenario_name = str(scenario or path.stem)
    cost = stored.header.get("cost")
    priced = cost if isinstance(cost, dict) else None
    return LoadedRun(session, scenario_name, path, stored.torn, redacted, stored.uncovered, priced)


def epochs_from_header(
    data: Any,
    policies: Policies,
    where: str,
    run: Run | None = None,
    *,
    imports: bool = False,
    recorded: str | None = None,
) -> tuple[Epoch, ...]:
    """The epochs a run file's header lists (the policies in force from each point).

    ``where`` begins each refusal (``run.jsonl: line 1: epochs``). Given the
    ``run``, each epoch must start between two of its commands: one command's
    events are decided under one set of policies. A policy named by import path
    is imported only when ``imports`` is true, and ``recorded`` names the file
    whose untrusted ``[llm]`` tables are shown, never asked (``Policies.from_params``).
    """
    if data is None:
        return (Epoch(0, policies),)
    if not isinstance(data, list) or not data or not all(isinstance(e, dict) for e in data):
        raise BadInput(f"{where}: a list of {{from, policies}} tables")
    epochs: list[Epoch] = []
    for number, epoch in enumerate(data, start=1):
        start, tables = epoch.get("from"), epoch.get("policies")
        previous = epochs[-1].start if epochs else -1
        if type(start) is not int or start <= previous or (number == 1 and start != 0):
            raise BadInput(f"{where}: epoch {number} starts at {start!r}, not after {previous}")
        if not isinstance(tables, dict):
            raise BadInput(f"{where}: epoch {number} names no policies")
        built = Policies.from_params(
            tables, f"{where} {number}", imports=imports, recorded=recorded
        )
        epochs.append(Epoch(start, built))
    if epochs[-1].policies != policies:
        raise BadInput(f"{where}: the last epoch's policies differ from the header's")
    if run is not None:
        ends = {0, *(run.batch(step)[1] for step in range(1, run.steps + 1))}
        for number, epoch in enumerate(epochs, start=1):
            if epoch.start <= len(run) and epoch.start not in ends:
                raise BadInput(f"{where}: epoch {number} starts at {epoch.start}, inside a command")
    return tuple(epochs)
