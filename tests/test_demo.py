"""memtape.demo and ``memtape demo``: the three seed walkthroughs with the seed's figures."""

import re

import pytest

from memtape.cli import main
from memtape.demo import demo_lines

RED = "\033[31m"

TURN_LINE = re.compile(r"^turn\s+(\d+)\s+(\w+)\s+\S+\s+(\d+/\d+)( OVER BUDGET)?$")
COMPACT_LINE = re.compile(
    r"COMPACT: HOT keeps (.+) · WARM ← (.+) · dropped (.+) · pushed cold (.+) → (\d+/\d+)$"
)
RANKED_LINE = re.compile(r"^\s+(\d+)\. (\S+)\s+(\d\.\d\d) = ")

# turn: (role, the meter as it arrives, over budget)
METER_PER_TURN = {
    1: ("user", "11/40", False),
    2: ("tool", "20/40", False),
    3: ("user", "29/40", False),
    4: ("user", "41/40", True),
    5: ("tool", "40/40", False),
    6: ("user", "49/40", True),
    7: ("user", "39/40", False),
    8: ("tool", "49/40", True),
    9: ("user", "48/40", True),
    10: ("tool", "47/40", True),
}

# each compaction: (HOT keeps, WARM gets, dropped, pushed cold, the meter after)
COMPACTIONS = [
    ("3, 4", "2", "1", "none", "29/40"),
    ("5, 6", "none", "3, 4", "none", "28/40"),
    ("7, 8", "5", "6", "none", "39/40"),
    ("8, 9", "none", "7", "none", "37/40"),
    ("9, 10", "8", "none", "2, 5", "32/40"),
]

RULE = "returns after the 30-day window: apply a 10% restocking fee"


@pytest.fixture(scope="module")
def lines() -> list[str]:
    return list(demo_lines())


def _rankings(lines: list[str]) -> list[tuple[str, list[tuple[str, str]]]]:
    """Each ``ranking at t=...`` block: its title and its (key, score) rows."""
    blocks: list[tuple[str, list[tuple[str, str]]]] = []
    for line in lines:
        if line.startswith("ranking at "):
            blocks.append((line, []))
        elif blocks and (found := RANKED_LINE.match(line)):
            blocks[-1][1].append((found[2], found[3]))
    return blocks


def _having(lines: list[str], fragment: str) -> list[str]:
    return [line for line in lines if fragment in line]


class TestCompactionWalkthrough:
    def test_the_meter_per_turn(self, lines: list[str]) -> None:
        seen = {
            int(found[1]): (found[2], found[3], found[4] is not None)
            for line in lines
            if (found := TURN_LINE.match(line))
        }

        assert METER_PER_TURN == seen

    def test_each_compaction_with_what_it_kept_folded_dropped_and_pushed_cold(
        self, lines: list[str]
    ) -> None:
        seen = [found.groups() for line in lines if (found := COMPACT_LINE.search(line))]

        assert COMPACTIONS == seen

    def test_each_compaction_follows_the_turn_that_took_the_window_over(
        self, lines: list[str]
    ) -> None:
        over = [n for n, line in enumerate(lines) if line.endswith("OVER BUDGET")]
        compactions = [n for n, line in enumerate(lines) if "COMPACT:" in line]

        assert [n + 1 for n in over] == compactions

    def test_the_policy_line(self, lines: list[str]) -> None:
        assert ["policy: tiered · budget 40 · hot_n 2 · tokenizer words"] == _having(
            lines, "policy: tiered"
        )

    def test_the_final_window(self, lines: list[str]) -> None:
        final = lines[lines.index("final window:") + 1 :]

        assert (True, True, True) == (
            final[0].endswith(" 32/40"),
            "(2 turns, 4 tokens)" in final[1],
            "dropped turns: 1, 3, 4, 6, 7" in "\n".join(final),
        )


