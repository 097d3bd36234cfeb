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
from memtape.lab.bench import Cell, applies, has_meter, plan, results_data, run_cells
from memtape.lab.files import check_writable, write_atomic
from memtape.lab.plot import check_plotting, plot_paths, write_plot
from memtape.lab.progress import Progress, progress_mode
from memtape.lab.table import (
    comparison_table,
    left_out_line,
    loss_lines,
    over_budget_lines,
    skipped_line,
)


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
    columns: Sequence[str] | None = None,
    verbose: bool = False,
    out: TextIO | None = None,
    err: TextIO | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> int:
    """Run the bench and report it; the exit status (0). With ``losses``, each lost
    probe is listed after the table with the event that lost it; ``columns`` (metric
    names) chooses the table's metric columns. Progress goes to ``err``: a bar on a
    terminal, a line every few seconds with ``verbose`` elsewhere, none when ``quiet``."""
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    if json_out is not None:
        check_writable(json_out)
    if plot_out is not None:
        plot_paths(plot_out)
        check_plotting()
    cells = plan(scenarios, policies, settings, grid)
    if plot_out is not None and not any(has_meter(cell) for cell in cells):
        raise BadInput(f"--plot {plot_out}: no scenario has turns, so there is no meter to draw")
    if not any(applies(cell) for cell in cells):
        raise BadInput(
            "nothing to compare: no --policy applies to these scenarios (a compaction "
            "policy needs turns, a forgetting policy writes, reads or queries)"
        )
    workers = (os.cpu_count() or 1) if jobs is None else jobs
    mode = progress_mode(err, verbose=verbose, quiet=quiet)
    with Progress("bench", len(cells), mode=mode, err=err, unit="cells", clock=clock) as shown:

        def finished(done: int, total: int, cell: Cell) -> None:
            shown.update(done)

        def within(done: int, commands: int, total: int) -> None:
            # A long cell moves the bar too: the share of its commands run so far.
            shown.update_fraction(done + commands / total)

        results = run_cells(
            cells, workers, finished if mode != "off" else None, within if mode != "off" else None
        )
    # Wide enough for every column (the model ones too) when not on a terminal.
    console = Console(file=out, width=None if out.isatty() else 260, highlight=False)
    fitted = comparison_table(results, width=console.width, columns=columns)
    console.print(fitted.table)
    left_out = left_out_line(fitted)
    if left_out is not None:
        print(left_out, file=out)
    for line in over_budget_lines(results):
        print(line, file=out)
    skipped = skipped_line(results)
    if skipped is not None:
        print(skipped, file=out)
    if losses:
        for line in loss_lines(results):
            print(line, file=out)
    if json_out is not None:
        text = json.dumps(results_data(results), indent=2, ensure_ascii=False) + "\n"
        write_atomic(json_out, text.encode("utf-8"))
        print(f"wrote {json_out}", file=out)
    if plot_out is not None:
        png, svg = write_plot(results, plot_out)
        print(f"wrote {png} and {svg}", file=out)
    return 0
