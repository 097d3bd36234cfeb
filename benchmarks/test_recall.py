"""Recall: a query over the turns that left the window (issue 30: at most 20 ms at 100,000).

A tiered window of budget 400 drops 100,000 turns of chatter (made up from a
vocabulary of 5,000 words, a few of them common, as a conversation's are);
the recall's index has followed them as they left, so the figure is what a
``Recall`` costs once the index is there: the BM25 search of a four-word query
and the decision of what fits. The index built as the turns left is timed
too, and noted: what the drops cost, a turn at a time.
"""

import random
import time

from benchmarks.conftest import Bench
from memtape.core.commands import Recall
from memtape.core.seq import Seq
from memtape.core.state import INITIAL_STATE, Left, State
from memtape.policies.session import Policies

TURNS = 100_000
"""Turns that left the window (50 times fewer in a smoke run)."""

ROUNDS = 20
"""Queries timed."""

COMMON = ("the", "a", "to", "and", "of", "order", "please", "thanks")


def _words(count: int) -> list[str]:
    return [f"w{n}" for n in range(count)]


def _left(turns: int) -> Seq[Left]:
    """``turns`` turns of 12 words each: four common words and eight from the vocabulary."""
    draw = random.Random(30)
    vocabulary = _words(5_000)
    made = []
    for number in range(1, turns + 1):
        words = [*draw.choices(COMMON, k=4), *draw.choices(vocabulary, k=8)]
        made.append((number, " ".join(words), 14))
    return Seq(made)


def test_a_recall_over_100k_dropped_turns(bench: Bench) -> None:
    turns = bench.size(TURNS)
    left = _left(turns)
    window = INITIAL_STATE.window._replace(left=left, dropped=Seq(number for number, _, _ in left))
    state = State(0.0, window, INITIAL_STATE.store, INITIAL_STATE.memory)
    policies = Policies.from_params(
        {"compaction": {"policy": "tiered", "budget": 400, "hot_n": 2, "recall": "bm25"}}
    )
    assert policies.recall is not None
    assert policies.compaction is not None
    recall, compaction = policies.recall, policies.compaction
    started = time.perf_counter()
    recall.decide(state, Recall("w17 w4242 order w99", 5), compaction)
    bench.note(
        f"recall: the index of {turns:,} turns built in {time.perf_counter() - started:.2f} s"
    )
    event = bench.measure(
        "recall-query-100k",
        recall.decide,
        state,
        Recall("w17 w4242 order w99", 5),
        compaction,
        rounds=ROUNDS,
    )
    assert 5 == len(event.found)
