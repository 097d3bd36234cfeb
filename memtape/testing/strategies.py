"""Hypothesis strategies for memtape: turns, facts, commands, scenarios, policy parameters.

The command strategies mix commands a session honours with ones it must
reject (a blank role, an importance outside [0, 1], a read of a fact that is
gone, the clock moving backwards), so every property runs over both. Texts
are made of a few words most of the time, so a counterexample shrinks to
something a person reads at a glance. Turns for a session under way
(``turns_for``, ``turn_sequences``) carry tool-call structure (calls, the
results that answer them, in any order, some never answered; pinned turns)
and, given the budget, are sized against it, up to single turns over three
times it (``sized_texts``). Now and then a turn says what it costs (``tokens = N``,
a provider's recorded count, ``recorded_counts``), which the policy takes instead
of its tokenizer's count; and a scenario (``scenarios``) sometimes carries probes,
plain ones and questions with their answer and evidence turns (``probe_sets``).
"""

import functools
import math
from collections.abc import Sequence
from typing import TypeVar

import attrs

from memtape.core.commands import (
    ROLES,
    AddTurn,
    AdvanceClock,
    Command,
    Consolidate,
    Query,
    ReadFact,
    RecordEpisode,
    WriteFact,
)
from memtape.core.state import Window
from memtape.core.values import MAX_TOKENS
from memtape.policies.consolidation.rules import RuleConsolidation
from memtape.policies.session import Policies, Session
from memtape.policies.store.forgetting import ImportanceRecencyAccess
from memtape.policies.window.tiered import TieredCompaction
from memtape.scenarios import Probe, Scenario
from memtape.scenarios.loader import PROBE_KINDS
from memtape.testing.requires import hypothesis_missing

try:
    from hypothesis import strategies as st
except ImportError as error:  # pragma: no cover (the test extra installs it)
    raise ImportError(hypothesis_missing()) from error

T = TypeVar("T")

WORDS = ("Dana", "refund", "order", "policy", "fee", "window", "the", "is", "a", "ok", "$200")
"""Words that turn, fact and episode texts are made of (besides random text)."""

BAD_ROLES = ("", " ", " user", "tool\n", "\tassistant", "User", "developer", "Dana Smith")
"""Roles a compaction policy must reject: any text outside the closed set ``ROLES``."""

KEYS = ("name", "contact", "order", "chitchat", "promo", "user.name", "colour")
"""A small key space, so that writes supersede and reads find facts."""

EPISODES = (
    "the user confirmed their name is Dana",
    "the user confirmed their name is Bo",
    "the tool said a 10% restocking fee applies",
    "colour = blue",
    "order = ORD3300",
    "the user said nothing of note",
    "",
)
"""Episode texts, several of which the consolidation rules below distill."""

RULES: tuple[dict[str, object], ...] = (
    {
        "pattern": "name is (?P<name>[A-Z][a-z]+)",
        "semantic": {"key": "user.name", "text": "user.name = {name}", "importance": 0.9},
    },
    {
        "pattern": "restocking fee",
        "procedural": "returns after the 30-day window: apply a 10% restocking fee",
    },
    {
        "pattern": "^(?P<key>[a-z]+) = (?P<value>\\w+)$",
        "semantic": {"key": "{key}", "text": "{key} is {value}", "importance": 0.4},
    },
)
"""Consolidation rules: two write facts (one to a key of KEYS), one makes a procedure."""


@attrs.frozen
class PolicyParams:
    """One draw of every policy parameter, and how often the run snapshots."""

    budget: int
    hot_n: int
    capacity: int
    half_life: float
    access_boost: float
    snapshot_every: int

    def compaction(self) -> TieredCompaction:
        """The tiered compaction policy with these parameters."""
        return TieredCompaction(self.budget, self.hot_n)

    def forgetting(self) -> ImportanceRecencyAccess:
        """The importance x recency x access policy with these parameters."""
        return ImportanceRecencyAccess(self.capacity, self.half_life, self.access_boost)

    def policies(self) -> Policies:
        """All three policies, the consolidation one with ``RULES``."""
        consolidation = RuleConsolidation.from_params({"rule": [dict(r) for r in RULES]}, "test")
        return Policies(
            compaction=self.compaction(),
            forgetting=self.forgetting(),
            consolidation=consolidation,
        )

    def session(self) -> Session:
        """A fresh session under these parameters."""
        return Session(self.policies(), snapshot_every=self.snapshot_every)


