"""memtape.projections.text: the meter bar, the view and the timeline for a terminal."""

from typing import Any

import pytest

from memtape.core.commands import AdvanceClock, ReadFact, WriteFact
from memtape.core.events import TurnAdded
from memtape.policies.session import Policies, Session
from memtape.policies.store.memorybank import MemoryBank
from memtape.projections.meter import Meter
from memtape.projections.text import meter_line, paint, render_timeline, render_view
from memtape.projections.timeline import TimelineRow, timeline
from memtape.projections.view import view_data
from memtape.scenarios import SHIPPED, load_scenario

ESC = "\033["
RED = "\033[31m"
GREEN = "\033[32m"
RESET = "\033[0m"


def _session(name: str) -> Session:
    scenario = load_scenario(name)
    session = Session(scenario.policies)
    session.execute_all(scenario.steps)
    return session


@pytest.fixture(scope="module")
def sessions() -> dict[str, Session]:
    return {name: _session(name) for name in SHIPPED}


def _view(sessions: dict[str, Session], name: str, at: int | None = None) -> dict[str, Any]:
    run = sessions[name].run
    position = len(run) if at is None else at
    return view_data(run.state_at(position), position, sessions[name].policies)


def _view_lines(
    sessions: dict[str, Session], name: str, at: int | None = None, color: bool = False
) -> list[str]:
    return list(render_view(_view(sessions, name, at), color))


def _timeline_lines(sessions: dict[str, Session], name: str, color: bool = False) -> list[str]:
    session = sessions[name]
    return list(render_timeline(timeline(session.run, session.policies), color))


def _missing(text: str | list[str], *fragments: str) -> list[str]:
    whole = "\n".join(text) if isinstance(text, list) else text
    return [fragment for fragment in fragments if fragment not in whole]


class TestPaint:
    def test_without_color_the_text_is_unchanged(self) -> None:
        assert "hello" == paint("hello", "red", False)

    def test_with_color_the_text_is_wrapped_in_the_style_and_a_reset(self) -> None:
        assert f"{RED}hello{RESET}" == paint("hello", "red", True)


class TestMeterLine:
    @pytest.mark.parametrize("tokens", [41, 49, 100])
    def test_over_budget_is_marked(self, tokens: int) -> None:
        assert meter_line(Meter(tokens, 40), False).endswith(f" {tokens}/40 OVER BUDGET")

    @pytest.mark.parametrize("tokens", [0, 11, 39, 40])
    def test_at_or_under_budget_is_not_marked(self, tokens: int) -> None:
        line = meter_line(Meter(tokens, 40), False)

        assert (True, False) == (line.endswith(f" {tokens}/40"), "OVER" in line)

    def test_40_of_40_is_not_over(self) -> None:
        assert "OVER BUDGET" not in meter_line(Meter(40, 40), False)

    def test_the_bar_fills_in_proportion_to_the_budget(self) -> None:
        bar = meter_line(Meter(20, 40), False, width=40).split(" ")[0]

        assert "█" * 20 + "·" * 20 == bar

    def test_a_full_window_fills_the_bar(self) -> None:
        bar = meter_line(Meter(40, 40), False, width=40).split(" ")[0]

        assert "█" * 40 == bar

    def test_the_overflow_shows_past_the_bar(self) -> None:
        bar = meter_line(Meter(49, 40), False, width=40).split(" ")[0]

        assert "█" * 40 + "▶" * 9 == bar

    def test_the_overflow_is_capped_at_10(self) -> None:
        bar = meter_line(Meter(400, 40), False, width=40).split(" ")[0]

        assert "█" * 40 + "▶" * 10 == bar

    def test_the_width_scales_the_bar(self) -> None:
        bar = meter_line(Meter(20, 40), False, width=10).split(" ")[0]

        assert "█" * 5 + "·" * 5 == bar

    @pytest.mark.parametrize(("room", "budget"), [(46, 40), (52, 40), (66, 40), (60, 2000)])
    def test_a_room_narrows_the_bar_so_the_longest_meter_fits(self, room: int, budget: int) -> None:
        longest = meter_line(Meter(budget * 10, budget), False, room=room)

        assert len(longest) <= room

    def test_a_wide_room_keeps_the_bar_at_its_width(self) -> None:
        assert meter_line(Meter(20, 40), False) == meter_line(Meter(20, 40), False, room=200)

    def test_a_tiny_room_keeps_a_bar_of_10(self) -> None:
        bar = meter_line(Meter(20, 40), False, room=5).split(" ")[0]

        assert "█" * 5 + "·" * 5 == bar

    @pytest.mark.parametrize("tokens", [0, 40, 41])
    def test_no_color_codes_without_color(self, tokens: int) -> None:
        assert ESC not in meter_line(Meter(tokens, 40), False)

    def test_over_budget_is_red_with_color(self) -> None:
        line = meter_line(Meter(41, 40), True)

        assert (True, True) == (line.startswith(RED), line.endswith(RESET))

    def test_under_budget_is_green_with_color(self) -> None:
        assert meter_line(Meter(40, 40), True).startswith(GREEN)


