"""The viewer's meter strip and dropped turns in a real browser (headless Chromium).

The strip draws the window's tokens after every event over the whole run,
against the budget line, compactions marked; it is a control that moves the
page. A dropped turn opens on its text. Each is read off the page and held to
``show --json`` and to the run's own events.
"""

import math
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
from memtape.viewer.page import view_page
from memtape.viewer.serve import live_source, make_server
from tests.serving import start, stop
from tests.test_viewer_browser import (
    RED,
    Shot,
    enforcing,
    meter,
    mixed_run,
    open_view,
    python_views,
    seek_end,
    simulated,
)

# Each drives a headless Chromium: the slow job runs them (`make test-slow`, which CI runs
# with MEMTAPE_REQUIRE_BROWSER=1), so that `make test` stays within minutes on a busy machine.
pytestmark = pytest.mark.slow

Page = Any

STRIP = "canvas.meter-strip"
STRIP_NAME = "window tokens over the whole run"


def drawing(page: Page, index: int = 0) -> Any:
    """What the strip of run ``index`` drew: its series, columns and marks."""
    return page.evaluate("(i) => memtapeViewer.strip(i)", index)


def compactions(loaded: LoadedRun) -> list[int]:
    """The positions right after each compaction of the run."""
    events = loaded.session.run.events
    return [at for at, e in enumerate(events, start=1) if isinstance(e, CompactionTriggered)]


def window_tokens(loaded: LoadedRun) -> list[int]:
    """The window's tokens after every event (0: the start), as Python folds them."""
    run = loaded.session.run
    return [run.state_at(at).window.tokens for at in range(len(run) + 1)]


