"""The JSONL backend: one run per file, through ``memtape.core.logfile``.

The file is the portable, diff-friendly form of a run. Every change rewrites
the whole file atomically (``logfile.write_run``), so an append costs the
length of the run and a failed one leaves the file as it was. For many runs
in one place and appends that cost only their own events, use the SQLite
backend (a path ending in ``.db``).

An append verifies the file's chain first and refuses one that is broken:
the rewrite chains the run afresh, and would otherwise hide the edit. With
the key set it refuses one the key's signature does not vouch for too: the
rewrite would sign it.

Concurrency is checked, not serialized: an append at a stale position is a
``Conflict``, but two processes appending at the same moment may race
between the read and the replace, and the later replace wins. One writer
per JSONL file; SQLite for many.
"""

import os
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memtape.core.chain import KEY_VARIABLE, Signature, Verdict, signing_key
from memtape.core.commands import Command
from memtape.core.errors import BadInput
from memtape.core.events import Event
from memtape.core.logfile import RunFile, read_run, verify_run, write_run
from memtape.core.paths import regular_file
from memtape.core.run import Run
from memtape.core.state import State
from memtape.storage.base import (
    Conflict,
    RunId,
    RunInfo,
    RunStore,
    check_batch,
    stamped_header,
)

ONLY_RUN: RunId = 1
"""The id of a JSONL file's one run."""


def _unfolded(events: Sequence[Event], state: State) -> State:
    """A fold that keeps the state: the store records events, it does not apply them."""
    return state


class JsonlStore(RunStore):
    """One run in the JSONL file at ``path``."""

    def __init__(self, path: Path, *, create: bool = False) -> None:
        self.path = path
        if not create or os.path.exists(path):
            regular_file(path, "run file")

    def create(self, header: Mapping[str, Any]) -> RunId:
        """Write an empty run to the file, replacing any run it held."""
        write_run(self.path, stamped_header(header), Run(_unfolded))
        return ONLY_RUN

    def append(
        self,
        run_id: RunId,
        command: Command,
        events: Sequence[Event],
        expected_position: int,
    ) -> int:
        """Append one command's events by rewriting the whole file atomically."""
        check_batch(self._where(run_id), command, events)
        recorded = self.read(run_id)
        if recorded.torn is not None:
            raise BadInput(f"{self.path}: not appending to {recorded.torn}")
        # The rewrite chains the run afresh, which would hide an edit the old chain shows.
        key = signing_key()
        verdict = verify_run(self.path, key)
        if verdict.broken is not None:
            raise BadInput(
                f"{self.path}: not appending to a run whose chain is broken: "
                f"{verdict.broken.problem}"
            )
        if verdict.signature is Signature.INVALID:
            raise BadInput(f"{self.path}: not appending to a run whose signature does not match")
        if key is not None and recorded.batches and verdict.signature is not Signature.VALID:
            raise BadInput(
                f"{self.path}: not signing an append to an unsigned run: its events are vouched "
                f"for by no signature (unset {KEY_VARIABLE} to append unsigned)"
            )
        run = Run(_unfolded)
        for batch in recorded.batches:
            run.append(batch.command, batch.events)
        if len(run) != expected_position:
            raise Conflict.stale(str(self.path), expected_position, len(run))
        run.append(command, events)
        header = {k: v for k, v in recorded.header.items() if k not in ("events", "steps")}
        write_run(self.path, header, run)
        return len(run)

    def read(self, run_id: RunId | None = None) -> RunFile:
        """The file's run, as ``logfile.read_run`` reads it."""
        self._where(run_id)
        return read_run(self.path)

    def verify(self, run_id: RunId | None, key: bytes | None) -> Verdict:
        """The file's chain and signature, as ``logfile.verify_run`` verifies them."""
        self._where(run_id)
        return verify_run(self.path, key)

    def runs(self) -> list[RunInfo]:
        """The file's one run, or nothing for a file not written yet."""
        if not os.path.exists(self.path):
            return []
        recorded = read_run(self.path)
        header = recorded.header
        scenario, policies = header.get("scenario"), header.get("policies")
        written = datetime.fromtimestamp(self.path.stat().st_mtime, UTC)
        return [
            RunInfo(
                ONLY_RUN,
                scenario if isinstance(scenario, str) else None,
                policies if isinstance(policies, dict) else None,
                sum(len(batch.events) for batch in recorded.batches),
                written.isoformat(timespec="seconds"),
            )
        ]

    def _where(self, run_id: RunId | None) -> str:
        if run_id is not None and run_id != ONLY_RUN:
            raise BadInput(
                f"{self.path}: no run {run_id!r}: a JSONL file holds one run, id {ONLY_RUN}"
            )
        return str(self.path)
