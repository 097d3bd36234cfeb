"""The engines that run a bench's cells: in this process, or on a pool of local processes,
each cell's result yielded as it finishes; and the results as the JSON contract writes them."""

from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any

from memtape.core.errors import BadInput
from memtape.lab.bench.cells import run_cell
from memtape.lab.bench.results import Result
from memtape.lab.bench.specs import Cell
from memtape.llm.cache import cache_setting, use_cache

Progress = Callable[[int, int, Cell], None]
"""Told after each finished cell: how many are done, of how many, and which."""

Finished = Callable[[Cell, Result], None]
"""Told each cell's result as soon as it is finished (before ``Progress``)."""

Engine = Callable[[Sequence[Cell]], Iterator[tuple[int, Result]]]
"""Runs cells and yields each one's position among them and its result, as each finishes
(in any order); an error a cell raised is raised as it was."""


Within = Callable[[int, int, int], None]
"""Told of the commands inside a cell run in this process: cells done, commands done, the
cell's commands."""


def serial(cells: Sequence[Cell], within: Within | None = None) -> Iterator[tuple[int, Result]]:
    """The engine that runs each cell in this process, in order; ``within`` hears how far
    each cell got."""
    for number, cell in enumerate(cells):
        if within is None:
            yield number, run_cell(cell)
            continue

        def on_commands(commands: int, total: int, done: int = number) -> None:
            within(done, commands, total)

        yield number, run_cell(cell, on_commands=on_commands)


def process_pool(jobs: int, within: Within | None = None) -> Engine:
    """The engine that runs cells on ``jobs`` local processes (serially when ``jobs`` is 1,
    when ``within`` hears how far each cell got)."""
    if jobs < 1:
        raise BadInput(f"--jobs must be at least 1, got {jobs}")

    def engine(cells: Sequence[Cell]) -> Iterator[tuple[int, Result]]:
        if jobs == 1 or len(cells) < 2:
            yield from serial(cells, within)
            return
        # Each worker caches model answers where this process does (or not at all: --no-cache).
        with ProcessPoolExecutor(
            max_workers=min(jobs, len(cells)), initializer=use_cache, initargs=(cache_setting(),)
        ) as pool:
            futures = {pool.submit(run_cell, cell): number for number, cell in enumerate(cells)}
            try:
                for future in as_completed(futures):
                    yield futures[future], future.result()
            finally:
                # A failed cell (or a consumer that stopped) cancels what has not started.
                for future in futures:
                    future.cancel()

    return engine


def run_cells(
    cells: Sequence[Cell],
    jobs: int = 1,
    progress: Progress | None = None,
    *,
    engine: Engine | None = None,
    finished: Finished | None = None,
) -> list[Result]:
    """Run every cell (on ``engine``, by default on ``jobs`` processes) and return the
    results in the cells' order; ``finished`` and ``progress`` hear of each cell as it
    finishes."""
    run = process_pool(jobs) if engine is None else engine
    results: list[Result | None] = [None] * len(cells)
    for done, (number, result) in enumerate(run(cells), start=1):
        results[number] = result
        if finished is not None:
            finished(cells[number], result)
        if progress is not None:
            progress(done, len(cells), cells[number])
    missing = [cells[n].label for n, result in enumerate(results) if result is None]
    if missing:
        raise RuntimeError(f"the engine finished without running {', '.join(missing)}")
    return [result for result in results if result is not None]


def results_data(results: Iterable[Result], *, losses: bool = False) -> dict[str, Any]:
    """The JSON contract: ``{"results": [{"scenario", "policy", "params", "metrics"}]}``,
    ``metrics`` holding every name of ``METRICS`` (``peak_over_budget`` among them); with
    ``losses`` (``bench --losses``) each result holds ``losses`` too, a list of
    ``{"probe", "kind", "turn", "at", "event"}``."""
    return {"results": [result.data(losses=losses) for result in results]}
