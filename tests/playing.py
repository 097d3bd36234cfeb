"""Playing turns through a compaction policy by hand, for the policies' unit tests."""

from memtape.core.commands import AddTurn
from memtape.core.events import CompactionTriggered, Event
from memtape.core.state import INITIAL_STATE, State
from memtape.policies.plumbing.protocols import CompactionPolicy
from memtape.reducers import evolve
from memtape.scenarios.writer import toml_value


def words(n: int, stem: str = "w") -> str:
    """A text of ``n`` distinct words (a turn of it costs ``n + 1`` words with its role)."""
    return " ".join(f"{stem}{i}" for i in range(n))


def user(n: int) -> AddTurn:
    """A user turn of ``n`` words: ``n + 1`` tokens under the word count."""
    return AddTurn("user", words(n, "u"))


def tool(n: int, stem: str = "t") -> AddTurn:
    """A tool turn (salient) of ``n`` words: ``n + 1`` tokens under the word count."""
    return AddTurn("tool", words(n, stem))


def play(
    policy: CompactionPolicy, *turns: AddTurn, state: State = INITIAL_STATE
) -> tuple[State, list[tuple[Event, ...]]]:
    """The state after deciding and folding each turn in order, and each turn's events."""
    decided = []
    for turn in turns:
        events = policy.decide(state, turn)
        for event in events:
            state = evolve(state, event)
        decided.append(events)
    return state, decided


def staying(state: State) -> tuple[int, ...]:
    """The numbers of the turns HOT holds: what a compaction kept, read from the state after
    it (a version-3 compaction names only what moves)."""
    return tuple(turn.turn for turn in state.window.hot)


def compaction(events: tuple[Event, ...]) -> CompactionTriggered:
    """The compaction of a turn's two events (a test fails if there is none)."""
    assert 2 == len(events)
    compacted = events[1]
    assert isinstance(compacted, CompactionTriggered)
    return compacted


OWN_PARAMS: dict[str, dict[str, object]] = {
    "recorded": {
        "compactions": [
            {"before": 3, "summary": "what the agent kept of the first two turns"},
            {"before": 8, "summary": "the session so far"},
        ]
    },
}
"""The parameters a registered compaction policy cannot be built without, beside its budget,
for the tests that build every one of them: ``recorded`` needs the compactions it applies."""


def own_settings(name: str) -> tuple[str, ...]:
    """``OWN_PARAMS`` of the policy called ``name`` as ``--set`` settings."""
    return tuple(
        f"compaction.{param}={toml_value(value)}"
        for param, value in OWN_PARAMS.get(name, {}).items()
    )


def calling(*ids: str, n: int = 2) -> AddTurn:
    """An assistant turn (chatter) of ``n`` words calling ``ids``: ``n + 1`` tokens."""
    return AddTurn("assistant", words(n, "a"), calls=ids)


def answering(*ids: str, n: int = 2, salient: bool | None = None) -> AddTurn:
    """A tool turn of ``n`` words carrying the results of ``ids``: ``n + 1`` tokens."""
    return AddTurn("tool", words(n, "r"), salient=salient, answers=ids)


def pinned(role: str, n: int) -> AddTurn:
    """A pinned turn of ``n`` words: ``n + 1`` tokens."""
    return AddTurn(role, words(n, "p"), pin=True)
