"""memtape.reducers.window: turns join HOT, compactions are applied, tokens kept incrementally."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import pytest

from memtape.core.errors import CorruptLog
from memtape.core.events import CompactionTriggered, TurnAdded, WarmItem
from memtape.core.seq import Seq
from memtape.core.state import EMPTY_WINDOW, SHORT_HOT, Window
from memtape.reducers.window import compaction_triggered, turn_added


def _turn(n: int, tokens: int = 5, *, salient: bool = False) -> TurnAdded:
    return TurnAdded(n, "tool" if salient else "user", f"text of turn {n}", tokens, salient)


def _window(*turns: TurnAdded) -> Window:
    window = EMPTY_WINDOW
    for turn in turns:
        window = turn_added(window, turn)
    return window


def _recount(window: Window) -> int:
    return (
        sum(t.tokens for t in window.hot) + sum(w.tokens for w in window.warm) + window.gist_tokens
    )


FOUR = (_turn(1, 11), _turn(2, 9, salient=True), _turn(3, 9), _turn(4, 12))
"""The first four turns of refund-desk: 41 tokens."""

FIRST = CompactionTriggered(40, (WarmItem(2, "bare", 8),), (1,), 0, "", 0)
"""refund-desk's compaction at turn 4: turn 1 dropped, turn 2 warm, 3 and 4 stay."""


class TestWindowsBuiltInC:
    def test_a_turn_and_a_compaction_give_windows_with_every_field(self) -> None:
        # Built by tuple.__new__, which checks no arity: a field added to Window and
        # missed here would leave a short window.
        turned = _window(*FOUR)
        compacted = compaction_triggered(turned, FIRST)

        assert [len(Window._fields)] * 2 == [len(turned), len(compacted)]
        assert (Window, Window) == (type(turned), type(compacted))


class TestTurnAdded:
    def test_a_turn_joins_hot_last(self) -> None:
        assert [1, 2] == [t.turn for t in _window(_turn(1), _turn(2)).hot]

    def test_a_turn_adds_its_tokens_to_the_total(self) -> None:
        assert 11 + 9 == _window(_turn(1, 11), _turn(2, 9)).tokens

    def test_a_turn_counts_as_one_more_turn(self) -> None:
        assert 3 == _window(_turn(1), _turn(2), _turn(3)).turns

    def test_a_turn_is_kept_verbatim(self) -> None:
        turn = _turn(1, 7, salient=True)

        assert [turn] == list(_window(turn).hot)

    @pytest.mark.parametrize("number", [1, 3, 0])
    def test_a_turn_out_of_sequence_is_corrupt(self, number: int) -> None:
        window = _window(_turn(1))

        with pytest.raises(CorruptLog, match=f"turn {number} cannot follow turn 1"):
            turn_added(window, _turn(number))

    def test_a_turn_leaves_the_previous_window_unchanged(self) -> None:
        before = _window(_turn(1))

        turn_added(before, _turn(2))

        assert [1] == [t.turn for t in before.hot]


