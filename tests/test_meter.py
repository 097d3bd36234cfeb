"""memtape.projections.meter: the window's tokens against the budget."""

import pytest

from memtape.core.state import EMPTY_WINDOW
from memtape.policies.session import Session
from memtape.policies.window.tiered import TieredCompaction
from memtape.projections.meter import Meter, meter
from memtape.scenarios import load_scenario


class TestMeter:
    @pytest.mark.parametrize(("tokens", "expected"), [(0, False), (39, False), (40, False)])
    def test_at_or_under_the_budget_is_not_over(self, tokens: int, expected: bool) -> None:
        assert expected == Meter(tokens, 40).over

    @pytest.mark.parametrize("tokens", [41, 49, 1000])
    def test_strictly_more_than_the_budget_is_over(self, tokens: int) -> None:
        assert True is Meter(tokens, 40).over

    def test_data_under_budget(self) -> None:
        assert {"tokens": 32, "budget": 40, "over": False} == Meter(32, 40).data()

    def test_data_over_budget(self) -> None:
        assert {"tokens": 41, "budget": 40, "over": True} == Meter(41, 40).data()

    def test_data_at_the_budget(self) -> None:
        assert {"tokens": 40, "budget": 40, "over": False} == Meter(40, 40).data()


class TestMeterOfAWindow:
    def test_no_compaction_policy_means_no_meter(self) -> None:
        assert None is meter(EMPTY_WINDOW, None)

    def test_the_budget_comes_from_the_policy(self) -> None:
        assert Meter(0, 60) == meter(EMPTY_WINDOW, TieredCompaction(budget=60, hot_n=2))

    def test_the_tokens_come_from_the_window(self) -> None:
        scenario = load_scenario("refund-desk")
        session = Session(scenario.policies)
        session.execute_all(scenario.steps)

        assert Meter(32, 40) == meter(session.state.window, scenario.policies.compaction)

    def test_the_meter_as_turn_4_arrives_is_41_of_40(self) -> None:
        scenario = load_scenario("refund-desk")
        session = Session(scenario.policies)
        session.execute_all(scenario.steps)

        assert Meter(41, 40) == meter(session.run.state_at(4).window, scenario.policies.compaction)
