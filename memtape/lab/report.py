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
from typing import Any, TextIO

import attrs
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
from memtape.lab.frontier import frontier_lines, frontiers
from memtape.lab.gate import prepare_gate
from memtape.lab.plot import check_plotting, plot_paths, write_plot
from memtape.lab.progress import Progress, progress_mode
from memtape.lab.replicates import folded, once
from memtape.lab.results_file import ResultsFile, cell_key
from memtape.lab.results_table import check_tables, write_table
from memtape.lab.table import (
    Fitted,
    comparison_table,
    left_out_line,
    loss_lines,
    over_budget_lines,
    skipped_line,
    spread_line,
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
    table_out: Path | None = None,
    resume: bool = False,
    baseline: Path | None = None,
    fail_if: Sequence[str] = (),
    fail_if_missing: bool = False,
    columns: Sequence[str] | None = None,
    replicates: int | None = None,
    judge: str | None = None,
    probes: str | None = None,
    frontier: bool = False,
    frontier_on: str | None = None,
    runs: Path | None = None,
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
    uninterrupted sweep gives. With ``table_out``, the results are written there as a Parquet
    table (``memtape.lab.results_table``) once every cell has run.

    With ``fail_if`` rules (``memtape.lab.rules``), each cell is held to them against its
    match in ``baseline`` (``memtape.lab.gate``), after the report: the status is 1 when a
    cell breaks one (or, with ``fail_if_missing``, when the baseline lacks a cell).

    With ``replicates``, each cell runs that many times past the response cache, and
    reports each metric's median and spread (``memtape.lab.replicates``). ``probes`` (a
    file) adds its probes to every scenario; ``judge`` (a model) answers the probes'
    questions (``memtape.lab.judge``). With ``frontier``, each scenario's cost frontier is
    said under the table, written in the JSON and drawn in the plot
    (``memtape.lab.frontier``), ranked on ``frontier_on`` when it names a gain
    (``harmful_losses`` among them; ``memtape.lab.frontier.check_gain``). ``prices``
    (``--prices``) bills the cells' runs in place of the shipped price table. With ``runs``
    (a new or empty directory; on ``resume``, the one the sweep wrote its runs to), each cell
    run writes its run there (``Cell.run_name``)."""
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    gate = prepare_gate(fail_if, baseline, fail_if_missing=fail_if_missing)
    _check_outputs(json_out, plot_out, (results_out, table_out), baseline)
    cells = plan(
        scenarios, policies, settings, grid, replicates, judge=judge, probes=probes, prices=prices
    )
    _check_cells(cells, plot_out)
    if resume and results_out is None:
        raise BadInput("--resume needs --results FILE.jsonl, the file of the sweep to go on with")
    # Nothing is written until the store opens, after every option has been checked.
    store = None if results_out is None else ResultsFile(results_out, cells, resume=resume)
    cells = _recorded(cells, runs, resume=resume)
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
    rows = cells
    if replicates is not None:
        rows, results = once(cells), folded(cells, results)
    # Wide enough for every column (the model ones too) when not on a terminal.
    wide = None if out.isatty() else 260
    console = Console(file=out, width=wide if width is None else width, highlight=False)
    fitted = comparison_table(results, width=console.width, columns=columns)
    console.print(fitted.table)
    notes = _notes(fitted, results, columns, losses=losses)
    found = frontiers(results, frontier_on) if frontier else []
    notes.extend(frontier_lines(found))
    fit = console.width if width is not None or out.isatty() else None
    for line in wrapped((note for note in notes if note is not None), fit):
        print(line, file=out)
    if json_out is not None:
        data = results_data(results, losses=losses)
        if frontier:
            data["frontiers"] = [each.data() for each in found]
        _write_json(json_out, data, out)
    if plot_out is not None:
        png, svg = write_plot(results, plot_out, found)
        print(f"wrote {png} and {svg}", file=out)
    if table_out is not None:
        write_table(table_out, rows, results)
        print(f"wrote {table_out}", file=out)
    if gate is None:
        return 0
    verdict = gate.judge(results)
    for line in wrapped(verdict.lines, fit):
        print(line, file=out)
    return 1 if verdict.failed else 0


def _check_cells(cells: Sequence[Cell], plot_out: Path | None) -> None:
    """Refuse a bench where no policy applies, or a plot with no meter to draw."""
    if plot_out is not None and not any(has_meter(cell) for cell in cells):
        raise BadInput(f"--plot {plot_out}: no scenario has turns, so there is no meter to draw")
    if not any(applies(cell) for cell in cells):
        raise BadInput(
            "nothing to compare: no --policy applies to these scenarios (a compaction "
            "policy needs turns, a forgetting policy writes, reads or queries)"
        )


def _recorded(cells: list[Cell], runs: Path | None, *, resume: bool = False) -> list[Cell]:
    """``cells``, each told to write its run to ``runs`` (made now, when it is not there)
    when given; no directory is refused, and so is one that holds anything, but for a
    ``resume``: then it may hold this sweep's runs (those of the cells already finished
    stay, as the cells are not run again), and nothing else."""
    if runs is None:
        return cells
    if runs.exists() and not runs.is_dir():
        raise BadInput(f"--runs {runs}: not a directory")
    held = sorted(path.name for path in runs.iterdir()) if runs.is_dir() else []
    if held and not resume:
        raise BadInput(f"--runs {runs}: it holds files already: name a new or empty directory")
    names = {cell.run_name for cell in cells}
    other = next((name for name in held if name not in names), None)
    if other is not None:
        raise BadInput(
            f"--runs {runs}: it holds {other}, no run of this sweep: --resume goes on "
            "in the sweep's own directory"
        )
    try:
        runs.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise BadInput(f"--runs {runs}: cannot make it: {error.strerror}") from None
    # Resolved here: a worker in another working directory (Ray's) writes to this one.
    where = str(runs.resolve())
    return [attrs.evolve(cell, runs=where) for cell in cells]


def _check_outputs(
    json_out: Path | None,
    plot_out: Path | None,
    results_out: tuple[Path | None, Path | None],
    baseline: Path | None,
) -> None:
    """Refuse, before any work, an output that cannot be written, an extra it needs that is
    not installed, and a results file (JSONL, then Parquet) that is another file named."""
    if json_out is not None:
        check_writable(json_out)
    jsonl, table = results_out
    if table is not None:
        check_tables(f"--results {table}")
        check_writable(table)
    if plot_out is not None:
        plot_paths(plot_out)
        check_plotting()
    for written in (jsonl, table):
        if written is not None and json_out is not None and _same(written, json_out):
            raise BadInput(f"--results {written}: it is the --json file too")
        if written is not None and baseline is not None and _same(written, baseline):
            raise BadInput(f"--results {written}: it is the --baseline file too")


def _write_json(path: Path, data: dict[str, Any], out: TextIO) -> None:
    """Write the results' JSON to ``path`` (at once, or not at all) and say so on ``out``."""
    text = visible(json.dumps(data, indent=2, ensure_ascii=False), "json") + "\n"
    write_atomic(path, text.encode("utf-8"))
    print(f"wrote {path}", file=out)


def _notes(
    fitted: Fitted, results: Sequence[Result], columns: Sequence[str] | None, *, losses: bool
) -> list[str | None]:
    """The lines under the table: what it left out, its marks, the cells that did not
    apply, the replicates, and with ``losses`` each lost probe."""
    # A peak's mark is explained only where the peak is shown.
    peaks = "peak_tokens" not in fitted.left_out and "peak_tokens" in (columns or ["peak_tokens"])
    marks = over_budget_lines(results) if peaks else []
    notes = [left_out_line(fitted), *marks, skipped_line(results), spread_line(results)]
    if losses:
        notes.extend(loss_lines(results))
    return notes


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