class TestRenderView:
    def test_first_line_names_the_position_and_clock(self, sessions: dict[str, Session]) -> None:
        assert "at event 7 · clock t=6" == _view_lines(sessions, "dana-facts", 7)[0]

    def test_the_window_meter_line(self, sessions: dict[str, Session]) -> None:
        line = _view_lines(sessions, "refund-desk", 4)[1]

        assert (True, True) == (line.startswith("window  "), line.endswith("41/40 OVER BUDGET"))

    @pytest.mark.parametrize("width", [60, 80])
    def test_a_width_narrows_the_window_meter_to_fit(
        self, sessions: dict[str, Session], width: int
    ) -> None:
        over = list(render_view(_view(sessions, "refund-desk", 7), False, width))[1]

        assert (True, True) == (len(over) <= width, over.endswith(" 49/40 OVER BUDGET"))

    def test_the_final_window(self, sessions: dict[str, Session]) -> None:
        lines = _view_lines(sessions, "refund-desk")

        assert [] == _missing(
            lines,
            "32/40",
            "COLD  [2 earlier turns summarized]  (2 turns, 4 tokens)",
            "WARM  turn   8  calculator: $200.00 × 0.9 = $180.00 after the fee  (9)",
            "HOT   turn   9  user: Also, what warranty comes with the Globex earbuds?  (9)",
            "turn  10  tool: product search: Globex earbuds carry a 2-year limited warranty.  (10)",
            "dropped turns: 1, 3, 4, 6, 7",
        )

    def test_empty_tiers_say_so(self, sessions: dict[str, Session]) -> None:
        lines = _view_lines(sessions, "refund-desk", 0)

        assert [] == _missing(
            lines, "COLD  (empty)", "WARM  (empty)", "HOT   (empty)", "dropped turns: none"
        )

    def test_the_final_store(self, sessions: dict[str, Session]) -> None:
        lines = _view_lines(sessions, "dana-facts")

        assert [] == _missing(
            lines,
            "store  4 of 4 active facts, ranked at t=6",
            "0.6000",
            "0.3818",
            "0.2475",
            "0.1500",
            "retired  2 'contact': Dana prefers to be contacted by email.  "
            "(superseded by 5 at t=6)",
            "evicted  4 'chitchat': Dana mentioned that it is raining today.  "
            "(score 0.0707 at t=6)",
        )

    def test_the_ranking_after_the_reads_in_order(self, sessions: dict[str, Session]) -> None:
        lines = _view_lines(sessions, "dana-facts", 7)
        rows = lines[lines.index(next(x for x in lines if x.startswith("  id"))) + 1 :]

        expected = [("name", "0.3818"), ("order", "0.2475"), ("contact", "0.2121")]
        expected.append(("chitchat", "0.0707"))

        assert expected == [(row.split()[1], row.split()[2]) for row in rows]

    def test_the_ranking_header_names_the_factors(self, sessions: dict[str, Session]) -> None:
        header = next(x for x in _view_lines(sessions, "dana-facts") if x.startswith("  id"))

        assert ["id", "key", "score", "importance", "recency", "access", "reads", "text"] == (
            header.split()
        )

    def test_the_memory_before_the_pass(self, sessions: dict[str, Session]) -> None:
        lines = _view_lines(sessions, "sleep-pass", 4)

        assert [] == _missing(
            lines,
            "memory  4 episodes pending",
            "episode 1: The user asked whether a return after the window is allowed.",
            "episode 4: The user confirmed their name is Dana.",
        )

    def test_the_memory_after_the_pass(self, sessions: dict[str, Session]) -> None:
        lines = _view_lines(sessions, "sleep-pass")

        assert [] == _missing(
            lines,
            "memory  0 episodes pending",
            "semantic    user.name = Dana  (key user.name, importance 0.9, from episode 4)",
            "procedural  returns after the 30-day window: apply a 10% restocking fee  "
            "(from episode 2)",
        )

    @pytest.mark.parametrize(
        ("name", "absent"),
        [
            ("refund-desk", ("store", "memory")),
            ("dana-facts", ("window", "memory")),
            ("sleep-pass", ("window",)),
        ],
    )
    def test_unused_parts_are_not_shown(
        self, sessions: dict[str, Session], name: str, absent: tuple[str, ...]
    ) -> None:
        lines = _view_lines(sessions, name)

        assert [] == [line for line in lines if line.startswith(absent)]

    @pytest.mark.parametrize("name", SHIPPED)
    def test_no_color_codes_without_color(self, sessions: dict[str, Session], name: str) -> None:
        assert [] == [line for line in _view_lines(sessions, name) if ESC in line]

    def test_over_budget_is_red_with_color(self, sessions: dict[str, Session]) -> None:
        lines = _view_lines(sessions, "refund-desk", 4, color=True)

        assert RED in lines[1]


