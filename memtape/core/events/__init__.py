"""Events: immutable, past-tense records of what happened in a run.

An event holds a decision and the external inputs behind it (a turn's
measured token count, a summary's text, the score that justified an
eviction), never what the fold can derive from earlier events. The one
exception is identity: a turn's number and a fact's or episode's id are
written into the event that creates it, so a log reads on its own and the
fold can refuse an event that does not follow its predecessor. Each event
type carries a schema version in ``VERSION``.

A field marked ``OMITTED_WHEN_EMPTY`` in its metadata is left out of a log
line while it holds its default (the codec writes it only when it says
something), so an event that asked no model is no longer for having a place
to say so.

The event types live by what they record: ``window`` (turns, compactions,
memory blocks, recalls), ``store`` (facts, and the clock), ``memory``
(episodes, consolidation, questions answered) and ``parts`` (the records
events hold inside them); every name is read from here.
"""

from memtape.core.events.memory import (
    Answered,
    Consolidated,
    EpisodeRecorded,
)
from memtape.core.events.parts import (
    OMITTED_WHEN_EMPTY,
    BlockEdit,
    ModelCall,
    ProceduralRule,
    SemanticFact,
    WarmItem,
)
from memtape.core.events.store import (
    ClockAdvanced,
    Evicted,
    Expired,
    FactRead,
    FactWritten,
    Judged,
    Queried,
    Superseded,
    ValidityClosed,
)
from memtape.core.events.window import (
    BlockEdited,
    CompactionTriggered,
    Recalled,
    TurnAdded,
)

__all__ = [
    "EVENT_TYPES",
    "OMITTED_WHEN_EMPTY",
    "Answered",
    "BlockEdit",
    "BlockEdited",
    "ClockAdvanced",
    "CompactionTriggered",
    "Consolidated",
    "EpisodeRecorded",
    "Event",
    "Evicted",
    "Expired",
    "FactRead",
    "FactWritten",
    "Judged",
    "ModelCall",
    "ProceduralRule",
    "Queried",
    "Recalled",
    "SemanticFact",
    "Superseded",
    "TurnAdded",
    "ValidityClosed",
    "WarmItem",
]

Event = (
    TurnAdded
    | CompactionTriggered
    | ClockAdvanced
    | FactWritten
    | FactRead
    | Queried
    | Superseded
    | Evicted
    | EpisodeRecorded
    | Consolidated
    | Expired
    | ValidityClosed
    | Recalled
    | BlockEdited
    | Judged
    | Answered
)
"""Any event of the kernel."""

EVENT_TYPES: dict[str, type[Event]] = {
    cls.__name__: cls
    for cls in (
        TurnAdded,
        CompactionTriggered,
        ClockAdvanced,
        FactWritten,
        FactRead,
        Queried,
        Superseded,
        Evicted,
        EpisodeRecorded,
        Consolidated,
        Expired,
        ValidityClosed,
        Recalled,
        BlockEdited,
        Judged,
        Answered,
    )
}
"""Every event type by its class name, the name it carries in a log."""
