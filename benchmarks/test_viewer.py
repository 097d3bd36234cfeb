"""The viewer's page: a scrub step on a long run against one on a short run.

The runs are the seek benchmark's mixed session (``measure_viewer.long_run``)
at 100,000 events and at 1,000, each written as ``memtape view`` writes it
and opened from disk in headless Chromium (``/usr/bin/chromium``) through
Playwright. A scrub step is what dragging the slider does once: ``seek`` to
the next of a seeded series of events, its render, and the layout it forces;
a round takes ``STEPS`` of them in the page. The target of issue 29 (a step
on the 100,000-event page costs at most three times one on the 1,000-event
page; measured 1.9x, 39 ms against 20 ms, on a saturated 2-core machine) says
that a step's work hardly grows with the run: the strip, the lists and the
fold are bounded (tests/test_viewer_navigation_browser.py holds them to it),
but the projected state a step builds still copies the dropped turns and
walks the retired and evicted facts, which grow with the run. Without a
Chromium the benchmark is skipped.
"""

import random
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchmarks.conftest import Bench
from memtape.runs.files import LoadedRun
from memtape.viewer.page import view_page

CHROMIUM = "/usr/bin/chromium"
"""Debian's Chromium, as ``measure_viewer`` launches it."""

SIZES = {"1k": 1_000, "100k": 100_000}
"""The runs' lengths in events, by the name their figure takes."""

STEPS = 50
"""Scrub steps a timed round takes, each to the next of a seeded series of events."""

ROUNDS = 15
"""Timed rounds a run (their median is the figure)."""

_SCRUB = """(positions) => {
  for (const at of positions) {
    window.memtapeViewer.seek(at);
    void document.body.offsetHeight;
  }
  return positions.length;
}"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """A headless Chromium for the module (skipped without one)."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} not found")
    pytest.importorskip("playwright.sync_api")
    # measure_viewer imports Playwright, an optional dependency: only once it is known there.
    from playwright.sync_api import sync_playwright  # noqa: PLC0415

    from benchmarks.measure_viewer import CHROMIUM_ARGS  # noqa: PLC0415

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.mark.parametrize("size", sorted(SIZES))
def test_a_scrub_step(bench: Bench, browser: Any, size: str) -> None:
    from benchmarks.measure_viewer import long_run  # noqa: PLC0415 (see the browser fixture)

    events = bench.size(SIZES[size])
    session = long_run(events)
    page_text = view_page([LoadedRun(session, f"mixed-{events}", Path("mixed"))])
    rng = random.Random(29)
    length = len(session.run)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "run.html"
        path.write_text(page_text, encoding="utf-8")
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        try:
            page.goto(path.as_uri())
            page.wait_for_function("window.memtapeViewer !== undefined", timeout=120_000)
            start = rng.randint(0, length)
            # A drag: neighbouring events, one after another, as the slider sends them.
            positions = [min(length, start + step) for step in range(STEPS)]
            stepped = bench.measure(
                f"viewer-scrub-{size}", page.evaluate, _SCRUB, positions, rounds=ROUNDS
            )
        finally:
            page.close()
    assert STEPS == stepped
