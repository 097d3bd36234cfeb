"""What holds of every run: a replay folds to the recorded state, every event survives
the codec, and a decision is the same whatever the clock and the random state."""

from collections.abc import Callable
from contextlib import nullcontext

import orjson

from memtape.checking.determinism import decide_in_world
from memtape.checking.invariants.violation import Violation
from memtape.core.codec import event_data, event_from_data
from memtape.core.commands import Command
from memtape.core.errors import BadInput, Rejected
from memtape.core.events import (
    Event,
)
from memtape.core.state import State
from memtape.llm.answers import Answers, Replay, answering, recorded_calls
from memtape.policies.session import Policies


def check_replay(folded: State, recorded: State, *, at: int) -> list[Violation]:
    """The state folded from scratch equals the state the run holds for the same position."""
    if folded == recorded:
        return []
    parts = [
        name
        for name in ("clock", "window", "store", "memory")
        if getattr(folded, name) != getattr(recorded, name)
    ]
    message = f"folding the log from scratch gives another {' and '.join(parts)} than the run"
    return [Violation(at, "replay", message)]


def check_codec(event: Event, *, at: int) -> list[Violation]:
    """The event written as a run file writes it, and read back, equals itself."""
    cls = type(event)
    try:
        data = orjson.loads(orjson.dumps(event_data(event)))
        back = event_from_data(cls.__name__, cls.VERSION, data)
    except (BadInput, TypeError, orjson.JSONEncodeError) as error:
        message = f"{cls.__name__} cannot be written and read back: {error}"
        return [Violation(at, "codec", message)]
    if back != event:
        message = f"{event!r} reads back from its run file as {back!r}"
        return [Violation(at, "codec", message)]
    return []


def check_determinism(
    policies: Policies,
    state: State,
    command: Command,
    *,
    at: int,
    answers: Callable[[], Answers] | None = None,
) -> list[Violation]:
    """Deciding ``command`` on ``state`` twice, with the wall clock and the global random
    generator set to different values each time, gives identical events (or the same
    rejection). ``at`` is the position its first event would take; ``answers``, when
    given, makes the answers to each decision's model questions (a fresh ``Replay``).
    Otherwise the first decision asks whatever it asks, and the second gets the answers
    the first recorded: a model's own variation is not the policy's."""
    if answers is None:
        first = decide_in_world(policies, state, command, 0)
        asked = recorded_calls(first) if isinstance(first, tuple) else ()
        with answering(Replay(asked)) if asked else nullcontext():
            second = decide_in_world(policies, state, command, 1)
    else:
        with answering(answers()):
            first = decide_in_world(policies, state, command, 0)
        with answering(answers()):
            second = decide_in_world(policies, state, command, 1)
    if _outcome(first) == _outcome(second):
        return []
    message = (
        f"{type(command).__name__} decided twice on the same state, under another wall clock "
        f"and random state: {_outcome(first)}, then {_outcome(second)}"
    )
    return [Violation(at, "determinism", message)]


def _outcome(outcome: tuple[Event, ...] | Rejected) -> str:
    if isinstance(outcome, Rejected):
        return f"rejected ({outcome})"
    return repr(list(outcome))
