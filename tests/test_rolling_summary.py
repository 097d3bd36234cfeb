"""memtape.policies.window.rolling_summary: keep the last turns, fold the rest into one summary."""

from collections.abc import Iterator, Sequence
from pathlib import Path

import attrs
import pytest

from memtape.core.errors import BadInput
from memtape.core.events import CompactionTriggered, TurnAdded, WarmItem
from memtape.core.run import Run
from memtape.core.state import INITIAL_STATE
from memtape.policies.plumbing.promises import BUDGET, PINNED, RECENT_VERBATIM, WELL_FORMED
from memtape.policies.session import Policies, Session
from memtape.policies.text import summarizers
from memtape.policies.text.summarizers import SalientTexts
from memtape.policies.text.tokenizers import WordCount
from memtape.policies.window.rolling_summary import RollingSummary
from memtape.policies.window.tiered import TieredCompaction
from memtape.reducers import fold
from memtape.runs.files import load_run, save_run
from tests.playing import answering, calling, compaction, pinned, play, staying, tool, user


@attrs.define
class Counting:
    """A stand-in for an LLM summarizer: writes "summary N" and counts its calls."""

    name: str = "counting"
    calls: list[tuple[str, tuple[int, ...], int]] = attrs.field(factory=list)

    def __call__(self, previous: str, turns: Sequence[TurnAdded], limit: int) -> str:
        self.calls.append((previous, tuple(t.turn for t in turns), limit))
        return f"summary {len(self.calls)}"


@pytest.fixture
def counting() -> Iterator[Counting]:
    """A counting summarizer, registered by name for as long as the test runs."""
    summarizer = Counting()
    summarizers.SUMMARIZERS[summarizer.name] = summarizer
    yield summarizer
    del summarizers.SUMMARIZERS[summarizer.name]


class TestDecide:
    def test_within_budget_a_turn_is_one_event(self) -> None:
        _, decided = play(RollingSummary(20), tool(5), user(5), user(5))

        assert [1, 1, 1] == [len(events) for events in decided]

    def test_over_budget_older_turns_fold_into_one_summary(self) -> None:
        # 6 + 6 + 6 + 6 = 24 > 20: keep turns 3 and 4; fold turns 1 (tool) and 2 (chatter).
        # The summary, the salient text of turn 1, is WARM under turn 2; turn 1 is COLD.
        state, decided = play(RollingSummary(20, 2), tool(5), user(5), user(5), user(5))
        text = "t0 t1 t2 t3 t4"

        assert CompactionTriggered(
            20, (WarmItem(1, "", 0), WarmItem(2, text, 5)), (), 1, "", 0
        ) == compaction(decided[3])
        assert ((WarmItem(2, text, 5),), [1], 5 + 6 + 6) == (
            state.window.warm,
            list(state.window.cold),
            state.window.tokens,
        )

    def test_the_next_compaction_replaces_the_summary(self) -> None:
        # After the first compaction: 5 + 6 + 6 = 17; a tool turn of 6: 23 > 20. Turn 3
        # (chatter) folds with the old summary, which goes COLD under its turn 2.
        turns = (tool(5), user(5), user(5), user(5), tool(5, "x"))
        state, decided = play(RollingSummary(20, 2, 10), *turns)

        assert CompactionTriggered(
            20, (WarmItem(3, "t0 t1 t2 t3 t4", 5),), (), 1, "", 0
        ) == compaction(decided[4])
        assert ([1, 2], [3]) == (list(state.window.cold), [w.turn for w in state.window.warm])

    def test_the_summary_keeps_its_newest_words_within_summary_tokens(self) -> None:
        state, _ = play(RollingSummary(20, 2, 3), tool(5), user(5), user(5), user(5))

        assert (WarmItem(2, "t2 t3 t4", 3),) == state.window.warm

    def test_summary_tokens_default_to_a_quarter_of_the_budget(self) -> None:
        assert 10 == RollingSummary(40).summary_tokens
        assert 0 == RollingSummary(3).summary_tokens

    def test_an_empty_summary_is_no_warm_item_and_every_folded_turn_goes_cold(self) -> None:
        state, decided = play(RollingSummary(20, 2), user(5), user(5), user(5), user(5))

        assert CompactionTriggered(
            20, (WarmItem(1, "", 0), WarmItem(2, "", 0)), (), 2, "", 0
        ) == compaction(decided[3])
        assert ((), [1, 2], 12) == (
            state.window.warm,
            list(state.window.cold),
            state.window.tokens,
        )

    def test_nothing_folds_while_hot_holds_only_the_kept_turns(self) -> None:
        _, decided = play(RollingSummary(5, 2), user(10), user(10))

        assert [[TurnAdded], [TurnAdded]] == [[type(e) for e in d] for d in decided]

    def test_keep_zero_folds_the_newest_turn_too(self) -> None:
        state, _decided = play(RollingSummary(5, 0, 5), tool(9))

        assert ((), ()) == (staying(state), state.window.hot)
        assert (WarmItem(1, "t4 t5 t6 t7 t8", 5),) == state.window.warm

    def test_inherited_warm_items_are_the_previous_summary(self) -> None:
        # tiered(20, 1) leaves turns 1 and 2 WARM as "t0 t1 t2 t3 t4" and "y0 y1 y2 y3 y4".
        inherited, _ = play(TieredCompaction(20, 1), tool(5), tool(5, "y"), user(9))
        calls = Counting()
        state, decided = play(RollingSummary(20, 1, 20, calls), user(9), state=inherited)

        assert [("t0 t1 t2 t3 t4 y0 y1 y2 y3 y4", (3,), 20)] == calls.calls
        assert 2 == compaction(decided[0]).cold
        assert (WarmItem(3, "summary 1", 2),) == state.window.warm


