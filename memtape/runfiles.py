"""Saving a session to a run file, and loading one back with its policies."""

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from memtape.core.errors import BadInput, CorruptLog
from memtape.core.logfile import write_run
from memtape.core.run import Run
from memtape.policies.session import Epoch, Policies, Session
from memtape.reducers import fold
from memtape.storage import SqliteStore, is_sqlite, read_address


@attrs.frozen
class LoadedRun:
    """A session rebuilt from a run file, the scenario it recorded, any torn tail
    dropped, and whether its texts were redacted (then it cannot be re-decided)."""

    session: Session
    scenario: str
    path: Path
    torn: str | None = None
    redacted: bool = False


def save_run(
    session: Session,
    path: Path,
    scenario: str,
    *,
    origin: Mapping[str, Any] | None = None,
) -> str:
    """Write the session's run, its policies and scenario name; the run's address.

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
    run = session.run
    if not is_sqlite(path):
        write_run(path, header, run)
        return str(path)
    store = SqliteStore(path, create=True)
    try:
        run_id = store.add_run(header, run)
    finally:
        store.close()
    return f"{path}#{run_id}"


def load_run(address: Path | str) -> LoadedRun:
    """Read a run (a JSONL file, ``runs.db`` or ``runs.db#ID``), rebuild its policies
    and fold its events (deciding nothing)."""
    path = Path(address)
    recorded = read_address(str(address))
    policies_data = recorded.header.get("policies")
    if not isinstance(policies_data, dict):
        raise BadInput(f"{path}: line 1: the header names no policies")
    policies = Policies.from_params(policies_data, f"{path}: line 1: policies")
    run = Run(fold)
    for batch in recorded.batches:
        try:
            run.append(batch.command, batch.events)
        except CorruptLog as error:
            raise BadInput(f"{path}: step {batch.step} (line {batch.line}): {error}") from None
    scenario = recorded.header.get("scenario")
    epochs = epochs_from_header(
        recorded.header.get("epochs"), policies, f"{path}: line 1: epochs", run
    )
    session = Session(policies, run=run, epochs=epochs)
    redacted = recorded.header.get("redacted") is True
    return LoadedRun(session, str(scenario or path.stem), path, recorded.torn, redacted)


def epochs_from_header(
    data: Any, policies: Policies, where: str, run: Run | None = None
) -> tuple[Epoch, ...]:
    """The epochs a run file's header lists (the policies in force from each point).

    ``where`` begins each refusal (``run.jsonl: line 1: epochs``). Given the
    ``run``, each epoch must start between two of its commands: one command's
    events are decided under one set of policies.
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
        epochs.append(Epoch(start, Policies.from_params(tables, f"{where} {number}")))
    if epochs[-1].policies != policies:
        raise BadInput(f"{where}: the last epoch's policies differ from the header's")
    if run is not None:
        ends = {0, *(run.batch(step)[1] for step in range(1, run.steps + 1))}
        for number, epoch in enumerate(epochs, start=1):
            if epoch.start <= len(run) and epoch.start not in ends:
                raise BadInput(f"{where}: epoch {number} starts at {epoch.start}, inside a command")
    return tuple(epochs)
