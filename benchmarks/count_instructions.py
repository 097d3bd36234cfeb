"""Count the machine instructions a turn costs, memtape's and the yardstick's, under valgrind.

    .venv/bin/python -m benchmarks.count_instructions
    .venv/bin/python -m benchmarks.count_instructions --budget 2000 --hot-n 8 --turns 3000

Times on a shared machine swing by a third from one run to the next; an
instruction count does not move. So to tell whether a change to the hot
path helps, count both versions (run this in each checkout) rather than
time them. The count misses what instructions do not show (cache misses,
the collector's walks of a long run: ``measure_collector`` and ``make
bench`` measure those), and it is no target: the targets are times.

Compare counts made with the same ``--seed`` (the string hash's: dicts and
maps lay out by it, and a turn's count moves by about 5% between seeds).
Each figure is the instructions of a process that runs ``--turns`` turns,
less those of the same process running none (so start-up, imports and the
session's generation cancel out), divided by the turns. The collector is
paused while the turns run, so its walks do not land in the count. Needs
``valgrind`` on the PATH (not a dependency of memtape); each count takes
about a minute.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

CHILD = """
import gc
from benchmarks.sessions import run_tiered, support_session
from benchmarks.test_compaction import run_yardstick
run = {who}
commands = support_session({turns})
run(commands[:2000], {budget}, {hot_n})
gc.disable()
if {timed}:
    run(commands, {budget}, {hot_n})
"""
"""The counted process: one warm-up of 2,000 turns (long enough to pack
the history's first blocks, so that no one-time work is counted), then (or not) the turns,
collector off."""

ROOT = Path(__file__).resolve().parent.parent
"""The project's root, where the counted process imports ``benchmarks`` from."""

_COLLECTED = re.compile(r"Collected : (\d+)")


def instructions(who: str, turns: int, budget: int, hot_n: int, *, timed: bool, seed: int) -> int:
    """The instructions callgrind counts in one child process, its string hash seeded."""
    code = CHILD.format(who=who, turns=turns, budget=budget, hot_n=hot_n, timed=timed)
    result = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable],
        input=code,
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        # A fixed string hash: dicts, sets and maps are laid out alike in every count
        # (a turn's count moves by about 5% from one seed to another).
        env={**os.environ, "PYTHONHASHSEED": str(seed)},
    )
    found = _COLLECTED.search(result.stderr)
    if result.returncode != 0 or found is None:
        last = (result.stderr.strip().splitlines() or ["no output"])[-1]
        raise SystemExit(f"count_instructions: valgrind failed: {last}")
    return int(found.group(1))


def per_turn(who: str, turns: int, budget: int, hot_n: int, seed: int) -> float:
    """The instructions of one turn of ``who`` (``run_tiered`` or ``run_yardstick``)."""
    base = instructions(who, turns, budget, hot_n, timed=False, seed=seed)
    return (instructions(who, turns, budget, hot_n, timed=True, seed=seed) - base) / turns


def main(argv: Sequence[str] | None = None) -> int:
    """Print memtape's and the yardstick's instructions a turn, and their ratio."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--budget", type=int, default=40, help="the window's budget (40)")
    parser.add_argument("--hot-n", type=int, default=2, help="turns kept verbatim (2)")
    parser.add_argument("--turns", type=int, default=5000, help="turns counted (5000)")
    parser.add_argument("--seed", type=int, default=0, help="PYTHONHASHSEED of the counts (0)")
    args = parser.parse_args(argv)
    if shutil.which("valgrind") is None:
        print("count_instructions needs valgrind on the PATH", file=sys.stderr)
        return 2
    memtape = per_turn("run_tiered", args.turns, args.budget, args.hot_n, args.seed)
    yardstick = per_turn("run_yardstick", args.turns, args.budget, args.hot_n, args.seed)
    print(
        f"budget {args.budget} / hot_n {args.hot_n}, {args.turns:,} turns, collector paused, "
        f"hash seed {args.seed}: "
        f"memtape {memtape:,.0f} instructions a turn, the yardstick {yardstick:,.0f}: "
        f"{memtape / yardstick:.2f}x"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