class TestForgettingWalkthrough:
    def test_the_ranking_at_t0(self, lines: list[str]) -> None:
        title, ranking = _rankings(lines)[0]

        assert (
            "ranking at t=0:",
            [("name", "0.90"), ("order", "0.70"), ("contact", "0.60"), ("chitchat", "0.20")],
        ) == (title, ranking)

    def test_the_ranking_at_t6_after_the_reads(self, lines: list[str]) -> None:
        title, ranking = _rankings(lines)[1]

        assert (
            "ranking at t=6:",
            [("name", "0.38"), ("order", "0.25"), ("contact", "0.21"), ("chitchat", "0.07")],
        ) == (title, ranking)

    def test_the_final_ranking(self, lines: list[str]) -> None:
        title, ranking = _rankings(lines)[2]

        assert (
            "ranking at t=6:",
            [("contact", "0.60"), ("name", "0.38"), ("order", "0.25"), ("promo", "0.15")],
        ) == (title, ranking)

    def test_three_rankings(self, lines: list[str]) -> None:
        assert 3 == len(_rankings(lines))

    def test_each_factor_is_shown(self, lines: list[str]) -> None:
        name = next(line for line in lines if RANKED_LINE.match(line) and " 0.38 " in line)

        assert name.endswith("0.38 = 0.90 importance × 0.35 recency × 1.20 access")

    def test_the_clock_advances_to_6(self, lines: list[str]) -> None:
        assert ["clock advances to t=6"] == _having(lines, "clock advances")

    def test_the_two_reads(self, lines: list[str]) -> None:
        assert ["read 'name' (reads: 1)", "read 'name' (reads: 2)"] == _having(lines, "read 'name'")

    def test_the_supersession(self, lines: list[str]) -> None:
        assert [
            "  SUPERSEDE: fact 2 'contact' (Dana prefers to be contacted by email.) is retired, "
            "kept but never ranked again; fact 5 replaces it"
        ] == _having(lines, "SUPERSEDE")

    def test_the_eviction(self, lines: list[str]) -> None:
        assert [
            "  EVICT: 5 active > capacity 4; the weakest, 'chitchat' at 0.07, is evicted"
        ] == _having(lines, "EVICT")

    def test_the_retired_and_evicted_facts_after_the_writes(self, lines: list[str]) -> None:
        assert (
            ["  retired: contact (Dana prefers to be contacted by email.)"],
            ["  evicted: chitchat (Dana mentioned that it is raining today.)"],
        ) == (_having(lines, "retired: "), _having(lines, "evicted: "))


class TestConsolidationWalkthrough:
    def test_four_episodes_are_recorded(self, lines: list[str]) -> None:
        episodes = [line for line in lines if re.match(r"^episode \d: ", line)]

        assert ["episode 1:", "episode 2:", "episode 3:", "episode 4:"] == [
            line[:10] for line in episodes
        ]

    def test_the_pass_consumes_all_four(self, lines: list[str]) -> None:
        assert ["sleep-time pass consumes 4 episodes:"] == _having(lines, "sleep-time pass")

    def test_one_semantic_fact(self, lines: list[str]) -> None:
        assert ["  semantic fact   user.name = Dana  (key user.name, from episode 4)"] == (
            _having(lines, "semantic fact")
        )

    def test_one_procedural_rule(self, lines: list[str]) -> None:
        assert [f"  procedural rule {RULE}  (from episode 2)"] == _having(lines, "procedural rule")

    def test_every_episode_is_pruned(self, lines: list[str]) -> None:
        assert ["  episodes pending after the pass: 0"] == _having(lines, "pending after")

    def test_the_fact_is_written_through_the_forgetting_policy(self, lines: list[str]) -> None:
        assert [
            "  written to the store as fact 1 ('user.name', importance 0.90) "
            "through the forgetting policy"
        ] == _having(lines, "written to the store")


class TestDemo:
    def test_three_titled_walkthroughs_in_order(self, lines: list[str]) -> None:
        titles = [line for line in lines if line.startswith("━━ ")]

        assert [
            "━━ 1. Compaction · refund-desk ━━",
            "━━ 2. Forgetting · dana-facts ━━",
            "━━ 3. Consolidation · sleep-pass ━━",
        ] == titles

    def test_no_color_codes_without_color(self, lines: list[str]) -> None:
        assert [] == [line for line in lines if "\033[" in line]

    def test_over_budget_turns_are_red_with_color(self) -> None:
        red = [line for line in demo_lines(color=True) if line.startswith("turn") and RED in line]

        assert 5 == len(red)

    def test_with_color_the_text_is_the_same(self, lines: list[str]) -> None:
        plain = [re.sub(r"\033\[\d+m", "", line) for line in demo_lines(color=True)]

        assert lines == plain

    def test_memtape_demo_exits_0_and_prints_the_walkthroughs(
        self, lines: list[str], capsys: pytest.CaptureFixture[str]
    ) -> None:
        status = main(["demo"])
        captured = capsys.readouterr()

        assert (0, "\n".join(lines) + "\n", "") == (status, captured.out, captured.err)
