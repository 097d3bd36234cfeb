"""Tiered compaction over long generated sessions: memtape against a yardstick.

memtape runs through its real API: for every turn the policy decides, the
run appends and the reducers fold (``run_tiered``). The yardstick is the
seed's algorithm written the plain way, with mutable lists, re-counting the
whole window after each turn and after each move of a compaction. Both must
end with the same window on the same session, which keeps the comparison
honest; ``conftest.py`` checks the ratios of their median times.

The timed rounds run with the cyclic garbage collector paused, as ``timeit``
does, so that a figure is the work of what is timed. The collector's walks
are not memtape's work, but memtape's history is what they walk: at budget 40,
2.2 objects per turn, all alive to the end, against none for the yardstick. They cost in
proportion to the whole heap, and how many fall inside a round depends on
what the process held before it (a 10k-turn round usually escapes them all,
a 100k-turn round does not), so ``test_memtape_with_the_collector`` measures
the 100k rounds again with it running and reports what it adds.
"""

import attrs
import pytest

from benchmarks.conftest import Bench
from benchmarks.sessions import run_tiered, support_session
from memtape.core.commands import AddTurn
from memtape.core.state import Window

Setting = tuple[int, int]
"""A tiered compaction's (budget, hot_n)."""

SETTINGS = [pytest.param((2000, 8), id="2000-8"), pytest.param((40, 2), id="40-2")]
"""A roomy window (about 150 turns fit) and the seed's tight one (about 3 turns fit)."""

SIZES = {"10k": 10_000, "100k": 100_000}
"""Session lengths in turns, by the name the targets use."""

ROUNDS = 3
"""Timed rounds per long benchmark (its median is what the targets compare)."""


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


def note_per_turn(bench: Bench, who: str, setting: Setting, turns: int) -> None:
    """Note the measured cost of one turn."""
    if bench.median is not None:
        budget, hot_n = setting
        per_turn = bench.median / turns * 1e6
        bench.note(
            f"{who}, budget {budget} / hot_n {hot_n}, {turns:,} turns: {per_turn:.2f} µs/turn"
        )


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("setting", SETTINGS)
def test_memtape(bench: Bench, setting: Setting, size: str) -> None:
    budget, hot_n = setting
    turns = bench.size(SIZES[size])
    bench.benchmark.group = f"compaction, budget {budget} / hot_n {hot_n}"
    session = bench.measure(
        f"memtape-{budget}-{hot_n}-{size}",
        run_tiered,
        support_session(turns),
        budget,
        hot_n,
        rounds=ROUNDS,
        collector=False,
    )
    assert len(session.run.commands) == turns
    bench.benchmark.extra_info.update(turns=turns, events=len(session.run))
    note_per_turn(bench, "memtape", setting, turns)


@pytest.mark.parametrize("setting", SETTINGS)
def test_memtape_with_the_collector(bench: Bench, setting: Setting) -> None:
    budget, hot_n = setting
    turns = bench.size(SIZES["100k"])
    bench.benchmark.group = f"compaction, budget {budget} / hot_n {hot_n}"
    session = bench.measure(
        f"memtape-{budget}-{hot_n}-100k-collector",
        run_tiered,
        support_session(turns),
        budget,
        hot_n,
        rounds=ROUNDS,
    )
    assert len(session.run.commands) == turns
    note_per_turn(bench, "memtape with the collector running", setting, turns)


@pytest.mark.parametrize("setting", SETTINGS)
def test_yardstick(bench: Bench, setting: Setting) -> None:
    budget, hot_n = setting
    turns = bench.size(SIZES["100k"])
    commands = support_session(turns)
    bench.benchmark.group = f"compaction, budget {budget} / hot_n {hot_n}"
    yardstick = bench.measure(
        f"yardstick-{budget}-{hot_n}-100k",
        run_yardstick,
        commands,
        budget,
        hot_n,
        rounds=ROUNDS,
        collector=False,
    )
    bench.benchmark.extra_info.update(turns=turns)
    note_per_turn(bench, "yardstick", setting, turns)
    memtape = run_tiered(commands, budget, hot_n).state.window
    assert yardstick.figures() == memtape_figures(memtape)