class TestLongHot:
    """Past ``SHORT_HOT`` turns HOT is a ``Seq``, which a turn extends without copying it."""

    def test_hot_is_a_tuple_up_to_short_hot_turns_and_a_seq_beyond(self) -> None:
        turns = [_turn(n) for n in range(1, SHORT_HOT + 3)]
        short = _window(*turns[:SHORT_HOT])
        longer = turn_added(short, turns[SHORT_HOT])
        longest = turn_added(longer, turns[SHORT_HOT + 1])

        assert (tuple, Seq, Seq) == (type(short.hot), type(longer.hot), type(longest.hot))
        assert turns == list(longest.hot)

    def test_a_turn_leaves_a_long_hot_before_it_unchanged(self) -> None:
        before = _window(*(_turn(n) for n in range(1, SHORT_HOT + 6)))

        turn_added(before, _turn(SHORT_HOT + 6))

        assert list(range(1, SHORT_HOT + 6)) == [t.turn for t in before.hot]

    @pytest.mark.parametrize(("kept", "kind"), [(SHORT_HOT, tuple), (SHORT_HOT + 1, Seq)])
    def test_what_a_compaction_keeps_is_a_tuple_or_a_seq_by_its_length(
        self, kept: int, kind: type
    ) -> None:
        """The form depends on the length alone, so equal windows hold equal HOTs."""
        total = SHORT_HOT + 10
        window = _window(*(_turn(n) for n in range(1, total + 1)))
        first = total - kept + 1
        event = CompactionTriggered(40, (), tuple(range(1, first)), 0, "", 0)

        after = compaction_triggered(window, event)

        assert kind is type(after.hot)
        assert (list(range(first, total + 1)), _recount(after)) == (
            [t.turn for t in after.hot],
            after.tokens,
        )

    @pytest.mark.parametrize(
        "moved",
        [
            CompactionTriggered(40, (WarmItem(4990, "[cleared]", 1),), (), 0, "", 0),
            CompactionTriggered(40, (), (4995, 4998), 0, "", 0),
            CompactionTriggered(40, (), (), 0, "", 0, cleared=(WarmItem(4990, "[x]", 1),)),
        ],
        ids=["to-warm", "dropped", "cleared-in-place"],
    )
    def test_a_change_near_the_end_of_a_long_hot_keeps_the_turns_before_it(
        self, moved: CompactionTriggered
    ) -> None:
        """The leaves of HOT before the first turn moved or cleared are the ones it had
        (a copy would cost every compaction the whole of HOT), and the window is right."""
        window = _window(*(_turn(n) for n in range(1, 5001)))

        after = compaction_triggered(window, moved)

        assert isinstance(after.hot, Seq)
        assert isinstance(window.hot, Seq)
        assert window.hot._leaf(4900) is after.hot._leaf(4900)
        assert window.hot._leaf(0) is after.hot._leaf(0)
        gone = {item.turn for item in moved.warm} | set(moved.dropped)
        assert [n for n in range(1, 5001) if n not in gone] == [t.turn for t in after.hot]
        assert _recount(after) == after.tokens


class TestLongWarm:
    """Past ``SHORT_HOT`` items WARM is a ``Seq``, which a compaction extends without copying
    it: clear-tool-results sends every lone tool result there and never cools one."""

    @staticmethod
    def _warmed(items: int) -> Window:
        """A window whose first ``items`` turns went WARM, one compaction each."""
        window = _window(*(_turn(n) for n in range(1, items + 11)))
        for n in range(1, items + 1):
            warm = (WarmItem(n, "[cleared]", 1),)
            window = compaction_triggered(window, CompactionTriggered(40, warm, (), 0, "", 0))
        return window

    def test_warm_is_a_tuple_up_to_short_hot_items_and_a_seq_beyond(self) -> None:
        short, longer = self._warmed(SHORT_HOT), self._warmed(SHORT_HOT + 1)

        assert (tuple, Seq) == (type(short.warm), type(longer.warm))
        assert list(range(1, SHORT_HOT + 2)) == [item.turn for item in longer.warm]
        assert _recount(longer) == longer.tokens

    def test_a_compaction_keeps_the_leaves_of_a_long_warm(self) -> None:
        window = self._warmed(SHORT_HOT + 40)
        event = CompactionTriggered(40, (WarmItem(SHORT_HOT + 41, "[cleared]", 1),), (), 0, "", 0)

        after = compaction_triggered(window, event)

        assert isinstance(window.warm, Seq)
        assert isinstance(after.warm, Seq)
        assert window.warm._leaf(0) is after.warm._leaf(0)
        assert list(range(1, SHORT_HOT + 42)) == [item.turn for item in after.warm]

    @pytest.mark.parametrize(("cooling", "kind"), [(40, tuple), (39, Seq)])
    def test_what_stays_warm_after_cooling_is_a_tuple_or_a_seq_by_its_length(
        self, cooling: int, kind: type
    ) -> None:
        """The form depends on the length alone, so equal windows hold equal WARMs."""
        window = self._warmed(SHORT_HOT + 40)

        after = compaction_triggered(window, CompactionTriggered(40, (), (), cooling, "g", 1))

        assert kind is type(after.warm)
        assert _recount(after) == after.tokens


