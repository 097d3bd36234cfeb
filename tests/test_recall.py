"""memtape.policies.window.recall: turns that left the window, searched and brought back."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

from pathlib import Path
from typing import Any

import pytest

from memtape.checking.check import check_file
from memtape.checking.invariants import check_recall, check_run, check_token_total
from memtape.core.commands import AddTurn, CreateBlock, EditBlock, Recall
from memtape.core.errors import BadInput, CorruptLog, Rejected
from memtape.core.events import CompactionTriggered, Recalled, TurnAdded, WarmItem
from memtape.policies.session import Policies, Session
from memtape.policies.text.request import chat_messages
from memtape.projections.audit import audit, parse_target
from memtape.projections.billing.prompt import PromptTracker
from memtape.projections.metrics import steps, visible
from memtape.projections.probe_parts import ProbeParts
from memtape.projections.text import render_view
from memtape.projections.timeline import summarize
from memtape.projections.view import view_data
from memtape.reducers import evolve, fold
from memtape.runs.files import save_run
from memtape.runs.redact import export_redacted
from memtape.scenarios.loader import load_scenario

TURNS = (
    "My order ORD-7731 arrived with a cracked screen.",
    "Sorry to hear that. I can arrange a replacement.",
    "Please do, and send it to the office address.",
    "Done. The replacement ships tomorrow.",
    "Thanks. How long does the refund of the shipping fee take?",
    "Three to five business days.",
)


def _policies(**compaction: Any) -> Policies:
    table = {"policy": "tiered", "budget": 30, "hot_n": 2, "recall": "bm25", **compaction}
    return Policies.from_params({"compaction": table})


def _session(**compaction: Any) -> Session:
    session = Session(_policies(**compaction))
    for number, text in enumerate(TURNS):
        session.execute(AddTurn("user" if number % 2 == 0 else "assistant", text))
    return session


class TestParameter:
    def test_the_compaction_table_reads_back_with_its_recall(self) -> None:
        assert "bm25" == _policies().params()["compaction"]["recall"]

    def test_a_table_without_recall_has_none(self) -> None:
        tables = {"compaction": {"policy": "tiered", "budget": 30, "hot_n": 2}}
        assert None is Policies.from_params(tables).recall

    def test_set_turns_recall_on_and_a_new_policy_keeps_it(self) -> None:
        tables = {"compaction": {"policy": "tiered", "budget": 30, "hot_n": 2}}
        policies = Policies.from_params(tables).with_settings(
            ["compaction.recall=bm25", "compaction.policy=sliding-window"]
        )
        assert ("sliding-window", "bm25") == (
            policies.params()["compaction"]["policy"],
            policies.params()["compaction"]["recall"],
        )

    def test_an_unknown_recall_is_one_clear_line(self) -> None:
        with pytest.raises(
            BadInput, match=r"^s: \[compaction\]: recall must be one of bm25, embeddings, got"
        ):
            Policies.from_params(
                {"compaction": {"policy": "tiered", "budget": 30, "recall": "bm52"}}, "s"
            )


class TestLeaving:
    def test_each_turn_that_left_hot_joins_left_in_the_order_it_left(self) -> None:
        window = _session().state.window
        assert [1, 2, 3, 4] == [number for number, _, _ in window.left]

    def test_a_folded_turn_joins_left_too(self) -> None:
        session = Session(_policies())
        for text in TURNS:
            session.execute(AddTurn("tool", text))
        window = session.state.window
        folded = sorted([*(item.turn for item in window.warm), *window.cold])
        assert ([1, 2, 3], [1, 2, 3]) == ([number for number, _, _ in window.left], folded)

    def test_a_session_that_recalls_marks_each_compaction_to_keep_what_it_moves(self) -> None:
        events = _session().run.events
        marked = [event.recall for event in events if isinstance(event, CompactionTriggered)]
        assert (True, [True] * len(marked)) == (bool(marked), marked)

    def test_a_session_that_does_not_recall_keeps_nothing_of_what_left(self) -> None:
        """Kept always, what left would cost every run a tenth of each turn's time."""
        session = Session(Policies.from_params({"compaction": {"policy": "tiered", "budget": 30}}))
        for text in TURNS:
            session.execute(AddTurn("user", text))
        window = session.state.window
        assert (True, []) == (bool(window.dropped), list(window.left))


