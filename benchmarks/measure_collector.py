"""Measure memtape's turns with the garbage collector running, each size paying its share.

    .venv/bin/python -m benchmarks.measure_collector
    .venv/bin/python -m benchmarks.measure_collector --small 40 --large 4

``make bench`` times the compaction rounds with the collector paused and
shows, beside the targets, what it adds to a 100k-turn round. This script
answers the other question: with the collector running, does a turn cost
more in a long run than in a short one? A full collection walks the whole
heap once the long-lived objects have grown by a quarter, so whether a
single 10k-turn round meets one depends on what the process held before it.
Here many 10k-turn rounds run back to back, then a few 100k-turn rounds,
in one process, with nothing collected by hand: each size meets collections
in proportion to what it builds, and the mean of its rounds carries their
share. The median of a few 10k rounds (what ``make bench`` would compare)
usually carries none, and is printed beside it.
"""

import argparse
import statistics
import time
from collections.abc import Sequence

from benchmarks.sessions import run_tiered, support_session

SETTINGS = ((2000, 8), (40, 2))
"""The tiered compaction settings of issue 2's targets: (budget, hot_n)."""


def rounds(turns: int, budget: int, hot_n: int, count: int) -> list[float]:
    """The times of ``count`` back-to-back sessions of ``turns`` turns, in seconds."""
    commands = support_session(turns)
    times: list[float] = []
    for _ in range(count):
        start = time.perf_counter()
        session = run_tiered(commands, budget, hot_n)
        times.append(time.perf_counter() - start)
        del session
    return times


def main(argv: Sequence[str] | None = None) -> None:
    """Print, per setting, the mean and median µs per turn at 10k and 100k turns."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--small", type=int, default=40, help="10k-turn rounds (default 40)")
    parser.add_argument("--large", type=int, default=4, help="100k-turn rounds (default 4)")
    args = parser.parse_args(argv)
    for budget, hot_n in SETTINGS:
        rounds(10_000, budget, hot_n, 3)  # warm-up: the sessions generated, the code run once
        small = rounds(10_000, budget, hot_n, args.small)
        large = rounds(100_000, budget, hot_n, args.large)
        by_mean = statistics.mean(large) / statistics.mean(small)
        by_median = statistics.median(large) / statistics.median(small)
        print(
            f"budget {budget} / hot_n {hot_n}, collector running: "
            f"10k turns {statistics.mean(small) / 1e4 * 1e6:.2f} µs/turn (mean of {len(small)}), "
            f"100k turns {statistics.mean(large) / 1e5 * 1e6:.2f} µs/turn (mean of {len(large)}); "
            f"100k / 10k = {by_mean:.2f}x by means, {by_median:.2f}x by medians"
        )


if __name__ == "__main__":
    main()
