"""memtape.policies.window.units: a call, its results and the turns between them, kept together.

The readings of HOT (``units`` from the oldest turn, ``recent_start`` from the
newest) are held to the definition worked out by brute force over the whole
run: a unit starts at a turn that arrives while no call waits, and ends at the
first turn after which none does.
"""

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memtape.core.commands import AddTurn
from memtape.core.events import TurnAdded
from memtape.core.state import Window
from memtape.policies.session import Policies, Session
from memtape.policies.window.no_compaction import NoCompaction
from memtape.policies.window.units import Newest, newest, recent_start, units
from memtape.policies.zoo import COMPACTION
from memtape.testing.strategies import turn_sequences
from tests.playing import OWN_PARAMS, play
from tests.suite_profile import examples

PROPERTY = settings(max_examples=examples(40), deadline=None)


def partition(turns: list[TurnAdded]) -> list[list[int]]:
    """The run's units by the definition: a unit ends after a turn once nothing waits."""
    waiting: set[str] = set()
    found: list[list[int]] = []
    current: list[int] = []
    for turn in turns:
        current.append(turn.turn)
        waiting -= set(turn.answers)
        waiting |= set(turn.calls)
        if not waiting:
            found.append(current)
            current = []
    if current:
        found.append(current)
    return found


def intervals(turns: list[TurnAdded]) -> list[list[int]]:
    """The run's units another way: each call to its result (or to the newest turn while
    it waits), overlapping spans merged, every other turn alone."""
    caller: dict[str, int] = {}
    spans: list[tuple[int, int]] = []
    for turn in turns:
        for answered in turn.answers:
            spans.append((caller.pop(answered), turn.turn))
        for called in turn.calls:
            caller[called] = turn.turn
    newest_turn = turns[-1].turn if turns else 0
    spans.extend((start, newest_turn) for start in caller.values())
    covered: dict[int, int] = {turn.turn: turn.turn for turn in turns}
    for start, end in sorted(spans):
        for number in range(start, end + 1):
            covered[number] = min(covered[number], covered[start])
    found: dict[int, list[int]] = {}
    for number in sorted(covered):
        found.setdefault(covered[number], []).append(number)
    return [found[start] for start in sorted(found)]


def session_turns(commands: list[AddTurn], policy: Any = None) -> tuple[Session, list[TurnAdded]]:
    """The session under ``policy`` (none by default), and every turn it added."""
    session = Session(Policies(compaction=policy or NoCompaction(10)))
    arrived: list[TurnAdded] = []
    for command in commands:
        events = session.execute(command)
        arrived.append(events[0])  # type: ignore[arg-type]
    return session, arrived


def numbers(window: Window) -> list[list[int]]:
    """HOT's units by ``units``, as turn numbers."""
    return [[t.turn for t in unit.turns] for unit in units(window.hot, newest(window))]


def call(turn_id: str, *more: str) -> AddTurn:
    return AddTurn("assistant", "calling", calls=(turn_id, *more))


def result(*answers: str) -> AddTurn:
    return AddTurn("tool", "found it", answers=answers)


def user() -> AddTurn:
    return AddTurn("user", "thanks")


class TestUnits:
    def test_without_calls_every_turn_is_a_unit(self) -> None:
        state, _ = play(NoCompaction(10), user(), user(), user())
        assert [[1], [2], [3]] == numbers(state.window)

    def test_a_call_its_results_and_the_turns_between_are_one_unit(self) -> None:
        state, _ = play(
            NoCompaction(10), user(), call("a", "b"), result("b"), user(), result("a"), user()
        )
        assert [[1], [2, 3, 4, 5], [6]] == numbers(state.window)

    def test_a_call_that_waits_holds_its_unit_open_to_the_newest_turn(self) -> None:
        state, _ = play(NoCompaction(10), user(), call("a"), user(), user())
        last = list(units(state.window.hot, newest(state.window)))[-1]
        assert ([[1], [2, 3, 4]], True) == (numbers(state.window), last.open)

    def test_units_chain_while_a_result_calls_again(self) -> None:
        chained = AddTurn("tool", "found, asking more", calls=("b",), answers=("a",))
        state, _ = play(NoCompaction(10), call("a"), chained, result("b"), user())
        assert [[1, 2, 3], [4]] == numbers(state.window)

    def test_the_window_knows_its_newest_unit(self) -> None:
        state, _ = play(NoCompaction(10), user(), call("a"), user())
        assert Newest(2, True) == newest(state.window)
        state, _ = play(NoCompaction(10), result("a"), state=state)
        assert Newest(2, False) == newest(state.window)

    @PROPERTY
    @given(commands=turn_sequences(max_size=30))
    def test_units_read_hot_as_the_definition_cuts_the_run(self, commands: list[AddTurn]) -> None:
        session, arrived = session_turns(commands)
        assert partition(arrived) == intervals(arrived) == numbers(session.state.window)


class TestRecentStart:
    def test_a_result_among_the_last_turns_keeps_its_call_and_what_is_between(self) -> None:
        state, _ = play(NoCompaction(10), user(), call("a"), user(), result("a"))
        hot = state.window.hot
        assert 1 == recent_start(hot, newest(state.window), 1)

    def test_nothing_need_stay_without_recent_turns_or_a_call_that_waits(self) -> None:
        state, _ = play(NoCompaction(10), user(), user())
        assert 2 == recent_start(state.window.hot, newest(state.window), 0)

    def test_a_call_that_waits_stays_with_what_follows_even_with_no_recent_turn(self) -> None:
        state, _ = play(NoCompaction(10), user(), call("a"), user())
        assert 1 == recent_start(state.window.hot, newest(state.window), 0)

    @PROPERTY
    @given(commands=turn_sequences(max_size=30), count=st.integers(0, 8))
    def test_recent_start_is_where_the_unit_of_the_last_turns_starts(
        self, commands: list[AddTurn], count: int
    ) -> None:
        session, arrived = session_turns(commands)
        window = session.state.window
        hot = window.hot
        cut = partition(arrived)
        wanted = {t.turn for t in hot[max(len(hot) - count, 0) :]} if count else set()
        if window.waiting:
            wanted.add(cut[-1][0])
        firsts = [unit[0] for unit in cut if wanted & set(unit)]
        expected = min(firsts) - 1 if firsts else len(hot)
        assert expected == recent_start(hot, newest(window), count)


@pytest.mark.parametrize("name", sorted(COMPACTION))
@PROPERTY
@given(data=st.data())
def test_every_shipped_policy_keeps_whole_units_only(name: str, data: st.DataObject) -> None:
    """After every turn HOT is a union of the run's units, each read back whole."""
    budget = data.draw(st.integers(1, 40))
    commands = data.draw(turn_sequences(budget, max_size=40))
    table = {"policy": name, "budget": budget, **OWN_PARAMS.get(name, {})}
    policy = Policies.from_params({"compaction": table}).compaction
    session = Session(Policies(compaction=policy))
    arrived: list[TurnAdded] = []
    for command in commands:
        arrived.append(session.execute(command)[0])  # type: ignore[arg-type]
        window = session.state.window
        held = {t.turn for t in window.hot}
        whole = [unit for unit in partition(arrived) if held & set(unit)]
        assert whole == numbers(window)