class TestRecall:
    def test_the_best_match_comes_back_verbatim_with_its_score(self) -> None:
        session = _session()
        (event,) = session.execute(Recall("cracked screen order", 2))
        assert isinstance(event, Recalled)
        assert ((1,), (WarmItem(1, TURNS[0], 9),)) == (event.found, event.brought)

    def test_the_recall_tier_is_counted_in_the_window(self) -> None:
        session = _session()
        before = session.state.window.tokens
        session.execute(Recall("cracked screen", 1))
        assert before + 9 == session.state.window.tokens

    def test_a_recall_never_takes_the_window_over_budget(self) -> None:
        session = _session(budget=30)
        session.execute(Recall("the replacement order address refund", 4))
        window = session.state.window
        assert (True, True) == (window.tokens <= 30, len(window.recalled) < 4)

    def test_what_does_not_fit_is_found_but_not_brought(self) -> None:
        session = _session()
        (event,) = session.execute(Recall("the replacement order address refund", 4))
        assert isinstance(event, Recalled)
        brought = {item.turn for item in event.brought}
        assert (4, True) == (len(event.found), brought < set(event.found))

    def test_the_next_recall_replaces_the_tier(self) -> None:
        session = _session()
        session.execute(Recall("cracked screen", 1))
        session.execute(Recall("office address", 1))
        assert [3] == [item.turn for item in session.state.window.recalled]

    def test_a_compaction_keeps_the_tier_and_makes_room_around_it(self) -> None:
        session = _session()
        session.execute(Recall("cracked screen", 1))
        session.execute(AddTurn("user", "One more question about my warranty."))
        window = session.state.window
        assert ([1], [], True) == (
            [item.turn for item in window.recalled],
            check_token_total(window, at=0),
            window.tokens <= 30,
        )

    def test_a_recall_that_finds_nothing_empties_the_tier(self) -> None:
        session = _session()
        session.execute(Recall("cracked screen", 1))
        session.execute(Recall("zebra", 1))
        assert () == session.state.window.recalled

    def test_a_recall_without_recall_set_is_rejected(self) -> None:
        tables = {"compaction": {"policy": "tiered", "budget": 30, "hot_n": 2}}
        session = Session(Policies.from_params(tables))
        with pytest.raises(Rejected, match='recall = "bm25"'):
            session.execute(Recall("order", 1))

    def test_replay_never_searches(self) -> None:
        session = _session()
        session.execute(Recall("cracked screen", 1))
        assert session.state == fold(session.run.events)

    def test_a_seek_back_rebuilds_the_index_from_the_state(self) -> None:
        session = _session()
        policies = session.policies
        assert policies.recall is not None
        recall, compaction = policies.recall, policies.compaction
        assert compaction is not None
        query = Recall("the replacement", 1)
        later = recall.decide(session.state, query, compaction)
        earlier = recall.decide(session.run.state_at(4), query, compaction)
        again = recall.decide(session.state, query, compaction)
        assert ((4,), (), (4,)) == (later.found, earlier.found, again.found)

    def test_a_probe_in_the_recall_tier_is_visible(self) -> None:
        session = _session()
        session.execute(Recall("cracked screen", 1))
        assert visible(session.state.window, "ORD-7731")


class TestFold:
    def test_a_recall_of_a_turn_it_did_not_find_is_refused(self) -> None:
        state = _session().state
        with pytest.raises(CorruptLog, match="did not find"):
            evolve(state, Recalled("x", 1, (2,), (1.0,), (WarmItem(1, "x", 1),)))

    def test_found_and_scores_must_pair(self) -> None:
        with pytest.raises(CorruptLog, match="scored"):
            evolve(_session().state, Recalled("x", 1, (2,), (), ()))


class TestPromise:
    def test_a_recall_over_budget_breaks_the_promise(self) -> None:
        session = _session()
        policies = session.policies
        assert policies.compaction is not None
        before = session.state
        left = before.window.left
        items = tuple(WarmItem(*turn) for turn in left)
        event = Recalled("x", 4, (1, 2, 3, 4), (1.0, 1.0, 1.0, 1.0), items)
        after = evolve(before, event)
        violations = check_recall(policies.compaction, before, after, event, at=9)
        assert ["recall-budget"] == [v.invariant for v in violations]

    def test_a_recall_of_a_turn_still_hot_breaks_the_promise(self) -> None:
        session = _session()
        policies = session.policies
        assert policies.compaction is not None
        before = session.state
        event = Recalled("x", 1, (6,), (1.0,), (WarmItem(6, TURNS[5], 1),))
        violations = check_recall(policies.compaction, before, evolve(before, event), event, at=9)
        assert ["a recall brought back turn 6, which had not left HOT"] == [
            v.message for v in violations
        ]

    def test_a_run_with_recalls_keeps_every_invariant(self) -> None:
        session = _session()
        session.execute(Recall("cracked screen order", 3))
        session.execute(AddTurn("user", "One more question about my warranty."))
        session.execute(Recall("shipping fee refund", 2))
        for text in TURNS:
            session.execute(AddTurn("tool", text))
        assert [] == check_run(session.run, session.policies)


