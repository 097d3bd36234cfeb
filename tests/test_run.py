"""memtape.core.run: an append-only log, all-or-nothing batches, seeks with snapshots."""

from collections.abc import Sequence

# Tests read `assert expected == actual`, which SIM300 would turn around.
import pytest

from memtape.core.commands import AddTurn, AdvanceClock, Command, WriteFact
from memtape.core.errors import BadInput, CorruptLog
from memtape.core.events import ClockAdvanced, Event, FactWritten, TurnAdded
from memtape.core.run import DEFAULT_SNAPSHOT_EVERY, Run
from memtape.core.state import INITIAL_STATE, State
from memtape.reducers import fold


def _turn(n: int) -> TurnAdded:
    return TurnAdded(n, "user", f"turn {n}", 3, salient=False)


def _write(n: int) -> FactWritten:
    return FactWritten(n, f"k{n}", f"fact {n}", 0.5)


BATCHES: list[tuple[Command, tuple[Event, ...]]] = [
    (AddTurn("user", "turn 1"), (_turn(1),)),
    (WriteFact("k1", "fact 1", 0.5), (_write(1), _write(2))),
    (AdvanceClock(2.0), (ClockAdvanced(2.0),)),
    (AddTurn("user", "turn 2"), (_turn(2), _turn(3), _turn(4))),
    (WriteFact("k3", "fact 3", 0.5), (_write(3),)),
]
"""Five steps of 1, 2, 1, 3 and 1 events (the commands only label the batches)."""

EVENTS = [event for _, batch in BATCHES for event in batch]


def _recorded(snapshot_every: int = DEFAULT_SNAPSHOT_EVERY) -> Run:
    run = Run(fold, snapshot_every=snapshot_every)
    for command, batch in BATCHES:
        run.append(command, batch)
    return run


class TestReadingTheLog:
    def test_reading_the_events_twice_does_not_copy_them_again(self) -> None:
        run = _recorded()

        assert run.events is run.events

    def test_an_append_shows_in_the_next_read(self) -> None:
        run = Run(fold)
        run.append(*BATCHES[0])
        first = run.events
        run.append(*BATCHES[1])

        assert (len(BATCHES[0][1]), len(BATCHES[0][1]) + len(BATCHES[1][1]), 2) == (
            len(first),
            len(run.events),
            len(run.commands),
        )


class TestNewRun:
    def test_a_new_run_is_empty_at_the_initial_state(self) -> None:
        run = Run(fold)

        assert (0, (), (), INITIAL_STATE) == (
            len(run),
            tuple(run.events),
            tuple(run.commands),
            run.state,
        )

    def test_a_run_may_start_from_another_state(self) -> None:
        start = fold([_turn(1)])

        assert start == Run(fold, initial=start).state_at(0)

    @pytest.mark.parametrize("every", [0, -1])
    def test_snapshot_every_must_be_at_least_1(self, every: int) -> None:
        with pytest.raises(BadInput, match=f"snapshot_every must be at least 1, got {every}"):
            Run(fold, snapshot_every=every)


class TestAppend:
    def test_append_returns_the_state_after_the_batch(self) -> None:
        run = Run(fold)

        assert fold(BATCHES[1][1]) == run.append(*BATCHES[1])

    def test_append_stores_the_events_in_order(self) -> None:
        assert EVENTS == list(_recorded().events)

    def test_append_remembers_the_command_of_each_batch(self) -> None:
        assert [command for command, _ in BATCHES] == list(_recorded().commands)

    def test_the_state_is_the_fold_of_every_event(self) -> None:
        assert fold(EVENTS) == _recorded().state

    def test_an_empty_batch_is_refused(self) -> None:
        run = _recorded()

        with pytest.raises(BadInput, match="at least one event"):
            run.append(AddTurn("user", "x"), ())

    def test_an_empty_batch_leaves_the_run_unchanged(self) -> None:
        run = _recorded()
        state = run.state

        with pytest.raises(BadInput):
            run.append(AddTurn("user", "x"), ())

        assert (len(EVENTS), len(BATCHES), state) == (len(run), len(run.commands), run.state)

    def test_a_corrupt_event_is_reported_with_its_position_and_type(self) -> None:
        run = _recorded()

        with pytest.raises(CorruptLog) as caught:
            run.append(AddTurn("user", "x"), (_turn(5), _turn(9)))

        assert "event 10 (TurnAdded): turn 9 cannot follow turn 5" == str(caught.value)

    def test_a_batch_whose_second_event_is_corrupt_leaves_the_run_unchanged(self) -> None:
        run = _recorded()
        state = run.state

        with pytest.raises(CorruptLog):
            run.append(AddTurn("user", "x"), (_turn(5), _turn(9)))

        assert (EVENTS, [command for command, _ in BATCHES], True) == (
            list(run.events),
            list(run.commands),
            run.state is state,
        )

    def test_a_failed_batch_leaves_every_seek_as_it_was(self) -> None:
        run = _recorded(snapshot_every=1)

        with pytest.raises(CorruptLog):
            run.append(AddTurn("user", "x"), (_turn(5), _turn(9)))
        run.append(*BATCHES[4][:1], (_write(4),))

        assert [fold([*EVENTS, _write(4)][:i]) for i in range(len(EVENTS) + 2)] == [
            run.state_at(i) for i in range(len(run) + 1)
        ]

    def test_the_events_view_cannot_change_the_log(self) -> None:
        run = _recorded()
        view = run.events

        with pytest.raises((TypeError, AttributeError)):
            view.append(_turn(5))  # type: ignore[attr-defined]


