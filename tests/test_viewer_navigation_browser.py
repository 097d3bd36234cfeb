"""Finding one's way in a run in a real browser (headless Chromium): the go-to box, the
keyboard's steps, the probes panel, and a run of 100,000 events, whose page must cost
what the screen shows rather than what the run holds.
"""

import random
from pathlib import Path
from typing import Any

import pytest

from memtape.core.commands import AddTurn
from memtape.core.events import CompactionTriggered, TurnAdded
from memtape.policies.session import Policies, Session
from memtape.policies.window.tiered import TieredCompaction
from memtape.projections.metrics import compaction_metrics
from memtape.runs.files import LoadedRun
from memtape.scenarios import load_scenario
from memtape.scenarios.probes import Probe
from memtape.viewer.page import view_page
from memtape.viewer.serve import live_source, make_server
from tests.serving import start, stop
from tests.test_viewer_browser import Shot, enforcing, simulated

# Each drives a headless Chromium: the slow job runs them (`make test-slow`, which CI runs
# with MEMTAPE_REQUIRE_BROWSER=1), so that `make test` stays within minutes on a busy machine.
pytestmark = pytest.mark.slow

Page = Any

KEYFRAME_EVERY = 64
"""viewer.js's keyframe interval: a seek folds at most this many deltas."""

NODES_AT_MOST = 2_000
"""The page's elements, at most, whatever the run's length (the refund desk's page has
about 300): lists show their last 40 items, the event list 41 rows, the strip one canvas."""


def open_probed(page: Page, folder: Path, loaded: LoadedRun, probes: Any) -> None:
    """Write the static page of ``loaded`` with ``probes`` and open it from disk."""
    path = folder / "view.html"
    path.write_text(view_page([loaded], [probes]), encoding="utf-8")
    page.goto(path.as_uri())
    page.wait_for_function("window.memtapeViewer !== undefined")


def refund_desk(page: Page, folder: Path, *settings: str) -> LoadedRun:
    loaded = simulated("refund-desk", *settings)
    open_probed(page, folder, loaded, load_scenario("refund-desk").probes)
    return loaded


def position(page: Page) -> int:
    return int(page.evaluate("memtapeViewer.position()"))


def go_to(page: Page, text: str) -> None:
    page.fill("#goto-input", text)
    page.press("#goto-input", "Enter")


def events_where(loaded: LoadedRun, kind: type) -> list[int]:
    events = loaded.session.run.events
    return [at for at, event in enumerate(events, start=1) if isinstance(event, kind)]


class TestGoTo:
    @pytest.mark.parametrize(
        ("text", "expected"),
        [("12", 12), ("event 3", 3), ("e0", 0), ("t8", 10), ("turn 1", 1), ("s5", 6)],
    )
    def test_an_event_a_turn_or_a_step_by_number(
        self, page: Page, tmp_path: Path, text: str, expected: int
    ) -> None:
        loaded = refund_desk(page, tmp_path)
        run = loaded.session.run
        assert 10 == events_where(loaded, TurnAdded)[7]
        assert 6 == run.batch(5)[1]
        go_to(page, text)
        assert expected == position(page)
        assert "" == page.locator("#goto-error").inner_text()

    def test_text_finds_the_next_event_that_holds_it_then_wraps(
        self, page: Page, tmp_path: Path
    ) -> None:
        loaded = refund_desk(page, tmp_path)
        marks = events_where(loaded, CompactionTriggered)
        page.evaluate("() => memtapeViewer.seek(0)")
        go_to(page, "compaction over budget")
        assert marks[0] == position(page)
        go_to(page, "compaction over budget")
        assert marks[1] == position(page)
        page.evaluate("(at) => memtapeViewer.seek(at)", marks[-1])
        go_to(page, "COMPACTION over")
        assert marks[0] == position(page)

    def test_lost_goes_to_the_next_probe_loss(self, page: Page, tmp_path: Path) -> None:
        loaded = refund_desk(page, tmp_path)
        page.evaluate("() => memtapeViewer.seek(0)")
        go_to(page, "lost")
        (loss,) = compaction_metrics(loaded.session.run, load_scenario("refund-desk").probes).losses
        assert loss.at == position(page)

    @pytest.mark.parametrize(
        ("text", "said"),
        [
            ("t99", "no turn 99: the run has 10"),
            ("400", "no event 400: the run has 15"),
            ("s11", "no step 11: the run has 10"),
            ("no such words", "no event holds 'no such words'"),
        ],
    )
    def test_what_names_nothing_is_said_and_moves_nothing(
        self, page: Page, tmp_path: Path, text: str, said: str
    ) -> None:
        refund_desk(page, tmp_path)
        page.evaluate("() => memtapeViewer.seek(4)")
        go_to(page, text)
        assert said == page.locator("#goto-error").inner_text()
        assert 4 == position(page)

    def test_slash_puts_the_cursor_in_the_box(self, page: Page, tmp_path: Path) -> None:
        refund_desk(page, tmp_path)
        page.locator("body").press("/")
        assert "goto-input" == page.evaluate("document.activeElement.id")


