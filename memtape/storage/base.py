"""The run store interface: runs created, appended to a command at a time, read back.

A store holds one run (a JSONL file) or many (a SQLite database). Every
backend honours the same contract, checked by one conformance test suite:

- ``create(header)`` starts an empty run and returns its id;
- ``append(run_id, command, events, expected_position)`` records the events of
  one command all or nothing, and fails with ``Conflict`` when the run does
  not hold exactly ``expected_position`` events (another writer got there
  first: optimistic concurrency);
- ``read(run_id)`` gives the run back as ``logfile.RunFile`` values, the same
  header and ``RecordedBatch`` values ``logfile.read_run`` gives for a file;
- ``verify(run_id, key)`` checks the run's hash chain and signature
  (``memtape.core.chain``), which every write extends;
- ``runs()`` lists the runs, oldest first.
"""

import abc
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import attrs

from memtape.core.chain import HEAD, SIGNATURE, Verdict
from memtape.core.commands import Command
from memtape.core.errors import BadInput
from memtape.core.events import Event
from memtape.core.logfile import RunFile, stamp

RunId = int
"""A run's id in its store: 1 for the only run of a JSONL file, 1, 2, ... in SQLite."""


class Conflict(BadInput):
    """An append that named a stale position: the run changed since it was read.

    Nothing was written; read the run again and decide again.
    """

    @classmethod
    def stale(cls, where: str, expected: int, actual: int) -> "Conflict":
        """The conflict of an append expecting ``expected`` events where ``actual`` are."""
        return cls(
            f"{where}: expected to append after event {expected}, but the run holds "
            f"{actual} events (another writer got there first); nothing was written"
        )


@attrs.frozen
class RunInfo:
    """One line of a store's listing: a run's id, scenario, policies, size and birth.

    ``created`` is an ISO 8601 UTC time: when SQLite recorded the run, or
    when a JSONL file was last written.
    """

    id: RunId
    scenario: str | None
    policies: dict[str, Any] | None
    events: int
    created: str


def stamped_header(header: Mapping[str, Any]) -> dict[str, Any]:
    """The header a new run is stored with: ``write_run``'s stamp, then ``header``.

    The stamp names the format and the memtape version that created the run;
    the counts (``events``, ``steps``) are added when the run is read, and
    its chain's head and signature are the store's to keep (any in ``header``,
    copied from another run, are dropped).
    """
    top = stamp(header)
    for name in ("events", "steps", HEAD, SIGNATURE):
        top.pop(name, None)
    return top


def stored_header(header: Mapping[str, Any], events: int, steps: int) -> dict[str, Any]:
    """``header`` as a read gives it: with the run's event and step counts, last."""
    top = {**header}
    top.update(events=events, steps=steps)
    return top


class RunStore(abc.ABC):
    """Runs kept at ``path``; use as a context manager, or ``close()`` when done."""

    path: Path

    @abc.abstractmethod
    def create(self, header: Mapping[str, Any]) -> RunId:
        """Start an empty run with ``header`` (its scenario, policies, ...); its id."""

    @abc.abstractmethod
    def append(
        self,
        run_id: RunId,
        command: Command,
        events: Sequence[Event],
        expected_position: int,
    ) -> int:
        """Record the events that honoured ``command`` after ``expected_position`` events.

        All or nothing: the batch is stored whole or not at all. Returns the
        run's new length. A run that does not hold exactly
        ``expected_position`` events is a ``Conflict``; an empty batch, or an
        unknown run, is a ``BadInput``.
        """

    @abc.abstractmethod
    def read(self, run_id: RunId | None = None) -> RunFile:
        """The run ``run_id`` (the newest when None): its header and whole batches.

        ``torn`` describes a last command stored without its end mark, which
        is dropped, as ``logfile.read_run`` does.
        """

    @abc.abstractmethod
    def verify(self, run_id: RunId | None, key: bytes | None) -> Verdict:
        """Verify the hash chain of run ``run_id`` (the newest when None), and its signature
        under ``key``; what is wrong is in the ``Verdict``, not raised.

        The stored run is read again without decoding its events; ``read`` it
        first, since a run it refuses may still verify.
        """

    @abc.abstractmethod
    def runs(self) -> list[RunInfo]:
        """Every run in the store, oldest first (the newest is last)."""

    def close(self) -> None:  # noqa: B027 (a store with nothing to release keeps this)
        """Release what the store holds open; it is not used afterwards."""

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()


def check_batch(where: str, command: Command, events: Sequence[Event]) -> None:
    """Refuse an empty batch: a command is honoured by at least one event."""
    if not events:
        raise BadInput(f"{where}: a command must be honoured by at least one event: {command!r}")
