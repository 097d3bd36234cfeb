"""The tool calls a run leaves without their results.

A call waiting for its result holds its unit open: every turn after it
joins that unit (``memtape.policies.window.units``), and a policy that keeps units
whole can compact nothing from there on. An imported session that lost a
result looks exactly so, and folds and re-decides cleanly: so ``memtape
check`` reports every call still waiting when the run ends, with the turn
that made it, never a silent state.

Two kinds, told apart by what came after. A call made by the run's last
turn that is not a tool result (only results of it, if anything, came
after) is one the session stopped on: the agent was interrupted or the
file ends mid-call. That is what it is, and check says so without failing
the run. A call that the conversation went on past (a user or assistant
turn came after it, without its result) is a dangling unit: a finding, and
the check fails.
"""

from collections.abc import Iterable

import attrs

from memtape.core.events import Event, TurnAdded


@attrs.frozen
class OpenCall:
    """A call no turn answered: its id, the turn that made it and that turn's event
    position; ``stopped`` when the session ended while it waited (nothing but tool results
    after its turn)."""

    call: str
    turn: int
    position: int
    stopped: bool

    def __str__(self) -> str:
        if self.stopped:
            return (
                f"turn {self.turn}'s call {self.call!r} is open at the end: the session "
                "stopped before its result came"
            )
        return (
            f"turn {self.turn}'s call {self.call!r} never got its result, and the session "
            "went on without it: every turn after it is one unit that never closes"
        )


def open_calls(events: Iterable[Event]) -> tuple[OpenCall, ...]:
    """The calls the turns among ``events`` (a run's, in order) make and never answer, in
    the order they were made."""
    waiting: dict[str, tuple[int, int]] = {}
    last_spoken = 0
    for position, event in enumerate(events, start=1):
        if type(event) is not TurnAdded:
            continue
        if event.role != "tool":
            last_spoken = event.turn
        for answer in event.answers:
            waiting.pop(answer, None)
        for call in event.calls:
            waiting[call] = (event.turn, position)
    return tuple(
        OpenCall(call, turn, position, turn >= last_spoken)
        for call, (turn, position) in waiting.items()
    )
