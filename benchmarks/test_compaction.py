"""Tiered compaction over long generated sessions: memtape against a yardstick.

memtape runs through its real API: for every turn the policy decides, the
run appends and the reducers fold (``run_tiered``). The yardstick is the
seed's algorithm written the plain way, with mutable lists, re-counting the
whole window after each turn and after each move of a compaction. Both must
end with the same window on the same session, which keeps the comparison
honest; ``conftest.py`` checks the ratios of their median times.

This machine's speed swings by a third from one minute to the next, and a
ratio of two figures timed minutes apart swings with it. So every round runs
each side in turn (the yardstick, then memtape two ways), and each figure
is the median of its rounds: what weighs on one side weighs on the others.
memtape's figures are the 100k-turn session with the cyclic garbage
collector paused (as ``timeit`` times: memtape's own work) and the same with
it running (as in any program: it walks what memtape keeps). The yardstick
keeps next to nothing for the collector to walk, and runs paused.

A turn must cost the same at every length: ``test_length`` times memtape
alone at 100k and 10k turns, in rounds of its own. Timed inside the
yardstick's rounds, the 10k-turn figure was one run of a tenth of a second
a round, three a setting, and the ratio swung across its bound from one
``make bench`` to the next, while the instructions a turn costs grow 2% from
10k to 100k turns (``python -m benchmarks.count_instructions``).
"""

import time
from functools import partial

import attrs
import pytest

from benchmarks.conftest import Bench, Side
from benchmarks.sessions import run_tiered, support_session
from memtape.core.commands import AddTurn
from memtape.core.state import Window

Setting = tuple[int, int]
"""A tiered compaction's (budget, hot_n)."""

SETTINGS = [pytest.param((2000, 8), id="2000-8"), pytest.param((40, 2), id="40-2")]
"""A roomy window (about 150 turns fit) and the seed's tight one (about 3 turns fit)."""

SIZES = {"10k": 10_000, "100k": 100_000}
"""Session lengths in turns, by the name the targets use."""

ROUNDS = {(2000, 8): 3, (40, 2): 9}
"""Timed rounds per setting; each runs the yardstick and memtape's two figures in turn,
and the targets compare medians. The tight setting's ratio lies near its target, so it
has more rounds (each a few seconds; the roomy setting's yardstick alone takes 20)."""


@attrs.frozen
class Figures:
    """A final window, as either implementation reports it."""

    hot: tuple[int, ...]
    warm: tuple[int, ...]
    cold: tuple[int, ...]
    dropped: tuple[int, ...]
    gist: str
    tokens: int


def memtape_figures(window: Window) -> Figures:
    """The figures of memtape's window."""
    return Figures(
        hot=tuple(turn.turn for turn in window.hot),
        warm=tuple(item.turn for item in window.warm),
        cold=tuple(window.cold),
        dropped=tuple(window.dropped),
        gist=window.gist,
        tokens=window.tokens,
    )


class Yardstick:
    """The seed's tiered compaction, the straightforward mutable way.

    HOT holds ``(turn, role, text, salient)``, WARM ``(turn, text)``. The
    window's tokens are re-counted from every item it holds (word counts of
    ``"{role}: {text}"``, of a WARM text, of the gist) after each turn and
    after each move of a compaction.
    """

    def __init__(self, budget: int, hot_n: int) -> None:
        self.budget = budget
        self.hot_n = hot_n
        self.hot: list[tuple[int, str, str, bool]] = []
        self.warm: list[tuple[int, str]] = []
        self.cold: list[int] = []
        self.dropped: list[int] = []
        self.gist = ""
        self.turns = 0
        self.tokens = 0

    def count(self) -> int:
        """The window's tokens, counted afresh."""
        tokens = sum(len(f"{role}: {text}".split()) for _, role, text, _ in self.hot)
        tokens += sum(len(text.split()) for _, text in self.warm)
        return tokens + len(self.gist.split())

    def add_turn(self, command: AddTurn) -> None:
        """Add the turn to HOT, and compact if the window is now over budget."""
        self.turns += 1
        salient = command.role == "tool" if command.salient is None else command.salient
        self.hot.append((self.turns, command.role, command.text, salient))
        self.tokens = self.count()
        if self.tokens > self.budget:
            self.compact()

    def compact(self) -> None:
        """Older HOT turns go WARM (salient) or are dropped, then oldest WARM goes COLD."""
        while len(self.hot) > self.hot_n:
            turn, _, text, salient = self.hot.pop(0)
            if salient:
                self.warm.append((turn, text))
            else:
                self.dropped.append(turn)
            self.tokens = self.count()
        while self.tokens > self.budget and self.warm:
            turn, _ = self.warm.pop(0)
            self.cold.append(turn)
            cold = len(self.cold)
            self.gist = f"[{cold} earlier turn{'' if cold == 1 else 's'} summarized]"
            self.tokens = self.count()

    def figures(self) -> Figures:
        """The figures of the final window."""
        return Figures(
            hot=tuple(turn for turn, _, _, _ in self.hot),
            warm=tuple(turn for turn, _ in self.warm),
            cold=tuple(self.cold),
            dropped=tuple(self.dropped),
            gist=self.gist,
            tokens=self.tokens,
        )