class TestCompactionTriggered:
    def test_the_named_hot_turns_stay_hot(self) -> None:
        assert [3, 4] == [t.turn for t in compaction_triggered(_window(*FOUR), FIRST).hot]

    def test_warm_items_are_appended_to_warm(self) -> None:
        window = compaction_triggered(_window(*FOUR), FIRST)

        assert [WarmItem(2, "bare", 8)] == list(window.warm)

    def test_dropped_turns_are_recorded(self) -> None:
        assert [1] == list(compaction_triggered(_window(*FOUR), FIRST).dropped)

    def test_tokens_lose_the_leaving_turns_and_gain_the_warm_items(self) -> None:
        assert 41 - 11 - 9 + 8 == compaction_triggered(_window(*FOUR), FIRST).tokens

    def test_the_turn_count_does_not_change(self) -> None:
        assert 4 == compaction_triggered(_window(*FOUR), FIRST).turns

    def test_the_oldest_warm_items_go_cold_with_the_gist(self) -> None:
        window = compaction_triggered(_window(*FOUR), FIRST)
        window = turn_added(window, _turn(5, 11, salient=True))
        second = CompactionTriggered(
            40, (WarmItem(3, "x", 2), WarmItem(4, "y", 3)), (), 2, "[2 turns]", 2
        )

        window = compaction_triggered(window, second)

        assert ([2, 3], [4], "[2 turns]", 2) == (
            list(window.cold),
            [w.turn for w in window.warm],
            window.gist,
            window.gist_tokens,
        )

    def test_tokens_swap_the_cold_items_for_the_gist(self) -> None:
        window = compaction_triggered(_window(*FOUR), FIRST)
        cooling = CompactionTriggered(40, (), (), 1, "[1 turn]", 2)

        assert 29 - 8 + 2 == compaction_triggered(window, cooling).tokens

    def test_a_new_gist_replaces_the_old_one_in_the_total(self) -> None:
        window = compaction_triggered(_window(*FOUR), FIRST)
        window = compaction_triggered(window, CompactionTriggered(40, (), (), 1, "[one]", 1))
        window = turn_added(window, _turn(5, 2))
        window = compaction_triggered(
            window,
            CompactionTriggered(40, (WarmItem(3, "z", 1),), (), 1, "[two of them]", 3),
        )

        assert (_recount(window), 12 + 2 + 3) == (window.tokens, window.tokens)

    def test_a_compaction_without_cold_items_keeps_the_gist_it_carries(self) -> None:
        window = compaction_triggered(_window(*FOUR), FIRST)
        window = compaction_triggered(window, CompactionTriggered(40, (), (), 1, "[one]", 1))

        window = compaction_triggered(window, CompactionTriggered(40, (), (3,), 0, "[one]", 1))

        assert ("[one]", 1, 12 + 1) == (window.gist, window.gist_tokens, window.tokens)

    def test_hot_n_zero_empties_hot(self) -> None:
        event = CompactionTriggered(40, (WarmItem(2, "bare", 8),), (1, 3, 4), 0, "", 0)

        window = compaction_triggered(_window(*FOUR), event)

        assert ([], 8) == (list(window.hot), window.tokens)

    def test_one_turn_leaving_from_the_front_leaves_the_rest_in_order(self) -> None:
        event = CompactionTriggered(40, (), (1,), 0, "", 0)

        window = compaction_triggered(_window(*FOUR), event)

        assert ([2, 3, 4], 30, [1]) == (
            [t.turn for t in window.hot],
            window.tokens,
            [*window.dropped],
        )

    def test_one_turn_leaving_from_the_middle_leaves_the_others_in_order(self) -> None:
        event = CompactionTriggered(40, (WarmItem(3, "bare", 2),), (), 0, "", 0)

        window = compaction_triggered(_window(*FOUR), event)

        assert ([1, 2, 4], 34) == ([t.turn for t in window.hot], window.tokens)
        assert _recount(window) == window.tokens

    def test_the_total_always_equals_a_recount(self) -> None:
        window = compaction_triggered(_window(*FOUR), FIRST)

        assert _recount(window) == window.tokens

    def test_the_window_before_is_left_unchanged(self) -> None:
        before = _window(*FOUR)

        compaction_triggered(before, FIRST)

        assert ([1, 2, 3, 4], 41, []) == (
            [t.turn for t in before.hot],
            before.tokens,
            list(before.warm),
        )


