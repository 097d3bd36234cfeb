"""Turns: single ones, the next turn of a session under way with tool-call structure, and
whole sessions of turns."""

import functools

from hypothesis import strategies as st

from memtape.core.commands import ROLES, AddTurn
from memtape.core.state import Window
from memtape.testing.strategies.words import recorded_counts, roles, sized_texts, texts, weighted


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
