"""The bench: run policies side by side on the same scenarios and measure each run.

A cell is one scenario under one policy with one set of settings (the
``--set`` ones and a point of the ``--grid``). Every cell runs in a fresh
session, so cells are independent: a process pool gives the same numbers as
a serial run, and the same inputs give the same numbers (decision cost, a
wall-clock time, aside). Each process warms up before its first cell is
timed, so a cell's decision cost is its own commands' and not its worker's
start (``warm_up``).

The package holds one job a module: what a bench runs (``specs``), what a
cell measured (``results``), the plan and each cell's policies (``planning``),
running a cell (``cells``) and the engines that run many (``engines``).
"""

from memtape.lab.bench.cells import WARM_UP, run_cell, warm_up
from memtape.lab.bench.engines import (
    Engine,
    Finished,
    Progress,
    Within,
    process_pool,
    results_data,
    run_cells,
    serial,
)
from memtape.lab.bench.planning import (
    MAX_REPLICATES,
    applies,
    has_meter,
    idle_reason,
    plan,
    policies_for,
    price_for,
    replicate_settings,
)
from memtape.lab.bench.results import METRICS, Result
from memtape.lab.bench.specs import BENCHED_AXES, Cell, PolicySpec, parse_grid, parse_policy

__all__ = [
    "BENCHED_AXES",
    "MAX_REPLICATES",
    "METRICS",
    "WARM_UP",
    "Cell",
    "Engine",
    "Finished",
    "PolicySpec",
    "Progress",
    "Result",
    "Within",
    "applies",
    "has_meter",
    "idle_reason",
    "parse_grid",
    "parse_policy",
    "plan",
    "policies_for",
    "price_for",
    "process_pool",
    "replicate_settings",
    "results_data",
    "run_cell",
    "run_cells",
    "serial",
    "warm_up",
]
