"""Measure the viewer's page on a long run: file size, time to open, time to jump.

    .venv/bin/python -m benchmarks.measure_viewer            # 100,000 events
    .venv/bin/python -m benchmarks.measure_viewer --events 20000
    .venv/bin/python -m benchmarks.measure_viewer --forgetting memorybank

The run is the seek benchmark's mixed session (turns under tiered
compaction, fact writes, reads and clock moves under importance x recency x
access forgetting, seeded; ``--forgetting NAME`` runs it under another
forgetting policy of the same capacity, its other parameters defaulted).
The page is written as ``memtape view`` writes it and opened from disk in
headless Chromium (``/usr/bin/chromium``) through Playwright. "Open" is from
navigation to the page's first render of the last event; a jump is ``seek``
to a seeded random event, its render, and the layout it forces, timed inside
the page, first alone, then with a point pinned in the middle (so each jump
also draws the diff panel). Targets (issue 5): at most 20 MB,
3 s and 100 ms.
"""

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

from benchmarks.test_seek import POLICIES, SEED, commands
from memtape.policies.session import Policies, Session
from memtape.policies.zoo import FORGETTING
from memtape.runs.files import LoadedRun
from memtape.viewer.page import view_page

CHROMIUM = "/usr/bin/chromium"
"""Debian's Chromium: Playwright's own browser download is not available here."""

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
"""Flags for a headless Chromium as root in a container with a closed network."""

JUMPS = 101
"""Timed jumps (their median and maximum are reported)."""

_JUMP = """(at) => {
  const start = performance.now();
  window.memtapeViewer.seek(at);
  void document.body.offsetHeight;
  return performance.now() - start;
}"""


def long_run(events: int, forgetting: str | None = None) -> Session:
    """The seek benchmark's mixed session, up to the first whole command reaching ``events``,
    under forgetting policy ``forgetting`` (of the benchmark's capacity) if one is named."""
    session = Session(POLICIES if forgetting is None else with_forgetting(forgetting))
    mixed = commands(session, SEED)
    while len(session.run) < events:
        session.execute(next(mixed))
    return session


def with_forgetting(name: str) -> Policies:
    """The benchmark's policies with forgetting policy ``name``, of the same capacity."""
    return POLICIES.with_settings([f"forgetting.policy={name}"])


def main() -> None:
    """Build the page, open it, jump around; print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--forgetting", choices=sorted(FORGETTING), default=None)
    args = parser.parse_args()
    session = long_run(args.events, args.forgetting)
    start = time.perf_counter()
    html = view_page([LoadedRun(session, f"mixed-{args.events}", Path("mixed"))])
    built = time.perf_counter() - start
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "run.html"
        path.write_text(html, encoding="utf-8")
        size = path.stat().st_size
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page()
            start = time.perf_counter()
            page.goto(path.as_uri(), wait_until="load")
            page.wait_for_function("window.memtapeViewer !== undefined")
            opened = time.perf_counter() - start
            rng = random.Random(SEED)
            length = len(session.run)
            jumps = [page.evaluate(_JUMP, rng.randint(0, length)) for _ in range(JUMPS)]
            page.evaluate(_JUMP, length // 2)
            page.click("#pin")
            pinned = [page.evaluate(_JUMP, rng.randint(0, length)) for _ in range(JUMPS)]
            browser.close()
    forgetting = session.policies.forgetting
    assert forgetting is not None
    print(
        f"run: {len(session.run):,} events, {session.run.steps:,} commands, "
        f"forgetting {forgetting.name}"
    )
    print(f"page built in {built:.2f} s; file size {size / 1e6:.2f} MB (target <= 20 MB)")
    print(f"open in headless Chromium: {opened:.2f} s (target <= 3 s)")
    print(
        f"jump to a random event: median {statistics.median(jumps):.1f} ms, "
        f"max {max(jumps):.1f} ms over {JUMPS} jumps (target <= 100 ms)"
    )
    print(
        f"the same with a pinned point (the diff panel on): median "
        f"{statistics.median(pinned):.1f} ms, max {max(pinned):.1f} ms"
    )


if __name__ == "__main__":
    main()
