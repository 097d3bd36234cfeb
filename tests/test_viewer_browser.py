"""The viewer in a real browser (headless Chromium): what the page shows and does.

The page folds the run's deltas itself (``viewer.js``); the first tests prove
its state equals Python's ``show --json`` data at every event, for the seed
scenarios and for a long mixed run with a fork. The others drive the page as
a user would and read the seed's figures off it.
"""

import math
import random
import urllib.request
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import attrs
import orjson
import pytest

from memtape.core.commands import (
    AddTurn,
    AdvanceClock,
    Command,
    Query,
    ReadFact,
    WriteFact,
)
from memtape.core.events import (
    CompactionTriggered,
    Evicted,
    FactRead,
    Queried,
    Superseded,
    TurnAdded,
)
from memtape.policies.session import Policies, Session
from memtape.policies.window.tiered import TieredCompaction
from memtape.policies.zoo import COMPACTION, FORGETTING
from memtape.projections.view import view_data
from memtape.runs.files import LoadedRun
from memtape.scenarios import load_scenario
from memtape.scenarios.probes import Probe
from memtape.viewer import payload
from memtape.viewer.page import view_page
from memtape.viewer.payload import run_payload
from memtape.viewer.serve import TOKEN_HEADER, LiveRun, live_source, make_server
from tests.agent_session import TURNS
from tests.mixed import mixed_commands, mixed_live
from tests.playing import own_settings
from tests.serving import serving

# Each drives a headless Chromium: the slow job runs them (`make test-slow`, which CI runs
# with MEMTAPE_REQUIRE_BROWSER=1), so that `make test` stays within minutes on a busy machine.
pytestmark = pytest.mark.slow

Page = Any
Shot = Callable[[str], Path]

RED = "rgb(192, 57, 43)"
"""The meter's colour over budget (viewer.css)."""

GREEN = "rgb(46, 139, 87)"
"""The meter's colour within budget."""


def simulated(name: str, *settings: str) -> LoadedRun:
    """A shipped scenario run in memory, with parameters changed by ``settings``."""
    scenario = load_scenario(name)
    if settings:
        scenario = attrs.evolve(scenario, policies=scenario.policies.with_settings(settings))
    session = Session(scenario.policies)
    session.execute_all(scenario.steps)
    return LoadedRun(session, scenario.name, Path(name))


