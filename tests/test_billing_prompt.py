"""The prompt each request sends, kept step by step, equals the one built afresh."""

import pytest

from memtape.core.commands import AddTurn
from memtape.core.events import CompactionTriggered, TurnAdded
from memtape.lab.generate import support_session
from memtape.policies.session import Session
from memtape.projections.billing.prompt import Prompt, PromptTracker
from memtape.scenarios import parse_scenario

POLICIES = ("tiered", "sliding-window", "rolling-summary", "clear-tool-results", "none")


def prompts(policy: str, *, afresh: bool) -> list[Prompt]:
    """The prompt after each turn of a generated support session under ``policy``; with
    ``afresh``, each one rebuilt from the window and compared item by item."""
    text = support_session(120, seed=3, budget=600, hot_n=4)
    scenario = parse_scenario(text, "support.toml")
    session = Session(scenario.policies.with_settings([f"compaction.policy={policy}"]))
    tracker = PromptTracker(unseen=50)
    found = []
    for command in scenario.steps:
        events = session.execute(command)
        tracker.added(e for e in events if isinstance(e, TurnAdded))
        if afresh or any(isinstance(e, CompactionTriggered) for e in events):
            tracker.compacted()
        if isinstance(command, AddTurn):
            found.append(tracker.prompt(session.state.window))
    return found


class TestPromptTracker:
    @pytest.mark.parametrize("policy", POLICIES)
    def test_appending_between_compactions_gives_the_prompt_built_afresh(self, policy: str) -> None:
        assert prompts(policy, afresh=True) == prompts(policy, afresh=False)

    def test_a_prompt_counts_the_unseen_prefix_and_the_window(self) -> None:
        text = support_session(10, seed=3, budget=600, hot_n=4)
        scenario = parse_scenario(text, "support.toml")
        session = Session(scenario.policies)
        tracker = PromptTracker(unseen=50)
        for command in scenario.steps:
            events = session.execute(command)
            tracker.added(e for e in events if isinstance(e, TurnAdded))
        assert 50 + session.state.window.tokens == tracker.prompt(session.state.window).tokens