class TestSummarizerHook:
    def test_the_summarizer_gets_the_summary_so_far_the_folded_turns_and_the_limit(self) -> None:
        calls = Counting()
        # The first compaction leaves 2 + 6 + 6 = 14; a turn of 7 takes it to 21.
        turns = (tool(5), user(5), user(5), user(5), user(6))
        play(RollingSummary(20, 2, 7, calls), *turns)

        assert [("", (1, 2), 7), ("summary 1", (3,), 7)] == calls.calls

    def test_what_it_writes_is_recorded_in_the_event(self) -> None:
        _, decided = play(RollingSummary(20, 2, 7, Counting()), tool(5), *[user(5)] * 3)

        assert WarmItem(2, "summary 1", 2) == compaction(decided[3]).warm[-1]

    def test_an_overlong_summary_is_capped_by_the_policy(self) -> None:
        def rambling(previous: str, turns: Sequence[TurnAdded], limit: int) -> str:
            return "one two three four five six"

        state, _ = play(RollingSummary(20, 2, 2, rambling), *[user(5)] * 4)

        assert (WarmItem(2, "five six", 2),) == state.window.warm

    def test_a_summary_that_is_not_text_is_refused(self) -> None:
        def broken(previous: str, turns: Sequence[TurnAdded], limit: int) -> str:
            return 42  # type: ignore[return-value]

        with pytest.raises(BadInput, match="the summarizer 'broken' returned 42, not a string"):
            play(RollingSummary(20, 2, 2, broken), *[user(5)] * 4)

    def test_replay_and_seek_never_call_the_summarizer(
        self, counting: Counting, tmp_path: Path
    ) -> None:
        session = Session(Policies(compaction=RollingSummary(20, 2, 10, counting)))
        session.execute_all([tool(5), *[user(5)] * 9])
        made = len(counting.calls)

        run = session.run
        replayed = fold(run.events, INITIAL_STATE)
        copy = Run(fold, snapshot_every=3)
        for step in range(1, run.steps + 1):
            start, end = run.batch(step)
            copy.append(run.commands[step - 1], run.events[start:end])
        states = [copy.state_at(i) for i in (len(run), 0, 7, len(run) - 1, len(run))]
        save_run(session, tmp_path / "run.jsonl", "hook")
        loaded = load_run(tmp_path / "run.jsonl")

        assert made > 1
        assert (replayed, states[-1], loaded.session.state) == (session.state,) * 3
        assert made == len(counting.calls)

    def test_a_run_names_its_summarizer_and_loads_back_with_it(
        self, counting: Counting, tmp_path: Path
    ) -> None:
        session = Session(Policies(compaction=RollingSummary(20, 2, 10, counting)))
        session.execute_all([tool(5), *[user(5)] * 4])
        save_run(session, tmp_path / "run.jsonl", "hook")

        policy = load_run(tmp_path / "run.jsonl").session.policies.compaction

        assert isinstance(policy, RollingSummary)
        assert counting is policy.summarizer


