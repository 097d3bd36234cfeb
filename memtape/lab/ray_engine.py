"""The bench on Ray: each cell a Ray task, on a local instance or on a cluster.

Imported only for ``--engine ray``. A worker may be on another machine, so a
cell is sent with its scenario's text (put in the object store once per
scenario), never with a path to open there. Each worker caches model
answers at the absolute path this process caches them at (or not at all,
``--no-cache``): on this machine that is the same file; another node keeps a
file of its own at that path.
"""

import importlib
import logging
import re
import socket
from collections.abc import Iterator, Sequence
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import Any

import attrs

from memtape.core.errors import BadInput, MemtapeError
from memtape.lab.bench import Cell, Engine, Result, run_cell
from memtape.llm.cache import cache_setting, caching
from memtape.scenarios import Scenario, parse_scenario, read_scenario

EXTRA = "ray"
"""The optional extra that brings Ray, for ``--engine ray``."""

_ADDRESS = re.compile(r"(?:ray://)?(?P<host>[^\s:/]+):(?P<port>\d{1,5})")
_CONNECT_SECONDS = 5.0
"""How long the address is given to accept a connection before Ray is asked to join it
(Ray itself waits minutes on an address where nothing listens)."""
_IMPORT_ERROR = re.compile(r"^(?:ModuleNotFoundError|ImportError): .*$", re.MULTILINE)
_IN_FLIGHT_PER_CPU = 2
"""Tasks kept submitted per CPU of the cluster: enough to keep it busy, while a sweep
larger than memory holds only these in flight."""


@attrs.frozen
class _Failure:
    """An error a cell raised on purpose, sent back to be raised here as it was."""

    kind: type[MemtapeError]
    message: str
    fields: dict[str, Any]

    def error(self) -> MemtapeError:
        error = self.kind.__new__(self.kind)
        error.args = (self.message,)
        error.__dict__.update(self.fields)
        return error


def check_address(address: str | None) -> None:
    """Refuse an ``--address`` that is not ``auto``, ``ray://HOST:PORT`` or ``HOST:PORT``."""
    if address is None or address == "auto":
        return
    match = _ADDRESS.fullmatch(address)
    if match is None or not 0 < int(match["port"]) < 65536:
        raise BadInput(
            f"--address {address!r}: write auto (a cluster on this machine), "
            "ray://HOST:PORT (its client server) or HOST:PORT (its GCS, from one of its nodes)"
        )


def ray_engine(address: str | None = None) -> Engine:
    """The engine that runs each cell as a Ray task: on the cluster at ``address`` (``auto``,
    ``ray://HOST:PORT``, ``HOST:PORT``), or without one on a new local instance that it
    starts and stops. A program that already called ``ray.init`` keeps its connection."""
    check_address(address)
    ray = _ray()

    def engine(cells: Sequence[Cell]) -> Iterator[tuple[int, Result]]:
        started = _connect(ray, address)
        try:
            yield from _run(ray, cells)
        finally:
            if started:
                ray.shutdown()

    return engine


def _ray() -> ModuleType:
    try:
        return importlib.import_module("ray")
    except ImportError:
        from memtape.core.extras import install_hint  # noqa: PLC0415 (a refusal only)

        raise BadInput(
            f"--engine ray needs Ray, which is not installed: {install_hint(EXTRA)}"
        ) from None


def _connect(ray: ModuleType, address: str | None) -> bool:
    """Join the cluster (or start a local instance); whether this call did, to undo it."""
    match = None if address is None else _ADDRESS.fullmatch(address)
    if match is not None:
        try:
            socket.create_connection((match["host"], int(match["port"])), _CONNECT_SECONDS).close()
        except OSError as error:
            raise BadInput(f"--address {address}: no Ray cluster answers there: {error}") from None
    if ray.is_initialized():
        return False
    quiet: dict[str, Any] = {"log_to_driver": False, "logging_level": logging.WARNING}
    if address is None or not address.startswith("ray://"):
        quiet["include_dashboard"] = False
    try:
        # "local": a new instance, even where ``ray start`` left a cluster running.
        ray.init(address="local" if address is None else address, **quiet)
    except (ConnectionError, RuntimeError, ValueError) as error:
        first = _gist(error)
        where = "a local Ray instance" if address is None else f"--address {address}"
        raise BadInput(f"{where}: cannot connect: {first}") from None
    return True


def _run(ray: ModuleType, cells: Sequence[Cell]) -> Iterator[tuple[int, Result]]:
    """Submit the cells (a bounded number at a time) and yield each as it finishes."""
    task = ray.remote(num_cpus=1)(_run_shipped)
    cache = cache_setting()
    cached = None if cache is None else str(cache.absolute())
    texts = {
        source: ray.put(read_scenario(source))
        for source in dict.fromkeys(c.scenario for c in cells)
    }
    cpus = int(ray.cluster_resources().get("CPU", 1))
    limit = max(1, cpus * _IN_FLIGHT_PER_CPU)
    waiting = iter(enumerate(cells))
    pending: dict[Any, int] = {}
    try:
        while True:
            for number, cell in waiting:
                pending[task.remote(cell, texts[cell.scenario], cached)] = number
                if len(pending) >= limit:
                    break
            if not pending:
                return
            (ready,), _ = ray.wait(list(pending), num_returns=1)
            number = pending.pop(ready)
            yield number, _outcome(ray, ready, cells[number])
    finally:
        for ref in pending:
            ray.cancel(ref)


def _outcome(ray: ModuleType, ref: Any, cell: Cell) -> Result:
    """The cell's result, or its error raised as the cell raised it; a task that Ray could
    not run (a worker or a node lost, memtape missing there) is named by its cell."""
    try:
        outcome = ray.get(ref)
    except ray.exceptions.RayTaskError as error:
        # Ray reports a task it could not load as a RuntimeError naming the import error.
        missing = _IMPORT_ERROR.findall(str(error))
        if isinstance(error.cause, ImportError) or missing:
            reason = missing[-1] if missing else str(error.cause)
            raise BadInput(
                f"{cell.scenario}, {cell.label}: the Ray worker cannot run memtape's cells "
                f"({reason}): install memtape, the same version, on every node"
            ) from None
        raise
    except ray.exceptions.RayError as error:
        raise BadInput(
            f"{cell.scenario}, {cell.label}: the Ray task failed: {_gist(error)}"
        ) from None
    if isinstance(outcome, _Failure):
        raise outcome.error()
    result: Result = outcome
    return result


def _run_shipped(cell: Cell, text: str, cache: str | None) -> Result | _Failure:
    """A Ray task's body: the cell run on its shipped scenario, caching where it is told."""
    try:
        with caching(None if cache is None else Path(cache)):
            return run_cell(cell, _parsed(cell.scenario, text))
    except MemtapeError as error:
        return _Failure(type(error), str(error), dict(vars(error)))


def _gist(error: Exception) -> str:
    """A Ray error in one line: its first line and, when it says more, its last (Ray puts a
    remote traceback between the two)."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    if not lines:
        return type(error).__name__
    return lines[0] if len(lines) == 1 else f"{lines[0]} ... {lines[-1]}"


@lru_cache(maxsize=8)
def _parsed(source: str, text: str) -> Scenario:
    """The scenario parsed once per worker (a grid's cells share it)."""
    return parse_scenario(text, source)
