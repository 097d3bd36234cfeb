"""memtape.lab.spread: a metric's spread over replicates, and when two overlap."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import pytest

from memtape.lab.spread import Replicated, Spread


class TestOverlaps:
    @pytest.mark.parametrize(
        ("first", "second", "overlap"),
        [
            (Spread(5, 4, 6, "range"), Spread(7, 6, 8, "range"), True),
            (Spread(5, 4, 6, "range"), Spread(8, 7, 9, "range"), False),
            (Spread(5, 5, 5, "range"), Spread(5, 5, 5, "range"), False),
            (Spread(5, 5, 5, "range"), Spread(6, 4, 7, "range"), True),
        ],
    )
    def test_two_spreads_overlap_when_they_share_a_point_and_one_has_width(
        self, first: Spread, second: Spread, overlap: bool
    ) -> None:
        assert overlap == first.overlaps(second)


class TestData:
    def test_the_json_holds_the_count_each_spread_and_the_overlapping_policies(self) -> None:
        replicated = Replicated(
            3, {"peak_tokens": Spread(5, 4, 6, "range")}, {"peak_tokens": ("b",)}
        )
        assert {
            "replicates": 3,
            "spread": {"peak_tokens": {"median": 5, "low": 4, "high": 6, "interval": "range"}},
            "within_spread": {"peak_tokens": ["b"]},
        } == replicated.data()
