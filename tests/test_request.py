"""memtape.policies.text.request: the window as the chat request a policy would send."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

from memtape.core.commands import AddTurn
from memtape.policies.session import Policies, Session
from memtape.policies.text.request import GIST_HEADING, TOOL_PREFIX, WARM_HEADING, chat_messages
from memtape.policies.window.tiered import TieredCompaction


def _window(*turns: AddTurn, budget: int = 100, hot_n: int = 2) -> Session:
    session = Session(Policies(compaction=TieredCompaction(budget=budget, hot_n=hot_n)))
    session.execute_all(turns)
    return session


class TestMessages:
    def test_each_hot_turn_is_a_message_of_its_role_and_a_tool_result_is_a_user_s(
        self,
    ) -> None:
        session = _window(
            AddTurn("system", "Be brief."), AddTurn("user", "hi"), AddTurn("tool", "42")
        )
        assert [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "hi"},
            {"role": "user", "content": f"{TOOL_PREFIX}42"},
        ] == chat_messages(session.state.window)

    def test_warm_items_come_first_as_a_system_message(self) -> None:
        session = _window(*TURNS, budget=9)
        messages = chat_messages(session.state.window)
        assert [
            {"role": "system", "content": f"{WARM_HEADING}\ntotal is 42"},
            {"role": "user", "content": "ok then"},
            {"role": "user", "content": "and now"},
        ] == messages

    def test_the_gist_comes_before_them(self) -> None:
        session = _window(*TURNS, budget=8)
        first = chat_messages(session.state.window)[0]
        assert {
            "role": "system",
            "content": f"{GIST_HEADING}\n[1 earlier turn summarized]",
        } == first


TURNS = (
    AddTurn("tool", "total is 42", salient=True),
    AddTurn("user", "ok then"),
    AddTurn("user", "and now"),
)
"""10 words: over a budget of 9 the tool result goes WARM, over 8 on to COLD."""