class TestKeyboardSteps:
    def test_commands_compactions_losses_and_the_ends(self, page: Page, tmp_path: Path) -> None:
        loaded = refund_desk(page, tmp_path, "compaction.budget=30")
        run = loaded.session.run
        ends = [run.batch(step)[1] for step in range(1, run.steps + 1)]
        marks = events_where(loaded, CompactionTriggered)
        losses = sorted(
            loss.at
            for loss in compaction_metrics(run, load_scenario("refund-desk").probes).losses
            if loss.at is not None
        )
        assert len(losses) >= 2
        body = page.locator("body")
        body.press("Home")
        assert 0 == position(page)
        body.press("Shift+ArrowRight")
        assert ends[0] == position(page)
        body.press("Shift+ArrowRight")
        assert ends[1] == position(page)
        body.press("ArrowRight")
        assert ends[1] + 1 == position(page)
        body.press("PageDown")
        assert marks[0] == position(page)
        body.press("]")
        assert losses[0] == position(page)
        body.press("]")
        assert losses[1] == position(page)
        body.press("[")
        assert losses[0] == position(page)
        body.press("End")
        assert len(run) == position(page)
        body.press("Shift+ArrowLeft")
        assert ends[-2] == position(page)
        body.press("PageUp")
        assert max(m for m in marks if m < ends[-2]) == position(page)

    def test_plus_minus_and_zero_zoom_the_strip(self, page: Page, tmp_path: Path) -> None:
        loaded = refund_desk(page, tmp_path)
        length = len(loaded.session.run)
        body = page.locator("body")
        body.press("+")
        first, last = page.evaluate("memtapeViewer.strip(0).range")
        assert last - first + 1 == 8
        body.press("-")
        assert [0, length] == page.evaluate("memtapeViewer.strip(0).range")
        body.press("+")
        body.press("0")
        assert [0, length] == page.evaluate("memtapeViewer.strip(0).range")

    def test_the_keys_are_listed_on_the_page(self, page: Page, tmp_path: Path) -> None:
        refund_desk(page, tmp_path)
        page.click("#keys summary")
        listed = page.locator("#keys dt").all_inner_texts()
        assert ["← →", "Shift + ← →", "Page Up, Page Down", "[ ]", "Home, End", "+ − 0", "/"] == [
            text.strip() for text in listed
        ]


class TestProbesPanel:
    def test_each_probe_not_due_kept_then_lost_as_bench_says(
        self, page: Page, tmp_path: Path, screenshot: Shot
    ) -> None:
        refund_desk(page, tmp_path)
        items = "#probe-body li.probe"
        page.evaluate("() => memtapeViewer.seek(5)")
        assert (
            "after event 5: 0 kept · 0 lost · 2 not yet due"
            == page.locator(".probe-counts").inner_text()
        )
        page.evaluate("() => memtapeViewer.seek(11)")
        assert [
            "$180.00\nkept · showing since event 11 (turn 8)",
            "restocking fee\nkept · showing since event 6 (turn 5)",
        ] == page.locator(items).all_inner_texts()
        page.evaluate("() => memtapeViewer.seek(15)")
        assert [
            "restocking fee\nlost at event 15 (turn 10, by CompactionTriggered)",
            "$180.00\nkept · showing since event 11 (turn 8)",
        ] == page.locator(items).all_inner_texts()
        screenshot("probes-panel")
        page.evaluate("() => memtapeViewer.seek(0)")
        page.evaluate("() => memtapeViewer.seek(15)")
        page.click("#probe-body li.probe.lost button")
        assert 15 == position(page)

    def test_a_probe_text_is_shown_as_text(self, page: Page, tmp_path: Path) -> None:
        session = Session(Policies(compaction=TieredCompaction(40, 2)))
        hostile = "<img src=x onerror=alert(1)>"
        session.execute(AddTurn("user", f"say {hostile}"))
        session.execute(AddTurn("user", "and then"))
        open_probed(page, tmp_path, LoadedRun(session, "x", Path("x")), [Probe(hostile, 2)])
        assert hostile == page.locator(".probe-text").inner_text()
        assert 0 == page.locator("#probe-body img").count()

    def test_served_live_the_losses_arrive_with_the_commands(self, browser: Any) -> None:
        live = live_source("refund-desk")
        server = start(make_server(live))
        violations: list[str] = []
        context, page, errors = enforcing(browser, violations)
        try:
            page.goto(server.url)
            for _ in range(10):
                before = int(page.evaluate("document.body.dataset.answers || 0"))
                page.click("#next")
                page.wait_for_function(
                    "(before) => Number(document.body.dataset.answers || 0) > before", arg=before
                )
            assert [15] == page.evaluate("memtapeViewer.strip(0).losses")
            assert (
                "after event 15: 1 kept · 1 lost · 0 not yet due"
                == page.locator(".probe-counts").inner_text()
            )
        finally:
            context.close()
            stop(server)
        assert [] == errors
        assert [] == violations