def columns(tokens: list[int], budgets: list[Any], width: int) -> dict[str, list[Any]]:
    """The strip's downsampling, written again: column c covers positions
    floor(c·N/width) .. ceil((c+1)·N/width) − 1; the least and most tokens, the last budget."""
    count = len(tokens)
    low, high, budget = [], [], []
    for c in range(width):
        first = min(count - 1, c * count // width)
        last = max(first, math.ceil((c + 1) * count / width) - 1)
        low.append(min(tokens[first : last + 1]))
        high.append(max(tokens[first : last + 1]))
        budget.append(budgets[last])
    return {"low": low, "high": high, "budget": budget}


def sparse_run(turns: int = 200, seed: int = 3) -> LoadedRun:
    """Short seeded turns under a wide budget: the first compactions a few dozen events apart."""
    rng = random.Random(seed)
    words = ("order", "refund", "Dana", "policy", "warranty", "fee")
    session = Session(Policies(compaction=TieredCompaction(300, 3)))
    for _ in range(turns):
        role = rng.choice(("user", "assistant", "tool"))
        session.execute(AddTurn(role, " ".join(rng.choices(words, k=rng.randint(2, 8)))))
    return LoadedRun(session, "sparse", Path("sparse"))


def click_strip(page: Page, x: float, index: int = 0) -> None:
    page.locator(STRIP).nth(index).click(position={"x": x, "y": 20})


def slider_value(page: Page) -> int:
    return int(page.locator("#slider").input_value())


class TestTheStripJumps:
    def test_a_click_on_each_compaction_mark_lands_on_that_event_as_show_has_it(
        self, page: Page, tmp_path: Path, screenshot: Shot
    ) -> None:
        loaded = simulated("refund-desk")
        expected = python_views(loaded)
        open_view(page, tmp_path, loaded)
        marks = drawing(page)["marks"]
        assert compactions(loaded) == [at for at, _ in marks]
        assert 5 == len(marks)
        for at, x in marks:
            click_strip(page, x)
            assert at == slider_value(page)
            assert at == page.evaluate("memtapeViewer.position()")
            shown = page.evaluate("(at) => memtapeViewer.view(0, at)", at)
            assert expected[at]["window"] == shown["window"]
            window = expected[at]["window"]
            assert f"{window['tokens']}/{window['budget']} tokens" in meter(page)[0]
            hot = [f"turn {item['turn']} " for item in window["hot"]]
            lines = [line.strip() for line in page.locator(".tier.hot li").all_inner_texts()]
            assert len(hot) == len(lines)
            assert all(line.startswith(head) for head, line in zip(hot, lines, strict=True))
        click_strip(page, marks[0][1])
        screenshot("strip-refund-desk-compaction-1")

    def test_a_click_beside_a_mark_or_between_marks_lands_on_the_event_under_it(
        self, page: Page, tmp_path: Path
    ) -> None:
        loaded = simulated("refund-desk")
        open_view(page, tmp_path, loaded)
        (first, x), (second, _) = drawing(page)["marks"][:2]
        click_strip(page, x + 3)
        assert first == slider_value(page)
        width = page.locator(STRIP).evaluate("(c) => c.clientWidth")
        count = len(loaded.session.run) + 1
        # Position 1 (after turn 1) is far from any mark: its share's middle lands on it.
        click_strip(page, 1.5 * width / count)
        assert 1 == slider_value(page)
        assert first != second

    def test_on_a_long_run_a_click_a_few_pixels_off_a_lone_mark_still_lands_on_it(
        self, page: Page, tmp_path: Path
    ) -> None:
        page.set_viewport_size({"width": 480, "height": 900})
        open_view(page, tmp_path, sparse_run())
        drawn = drawing(page)
        marks = drawn["marks"]
        width, count = drawn["columns"]["width"], len(drawn["tokens"])
        # A mark with no other within 8 pixels, and 3 pixels right of it another event's share.
        lone = [
            (at, x)
            for n, (at, x) in enumerate(marks)
            if all(abs(other - x) > 8 for _, other in marks[max(0, n - 3) : n + 4] if other != x)
            and math.floor((x + 3) * count / width) != at
        ]
        assert lone
        at, x = lone[0]
        click_strip(page, x + 3)
        assert at == slider_value(page)

    def test_it_is_a_slider_the_keyboard_drives(self, page: Page, tmp_path: Path) -> None:
        loaded = simulated("refund-desk")
        marks = compactions(loaded)
        last = len(loaded.session.run)
        open_view(page, tmp_path, loaded)
        strip = page.get_by_role("slider", name=STRIP_NAME)
        strip.focus()
        page.keyboard.press("Home")
        assert 0 == slider_value(page)
        assert "0" == strip.get_attribute("aria-valuenow")
        page.keyboard.press("PageDown")
        assert marks[0] == slider_value(page)
        page.keyboard.press("PageDown")
        assert marks[1] == slider_value(page)
        page.keyboard.press("PageUp")
        assert marks[0] == slider_value(page)
        page.keyboard.press("ArrowRight")
        assert marks[0] + 1 == slider_value(page)
        page.keyboard.press("End")
        assert last == slider_value(page)
        assert str(last) == strip.get_attribute("aria-valuenow")
        assert str(last) == strip.get_attribute("aria-valuemax")
        page.keyboard.press("PageDown")
        assert last == slider_value(page)
        page.keyboard.press("ArrowLeft")
        window = python_views(loaded)[last - 1]["window"]
        assert (
            f"event {last - 1}: {window['tokens']}/{window['budget']} tokens, over budget"
            == strip.get_attribute("aria-valuetext")
        )

    def test_compared_runs_jump_to_the_command_of_the_mark(
        self, page: Page, tmp_path: Path, screenshot: Shot
    ) -> None:
        narrow, wide = simulated("refund-desk"), simulated("refund-desk", "compaction.budget=60")
        open_view(page, tmp_path, narrow, wide)
        at, x = drawing(page, 1)["marks"][0]
        run = wide.session.run
        step = next(s for s in range(1, run.steps + 1) if run.batch(s)[0] < at <= run.batch(s)[1])
        end = run.batch(step)[1]
        click_strip(page, x, index=1)
        assert step == slider_value(page)
        assert str(end) == page.locator(STRIP).nth(1).get_attribute("aria-valuenow")
        window = python_views(wide)[end]["window"]
        assert f"{window['tokens']}/60 tokens · within budget" == meter(page, 1)[0]
        assert str(narrow.session.run.batch(step)[1]) == page.locator(STRIP).nth(0).get_attribute(
            "aria-valuenow"
        )
        screenshot("strip-refund-desk-compare")


class TestTheStripDrawsThePayloadsTokens:
    def test_series_columns_and_marks_of_a_long_forked_run(
        self, page: Page, tmp_path: Path, screenshot: Shot
    ) -> None:
        loaded = mixed_run(count=600)
        page.set_viewport_size({"width": 480, "height": 900})
        open_view(page, tmp_path, loaded)
        drawn = drawing(page)
        tokens = window_tokens(loaded)
        assert tokens == drawn["tokens"]
        # The tokens the payload ships, folded from its deltas' ``t``.
        shipped = page.evaluate(
            "() => memtapeViewer.payload(0).frames.reduce("
            "(all, frame) => all.concat(['t' in frame ? frame.t : all[all.length - 1]]), [0])"
        )
        assert shipped == drawn["tokens"]
        run = loaded.session.run
        budgets = []
        for at in range(len(run) + 1):
            compaction = loaded.session.policies_at(at).compaction
            assert compaction is not None
            budgets.append(compaction.budget)
        assert {45, 70} == set(budgets)
        assert budgets == drawn["budget"]
        assert compactions(loaded) == drawn["compactions"]
        width = drawn["columns"]["width"]
        # Downsampled: fewer columns than positions, each position read.
        assert width < len(tokens)
        assert width == page.locator(STRIP).evaluate("(c) => c.clientWidth")
        expected = columns(tokens, budgets, width)
        assert expected == {name: drawn["columns"][name] for name in ("low", "high", "budget")}
        screenshot("strip-mixed-forked-480")

    def test_the_canvas_holds_its_columns_peaks(self, page: Page, tmp_path: Path) -> None:
        open_view(page, tmp_path, simulated("refund-desk"))
        drawn = drawing(page)
        page.keyboard.press("Home")
        height, lane, top = drawn["height"], drawn["lane"], drawn["columns"]["top"]
        # Rows of column c, top to bottom, as [r, g, b] (the page is drawn at one pixel a pixel).
        column = (
            "([c, h]) => { const canvas = document.querySelector('canvas.meter-strip');"
            " const data = canvas.getContext('2d').getImageData(c, 0, 1, h).data;"
            " return Array.from({length: h}, (_, r) => [data[4*r], data[4*r+1], data[4*r+2]]); }"
        )
        background, budget_line = [236, 239, 243], [29, 35, 48]
        for at in (1, 2, 3):
            c = at * drawn["columns"]["width"] // len(drawn["tokens"]) + 4
            rows = page.evaluate(column, [c, height])
            filled = next(r for r, rgb in enumerate(rows) if rgb not in (background, budget_line))
            assert abs(filled - (height - drawn["tokens"][at] / top * (height - lane))) <= 1


class TestTheLiveStrip:
    def test_it_grows_with_each_command_under_the_pages_policy(
        self, browser: Any, tmp_path: Path
    ) -> None:
        live = live_source("refund-desk")
        server = start(make_server(live))
        violations: list[str] = []
        context, page, errors = enforcing(browser, violations)
        try:
            page.goto(server.url)
            for _ in range(4):
                before = int(page.evaluate("document.body.dataset.answers || 0"))
                page.click("#next")
                page.wait_for_function(
                    "(before) => Number(document.body.dataset.answers || 0) > before", arg=before
                )
            drawn = page.evaluate("() => memtapeViewer.strip(0)")
            assert [0, 11, 20, 29, 41, 29] == drawn["tokens"]
            assert [5] == drawn["compactions"]
            page.locator(STRIP).click(position={"x": drawn["marks"][0][1], "y": 20})
            assert 5 == int(page.locator("#slider").input_value())
        finally:
            context.close()
            stop(server)
        assert [] == errors
        assert [] == violations


class TestDroppedTurns:
    def test_a_dropped_turn_opens_on_its_text(
        self, page: Page, tmp_path: Path, screenshot: Shot
    ) -> None:
        loaded = simulated("refund-desk")
        turns = {e.turn: e for e in loaded.session.run.events if isinstance(e, TurnAdded)}
        open_view(page, tmp_path, loaded)
        seek_end(page)
        dropped = python_views(loaded)[-1]["window"]["dropped"]
        assert [1, 3, 4, 6, 7] == dropped
        # Nothing is built for a turn not opened.
        assert 0 == page.locator(".dropped-text").count()
        for turn in dropped:
            page.click(f'.tier.dropped details[data-turn="{turn}"] summary')
            opened = page.locator(f'.tier.dropped details[data-turn="{turn}"]')
            assert turns[turn].text == opened.locator(".dropped-text .text").inner_text()
            assert opened.locator(".dropped-meta").inner_text().startswith(turns[turn].role)
        screenshot("dropped-turns-open")
        page.set_viewport_size({"width": 480, "height": 900})
        screenshot("dropped-turns-open-480")

    def test_an_opened_turn_stays_open_as_the_user_moves_and_closes_on_a_click(
        self, page: Page, tmp_path: Path
    ) -> None:
        loaded = simulated("refund-desk")
        open_view(page, tmp_path, loaded)
        seek_end(page)
        turn_1 = '.tier.dropped details[data-turn="1"]'
        page.click(f"{turn_1} summary")
        page.click("#back")
        assert page.locator(turn_1).evaluate("(d) => d.open")
        page.click(f"{turn_1} summary")
        assert not page.locator(turn_1).evaluate("(d) => d.open")
        page.click("#forward")
        assert not page.locator(turn_1).evaluate("(d) => d.open")


def with_probes(page: Page, folder: Path, name: str, *settings: str) -> LoadedRun:
    """Open the static page of shipped scenario ``name`` with the probes it plants."""
    loaded = simulated(name, *settings)
    path = folder / "probed.html"
    path.write_text(view_page([loaded], [load_scenario(name).probes]), encoding="utf-8")
    page.goto(path.as_uri())
    page.wait_for_function("window.memtapeViewer !== undefined")
    return loaded


LEGEND = ".strip-legend li"


class TestTheLegend:
    def test_every_mark_the_strip_draws_is_named_in_its_colour(
        self, page: Page, tmp_path: Path, screenshot: Shot
    ) -> None:
        with_probes(page, tmp_path, "refund-desk")
        assert [
            "window tokens (a band: least to most in a pixel's events)",
            "over the budget",
            "the budget",
            "a compaction",
            "a probe lost (it left the window)",
            "the current event",
        ] == [text.strip() for text in page.locator(LEGEND).all_inner_texts()]
        colour = "([s, p]) => getComputedStyle(document.querySelector(s))[p]"
        assert RED == page.evaluate(colour, [".swatch.over", "backgroundColor"])
        assert "rgb(29, 35, 48)" == page.evaluate(colour, [".swatch.budget", "backgroundColor"])
        assert "rgb(47, 128, 192)" == page.evaluate(
            colour, [".swatch.compaction", "borderTopColor"]
        )
        assert "rgb(142, 68, 173)" == page.evaluate(colour, [".swatch.lost", "borderBottomColor"])
        screenshot("strip-legend")

    def test_a_run_without_probes_has_no_probe_mark_to_name(
        self, page: Page, tmp_path: Path
    ) -> None:
        open_view(page, tmp_path, simulated("refund-desk"))
        texts = page.locator(LEGEND).all_inner_texts()
        assert 5 == len(texts)
        assert not any("probe" in text for text in texts)
        assert page.locator("#probes").is_hidden()


class TestProbesOnTheStrip:
    def test_each_loss_bench_reports_is_marked_under_the_tokens(
        self, page: Page, tmp_path: Path
    ) -> None:
        loaded = with_probes(page, tmp_path, "refund-desk", "compaction.budget=30")
        probes = load_scenario("refund-desk").probes
        losses = compaction_metrics(loaded.session.run, probes).losses
        assert losses
        drawn = drawing(page)
        lost_at = sorted(loss.at for loss in losses if loss.at is not None)
        assert len(losses) == len(lost_at)
        assert lost_at == drawn["losses"]
        assert drawn["columns"]["floor"] > 0
        # Away from the last event, where the cursor is drawn over the last loss's mark.
        page.evaluate("() => memtapeViewer.seek(0)")
        drawn = drawing(page)
        purple = [142, 68, 173]
        for _, x in drawn["lossMarks"]:
            pixel = page.evaluate(
                "([x, y]) => Array.from(document.querySelector('canvas.meter-strip')"
                ".getContext('2d').getImageData(x, y, 1, 1).data.slice(0, 3))",
                [math.floor(x), drawn["height"] - 2],
            )
            assert purple == pixel


def strip_range(page: Page, index: int = 0) -> list[int]:
    return list(drawing(page, index)["range"])


class TestZoomAndPan:
    def test_zooming_in_draws_the_range_around_the_current_event_a_column_a_pixel(
        self, page: Page, tmp_path: Path, screenshot: Shot
    ) -> None:
        loaded = mixed_run(count=600)
        open_view(page, tmp_path, loaded)
        length = len(loaded.session.run)
        page.evaluate("(at) => memtapeViewer.seek(at)", length // 2)
        page.get_by_role("button", name="zoom in around the current event (+)").click()
        first, last = strip_range(page)
        assert (length + 1) // 2 == last - first + 1 or length // 2 + 1 == last - first + 1
        assert first <= length // 2 <= last
        drawn = drawing(page)
        tokens = window_tokens(loaded)
        budgets = drawn["budget"]
        expected = columns(
            tokens[first : last + 1], budgets[first : last + 1], drawn["columns"]["width"]
        )
        assert expected == {name: drawn["columns"][name] for name in ("low", "high", "budget")}
        assert [at for at in compactions(loaded) if first <= at <= last] == [
            at for at, _ in drawn["marks"]
        ]
        assert f"events {first}–{last} of {length}" == page.locator(".strip-range").inner_text()
        screenshot("strip-zoomed")
        page.get_by_role("button", name="show the whole run (0)").click()
        assert [0, length] == strip_range(page)

    def test_a_click_on_a_zoomed_strip_lands_on_the_event_under_it(
        self, page: Page, tmp_path: Path
    ) -> None:
        loaded = sparse_run()
        open_view(page, tmp_path, loaded)
        page.evaluate("() => memtapeViewer.seek(100)")
        strip = page.locator(STRIP)
        strip.focus()
        for _ in range(3):
            page.keyboard.press("+")
        first, last = strip_range(page)
        assert 8 * (last - first + 1) <= len(loaded.session.run) + 8
        width = strip.evaluate("(c) => c.clientWidth")
        count = last - first + 1
        target = first + count // 3
        if target in compactions(loaded):
            target += 1
        click_strip(page, (target - first + 0.5) * width / count)
        assert target == slider_value(page)

    def test_the_wheel_zooms_around_the_pointer_and_a_drag_pans_without_jumping(
        self, page: Page, tmp_path: Path
    ) -> None:
        loaded = sparse_run()
        open_view(page, tmp_path, loaded)
        length = len(loaded.session.run)
        box = page.locator(STRIP).bounding_box()
        assert box is not None
        page.mouse.move(box["x"] + box["width"] / 4, box["y"] + 20)
        page.mouse.wheel(0, -100)
        page.wait_for_function(
            "memtapeViewer.strip(0).range[0] > 0 || memtapeViewer.strip(0).range[1] < "
            + str(length)
        )
        first, last = strip_range(page)
        # Half the positions, rounded as Math.round rounds (a half up).
        assert last - first + 1 == (length + 2) // 2
        assert first <= length // 4 <= last
        before = slider_value(page)
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + 20)
        page.mouse.down()
        page.mouse.move(box["x"] + box["width"] / 2 - 100, box["y"] + 20, steps=5)
        page.mouse.up()
        moved = strip_range(page)
        assert moved[0] > first
        assert moved[1] - moved[0] == last - first
        assert before == slider_value(page)

    def test_a_zoomed_strip_follows_the_current_event_out_of_its_range(
        self, page: Page, tmp_path: Path
    ) -> None:
        loaded = sparse_run()
        open_view(page, tmp_path, loaded)
        page.evaluate("() => memtapeViewer.seek(10)")
        page.get_by_role("button", name="zoom in around the current event (+)").click()
        page.get_by_role("button", name="zoom in around the current event (+)").click()
        length = len(loaded.session.run)
        page.keyboard.press("End")
        first, last = strip_range(page)
        assert first <= length <= last
        assert last - first + 1 < length