class TestWithBlocks:
    def _session(self) -> Session:
        session = Session(_policies(budget=40))
        session.execute(CreateBlock("human", 60, "Name: Dana."))
        for number, text in enumerate(TURNS):
            session.execute(AddTurn("user" if number % 2 == 0 else "assistant", text))
        session.execute(EditBlock("human", "append", "Order ORD-7731."))
        session.execute(Recall("cracked screen order", 2))
        session.execute(AddTurn("user", "One more question about my warranty."))
        session.execute(Recall("shipping fee refund", 2))
        return session

    def test_the_window_counts_its_blocks_and_its_recall_tier(self) -> None:
        window = self._session().state.window
        hot = sum(t.tokens for t in window.hot) + sum(w.tokens for w in window.warm)
        recalled = sum(item.tokens for item in window.recalled)
        assert (True, hot + window.gist_tokens + window.block_tokens + recalled) == (
            bool(window.blocks and window.recalled),
            window.tokens,
        )

    def test_a_run_with_blocks_and_recalls_keeps_every_invariant(self) -> None:
        session = self._session()
        assert [] == check_run(session.run, session.policies)

    def test_the_probe_tracker_sees_the_recall_tier_at_every_step(self) -> None:
        run = self._session().run
        texts = ("cracked screen", "shipping fee", "office address")
        tracker = ProbeParts(texts)
        for step, batch, _, after in steps(run):
            tracker.follow(batch, after.window, run.batch(step)[0])
            expected = [visible(after.window, text) for text in texts]
            assert expected == [tracker.visible(index) for index in range(len(texts))]


class TestScenario:
    def test_a_recall_step_reads_its_query_and_k(self, tmp_path: Path) -> None:
        path = tmp_path / "s.toml"
        path.write_text(
            '[compaction]\npolicy = "tiered"\nbudget = 30\nrecall = "bm25"\n'
            '[[step]]\nrecall = "cracked screen"\nk = 2\n'
        )
        assert [Recall("cracked screen", 2)] == list(load_scenario(str(path)).steps)

    def test_a_recall_step_without_recall_set_names_the_step(self, tmp_path: Path) -> None:
        path = tmp_path / "s.toml"
        path.write_text(
            '[compaction]\npolicy = "tiered"\nbudget = 30\n[[step]]\nrecall = "cracked screen"\n'
        )
        with pytest.raises(BadInput, match=r"step 1: a recall step needs recall = \"bm25\""):
            load_scenario(str(path))


class TestRendering:
    def _recalled(self) -> Session:
        session = _session()
        session.execute(Recall("cracked screen order", 2))
        return session

    def test_show_lists_the_recall_tier_after_hot(self) -> None:
        session = self._recalled()
        lines = list(render_view(view_data(session.state, len(session.run), session.policies)))
        assert f"  RECALL  turn   1  {TURNS[0]}  (9)" in lines

    def test_the_json_view_holds_the_recall_tier(self) -> None:
        session = self._recalled()
        window = view_data(session.state, len(session.run), session.policies)["window"]
        assert [{"turn": 1, "text": TURNS[0], "tokens": 9}] == window["recalled"]

    def test_why_a_turn_tells_the_recall_that_found_it(self) -> None:
        session = self._recalled()
        life = audit(session.run, session.policies, parse_target("turn:1"))
        (subject,) = life.subjects
        assert (
            "found by recall 'cracked screen order', rank 1 of 1 (top 2), score 3.4362; "
            "brought back verbatim (9 tokens): window 18 → 27",
            "now DROPPED, and recalled; window 27 tokens",
        ) == (subject.steps[-1].what, subject.now.what)

    def test_the_timeline_names_what_was_found_and_brought(self) -> None:
        session = self._recalled()
        before, after = session.run.state_at(8), session.run.state_at(9)
        event = session.run.events[8]
        assert (
            "recall of 'cracked screen order' found 1 (3.436); brought back 1, 9 tokens"
        ) == summarize(event, before, after)


class TestRequest:
    def test_the_recalled_turns_are_sent_before_hot(self) -> None:
        session = _session()
        session.execute(Recall("cracked screen", 1))
        first = chat_messages(session.state.window)[0]
        assert {"role": "system", "content": f"Earlier turns, recalled:\n{TURNS[0]}"} == first

    def test_the_prompt_counts_the_recall_tier(self) -> None:
        session = _session()
        tracker = PromptTracker()
        tracker.added(e for e in session.run.events if isinstance(e, TurnAdded))
        tracker.compacted()
        session.execute(Recall("cracked screen", 1))
        tracker.compacted()
        session.execute(AddTurn("user", "Any news?"))
        tracker.added(e for e in session.run.events[-2:] if isinstance(e, TurnAdded))
        window = session.state.window
        assert window.tokens == tracker.prompt(window).tokens


class TestRedaction:
    def test_a_redacted_copy_keeps_no_recalled_text_and_checks_clean(self, tmp_path: Path) -> None:
        session = _session()
        session.execute(Recall("cracked screen order", 2))
        source, out = tmp_path / "run.jsonl", tmp_path / "copy.jsonl"
        save_run(session, source, "order-recall")
        export_redacted(source, out)
        copied = out.read_text("utf-8")
        assert ([], True) == (
            [word for word in ("ORD-7731", "cracked", "screen") if word in copied],
            check_file(out).ok,
        )