class TestPromises:
    def test_the_budget_bound_and_the_last_keep_turns_verbatim(self) -> None:
        assert (frozenset({BUDGET, RECENT_VERBATIM, WELL_FORMED, PINNED}), 3) == (
            RollingSummary(20, 3).promises,
            RollingSummary(20, 3).verbatim,
        )

    def test_the_floor_is_the_kept_turns_and_the_summary(self) -> None:
        state, _ = play(RollingSummary(20, 2), tool(5), user(5), user(5), user(5))

        assert 6 + 6 + 5 == RollingSummary(20, 2).floor(state.window)
        assert 6 + 5 == RollingSummary(20, 1).floor(state.window)
        assert 5 == RollingSummary(20, 0).floor(state.window)


class TestParams:
    def test_a_budget_alone_builds_it_with_the_defaults(self) -> None:
        policies = Policies.from_params({"compaction": {"policy": "rolling-summary", "budget": 40}})

        assert RollingSummary(40, 2, 10, SalientTexts(), WordCount()) == policies.compaction

    def test_params_read_back(self) -> None:
        policy = RollingSummary(40, 3, 12)
        data = policy.params()

        assert {
            "policy": "rolling-summary",
            "budget": 40,
            "keep": 3,
            "summary_tokens": 12,
            "summarizer": "salient",
            "tokenizer": "words",
        } == data
        del data["policy"]
        assert policy == RollingSummary.from_params(data, "here")

    def test_a_plain_function_is_named_by_its_name(self) -> None:
        def llm(previous: str, turns: Sequence[TurnAdded], limit: int) -> str:
            return previous

        assert "llm" == RollingSummary(40, summarizer=llm).params()["summarizer"]

    def test_an_unregistered_summarizer_is_refused_with_the_known_ones(self) -> None:
        with pytest.raises(BadInput, match=r"^here: summarizer unknown summarizer 'gpt' \(known"):
            RollingSummary.from_params({"budget": 40, "summarizer": "gpt"}, "here")

    @pytest.mark.parametrize(("name", "value"), [("keep", -1), ("summary_tokens", -2)])
    def test_a_negative_count_is_refused(self, name: str, value: int) -> None:
        with pytest.raises(BadInput, match=rf"^here: {name} must be an integer >= 0"):
            RollingSummary.from_params({"budget": 40, name: value}, "here")

    def test_a_summarizer_that_cannot_be_called_is_refused(self) -> None:
        with pytest.raises(BadInput, match="summarizer must be a callable"):
            RollingSummary(40, summarizer="salient")  # type: ignore[arg-type]


class TestUnits:
    def test_a_call_is_folded_with_its_results(self) -> None:
        # 3 + 3 + 3 + 6 = 15 > 12: keep 1 would fold turns 1 and 2; the unit [1, 2, 3]
        # is one, so the call, its result and the turn between fold together.
        turns = (calling("c1"), user(2), answering("c1"), user(5))
        state, decided = play(RollingSummary(12, 1, 6), *turns)
        event = compaction(decided[3])
        assert ((4,), (1, 2, 3)) == (staying(state), tuple(item.turn for item in event.warm))

    def test_a_result_kept_keeps_its_call(self) -> None:
        policy = RollingSummary(12, 1, 6)
        state, _decided = play(policy, user(5), calling("c1", n=4), answering("c1", n=4))
        assert ((2, 3), 10) == (staying(state), policy.floor(state.window))

    def test_a_pinned_turn_is_never_folded(self) -> None:
        policy = RollingSummary(12, 1, 6)
        state, _decided = play(policy, pinned("system", 3), user(4), user(4))
        assert ((1, 3), 4 + 5) == (staying(state), policy.floor(state.window))

    def test_nothing_foldable_is_no_compaction(self) -> None:
        """All of HOT in one unit with a call waiting: over budget, nothing can go."""
        _, decided = play(RollingSummary(5, 1), calling("c1"), user(3))
        assert [1, 1] == [len(events) for events in decided]