def run_yardstick(commands: tuple[AddTurn, ...], budget: int, hot_n: int) -> Yardstick:
    """The yardstick over a whole session."""
    yardstick = Yardstick(budget, hot_n)
    for command in commands:
        yardstick.add_turn(command)
    return yardstick


def note_per_turn(bench: Bench, who: str, setting: Setting, turns: int, median: float) -> None:
    """Note the measured cost of one turn."""
    budget, hot_n = setting
    per_turn = median / turns * 1e6
    bench.note(f"{who}, budget {budget} / hot_n {hot_n}, {turns:,} turns: {per_turn:.2f} µs/turn")


@pytest.mark.parametrize("setting", SETTINGS)
def test_compaction(bench: Bench, setting: Setting) -> None:
    budget, hot_n = setting
    long = support_session(bench.size(SIZES["100k"]))
    prefix = f"{budget}-{hot_n}"
    sides = (
        Side(f"yardstick-{prefix}-100k", partial(run_yardstick, long, budget, hot_n)),
        Side(f"memtape-{prefix}-100k", partial(run_tiered, long, budget, hot_n)),
        Side(
            f"memtape-{prefix}-100k-collector",
            partial(run_tiered, long, budget, hot_n),
            collector=True,
        ),
    )
    bench.benchmark.group = f"compaction, budget {budget} / hot_n {hot_n}"
    bench.in_turn(f"compaction-{prefix}-round", sides, rounds=ROUNDS[setting])
    if bench.timed:
        for side in sides:
            who = side.name.split("-")[0] + (
                " with the collector running" if side.collector else ""
            )
            note_per_turn(bench, who, setting, len(long), bench.medians[side.name])
    memtape = run_tiered(long, budget, hot_n)
    assert len(memtape.run.commands) == len(long)
    assert run_yardstick(long, budget, hot_n).figures() == memtape_figures(memtape.state.window)


LENGTH_ROUNDS = 9
"""Timed rounds of ``test_length``: each times the 100k-turn session once, and the 10k-turn
one ten times over as one sample (their mean), so both samples last as long (one 10k-turn
run lasts a tenth of a second, and one such sample swung the ratio by a tenth)."""


@pytest.mark.parametrize("setting", SETTINGS)
def test_length(bench: Bench, setting: Setting) -> None:
    budget, hot_n = setting
    sessions = {size: support_session(bench.size(turns)) for size, turns in SIZES.items()}
    most = max(len(session) for session in sessions.values())
    sides = [
        Side(
            f"tiered-{budget}-{hot_n}-{size}",
            partial(run_tiered, session, budget, hot_n),
            clock=time.process_time,
            repeat=most // len(session),
        )
        for size, session in sessions.items()
    ]
    bench.benchmark.group = f"compaction at two lengths, budget {budget} / hot_n {hot_n}"
    bench.in_turn(f"tiered-{budget}-{hot_n}-round", sides, rounds=LENGTH_ROUNDS)
    if bench.timed:
        for side, session in zip(sides, sessions.values(), strict=True):
            note_per_turn(bench, "memtape alone", setting, len(session), bench.medians[side.name])
    short = sessions["10k"]
    assert len(short) == len(run_tiered(short, budget, hot_n).run.commands)