def mixed_run(count: int = 200, seed: int = 5) -> LoadedRun:
    """A long run on all three axes, forked at its middle with another budget and half-life."""
    policies = load_scenario("sleep-pass").policies
    session = Session(attrs.evolve(policies, compaction=TieredCompaction(45, 3)))
    for command in mixed_commands(session, count, seed):
        session.execute(command)
    middle = session.run.batch(session.run.steps // 2)[1]
    forked = session.fork(middle, ["compaction.budget=70", "forgetting.half_life=2.5"])
    return LoadedRun(forked, "mixed", Path("mixed"))


def store_commands(session: Session, count: int, seed: int) -> Iterator[Command]:
    """Seeded writes (some on a key already held), reads, queries and clock moves."""
    rng = random.Random(seed)
    words = ("Dana", "email", "order", "refund", "phone", "contact", "fee")
    clock = 0.0
    for _ in range(count):
        draw = rng.random()
        store = session.state.store
        key = f"k{rng.randrange(5)}"
        if draw < 0.4 or not store.active:
            yield WriteFact(
                key, f"{key}: {' '.join(rng.choices(words, k=3))}", rng.randrange(101) / 100
            )
        elif draw < 0.55:
            yield ReadFact(id=rng.choice(list(store.active)))
        elif draw < 0.8:
            text = " ".join(rng.choices(words, k=rng.randrange(3)))
            yield Query(text, rng.choice(("", key)), rng.randint(1, 3))
        else:
            clock += rng.choice((0.5, 1.0, 3.0))
            yield AdvanceClock(clock)


def forgetting_run(name: str, supersession: str) -> LoadedRun:
    """A store-only run under forgetting policy ``name`` (capacity 3, other parameters
    defaulted) with the supersession rule given."""
    params = {"policy": name, "capacity": 3, "supersession": supersession}
    session = Session(Policies.from_params({"forgetting": params}))
    for command in store_commands(session, 60, seed=11):
        session.execute(command)
    return LoadedRun(session, f"{name} {supersession}", Path(name))


def open_view(page: Page, folder: Path, *runs: LoadedRun) -> None:
    """Write the static page for ``runs`` and open it from disk."""
    path = folder / "view.html"
    path.write_text(view_page(runs), encoding="utf-8")
    page.goto(path.as_uri())
    page.wait_for_function("window.memtapeViewer !== undefined")


def page_views(page: Page, index: int = 0) -> list[Any]:
    """The page's projected state at every event of run ``index``.

    The page hands them over as one JSON text: Playwright's own transfer of so many
    objects takes most of a browser test's time (3.4 s against 0.2 s for 318 events).
    A value JSON cannot hold (NaN, an infinity) arrives as null and fails the comparison.
    """
    return list(
        orjson.loads(
            page.evaluate(
                "(i) => JSON.stringify(Array.from({length: memtapeViewer.length(i) + 1},"
                " (_, at) => memtapeViewer.view(i, at)))",
                index,
            )
        )
    )


def python_views(loaded: LoadedRun) -> list[Any]:
    """``show --json``'s data at every event."""
    session = loaded.session
    run = session.run
    return [view_data(run.state_at(at), at, session.policies_at(at)) for at in range(len(run) + 1)]


ULP_SCORES = frozenset({"memorybank"})
"""Forgetting policies whose score the page computes with ``Math.exp``, which differs from
libm's ``exp`` in the last bit for some inputs: their ranking's scores may be one ulp off
Python's. Nothing else may differ, the ranking's order included."""


def one_ulp_apart(python: float, browser: float) -> bool:
    """Whether ``browser`` is ``python`` or one of its two neighbouring floats."""
    return browser in (python, math.nextafter(python, math.inf), math.nextafter(python, -math.inf))


def forgiven(python: Any, browser: Any, forgetting: str | None) -> Any:
    """The page's view with each ranking score one ulp off Python's (under a policy in
    ``ULP_SCORES``, for the same fact at the same rank) set to Python's; else as it is."""
    if forgetting not in ULP_SCORES or python["store"] is None or browser["store"] is None:
        return browser
    theirs = python["store"]["ranking"]
    rows = []
    for rank, row in enumerate(browser["store"]["ranking"]):
        expected = theirs[rank] if rank < len(theirs) else None
        if (
            expected is not None
            and expected["id"] == row["id"]
            and one_ulp_apart(expected["score"], row["score"])
        ):
            rows.append({**row, "score": expected["score"]})
        else:
            rows.append(row)
    return {**browser, "store": {**browser["store"], "ranking": rows}}


def assert_same_views(loaded: LoadedRun, actual: list[Any]) -> None:
    """The page's view equals ``show --json``'s at every event (see ``ULP_SCORES``)."""
    expected = python_views(loaded)
    assert len(expected) == len(actual)
    for at, (python, browser) in enumerate(zip(expected, actual, strict=True)):
        forgetting = loaded.session.policies_at(at).forgetting
        name = None if forgetting is None else forgetting.name
        assert python == forgiven(python, browser, name), (
            f"the page differs from show --json after event {at}"
        )


def position_of(loaded: LoadedRun, found: Callable[[Any], bool], nth: int = 1) -> int:
    """The position right after the ``nth`` event for which ``found`` holds."""
    hits = [at for at, event in enumerate(loaded.session.run.events, start=1) if found(event)]
    return hits[nth - 1]


def meter(page: Page, panel: int = 0) -> tuple[str, str]:
    """The meter's text and the colour of its bar, in panel ``panel``."""
    root = page.locator(".panel").nth(panel)
    text = root.locator(".meter-text").inner_text()
    colour = root.locator(".meter-fill").evaluate("(bar) => getComputedStyle(bar).backgroundColor")
    return text, colour


def texts(page: Page, selector: str) -> list[str]:
    return [text.strip() for text in page.locator(selector).all_inner_texts()]


def ranking(page: Page) -> list[tuple[str, str]]:
    rows = page.locator("table.ranking tr").all()[1:]
    return [
        (row.locator("td.key").inner_text(), row.locator("td.score").inner_text()) for row in rows
    ]


def seek_end(page: Page) -> None:
    page.focus("#slider")
    page.keyboard.press("End")


def jump_to(page: Page, at: int) -> None:
    """Click the event at position ``at`` in the event list."""
    page.click(f'li.event[data-at="{at}"]')


class TestSameAsShowJson:
    @pytest.mark.parametrize("name", ["refund-desk", "dana-facts", "sleep-pass"])
    def test_every_event_of_each_seed_scenario(self, page: Page, tmp_path: Path, name: str) -> None:
        loaded = simulated(name)
        open_view(page, tmp_path, loaded)
        assert_same_views(loaded, page_views(page))

    @pytest.mark.parametrize(
        "name", ["session-notes", "dana-moves", "order-recall", "core-memory", "sleep-time-blocks"]
    )
    def test_every_event_of_each_memory_family_example(
        self, page: Page, tmp_path: Path, name: str
    ) -> None:
        """Facts that expire (listed once expired, with their reasons), facts with a valid
        time, closed and returned by queries of the past, and memory blocks edited."""
        examples = Path(__file__).parent.parent / "examples"
        loaded = simulated(str(examples / f"{name}.toml"))
        open_view(page, tmp_path, loaded)
        assert_same_views(loaded, page_views(page))

    def test_every_event_of_a_long_mixed_forked_run(self, page: Page, tmp_path: Path) -> None:
        loaded = mixed_run()
        open_view(page, tmp_path, loaded)
        views = page_views(page)
        assert_same_views(loaded, views)
        # The run exercised every part the page folds.
        end = views[-1]
        for part in (end["window"]["dropped"], end["window"]["cold"]["turns"]):
            assert part
        for part in (end["store"]["retired"], end["store"]["evicted"]):
            assert part
        for part in (end["semantic"], end["procedural"]):
            assert part
        assert 70 == end["window"]["budget"]

    def test_a_ranking_the_page_cannot_score_is_shipped_and_shown(
        self, page: Page, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(payload, "PAGE_SCORERS", frozenset())
        loaded = mixed_run(120, seed=9)
        open_view(page, tmp_path, loaded)
        assert_same_views(loaded, page_views(page))

    @pytest.mark.parametrize("name", sorted(COMPACTION))
    def test_every_event_of_refund_desk_under_each_compaction_policy(
        self, page: Page, tmp_path: Path, name: str
    ) -> None:
        loaded = simulated("refund-desk", f"compaction.policy={name}", *own_settings(name))
        open_view(page, tmp_path, loaded)
        views = page_views(page)
        assert_same_views(loaded, views)
        assert name in page.locator(".where").inner_text()

    @pytest.mark.parametrize(
        "name", ["clear-tool-results", "none", "rolling-summary", "sliding-window", "tiered"]
    )
    def test_every_event_of_a_session_of_tool_calls_under_each_compaction_policy(
        self, page: Page, tmp_path: Path, name: str
    ) -> None:
        """Calls, answers, a pinned prompt and, under clear-tool-results, results cleared in
        place (the page reads each as its placeholder from the clearing on)."""
        table: dict[str, Any] = {"policy": name, "budget": 60}
        if name == "clear-tool-results":
            table["keep"] = 1
        session = Session(Policies.from_params({"compaction": table}))
        session.execute_all(TURNS[:150])
        loaded = LoadedRun(session, "tool calls", Path("tool-calls"))
        open_view(page, tmp_path, loaded)
        assert_same_views(loaded, page_views(page))
        cleared = [
            e for e in session.run.events if isinstance(e, CompactionTriggered) and e.cleared
        ]
        assert (name == "clear-tool-results") == bool(cleared)

    @pytest.mark.parametrize("supersession", ["key", "add-only"])
    @pytest.mark.parametrize("name", sorted(FORGETTING))
    def test_every_event_under_each_forgetting_policy(
        self, page: Page, tmp_path: Path, name: str, supersession: str
    ) -> None:
        loaded = forgetting_run(name, supersession)
        events = loaded.session.run.events
        # The run exercised what the page folds: queries (returning facts), evictions,
        # and supersessions by key, or, add-only, several active facts on one key.
        assert any(isinstance(e, Queried) and e.results for e in events)
        assert any(isinstance(e, Evicted) for e in events)
        retired = any(isinstance(e, Superseded) for e in events)
        assert retired == (supersession == "key")
        open_view(page, tmp_path, loaded)
        views = page_views(page)
        assert_same_views(loaded, views)
        if supersession == "add-only":
            assert any(
                len({r["key"] for r in v["store"]["ranking"]}) < len(v["store"]["ranking"])
                for v in views
            )
        factor_names = set(views[-1]["store"]["ranking"][0]["factors"])
        header = page.locator("table.ranking tr").nth(1).locator("td.factors").inner_text()
        assert all(factor in header for factor in factor_names)
        # Only a score that is the product of its factors is written as one.
        assert ("×" in header) == (name == "importance-recency-access")
        assert name in page.locator(".store h3").first.inner_text()

    @pytest.mark.parametrize("shipped", [True, False])
    def test_a_fork_from_a_ranking_the_page_scores_to_memorybank(
        self, page: Page, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shipped: bool
    ) -> None:
        if shipped:
            monkeypatch.setattr(payload, "PAGE_SCORERS", payload.PAGE_SCORERS - {"memorybank"})
        session = simulated(str(Path(__file__).parent / "fixtures" / "dana-queries.toml")).session
        forked = session.fork(session.run.batch(3)[1], ["forgetting.policy=memorybank"])
        loaded = LoadedRun(forked, "what-if", Path("what-if"))
        open_view(page, tmp_path, loaded)
        assert_same_views(loaded, page_views(page))

    def test_both_runs_of_a_comparison(self, page: Page, tmp_path: Path) -> None:
        first, second = simulated("refund-desk"), simulated("refund-desk", "compaction.budget=60")
        open_view(page, tmp_path, first, second)
        assert_same_views(first, page_views(page, 0))
        assert_same_views(second, page_views(page, 1))


class TestMemoryBankInThePage:
    """The page scores memorybank with ``Math.exp``: one ulp from libm's ``exp`` at most."""

    EDGES = (
        0.0,
        -0.0,
        -5e-324,
        -1e-300,
        -1e-17,
        -1e-8,
        -0.5,
        -1.0,
        -2.0 / 3.0,
        -1.5,
        -20.25,
        -708.39,
        -708.4,
        -709.78,
        -744.44,
        -745.13,
        -745.14,
        -745.2,
        -1000.0,
        -math.inf,
    )
    """Zero, tiny inputs, and around the subnormal results and the underflow to zero."""

    def test_math_exp_is_within_one_ulp_of_libm_on_a_large_sample(self, page: Page) -> None:
        rng = random.Random(20261129)
        # What memorybank computes, -elapsed / strength (clock moves by halves, reads up to
        # 40), and uniform inputs down to underflow.
        retentions = [-(rng.randrange(4000) / 2) / (1.0 + rng.randrange(41)) for _ in range(20_000)]
        uniform = [-rng.uniform(0.0, 746.0) for _ in range(20_000)]
        inputs = [*self.EDGES, *retentions, *uniform]
        page.set_content("<p></p>")
        browser = page.evaluate("(xs) => xs.map((x) => Math.exp(x))", inputs)
        off = [x for x, y in zip(inputs, browser, strict=True) if y != math.exp(x)]
        far = [x for x, y in zip(inputs, browser, strict=True) if not one_ulp_apart(math.exp(x), y)]
        assert [] == far
        # Edge cases agree exactly; so does nearly every input (V8's differs in the last bit
        # for some, which is why the browser tests forgive one ulp in memorybank's scores).
        assert not set(off) & set(self.EDGES)
        assert len(off) < len(inputs) / 4

    def test_the_comparison_forgives_one_ulp_in_a_memorybank_score_and_nothing_else(
        self,
    ) -> None:
        score = math.exp(-1.5)
        row = {"id": 1, "key": "a", "strength": 1.0, "elapsed": 1.5, "score": score}
        other = {"id": 2, "key": "b", "strength": 2.0, "elapsed": 1.0, "score": math.exp(-0.5)}
        python = {"at": 3, "store": {"capacity": 2, "ranking": [other, row]}}

        def browser(**change: Any) -> Any:
            return {"at": 3, "store": {"capacity": 2, "ranking": [other, {**row, **change}]}}

        up = math.nextafter(score, 1.0)
        assert python == forgiven(python, browser(score=up), "memorybank")
        assert python == forgiven(python, browser(), "memorybank")
        assert python != forgiven(python, browser(score=math.nextafter(up, 1.0)), "memorybank")
        assert python != forgiven(python, browser(score=up), "lru")
        assert python != forgiven(python, browser(elapsed=math.nextafter(1.5, 2)), "memorybank")
        swapped = {"at": 3, "store": {"capacity": 2, "ranking": [row, other]}}
        assert python != forgiven(python, swapped, "memorybank")


class TestRefundDesk:
    def test_the_meter_goes_red_over_budget_at_turn_4_then_back_under(
        self, page: Page, tmp_path: Path, screenshot: Shot
    ) -> None:
        loaded = simulated("refund-desk")
        turn_4 = position_of(loaded, lambda e: isinstance(e, TurnAdded) and e.turn == 4)
        open_view(page, tmp_path, loaded)
        jump_to(page, 0)
        for _ in range(turn_4):
            page.keyboard.press("ArrowRight")
        assert ("41/40 tokens · over budget", RED) == meter(page)
        assert page.locator(".meter").first.evaluate("(m) => m.classList.contains('over')")
        screenshot("refund-desk-turn-4-over-budget")
        page.click("#forward")
        assert ("29/40 tokens · within budget", GREEN) == meter(page)
        screenshot("refund-desk-turn-4-compacted")
        page.click("#back")
        assert "41/40 tokens · over budget" == meter(page)[0]

    def test_the_tiers_at_the_end(self, page: Page, tmp_path: Path, screenshot: Shot) -> None:
        open_view(page, tmp_path, simulated("refund-desk"))
        jump_to(page, 0)
        seek_end(page)
        assert_end_of_refund_desk(page)
        screenshot("refund-desk-end")

    def test_the_diff_from_a_pinned_point(
        self, page: Page, tmp_path: Path, screenshot: Shot
    ) -> None:
        open_view(page, tmp_path, simulated("refund-desk"))
        jump_to(page, 0)
        page.click("#pin")
        seek_end(page)
        lines = texts(page, "#diff-body li")
        assert "window 0 → 32 tokens" in lines
        assert "turn 1: not arrived → dropped" in lines
        assert "turn 2: not arrived → cold" in lines
        assert "turn 8: not arrived → warm" in lines
        assert "turn 10: not arrived → hot" in lines
        screenshot("refund-desk-diff")

    def test_two_policies_step_together(self, page: Page, tmp_path: Path, screenshot: Shot) -> None:
        open_view(
            page,
            tmp_path,
            simulated("refund-desk"),
            simulated("refund-desk", "compaction.budget=60"),
        )
        jump_to(page, 0)
        for _ in range(4):
            page.keyboard.press("ArrowRight")
        assert ("29/40 tokens · within budget", GREEN) == meter(page, 0)
        assert ("41/60 tokens · within budget", GREEN) == meter(page, 1)
        assert ["step 4 of 10", "step 4 of 10"] == [
            text.split(" · ")[1] for text in texts(page, ".where")
        ]
        assert ["budget 40", "budget 60"] == [
            text.split(" · ")[3] for text in texts(page, ".where")
        ]
        screenshot("refund-desk-compare-budget-60")


def assert_end_of_refund_desk(page: Page) -> None:
    assert "32/40 tokens · within budget" == meter(page)[0]
    assert "[2 earlier turns summarized]" == page.locator(".tier.cold .gist").inner_text()
    assert "COLD · 2 turns · 4 tokens" == page.locator(".tier.cold h3").inner_text()
    warm = texts(page, ".tier.warm li")
    assert 1 == len(warm)
    assert warm[0].startswith("turn 8 (9): calculator:")
    hot = texts(page, ".tier.hot li")
    assert ["turn 9 user (9)", "turn 10 tool (10, salient)"] == [h.split(":")[0] for h in hot]
    assert ["turn 1", "turn 3", "turn 4", "turn 6", "turn 7"] == texts(page, "s.dropped-turn")
    decoration = page.locator("s.dropped-turn").first.evaluate(
        "(s) => getComputedStyle(s).textDecorationLine"
    )
    assert "line-through" == decoration


class TestDanaFacts:
    def test_the_ranking_at_t6_then_at_the_end(
        self, page: Page, tmp_path: Path, screenshot: Shot
    ) -> None:
        loaded = simulated("dana-facts")
        second_read = position_of(loaded, lambda e: isinstance(e, FactRead), nth=2)
        open_view(page, tmp_path, loaded)
        jump_to(page, second_read)
        assert "t=6" in page.locator(".where").inner_text()
        expected = [("name", "0.3818"), ("order", "0.2475"), ("contact", "0.2121")]
        assert [*expected, ("chitchat", "0.0707")] == ranking(page)
        factors = page.locator("table.ranking tr").nth(1).locator("td.factors").inner_text()
        assert "importance 0.9000 × recency 0.3536 × access 1.2000 = 0.3818" == factors
        screenshot("dana-facts-t6")
        seek_end(page)
        final = [
            ("contact", "0.6000"),
            ("name", "0.3818"),
            ("order", "0.2475"),
            ("promo", "0.1500"),
        ]
        assert final == ranking(page)
        retired, evicted = texts(page, "ul.retired li"), texts(page, "ul.evicted li")
        assert 1 == len(retired)
        assert retired[0].startswith("contact: ")
        assert "email" in retired[0]
        assert retired[0].endswith("superseded by fact 5")
        assert 1 == len(evicted)
        assert evicted[0].startswith("chitchat: ")
        assert evicted[0].endswith("over capacity, score 0.0707")
        screenshot("dana-facts-end")


class TestQueries:
    def test_the_event_list_shows_what_a_query_asked_and_found(
        self, page: Page, tmp_path: Path, screenshot: Shot
    ) -> None:
        loaded = simulated(str(Path(__file__).parent / "fixtures" / "dana-queries.toml"))
        run = loaded.session.run
        queries = [(at, e) for at, e in enumerate(run.events, 1) if isinstance(e, Queried)]
        assert 2 == len(queries)
        open_view(page, tmp_path, loaded)
        for at, event in queries:
            jump_to(page, at)
            row = page.locator("li.event.current .query")
            asked = row.locator(".asked").inner_text()
            assert asked.startswith("Queried")
            assert f"expecting '{event.key}'" in asked
            assert asked.endswith(f"top {event.k}")
            facts = run.state.store.facts
            expected = [
                f"fact {i} '{facts[i].key}' {score:.4f}"
                + (" ✓ expected" if facts[i].key == event.key else "")
                for i, score in zip(event.results, event.scores, strict=True)
            ]
            assert expected == texts(page, "li.event.current .result")
            hit = any(facts[i].key == event.key for i in event.results)
            assert (0 if hit else 1) == row.locator(".miss").count()
        screenshot("dana-queries-query")
        # Each query's results were read once more: the ranking counts them.
        assert_same_views(loaded, page_views(page))


class TestUserDataIsText:
    def test_a_script_in_a_turn_shows_as_text_and_runs_nothing(
        self, page: Page, tmp_path: Path, screenshot: Shot
    ) -> None:
        attacks = [
            "<script>window.__pwned = 1</script>",
            "</script><script>window.__pwned = 2</script>",
            '<img src=x onerror="window.__pwned = 3">',
            "<!-- \u2028 \u2029 & &amp; -->",
        ]
        scenario = tmp_path / "attack.toml"
        steps = "".join(f"[[step]]\nturn = 'user'\ntext = '''{a}'''\n" for a in attacks)
        scenario.write_text(
            "[compaction]\npolicy = 'tiered'\nbudget = 400\n[forgetting]\n"
            "policy = 'importance-recency-access'\ncapacity = 4\n"
            f"{steps}[[step]]\nwrite = '</script>'\ntext = '<b>bold</b>'\nimportance = 0.5\n",
            encoding="utf-8",
        )
        scenario_run = load_scenario(str(scenario))
        session = Session(scenario_run.policies)
        session.execute_all(scenario_run.steps)
        open_view(page, tmp_path, LoadedRun(session, "<script>alert(1)</script>", scenario))
        assert page.evaluate("window.__pwned === undefined")
        assert 0 == page.locator(".panel script, .panel img, .panel b").count()
        assert [f"turn {n} user" for n in range(1, 5)] == [
            h.split(" (")[0] for h in texts(page, ".tier.hot li")
        ]
        shown = [h.split("): ", 1)[1] for h in texts(page, ".tier.hot li")]
        assert attacks[:3] == shown[:3]
        assert [("</script>", "0.5000")] == ranking(page)
        assert "<script>alert(1)</script>" == page.locator(".run-name").inner_text()
        screenshot("script-in-a-turn")

    def test_an_escape_sequence_shows_as_its_escape_and_the_data_stays_exact(
        self, page: Page, tmp_path: Path
    ) -> None:
        evil = "a\x1b]0;title\x07\x1b[2J\r\x9b31m\u202eevil\u202c b"
        session = Session(Policies.from_params({"compaction": {"policy": "tiered", "budget": 400}}))
        session.execute(AddTurn("user", evil))
        loaded = LoadedRun(session, f"name{evil}", Path("evil"))
        open_view(page, tmp_path, loaded)
        shown = "a\\x1b]0;title\\x07\\x1b[2J\\r\\x9b31m\\u202eevil\\u202c b"
        assert (shown, f"name{shown}") == (
            texts(page, ".tier.hot li")[0].split("): ", 1)[1],
            page.locator(".run-name").inner_text(),
        )
        assert_same_views(loaded, page_views(page))


@attrs.frozen
class Served:
    """``memtape serve`` in a thread: the URL it prints (with the token), its origin, its
    token, and the session it drives."""

    url: str
    origin: str
    token: str
    run: LiveRun


@pytest.fixture
def served(request: pytest.FixtureRequest) -> Iterator[Served]:
    """``memtape serve`` on the session the test names: a scenario, or ``mixed`` (a seeded
    session on all three axes)."""
    live = mixed_live(60, seed=5) if request.param == "mixed" else live_source(request.param)
    with serving(make_server(live)) as server:
        yield Served(server.url, server.origin, server.token, live)


@pytest.fixture
def violations() -> list[str]:
    """What the browser reported refusing under a page's Content-Security-Policy."""
    return []


def enforcing(browser: Any, violations: list[str]) -> tuple[Any, Page, list[str]]:
    """A fresh context and page that enforce the pages' policies; the page's script errors,
    and its policy violations collected in ``violations``."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))

    def reported(message: Any) -> None:
        if "Content Security Policy" in message.text:
            violations.append(message.text)

    opened.on("console", reported)
    return context, opened, errors


class UnderThePolicy:
    """Tests of the served page as a browser enforces its Content-Security-Policy (the
    ``page`` fixture of conftest bypasses it): a script error or a violation fails them."""

    @pytest.fixture(name="page")
    def enforcing_page(self, browser: Any, violations: list[str]) -> Iterator[Page]:
        """A fresh page that enforces the policy."""
        context, opened, errors = enforcing(browser, violations)
        yield opened
        context.close()
        assert [] == errors
        assert [] == violations


def answered(page: Page, click: str) -> None:
    """Click, then wait until the page has drawn the server's answer."""
    before = int(page.evaluate("document.body.dataset.answers || 0"))
    page.click(click)
    # A function, not an expression: under the served page's policy a string is not evaluated.
    page.wait_for_function(
        "(before) => Number(document.body.dataset.answers || 0) > before", arg=before
    )


def click_next(page: Page) -> None:
    answered(page, "#next")


def submit(page: Page, form: str, fields: dict[str, str]) -> None:
    for name, value in fields.items():
        page.fill(f"{form} [name={name}]", value)
    answered(page, f"{form} button[type=submit]")


class TestServe(UnderThePolicy):
    @pytest.mark.parametrize("served", ["refund-desk"], indirect=True)
    def test_add_next_turn_ten_times(self, page: Page, served: Served, screenshot: Shot) -> None:
        page.goto(served.url)
        assert "Add next turn" == page.locator("#next").inner_text()
        for _ in range(4):
            click_next(page)
        assert ("29/40 tokens · within budget", GREEN) == meter(page)
        page.click("#back")
        assert ("41/40 tokens · over budget", RED) == meter(page)
        screenshot("serve-refund-desk-turn-4")
        for _ in range(6):
            click_next(page)
        assert_end_of_refund_desk(page)
        assert page.locator("#next").is_disabled()
        screenshot("serve-refund-desk-end")

    @pytest.mark.parametrize("served", ["dana-facts"], indirect=True)
    def test_forms_send_commands_and_a_refused_one_changes_nothing(
        self, page: Page, served: Served, screenshot: Shot
    ) -> None:
        page.goto(served.url)
        submit(
            page,
            "#write-form",
            {"key": "pet", "text": "Dana has a <i>cat</i>", "importance": "0.8"},
        )
        assert [("pet", "0.8000")] == ranking(page)
        submit(page, "#advance-form", {"to": "4"})
        assert [("pet", "0.4000")] == ranking(page)
        submit(page, "#read-form", {"key": "pet"})
        assert [("pet", "0.4400")] == ranking(page)
        where = page.locator(".where").inner_text()
        submit(page, "#read-form", {"key": "nobody"})
        error = page.locator("#live-error").inner_text()
        assert "cannot read 'nobody': no active fact has that key" == error
        submit(page, "#advance-form", {"to": "1"})
        error = page.locator("#live-error").inner_text()
        assert "the clock cannot move backwards, from t=4 to t=1" == error
        assert where == page.locator(".where").inner_text()
        screenshot("serve-dana-facts-refused")
        click_next(page)
        assert "" == page.locator("#live-error").inner_text()
        assert "name" in [key for key, _ in ranking(page)]

    @pytest.mark.parametrize("served", ["dana-facts"], indirect=True)
    def test_the_query_form_sends_a_query_and_a_refused_one_says_why(
        self, page: Page, served: Served, screenshot: Shot
    ) -> None:
        page.goto(served.url)
        for _ in range(4):
            click_next(page)
        where = page.locator(".where").inner_text()
        submit(page, "#query-form", {"text": "", "key": "name", "k": "0"})
        assert "a query's k must be an integer >= 1, got 0" == (
            page.locator("#live-error").inner_text()
        )
        assert where == page.locator(".where").inner_text()
        submit(page, "#query-form", {"text": "how to reach Dana", "key": "contact", "k": "2"})
        assert "" == page.locator("#live-error").inner_text()
        asked = page.locator("li.event.current .asked").inner_text()
        assert "Queried 'how to reach Dana' · expecting 'contact' · top 2" == asked
        assert 2 == page.locator("li.event.current .result").count()
        screenshot("serve-dana-facts-query")

    @pytest.mark.parametrize("served", ["refund-desk"], indirect=True)
    def test_the_turn_form_adds_a_turn_shown_as_text(self, page: Page, served: Served) -> None:
        page.goto(served.url)
        page.select_option("#turn-form [name=role]", "tool")
        submit(page, "#turn-form", {"text": "<script>window.__pwned = 1</script> ok"})
        assert "turn 1 tool (5, salient): <script>window.__pwned = 1</script> ok" == (
            page.locator(".tier.hot li").inner_text()
        )
        assert page.evaluate("window.__pwned === undefined")
        assert "Add next turn" == page.locator("#next").inner_text()

    @pytest.mark.parametrize("served", ["sleep-pass"], indirect=True)
    def test_the_episode_and_consolidate_forms(self, page: Page, served: Served) -> None:
        page.goto(served.url)
        submit(page, "#episode-form", {"text": "The user said their name is Ada."})
        assert ["1: The user said their name is Ada."] == texts(page, ".memory ul >> nth=0 >> li")
        submit(page, "#consolidate-form", {})
        assert [] == texts(page, ".memory ul >> nth=0 >> li")
        assert texts(page, ".memory ul >> nth=1 >> li")[0].startswith("user.name: user.name = Ada")
        assert [("user.name", "0.9000")] == ranking(page)


class TestServeAppends(UnderThePolicy):
    @pytest.mark.parametrize("served", ["refund-desk", "mixed"], indirect=True)
    def test_each_click_fetches_what_it_added_and_the_page_holds_the_whole_run(
        self, page: Page, served: Served
    ) -> None:
        live = served.run
        posted: list[tuple[str, str | None]] = []

        def sent(request: Any) -> None:
            if request.method == "POST":
                posted.append((request.url, request.headers.get(TOKEN_HEADER.lower())))

        page.on("request", sent)
        page.goto(served.url)
        clicks = len(live.upcoming)
        for _ in range(clicks):
            click_next(page)
        assert page.locator("#next").is_disabled()
        session = live.session
        probes = [Probe(text, start) for text, start in live.built.probes]
        built = run_payload(session.run, session.policies_at, live.name, probes)
        whole = orjson.loads(orjson.dumps(built))
        assert whole == page.evaluate("memtapeViewer.payload(0)")
        # Every click asked only for what came after the events the page held, with the token.
        assert [
            (f"{served.origin}/api/next?since={end}", served.token)
            for end in [0, *whole["ends"]][:clicks]
        ] == posted
        assert_same_views(LoadedRun(session, live.name, Path(live.name)), page_views(page))
        assert len(session.run) == page.evaluate("memtapeViewer.position()")

    @pytest.mark.parametrize("served", ["refund-desk"], indirect=True)
    def test_a_second_pages_commands_arrive_with_the_next_answer(
        self, page: Page, browser: Any, served: Served
    ) -> None:
        page.goto(served.url)
        # Another tab on the same server (its own context, as the page fixture's).
        others: list[str] = []
        context, other, errors = enforcing(browser, others)
        try:
            other.goto(served.url)
            click_next(other)
            click_next(other)
        finally:
            context.close()
        assert [] == errors
        assert [] == others
        click_next(page)
        session = served.run.session
        assert 3 == session.run.steps
        probes = load_scenario("refund-desk").probes
        built = run_payload(session.run, session.policies_at, served.run.name, probes)
        assert orjson.loads(orjson.dumps(built)) == page.evaluate("memtapeViewer.payload(0)")
        loaded = LoadedRun(session, served.run.name, Path(served.run.name))
        assert_same_views(loaded, page_views(page))

    @pytest.mark.parametrize("served", ["refund-desk"], indirect=True)
    def test_a_reload_keeps_the_token_and_the_session(self, page: Page, served: Served) -> None:
        page.goto(served.url)
        click_next(page)
        page.reload()
        page.wait_for_function("() => window.memtapeViewer !== undefined")
        assert served.url == page.url
        click_next(page)
        assert 2 == served.run.session.run.steps
        assert "" == page.locator("#live-error").inner_text()


ATTACKER_PAGE = """<!DOCTYPE html>
<html><body>
<iframe name="sink"></iframe>
<form id="json-form" method="POST" enctype="text/plain" target="sink" action="VICTIM/api/command">
<input name='{"kind": "turn", "role": "user", "text": "a form", "salient": null, "x": "' value='"}'>
</form>
<form id="next-form" method="POST" target="sink" action="VICTIM/api/next">
<input name="a" value="b">
</form>
<script>
const victim = "VICTIM";
const turn = JSON.stringify({kind: "turn", role: "user", text: "a fetch", salient: null});
const json = {"Content-Type": "application/json"};
const guessed = {"Content-Type": "application/json", "X-Memtape-Token": "guess"};
// Each attempt's outcome, as far as this page can see it.
async function attempt(path, init) {
  try {
    const answer = await fetch(victim + path, init);
    return `${answer.type} ${answer.status}`;
  } catch (error) {
    return `failed: ${error.name}`;
  }
}
function submitted(id) {
  return new Promise((done) => {
    const sink = document.querySelector("iframe");
    sink.addEventListener("load", () => done(`${id} loaded`), {once: true});
    setTimeout(() => done(`${id} timed out`), 5000);
    document.getElementById(id).submit();
  });
}
window.attack = async function () {
  const noCors = {method: "POST", mode: "no-cors"};
  const results = [
    await attempt("/api/command", Object.assign({body: turn}, noCors)),
    await attempt("/api/next", Object.assign({body: "{}"}, noCors)),
    await attempt("/api/command", Object.assign({headers: json, body: turn}, noCors)),
    await attempt("/api/next?since=0", Object.assign({headers: json, body: "{}"}, noCors)),
    await attempt("/api/next", {mode: "no-cors"}),
    await attempt("/api/command", {method: "POST", headers: guessed, body: turn}),
    await attempt("/api/data", {}),
    navigator.sendBeacon(victim + "/api/command", turn) ? "beacon sent" : "beacon refused",
  ];
  results.push(await submitted("json-form"));
  results.push(await submitted("next-form"));
  return results;
};
</script>
</body></html>
"""
"""A page on another origin that tries each way a page can send the server a command
(``VICTIM``: the server's origin, which a page can find by scanning ports; not its token)."""


@pytest.fixture
def attacker(served: Served) -> Iterator[str]:
    """A second loopback server, on another port, serving ``ATTACKER_PAGE``; its URL."""
    page = ATTACKER_PAGE.replace("VICTIM", served.origin).encode("utf-8")

    class Attacker(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet."""

    with serving(ThreadingHTTPServer(("127.0.0.1", 0), Attacker)) as server:
        yield f"http://127.0.0.1:{server.server_address[1]}/"


def data_with_token(served: Served) -> Any:
    """The served run's data, read as the page reads it."""
    request = urllib.request.Request(
        f"{served.origin}/api/data", headers={TOKEN_HEADER: served.token}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return orjson.loads(response.read())


class TestOtherOrigins(UnderThePolicy):
    @pytest.mark.parametrize("served", ["refund-desk"], indirect=True)
    def test_a_page_on_another_origin_cannot_drive_the_session(
        self, page: Page, served: Served, attacker: str, violations: list[str]
    ) -> None:
        sent: list[tuple[str, str]] = []
        answers: list[tuple[str, int]] = []

        def request(request: Any) -> None:
            if request.url.startswith(served.origin):
                sent.append((request.method, request.url[len(served.origin) :]))

        def response(response: Any) -> None:
            if response.url.startswith(served.origin):
                answers.append((response.url[len(served.origin) :], response.status))

        page.on("request", request)
        page.on("response", response)
        page.goto(attacker)
        outcomes = page.evaluate("() => window.attack()")
        # Nothing changed: no event, no recorded step sent.
        assert 0 == len(served.run.session.run)
        assert 0 == served.run.sent
        assert [] == data_with_token(served)["runs"][0]["frames"]
        # No fetch learns anything: a no-cors answer is blocked (Cross-Origin-Resource-Policy),
        # and a read or a command with a guessed token needs CORS, which is never granted.
        assert 7 * ["failed: TypeError"] == outcomes[:7]
        assert ["beacon sent", "json-form loaded", "next-form loaded"] == outcomes[7:]
        # Each was sent to the server; the forms' answers, the ones the browser reports, were
        # refusals, and their pages were not shown framed in the attacker's.
        expected = {
            ("POST", "/api/command"),
            ("POST", "/api/next"),
            ("POST", "/api/next?since=0"),
            ("GET", "/api/next"),
            ("GET", "/api/data"),
        }
        assert expected <= set(sent)
        assert {("/api/command", 403), ("/api/next", 403)} <= set(answers)
        assert {403} == {status for _, status in answers}
        assert 2 == len(violations)
        assert all("frame-ancestors 'none'" in violation for violation in violations)
        violations.clear()
        # The server's own page still drives it.
        page.goto(served.url)
        click_next(page)
        assert 1 == served.run.session.run.steps


class TestThePolicy(UnderThePolicy):
    @pytest.mark.parametrize("served", ["refund-desk"], indirect=True)
    def test_a_script_the_page_did_not_ship_does_not_run(
        self, page: Page, served: Served, violations: list[str]
    ) -> None:
        """The policy is enforced (and a violation is seen: the other tests' ``[]`` means
        something)."""
        page.goto(served.url)
        with page.expect_console_message(lambda m: "Content Security Policy" in m.text):
            page.evaluate(
                """() => {
                  const injected = document.createElement("script");
                  injected.textContent = "window.__injected = 1";
                  document.body.append(injected);
                }"""
            )
        assert page.evaluate("() => window.__injected === undefined")
        assert 1 == len(violations)
        assert "inline script" in violations[0]
        assert "script-src" in violations[0]
        violations.clear()


def step_texts(page: Page, run: int) -> list[str]:
    """The event list's entries of run ``run`` in compare mode, as ``at: what``."""
    items = page.locator(f'ol.run-events[data-run="{run}"] li.event').all()
    return [f"{i.get_attribute('data-at')}: {i.locator('.what').inner_text()}" for i in items]


class TestCompareEvents:
    def test_both_runs_events_are_listed_by_step_and_the_seconds_are_clickable(
        self, page: Page, tmp_path: Path, screenshot: Shot
    ) -> None:
        first, second = simulated("refund-desk"), simulated("refund-desk", "compaction.budget=60")
        open_view(page, tmp_path, first, second)
        jump_to(page, 0)
        for index, loaded in enumerate((first, second)):
            run = loaded.session.run
            data = run_payload(run, loaded.session.policies_at, loaded.scenario)
            listed = ["0: start: nothing has happened"] + [
                f"{at}: {row[1]}: {row[2]}" for at, row in enumerate(data["rows"], start=1)
            ]
            assert listed == step_texts(page, index)
        # The second run's last event: its number, in the first run, belongs to another
        # command, so the jump must be taken in the second run.
        runs = (first.session.run, second.session.run)
        target = len(runs[1])
        step = runs[1].step_of(target)
        assert runs[0].step_of(target) != step
        page.click(f'ol.run-events[data-run="1"] li.event[data-at="{target}"]')
        assert f"step {step} / 10" == page.locator("#position").inner_text()
        ends = [run.batch(step)[1] for run in runs]
        wheres = texts(page, ".where")
        for index, run in enumerate(runs):
            assert wheres[index].startswith(f"event {ends[index]} of {len(run)} · step {step}")
        assert str(step) == page.locator("li.step.current").get_attribute("data-step")
        current = [
            page.locator(f'ol.run-events[data-run="{i}"] li.event.current').get_attribute("data-at")
            for i in (0, 1)
        ]
        assert [str(end) for end in ends] == current
        screenshot("refund-desk-compare-events")


_VISIBLE_FORMS = """() => [...document.querySelectorAll('#live form')]
    .filter((form) => form.offsetParent !== null).map((form) => form.id)"""

_UNLABELLED = """() => [...document.querySelectorAll('#live input, #live select')]
    .filter((field) => field.labels.length === 0).map((field) => field.name)"""

_CLIPPED = """() => {
  const context = document.createElement('canvas').getContext('2d');
  return [...document.querySelectorAll('#live input[placeholder]')]
    .filter((input) => input.offsetParent !== null)
    .filter((input) => {
      const style = getComputedStyle(input);
      context.font = style.font;
      const padding = parseFloat(style.paddingLeft) + parseFloat(style.paddingRight);
      const room = input.clientWidth - padding;
      return context.measureText(input.placeholder).width > room;
    })
    .map((input) => input.placeholder);
}"""


class TestServeForms(UnderThePolicy):
    """The live page offers the forms of the scenario's axes, labelled, placeholders whole."""

    @pytest.mark.parametrize(
        ("served", "forms"),
        [
            ("refund-desk", ["turn-form", "advance-form"]),
            ("dana-facts", ["write-form", "read-form", "query-form", "advance-form"]),
            (
                "sleep-pass",
                [
                    "write-form",
                    "read-form",
                    "query-form",
                    "advance-form",
                    "episode-form",
                    "consolidate-form",
                ],
            ),
        ],
        indirect=["served"],
    )
    def test_only_the_forms_of_the_scenarios_axes(
        self, page: Page, served: Served, forms: list[str]
    ) -> None:
        page.goto(served.url)
        page.wait_for_selector("#live:not([hidden])")

        assert forms == page.evaluate(_VISIBLE_FORMS)

    @pytest.mark.parametrize("served", ["sleep-pass"], indirect=True)
    def test_every_field_has_a_label_and_no_placeholder_is_clipped(
        self, page: Page, served: Served, screenshot: Shot
    ) -> None:
        page.goto(served.url)
        page.wait_for_selector("#live:not([hidden])")

        assert [] == page.evaluate(_UNLABELLED)
        assert [] == page.evaluate(_CLIPPED)
        screenshot("serve-sleep-pass-forms")
