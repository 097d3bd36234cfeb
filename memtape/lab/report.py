"""``memtape bench`` end to end: plan the cells, run them, print the table, write the files.

Every output path and every cell is checked before any cell runs, so bad
input writes nothing.
"""

import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TextIO

from rich.console import Console

from memtape.core.errors import BadInput
from memtape.core.paths import same_file
from memtape.core.visible import visible
from memtape.lab.bench import (
    Cell,
    Engine,
    Result,
    Within,
    applies,
    has_meter,
    plan,
    process_pool,
    results_data,
    run_cells,
)
from memtape.lab.files import check_writable, write_atomic
from memtape.lab.plot import check_plotting, plot_paths, write_plot
from memtape.lab.progress import Progress, progress_mode
from memtape.lab.results_file import ResultsFile, cell_key
from memtape.lab.table import (
    comparison_table,
    left_out_line,
    loss_lines,
    over_budget_lines,
    skipped_line,
)
from memtape.projections.billing.prices import PriceTable
from memtape.projections.wrapping import wrapped


def bench(
    scenarios: Sequence[str],
    policies: Sequence[str],
    *,
    settings: Sequence[str] = (),
    grid: Sequence[str] = (),
    json_out: Path | None = None,
    plot_out: Path | None = None,
    jobs: int | None = None,
    quiet: bool = False,
    losses: bool = False,
    engine: str = "process",
    address: str | None = None,
    results_out: Path | None = None,
    resume: bool = False,
    columns: Sequence[str] | None = None,
    verbose: bool = False,
    width: int | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
    clock: Callable[[], float] = time.monotonic,
    prices: PriceTable | None = None,
) -> int:
    """Run the bench and report it; the exit status (0). With ``losses``, each lost
    probe is listed after the table with the event that lost it; ``columns`` (metric
    names) chooses the table's metric columns; the table fits ``width`` and the lines
    under it wrap to it (default: the terminal's when ``out`` is one, else no limit, the
    table as wide as its columns). Progress goes to ``err``: a bar on a
    terminal, a line every few seconds with ``verbose`` elsewhere, none when ``quiet``.

    ``engine`` is ``process`` (``jobs`` local processes) or ``ray`` (a Ray task per
    cell, on the cluster at ``address`` or a local instance). With ``results_out``,
    each cell's result is added to that JSONL file as it finishes; with ``resume``,
    the cells it already holds are not run again, and the report is the one an
    uninterrupted sweep gives. ``prices`` (``--prices``) bills the cells' runs in place
    of the shipped price table."""
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    if json_out is not None:
        check_writable(json_out)
    if plot_out is not None:
        plot_paths(plot_out)
        check_plotting()
    cells = plan(scenarios, policies, settings, grid, prices)
    if plot_out is not None and not any(has_meter(cell) for cell in cells):
        raise BadInput(f"--plot {plot_out}: no scenario has turns, so there is no meter to draw")
    if not any(applies(cell) for cell in cells):
        raise BadInput(
            "nothing to compare: no --policy applies to these scenarios (a compaction "
            "policy needs turns, a forgetting policy writes, reads or queries)"
        )
    if resume and results_out is None:
        raise BadInput("--resume needs --results FILE.jsonl, the file of the sweep to go on with")
    if results_out is not None and json_out is not None and _same(results_out, json_out):
        raise BadInput(f"--results {results_out}: it is the --json file too")
    # Nothing is written until the store opens, after every option has been checked.
    store = None if results_out is None else ResultsFile(results_out, cells, resume=resume)
    todo = cells if store is None else _unfinished(cells, store)
    before = len(cells) - len(todo)
    mode = progress_mode(err, verbose=verbose, quiet=quiet)
    shown: Progress | None = None

    def within(cell: int, commands: int, total: int) -> None:
        # A long cell moves the bar too: the share of its commands run so far, after
        # the cells a resumed sweep had finished.
        if shown is not None:
            shown.update_fraction(before + cell + commands / total)

    run = _engine(engine, address, jobs, within if mode != "off" else None)
    with Progress("bench", len(cells), mode=mode, err=err, unit="cells", clock=clock) as bar:
        shown = bar
        results = _run(cells, todo, run, store, bar if mode != "off" else None)
    # Wide enough for every column (the model ones too) when not on a terminal.
    wide = None if out.isatty() else 260
    console = Console(file=out, width=wide if width is None else width, highlight=False)
    fitted = comparison_table(results, width=console.width, columns=columns)
    console.print(fitted.table)
    # A peak's mark is explained only where the peak is shown.
    peaks = "peak_tokens" not in fitted.left_out and "peak_tokens" in (columns or ["peak_tokens"])
    marks = over_budget_lines(results) if peaks else []
    notes = [left_out_line(fitted), *marks, skipped_line(results)]
    if losses:
        notes.extend(loss_lines(results))
    fit = console.width if width is not None or out.isatty() else None
    for line in wrapped((note for note in notes if note is not None), fit):
        print(line, file=out)
    if json_out is not None:
        text = visible(
            json.dumps(results_data(results, losses=losses), indent=2, ensure_ascii=False), "json"
        )
        text += "\n"
        write_atomic(json_out, text.encode("utf-8"))
        print(f"wrote {json_out}", file=out)
    if plot_out is not None:
        png, svg = write_plot(results, plot_out)
        print(f"wrote {png} and {svg}", file=out)
    return 0


def _engine(name: str, address: str | None, jobs: int | None, within: Within | None) -> Engine:
    """The engine ``--engine`` names, its options checked before any cell runs; ``within``
    hears of the commands inside cells run in this process."""
    if name == "process":
        if address is not None:
            raise BadInput(f"--address {address}: it is for --engine ray")
        return process_pool((os.cpu_count() or 1) if jobs is None else jobs, within)
    if name == "ray":
        if jobs is not None:
            raise BadInput(
                f"--jobs {jobs}: it is for --engine process (Ray uses the cluster's CPUs)"
            )
        # Imported here: Ray is an extra, and heavy to import.
        from memtape.lab.ray_engine import ray_engine  # noqa: PLC0415

        return ray_engine(address)
    raise BadInput(f"--engine {name!r}: write process or ray")


def _run(
    cells: Sequence[Cell],
    todo: Sequence[Cell],
    run: Engine,
    store: ResultsFile | None,
    shown: Progress | None,
) -> list[Result]:
    """Every cell's result, in the cells' order: those ``store`` holds read back, the others
    (``todo``, each distinct cell once) run on ``run`` and added to it as they finish; the
    progress on ``shown``, when given."""
    before = len(cells) - len(todo)

    def progress(done: int, total: int, cell: Cell) -> None:
        if shown is not None:
            shown.update(done + before)

    told = None if shown is None else progress
    if shown is not None and before:
        shown.update(before)
    if store is None:
        return run_cells(cells, engine=run, progress=told)
    store.open()
    try:
        run_cells(todo, engine=run, progress=told, finished=store.add)
    finally:
        store.close()
    return [store.finished[cell_key(cell)] for cell in cells]


def _same(first: Path, second: Path) -> bool:
    """Whether two output paths name one file, written yet or not."""
    return same_file(first, second) or first.absolute() == second.absolute()


def _unfinished(cells: Sequence[Cell], store: ResultsFile) -> list[Cell]:
    """The cells whose results ``store`` lacks, each distinct one once."""
    return list({cell_key(c): c for c in cells if cell_key(c) not in store.finished}.values())