def policy_params(
    access_boosts: st.SearchStrategy[float] | None = None,
) -> st.SearchStrategy[PolicyParams]:
    """Parameters within the policies' documented domains (small budgets more often)."""
    return st.builds(
        PolicyParams,
        budget=budgets(),
        hot_n=st.integers(0, 6),
        capacity=st.integers(1, 8),
        half_life=st.one_of(
            st.floats(0.5, 20.0),
            st.floats(0.0, 1e6, exclude_min=True, allow_nan=False),
        ),
        access_boost=access_boosts if access_boosts is not None else st.floats(0.0, 10.0),
        snapshot_every=st.sampled_from((1, 2, 3, 7)),
    )


def weighted(*branches: tuple[int, st.SearchStrategy[T]]) -> st.SearchStrategy[T]:
    """One of ``branches``, each drawn about as often as its weight says.

    (``st.one_of`` flattens nested choices and drops repeated branches, so
    repeating a branch there would not weigh it.)
    """
    choices = [strategy for weight, strategy in branches for _ in range(weight)]
    return st.integers(0, len(choices) - 1).flatmap(choices.__getitem__)


@functools.cache
def texts() -> st.SearchStrategy[str]:
    """Texts of words, or arbitrary unicode; empty ones included."""
    return weighted(
        (3, st.lists(st.sampled_from(WORDS), max_size=12).map(" ".join)),
        (1, st.text(max_size=16)),
    )


@functools.cache
def roles(*, valid_only: bool = False) -> st.SearchStrategy[str]:
    """Roles: the closed set ``ROLES``, and (unless ``valid_only``) bad ones: a role from
    ``BAD_ROLES`` or any other text."""
    valid = st.sampled_from(ROLES)
    if valid_only:
        return valid
    other = st.text(max_size=12).filter(lambda role: role not in ROLES)
    return weighted((8, valid), (1, st.sampled_from(BAD_ROLES)), (1, other))


@functools.lru_cache(maxsize=256)
def sized_texts(budget: int) -> st.SearchStrategy[str]:
    """Texts of words whose length is drawn against ``budget`` (in words, which the default
    tokenizer counts): a few words most often, then a fair share of the budget, about the
    whole of it, and now and then a single text over three times it, the turn a policy
    that lets its window overshoot is caught on."""
    return st.builds(_words, _sizes(budget), st.integers(0, len(WORDS) - 1))