class TestRunTextsInOneLine:
    """A text from a run prints in its row's one line, each control as its escape."""

    def session(self) -> Session:
        session = Session(Policies.from_params({"forgetting": {"policy": "lru", "capacity": 3}}))
        session.execute(WriteFact("k\n\x1b[2J", "line one\nline two\r\x1b]0;t\x07", 0.5))
        return session

    def test_a_fact_row_in_show(self) -> None:
        session = self.session()
        lines = list(render_view(view_data(session.state, 1, session.policies)))
        expected = (
            "   1  k\\n\\x1b[2J    0.0000  0.0000          0  line one\\nline two\\r\\x1b]0;t\\x07"
        )
        assert (4, expected) == (len(lines), lines[3])

    def test_a_fact_row_in_the_timeline(self) -> None:
        session = self.session()
        lines = list(render_timeline(timeline(session.run, session.policies)))
        expected = (
            "    1  step    1  FactWritten         fact 1 written on 'k\\n\\x1b[2J', importance 0.5"
        )
        assert [expected] == lines


class TestRenderOtherPolicies:
    def test_a_memorybank_ranking_shows_strength_and_elapsed_beside_the_score(self) -> None:
        # Written at 0, read at 1 (S = 2), shown at 3: exp(-2 / 2) = 0.3679.
        session = Session(Policies(forgetting=MemoryBank(3)))
        session.execute_all(
            [WriteFact("a", "x", 0.5), AdvanceClock(1.0), ReadFact(key="a"), AdvanceClock(3.0)]
        )
        view = view_data(session.state, len(session.run), session.policies)

        lines = list(render_view(view))

        assert "  id  key           score   strength  elapsed  reads  text" == lines[2]
        assert lines[3].startswith("   1  a             0.3679  2.0000    2.0000")


class TestRenderTimeline:
    @pytest.mark.parametrize("name", SHIPPED)
    def test_one_line_per_event(self, sessions: dict[str, Session], name: str) -> None:
        assert len(sessions[name].run) == len(_timeline_lines(sessions, name))

    def test_a_line_has_position_step_type_meter_and_summary(
        self, sessions: dict[str, Session]
    ) -> None:
        line = _timeline_lines(sessions, "refund-desk")[3]

        assert ["4", "step", "4", "TurnAdded", "41/40"] == line.split()[:5]

    def test_the_meter_after_each_event(self, sessions: dict[str, Session]) -> None:
        lines = _timeline_lines(sessions, "refund-desk")
        expected = [11, 20, 29, 41, 29, 40, 49, 28, 39, 49, 39, 48, 37, 47, 32]

        assert [f"{n}/40" for n in expected] == [line.split()[4] for line in lines]

    def test_a_compaction_line_says_what_it_did(self, sessions: dict[str, Session]) -> None:
        line = _timeline_lines(sessions, "refund-desk")[14]

        assert [] == _missing(line, "CompactionTriggered", "32/40", "pushed cold 2, 5")

    def test_no_meter_without_a_compaction_policy(self, sessions: dict[str, Session]) -> None:
        lines = _timeline_lines(sessions, "dana-facts")

        assert [] == [line for line in lines if "/" in line.split()[4]]

    def test_the_eviction_line(self, sessions: dict[str, Session]) -> None:
        line = _timeline_lines(sessions, "dana-facts")[10]

        assert [] == _missing(line, "Evicted", "'chitchat'", "0.0707")

    @pytest.mark.parametrize("name", SHIPPED)
    def test_no_color_codes_without_color(self, sessions: dict[str, Session], name: str) -> None:
        assert [] == [line for line in _timeline_lines(sessions, name) if ESC in line]

    def test_over_budget_rows_are_red_and_others_green_with_color(
        self, sessions: dict[str, Session]
    ) -> None:
        lines = _timeline_lines(sessions, "refund-desk", color=True)

        assert [4, 7, 10, 12, 14] == [n for n, line in enumerate(lines, 1) if RED in line]

    def test_a_four_digit_budget_leaves_the_summary_its_column(self) -> None:
        rows = [
            TimelineRow(1, 1, TurnAdded(1, "user", "hi", 12, False), Meter(12, 2000), "turn 1 a"),
            TimelineRow(2, 2, TurnAdded(2, "user", "hi", 9, False), Meter(2021, 2000), "turn 2 b"),
        ]
        lines = list(render_timeline(rows))

        assert [line.index("turn ") for line in lines] == [lines[0].index("turn ")] * 2
        assert "  12/2000   turn 1 a" in lines[0]
        assert "2021/2000   turn 2 b" in lines[1]

    def test_an_episode_shows_its_text_whole(self, sessions: dict[str, Session]) -> None:
        """A terminal's width wraps the line (``memtape.projections.wrapping``), never cuts it."""
        session = sessions["sleep-pass"]
        line = list(render_timeline(timeline(session.run, session.policies)))[2]

        assert line.endswith(
            "episode 3 recorded: The user accepted the $180.00 refund on the $200 order."
        )
