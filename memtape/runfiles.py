"""Saving a session to a run file, and loading one back with its policies."""

from pathlib import Path

import attrs

from memtape.core.errors import BadInput, CorruptLog
from memtape.core.logfile import read_run, write_run
from memtape.core.run import Run
from memtape.policies.session import Policies, Session
from memtape.reducers import fold


@attrs.frozen
class LoadedRun:
    """A session rebuilt from a run file, the scenario it recorded, and any torn tail dropped."""

    session: Session
    scenario: str
    path: Path
    torn: str | None = None


def save_run(session: Session, path: Path, scenario: str) -> None:
    """Write the session's run, its policies and scenario name, to ``path``."""
    write_run(path, {"scenario": scenario, "policies": session.policies.params()}, session.run)


def load_run(path: Path) -> LoadedRun:
    """Read ``path``, rebuild its policies and fold its events (deciding nothing)."""
    recorded = read_run(path)
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
    return LoadedRun(Session(policies, run=run), str(scenario or path.stem), path, recorded.torn)