class TestStateAt:
    def test_position_0_is_the_initial_state(self) -> None:
        assert INITIAL_STATE == _recorded().state_at(0)

    def test_the_last_position_is_the_current_state(self) -> None:
        run = _recorded()

        assert run.state == run.state_at(len(run))

    @pytest.mark.parametrize("position", [-1, len(EVENTS) + 1])
    def test_a_position_out_of_range_is_refused(self, position: int) -> None:
        with pytest.raises(BadInput, match=f"position {position} is out of range 0..{len(EVENTS)}"):
            _recorded().state_at(position)

    @pytest.mark.parametrize("every", [1, 2, 3, 4, 7, 8, DEFAULT_SNAPSHOT_EVERY])
    def test_state_at_equals_the_fold_of_the_prefix(self, every: int) -> None:
        run = _recorded(snapshot_every=every)

        assert [fold(EVENTS[:i]) for i in range(len(EVENTS) + 1)] == [
            run.state_at(i) for i in range(len(EVENTS) + 1)
        ]

    def test_a_seek_folds_only_the_events_since_the_last_snapshot(self) -> None:
        calls: list[Event] = []

        def counting(events: Sequence[Event], state: State) -> State:
            calls.extend(events)
            return fold(events, state)

        run = Run(counting, snapshot_every=3)
        for command, batch in BATCHES:
            run.append(command, batch)
        folds = []
        for position in range(len(EVENTS) + 1):
            calls.clear()
            run.state_at(position)
            folds.append(len(calls))

        assert [0, 1, 2, 0, 1, 2, 0, 1, 2] == folds


class TestStepsAndBatches:
    @pytest.mark.parametrize(
        ("position", "step"),
        [(1, 1), (2, 2), (3, 2), (4, 3), (5, 4), (6, 4), (7, 4), (8, 5)],
    )
    def test_step_of_names_the_command_behind_an_event(self, position: int, step: int) -> None:
        assert step == _recorded().step_of(position)

    @pytest.mark.parametrize("position", [0, len(EVENTS) + 1])
    def test_step_of_a_position_out_of_range_is_refused(self, position: int) -> None:
        with pytest.raises(BadInput, match=f"event {position} is out of range 1..{len(EVENTS)}"):
            _recorded().step_of(position)

    @pytest.mark.parametrize(
        ("step", "span"), [(1, (0, 1)), (2, (1, 3)), (3, (3, 4)), (4, (4, 7)), (5, (7, 8))]
    )
    def test_batch_gives_the_span_of_a_step(self, step: int, span: tuple[int, int]) -> None:
        assert span == _recorded().batch(step)

    @pytest.mark.parametrize("step", [1, 2, 3, 4, 5])
    def test_batch_slices_exactly_the_events_of_the_step(self, step: int) -> None:
        run = _recorded()

        assert list(BATCHES[step - 1][1]) == list(run.events[slice(*run.batch(step))])

    @pytest.mark.parametrize("step", [0, len(BATCHES) + 1])
    def test_batch_of_a_step_out_of_range_is_refused(self, step: int) -> None:
        with pytest.raises(BadInput, match=f"step {step} is out of range 1..{len(BATCHES)}"):
            _recorded().batch(step)