def _sizes(budget: int) -> st.SearchStrategy[int]:
    """Sizes drawn against ``budget``: a few most often, then a fair share of it, about the
    whole of it, and now and then over three times it."""
    budget = max(budget, 1)
    return weighted(
        (6, st.integers(0, 4)),
        (3, st.integers(max(budget // 8, 1), max(budget // 3, 1))),
        (2, st.integers(max(budget // 2, 1), budget + 1)),
        (1, st.integers(3 * budget + 1, 3 * budget + 6)),
    )


@functools.lru_cache(maxsize=256)
def recorded_counts(budget: int | None = None) -> st.SearchStrategy[int | None]:
    """A turn's ``tokens``: None (the policy's tokenizer counts it) most often, else a
    recorded count, sized against ``budget`` when it is given (``_sizes``), zero included,
    and now and then the most one text may count (``MAX_TOKENS``)."""
    counts = st.integers(0, 60) if budget is None else _sizes(budget)
    return weighted((12, st.none()), (3, counts), (1, st.just(MAX_TOKENS)))


def _words(length: int, offset: int) -> str:
    """``length`` words of ``WORDS``, in their order from ``offset`` on (a long text costs
    one draw, and shrinks to a short one)."""
    return " ".join(WORDS[(offset + i) % len(WORDS)] for i in range(length))


def add_turns(*, valid_only: bool = False, budget: int | None = None) -> st.SearchStrategy[AddTurn]:
    """Turns with random roles and texts, salient, chatter or left to the role, some with a
    recorded count (``recorded_counts``); given a ``budget``, texts and counts are sized
    against it as well (``sized_texts``)."""
    text = texts() if budget is None else weighted((1, texts()), (3, sized_texts(budget)))
    return st.builds(
        AddTurn,
        role=roles(valid_only=valid_only),
        text=text,
        salient=st.one_of(st.none(), st.booleans()),
        tokens=recorded_counts(budget),
    )


GHOST = "ghost"
"""The stem of an id no turn ever calls (``turns_for`` answers it to be refused)."""


def call_id(turn: int, index: int) -> str:
    """The id of the ``index``-th call that ``turn`` makes in the kit's sessions."""
    return f"call_{turn}_{index}"


def turns_for(
    window: Window, budget: int | None = None, *, valid_only: bool = False
) -> st.SearchStrategy[AddTurn]:
    """The next turn of a session whose window is ``window``, with tool-call structure.

    Plain turns (any role, some pinned), assistant turns calling 1-3 fresh ids,
    tool turns answering some of the calls still waiting (several at once, in
    any order, so parallel calls come back out of order; some calls are never
    answered), system turns (mostly pinned, and most often as the first turn).
    Unless ``valid_only``, some turns break the run's structure, which a
    policy must refuse (``memtape.policies.window.turns.structure_error``): answering
    an id no turn called, answering a call already answered, calling an id
    still waiting. Texts are sized against ``budget`` when it is given.
    """
    waiting = sorted(window.waiting.items(), key=lambda item: (item[1], item[0]))
    return _turn(window.turns + 1, tuple(name for name, _ in waiting), budget, valid_only)


# Built once for each (turn number, calls waiting): a session replayed while hypothesis
# shrinks asks for the same ones again, and a strategy drawn for the first time costs
# more than the draw (hypothesis validates it and works out its properties).
@functools.lru_cache(maxsize=4096)
def _turn(
    number: int, waiting: tuple[str, ...], budget: int | None, valid_only: bool
) -> st.SearchStrategy[AddTurn]:
    text = texts() if budget is None else weighted((1, texts()), (3, sized_texts(budget)))
    pin = weighted((9, st.just(False)), (1, st.just(True)))
    tokens = recorded_counts(budget)
    plain = st.builds(
        AddTurn,
        role=roles(valid_only=valid_only),
        text=text,
        salient=st.one_of(st.none(), st.booleans()),
        pin=pin,
        tokens=tokens,
    )
    calls = st.integers(1, 3).map(lambda n: tuple(call_id(number, i) for i in range(n)))
    calling = st.builds(
        AddTurn,
        role=weighted((6, st.just("assistant")), (1, st.sampled_from(ROLES))),
        text=text,
        calls=calls,
        pin=pin,
        tokens=tokens,
    )
    system = st.builds(
        AddTurn,
        role=st.just("system"),
        text=text,
        pin=weighted((1, st.just(False)), (3, st.just(True))),
        tokens=tokens,
    )
    branches: list[tuple[int, st.SearchStrategy[AddTurn]]] = [
        (5, plain),
        (4, calling),
        (6 if number == 1 else 1, system),
    ]
    if waiting:
        answers = st.permutations(waiting).flatmap(
            lambda order: st.integers(1, len(order)).map(lambda k: tuple(order[:k]))
        )
        answering = st.builds(
            AddTurn,
            role=weighted((8, st.just("tool")), (1, st.sampled_from(ROLES))),
            text=text,
            answers=answers,
            pin=pin,
            salient=st.one_of(st.none(), st.booleans()),
            tokens=tokens,
        )
        branches.append((8, answering))
    if not valid_only:
        branches.append((1, _misanswering(number, waiting, text)))
    return weighted(*branches)


def _misanswering(
    number: int, waiting: tuple[str, ...], text: st.SearchStrategy[str]
) -> st.SearchStrategy[AddTurn]:
    """Turns whose structure the run does not allow, each for a reason of its own."""
    ghost = f"{GHOST}_{number}"
    # An earlier turn's first call id that no call waits on: answered already, or never made.
    answered = st.integers(1, max(number - 1, 1)).map(
        lambda turn: call_id(turn, 0) if call_id(turn, 0) not in waiting else ghost
    )
    wrong = [
        st.builds(AddTurn, st.just("tool"), text, answers=st.just((ghost,))),
        st.builds(AddTurn, st.just("tool"), text, answers=answered.map(lambda id_: (id_,))),
    ]
    if waiting:
        calls = st.sampled_from(waiting).map(lambda id_: (id_,))
        wrong.append(st.builds(AddTurn, st.just("assistant"), text, calls=calls))
    return st.one_of(wrong)


@st.composite
def turn_sequences(
    draw: st.DrawFn, budget: int | None = None, *, max_size: int = 40, valid_only: bool = True
) -> list[AddTurn]:
    """Whole sessions of turns with tool-call structure (``turns_for``), each drawn for the
    session as the turns before it left it (a refused turn leaves it as it was)."""
    size = draw(st.integers(0, max_size))
    turns: list[AddTurn] = []
    waiting: dict[str, int] = {}
    number = 1
    for _ in range(size):
        order = tuple(sorted(waiting, key=lambda id_: (waiting[id_], id_)))
        turn = draw(_turn(number, order, budget, valid_only))
        turns.append(turn)
        if _allowed(turn, waiting) and turn.role in ROLES and isinstance(turn.text, str):
            for answered in turn.answers:
                del waiting[answered]
            waiting.update(dict.fromkeys(turn.calls, number))
            number += 1
    return turns


def _allowed(turn: AddTurn, waiting: dict[str, int]) -> bool:
    """Whether ``turn``'s structure is one the run allows, ``waiting`` being what waits."""
    return all(id_ in waiting for id_ in turn.answers) and not any(
        id_ in waiting for id_ in turn.calls
    )


def importances() -> st.SearchStrategy[float]:
    """Importances a write accepts: [0, 1]."""
    return st.one_of(st.floats(0.0, 1.0), st.sampled_from((0.0, 1.0)))


def bad_importances(*, nan: bool = True) -> st.SearchStrategy[float]:
    """Importances a write rejects: outside [0, 1], infinite, or (if ``nan``) NaN."""
    outside = st.floats(allow_nan=False).filter(lambda x: not 0.0 <= x <= 1.0)
    return st.one_of(outside, st.just(math.nan)) if nan else outside


def keys(*, valid_only: bool = False) -> st.SearchStrategy[str]:
    """Fact keys from a small space (so writes collide), and (unless ``valid_only``) blank ones."""
    valid = st.sampled_from(KEYS)
    if valid_only:
        return valid
    return weighted((12, valid), (1, st.sampled_from(("", " ", "\n"))), (1, st.text(max_size=4)))


def write_facts(*, valid_only: bool = False, nan: bool = True) -> st.SearchStrategy[WriteFact]:
    """Writes, sometimes naming a key to supersede; mostly valid importances."""
    importance = importances()
    if not valid_only:
        importance = weighted((10, importance), (1, bad_importances(nan=nan)))
    return st.builds(
        WriteFact,
        key=keys(valid_only=valid_only),
        text=texts(),
        importance=importance,
        supersedes=weighted((6, st.none()), (1, keys(valid_only=valid_only))),
    )


def read_facts() -> st.SearchStrategy[ReadFact]:
    """Reads by key or by id (often a real one), and reads naming both or neither."""
    ids = weighted((4, st.integers(1, 6)), (1, st.integers(-1, 16)))
    return weighted(
        (6, st.builds(ReadFact, key=keys())),
        (6, st.builds(ReadFact, id=ids)),
        (1, st.builds(ReadFact, key=keys(), id=ids)),
        (1, st.just(ReadFact())),
    )


def queries(*, valid_only: bool = False) -> st.SearchStrategy[Query]:
    """Queries with texts of words (or none), an expected key (or none), and a ``k``;
    unless ``valid_only``, some with a ``k`` below 1."""
    k = (
        st.integers(1, 5)
        if valid_only
        else weighted((8, st.integers(1, 5)), (1, st.integers(-2, 0)))
    )
    return st.builds(
        Query,
        text=weighted((3, texts()), (1, st.just(""))),
        key=weighted((3, keys(valid_only=True)), (1, st.just(""))),
        k=k,
    )


def record_episodes() -> st.SearchStrategy[RecordEpisode]:
    """Episodes, several of which the consolidation rules match."""
    return st.builds(RecordEpisode, weighted((3, st.sampled_from(EPISODES)), (1, texts())))


@attrs.frozen
class ClockStep:
    """A clock move relative to the clock so far; ``command_sequences`` makes it absolute."""

    delta: float


def clock_steps(*, nan: bool = True) -> st.SearchStrategy[ClockStep]:
    """Mostly forward moves (zero included), some backward, some far, some not finite."""
    deltas = weighted(
        (12, st.floats(0.0, 20.0)),
        (2, st.floats(-20.0, -0.001)),
        (2, st.floats(1e3, 1e9)),
        (1, st.sampled_from((math.inf, -math.inf, math.nan) if nan else (math.inf, -math.inf))),
    )
    return st.builds(ClockStep, deltas)


def _absolute(steps: Sequence[Command | ClockStep]) -> list[Command]:
    clock = 0.0
    commands: list[Command] = []
    for step in steps:
        if isinstance(step, ClockStep):
            to = clock + step.delta
            if math.isfinite(to) and to >= clock:
                clock = to
            commands.append(AdvanceClock(to))
        else:
            commands.append(step)
    return commands


def commands(*, nan: bool = True) -> st.SearchStrategy[Command | ClockStep]:
    """One command of any kind (a clock move still relative)."""
    return weighted(
        (6, add_turns()),
        (4, write_facts(nan=nan)),
        (2, clock_steps(nan=nan)),
        (2, read_facts()),
        (2, queries()),
        (2, record_episodes()),
        (1, st.just(Consolidate())),
    )


def command_sequences(*, max_size: int = 40, nan: bool = True) -> st.SearchStrategy[list[Command]]:
    """Whole sessions: random commands, clock moves relative to the clock reached so far.

    A backward move is written as an absolute time below the clock, so the
    session rejects it; ``nan=False`` leaves out NaN times and importances
    (whose commands cannot equal themselves).
    """
    return _sequences(commands(nan=nan), max_size).map(_absolute)


def valid_command_sequences(*, max_size: int = 30) -> st.SearchStrategy[list[Command]]:
    """Sessions of commands that mostly succeed: valid roles, keys, importances, forward clock."""
    step: st.SearchStrategy[Command | ClockStep] = weighted(
        (6, add_turns(valid_only=True)),
        (4, write_facts(valid_only=True)),
        (2, st.builds(ClockStep, st.floats(0.0, 20.0))),
        (1, st.builds(ReadFact, key=keys(valid_only=True))),
        (1, st.builds(ReadFact, id=st.integers(1, 6))),
        (1, queries(valid_only=True)),
        (2, record_episodes()),
        (1, st.just(Consolidate())),
    )
    return _sequences(step, max_size).map(_absolute)


def store_command_sequences(*, max_size: int = 30) -> st.SearchStrategy[list[Command]]:
    """Sessions of the store alone: writes (often to the same keys), reads, queries, clock."""
    step: st.SearchStrategy[Command | ClockStep] = weighted(
        (5, write_facts(valid_only=True)),
        (2, st.builds(ClockStep, st.floats(0.0, 50.0))),
        (2, st.builds(ReadFact, key=keys(valid_only=True))),
        (1, st.builds(ReadFact, id=st.integers(1, 12))),
        (3, queries(valid_only=True)),
    )
    return _sequences(step, max_size).map(_absolute)


def _sequences(step: st.SearchStrategy[T], max_size: int) -> st.SearchStrategy[list[T]]:
    # Hypothesis keeps lists short on average; long sessions are where
    # compactions push items cold and writes evict, so draw those often.
    short = min(6, max_size)
    return weighted(
        (1, st.lists(step, max_size=short)),
        (2, st.lists(step, min_size=min(15, max_size), max_size=max_size)),
    )


@st.composite
def scenarios(draw: st.DrawFn, *, max_size: int = 30) -> Scenario:
    """Whole scenarios: all three seed policies under random parameters, a session of
    commands that mostly succeed (what ``scenario_text`` writes and ``memtape run`` runs),
    and now and then probes (``probe_sets``) on its turns."""
    params = draw(policy_params())
    # A scenario without steps does not load: it has nothing to run.
    steps = draw(valid_command_sequences(max_size=max_size).filter(len))
    turns = sum(isinstance(step, AddTurn) for step in steps)
    probes = draw(weighted((2, st.just(())), (1, probe_sets(turns))))
    return Scenario("generated", "", params.policies(), tuple(steps), "-", probes)


def probe_sets(turns: int, *, max_size: int = 4) -> st.SearchStrategy[tuple[Probe, ...]]:
    """Probes for a scenario of ``turns`` turns: plain ones (a text that must stay visible,
    of a kind or none) and questions (a question and its answer, with or without a text,
    their evidence distinct turns of the scenario), each from a turn of at least 1."""
    words = texts().filter(str.strip)
    start = st.integers(1, max(turns, 1) + 2)
    kind = st.one_of(st.none(), st.sampled_from(PROBE_KINDS))
    plain = st.builds(Probe, words, start, kind)
    evidence: st.SearchStrategy[tuple[int, ...]] = st.just(())
    if turns:
        evidence = st.lists(st.integers(1, turns), max_size=3, unique=True).map(tuple)
    question = st.builds(
        Probe,
        st.one_of(st.none(), words),
        start,
        kind,
        question=words,
        answer=words,
        evidence=evidence,
    )
    return st.lists(weighted((1, plain), (1, question)), max_size=max_size).map(tuple)


def budgets() -> st.SearchStrategy[int]:
    """Token budgets for a compaction policy: small ones often, where compactions happen."""
    return st.one_of(st.integers(1, 40), st.integers(1, 200))


@st.composite
def triggers(draw: st.DrawFn, budget: int) -> dict[str, object]:
    """A compaction table's trigger and target parameters against ``budget``
    (``memtape.policies.window.trigger``): none of them half the time (the budget triggers
    and is the target), else a token, percentage or message trigger or a list of them, and
    perhaps a target, an interval and a least to free."""
    if draw(st.booleans()):
        return {}
    window = 4 * budget
    one = st.one_of(
        st.integers(max(budget // 2, 1), 2 * budget),
        st.integers(25, 100).map(lambda percent: f"{percent}%"),
        st.integers(2, 8).map(lambda count: {"messages": count}),
    )
    spec = draw(st.one_of(one, st.lists(one, min_size=1, max_size=3)))
    table: dict[str, object] = {"trigger": spec, "context_window": window}
    if draw(st.booleans()):
        table["target"] = draw(st.integers(1, budget))
    if draw(st.booleans()):
        table["every"] = draw(st.integers(1, 5))
    if draw(st.booleans()):
        table["clear_at_least"] = draw(st.integers(1, budget))
    return table


def capacities() -> st.SearchStrategy[int]:
    """Capacities for a forgetting policy: small, so that writes evict."""
    return st.integers(1, 6)