def long_run(events: int = 100_000, seed: int = 1) -> tuple[LoadedRun, list[Probe]]:
    """Short seeded turns under tiered compaction up to ``events`` events (about half of
    them compactions), a code planted every 2,000 turns and probed from the next."""
    rng = random.Random(seed)
    words = ("order", "refund", "Dana", "policy", "warranty", "fee")
    session = Session(Policies(compaction=TieredCompaction(120, 4)))
    probes = []
    turn = 0
    while len(session.run) < events:
        turn += 1
        text = " ".join(rng.choices(words, k=rng.randint(2, 8)))
        if turn % 2000 == 0:
            text += f" code-{turn}"
            probes.append(Probe(f"code-{turn}", turn + 1))
        session.execute(AddTurn(rng.choice(("user", "assistant", "tool")), text))
    return LoadedRun(session, "long", Path("long")), probes


@pytest.fixture(scope="module")
def long_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The static page of a run of 100,000 events with probes, written once."""
    loaded, probes = long_run()
    path = tmp_path_factory.mktemp("long") / "long.html"
    path.write_text(view_page([loaded], [probes]), encoding="utf-8")
    return path


def elements(page: Page) -> int:
    return int(page.evaluate("document.getElementsByTagName('*').length"))


class TestAHundredThousandEvents:
    def test_the_page_and_each_seek_cost_the_screen_not_the_run(
        self, page: Page, long_page: Path, screenshot: Shot
    ) -> None:
        """Structural, not timed: the elements, the strip's columns and marks and the deltas
        a seek folds are bounded by the screen and the keyframe interval."""
        page.goto(long_page.as_uri())
        page.wait_for_function("window.memtapeViewer !== undefined", timeout=120_000)
        length = page.evaluate("memtapeViewer.length(0)")
        assert length >= 100_000
        width = page.locator("canvas.meter-strip").evaluate("(c) => c.clientWidth")
        drawn = page.evaluate(
            "() => { const d = memtapeViewer.strip(0); return {columns: d.columns.width,"
            " marked: d.columns.marked.length, lost: d.columns.lost.length,"
            " compactions: d.compactions.length, losses: d.losses.length}; }"
        )
        assert drawn["compactions"] > 10 * width
        assert drawn["losses"] > 0
        assert width == drawn["columns"]
        assert drawn["marked"] <= width
        assert drawn["lost"] <= width
        assert elements(page) <= NODES_AT_MOST
        page.evaluate("(at) => memtapeViewer.seek(at)", length // 2)
        page.click("#pin")
        rng = random.Random(7)
        for at in (rng.randint(0, length) for _ in range(20)):
            page.evaluate("(at) => memtapeViewer.seek(at)", at)
            assert page.evaluate("memtapeViewer.folded(0)") < KEYFRAME_EVERY
            assert elements(page) <= NODES_AT_MOST
        page.locator("body").press("+")
        zoomed = page.evaluate("memtapeViewer.strip(0)")
        assert width == zoomed["columns"]["width"]
        # Half the positions, rounded as Math.round rounds (a half up).
        assert zoomed["range"][1] - zoomed["range"][0] + 1 == (length + 2) // 2
        assert elements(page) <= NODES_AT_MOST
        screenshot("hundred-thousand-events")


class TestNarrow:
    def test_nothing_sticks_out_of_a_480_pixel_window(
        self, page: Page, tmp_path: Path, screenshot: Shot
    ) -> None:
        page.set_viewport_size({"width": 480, "height": 900})
        refund_desk(page, tmp_path)
        page.click("#keys summary")
        assert 480 == page.evaluate("document.documentElement.scrollWidth")
        for selector in ("#keys dl", "#probe-body li.probe.lost button", ".strip-legend"):
            box = page.locator(selector).bounding_box()
            assert box is not None
            assert 0 <= box["x"]
            assert box["x"] + box["width"] <= 480
        screenshot("narrow-keys-and-probes-480")