class TestCompactionThatDoesNotFit:
    def test_one_turn_that_is_not_in_hot_is_corrupt(self) -> None:
        event = CompactionTriggered(40, (), (7,), 0, "", 0)

        with pytest.raises(CorruptLog, match=r"moves turn 7, which is not HOT \(HOT holds 4 turn"):
            compaction_triggered(_window(*FOUR), event)

    def test_naming_a_turn_that_is_not_in_hot_is_corrupt(self) -> None:
        event = CompactionTriggered(40, (WarmItem(2, "bare", 8),), (5,), 0, "", 0)

        with pytest.raises(CorruptLog, match=r"moves turn 5, which is not HOT \(HOT holds 4 turn"):
            compaction_triggered(_window(*FOUR), event)

    def test_an_old_list_leaving_a_hot_turn_unaccounted_for_is_corrupt(self) -> None:
        # Upcast from version 2: turns 3 and 4 stay, 2 goes WARM, and 1 is named nowhere.
        event = CompactionTriggered(40, (WarmItem(2, "bare", 8),), (), 0, "", 0, kept=(3, 4))

        with pytest.raises(CorruptLog, match=r"HOT holds \[1, 2, 3, 4\]"):
            compaction_triggered(_window(*FOUR), event)

    def test_naming_a_turn_twice_is_corrupt(self) -> None:
        event = CompactionTriggered(40, (WarmItem(2, "bare", 8),), (2,), 0, "", 0)

        with pytest.raises(CorruptLog, match="moves turn 2 twice"):
            compaction_triggered(_window(*FOUR), event)

    def test_naming_an_already_compacted_turn_is_corrupt(self) -> None:
        window = compaction_triggered(_window(*FOUR), FIRST)

        with pytest.raises(CorruptLog):
            compaction_triggered(window, CompactionTriggered(40, (), (1,), 0, "", 0))

    def test_sending_more_items_cold_than_warm_holds_is_corrupt(self) -> None:
        event = CompactionTriggered(40, (WarmItem(2, "bare", 8),), (1,), 2, "[2]", 1)

        with pytest.raises(CorruptLog, match="sends 2 warm items cold but WARM holds 1"):
            compaction_triggered(_window(*FOUR), event)

    def test_a_negative_cold_count_is_corrupt(self) -> None:
        event = CompactionTriggered(40, (WarmItem(2, "bare", 8),), (1,), -1, "", 0)

        with pytest.raises(CorruptLog):
            compaction_triggered(_window(*FOUR), event)


