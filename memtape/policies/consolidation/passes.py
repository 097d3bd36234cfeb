"""A consolidation pass and what follows from it in the same step: the facts it
distilled written to the store, the block edits it asked for made."""

from collections.abc import Callable

from memtape.core.commands import Consolidate, WriteFact
from memtape.core.errors import Rejected
from memtape.core.events import Consolidated, Event
from memtape.core.state import State
from memtape.policies.plumbing.protocols import ConsolidationPolicy, ForgettingPolicy
from memtape.reducers import evolve, fold

EditBlocks = Callable[[State, Consolidated], tuple[Event, ...]]
"""The events that make a pass's block edits in a state (the window room's
``blocks.consolidated``, given by the session: this room does not reach into the window's)."""


def consolidate(
    consolidation: ConsolidationPolicy,
    forgetting: ForgettingPolicy | None,
    edit_blocks: EditBlocks,
    state: State,
    command: Consolidate,
) -> tuple[Event, ...]:
    """The events of ``command``: the pass's, each distilled fact written as any other
    write is (which needs a ``forgetting`` policy), and each block edit the pass asked for
    (``edit_blocks``); ``Rejected`` if any is refused."""
    events: list[Event] = []
    for event in consolidation.decide(state, command):
        events.append(event)
        state = evolve(state, event)
        if not isinstance(event, Consolidated):
            continue
        if event.semantic:
            if forgetting is None:
                raise Rejected(
                    "a distilled fact needs a [forgetting] policy, and this session has none"
                )
            for fact in event.semantic:
                write = WriteFact(fact.key, fact.text, fact.importance)
                for written in forgetting.decide(state, write):
                    events.append(written)
                    state = evolve(state, written)
        if event.blocks:
            events.extend(edits := edit_blocks(state, event))
            state = fold(edits, state)
    return tuple(events)