class TestCompactionNamingTurnsTwice:
    def _hot(self) -> Window:
        window = EMPTY_WINDOW
        for turn in (TurnAdded(1, "tool", "a b", 3, True), TurnAdded(2, "user", "c", 2, False)):
            window = turn_added(window, turn)
        return window

    def test_a_turn_both_warm_and_dropped_is_refused(self) -> None:
        both = CompactionTriggered(40, (WarmItem(1, "a b", 2),), (1,), 0, "", 0)

        with pytest.raises(CorruptLog, match="compaction moves turn 1 twice"):
            compaction_triggered(self._hot(), both)

    def test_a_turn_warm_twice_is_refused(self) -> None:
        twice = CompactionTriggered(40, (WarmItem(1, "a", 1), WarmItem(1, "b", 1)), (), 0, "", 0)

        with pytest.raises(CorruptLog, match="compaction moves turn 1 twice"):
            compaction_triggered(self._hot(), twice)

    @pytest.mark.parametrize(
        "event",
        [
            CompactionTriggered(40, (WarmItem(1, "a b", -2),), (), 0, "", 0),
            CompactionTriggered(40, (), (1,), 0, "", -4),
        ],
        ids=["warm-item", "gist"],
    )
    def test_negative_tokens_are_refused(self, event: CompactionTriggered) -> None:
        with pytest.raises(CorruptLog, match="-"):
            compaction_triggered(self._hot(), event)

    def test_a_turn_with_negative_tokens_is_refused(self) -> None:
        with pytest.raises(CorruptLog, match="turn 1 has -1 tokens"):
            turn_added(EMPTY_WINDOW, TurnAdded(1, "user", "x", -1, False))


def _call(n: int, *ids: str) -> TurnAdded:
    return TurnAdded(n, "assistant", f"call {n}", 2, False, ids)


def _result(n: int, *ids: str) -> TurnAdded:
    return TurnAdded(n, "tool", f"result {n}", 4, True, (), ids)


class TestWaiting:
    def test_a_call_waits_under_the_turn_that_made_it_until_answered(self) -> None:
        window = _window(_turn(1), _call(2, "a", "b"))
        assert {"a": 2, "b": 2} == dict(window.waiting)
        assert {"a": 2} == dict(turn_added(window, _result(3, "b")).waiting)

    def test_a_turn_joins_the_newest_unit_while_a_call_waits(self) -> None:
        lengths = []
        window = EMPTY_WINDOW
        for turn in (_turn(1), _call(2, "a"), _turn(3), _result(4, "a"), _turn(5)):
            window = turn_added(window, turn)
            lengths.append(window.unit_length)
        assert [1, 1, 2, 3, 1] == lengths

    def test_a_turn_without_calls_leaves_waiting_as_it_was(self) -> None:
        window = _window(_call(1, "a"))
        assert window.waiting is turn_added(window, _turn(2)).waiting

    def test_a_compaction_leaves_what_waits_and_the_unit_as_they_were(self) -> None:
        window = _window(_turn(1), _call(2, "a"))
        after = compaction_triggered(window, CompactionTriggered(9, (), (1,), 0, "", 0))
        assert (window.waiting, window.unit_length) == (after.waiting, after.unit_length)


class TestClearedInPlace:
    def test_a_cleared_turn_stays_in_its_place_reading_its_stand_in(self) -> None:
        window = _window(_call(1, "a"), _result(2, "a"), _turn(3))
        event = CompactionTriggered(9, (), (), 0, "", 0, cleared=(WarmItem(2, "[x]", 1),))
        after = compaction_triggered(window, event)
        assert (
            [1, 2, 3],
            TurnAdded(2, "tool", "[x]", 1, True, (), ("a",)),
            [2],
            window.tokens - 4 + 1,
        ) == ([t.turn for t in after.hot], after.hot[1], list(after.cleared), after.tokens)
        assert _recount(after) == after.tokens

    def test_clearing_a_turn_that_leaves_hot_is_corrupt(self) -> None:
        window = _window(_turn(1), _turn(2))
        event = CompactionTriggered(9, (), (1,), 0, "", 0, cleared=(WarmItem(1, "[x]", 1),))
        with pytest.raises(CorruptLog, match=r"clears turn 1, which does not stay HOT"):
            compaction_triggered(window, event)

    def test_a_negative_stand_in_is_corrupt(self) -> None:
        window = _window(_turn(1))
        event = CompactionTriggered(9, (), (), 0, "", 0, cleared=(WarmItem(1, "[x]", -1),))
        with pytest.raises(CorruptLog, match="cleared turn 1 has -1 tokens"):
            compaction_triggered(window, event)
