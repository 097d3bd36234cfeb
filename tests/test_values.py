"""memtape.core.values: the values no policy writes, refused where a log is decoded."""

import pytest

from memtape.core.codec import event_data, event_from_data
from memtape.core.errors import BadInput
from memtape.core.events import (
    ClockAdvanced,
    CompactionTriggered,
    Consolidated,
    Event,
    FactWritten,
    ProceduralRule,
    Queried,
    SemanticFact,
    Superseded,
    TurnAdded,
    WarmItem,
)
from memtape.core.values import MAX_TOKENS, impossible

BIG = 2**63

IMPOSSIBLE: dict[str, tuple[Event, str]] = {
    "tokens-2**63": (
        TurnAdded(1, "user", "hi", BIG, False),
        f"TurnAdded.tokens must be within 0..{MAX_TOKENS}, got {BIG}",
    ),
    "tokens-negative": (
        TurnAdded(1, "user", "hi", -1, False),
        f"TurnAdded.tokens must be within 0..{MAX_TOKENS}, got -1",
    ),
    "turn-0": (
        TurnAdded(0, "user", "hi", 1, False),
        f"TurnAdded.turn must be within 1..{BIG - 1}, got 0",
    ),
    "role-unknown": (
        TurnAdded(1, "wizard", "hi", 1, False),
        "TurnAdded.role: a turn's role is one of system, user, assistant, tool, got 'wizard'",
    ),
    "importance-negative": (
        FactWritten(1, "k", "v", -0.5),
        "FactWritten.importance must be within 0..1, got -0.5",
    ),
    "importance-over-1": (
        FactWritten(1, "k", "v", 7.0),
        "FactWritten.importance must be within 0..1, got 7.0",
    ),
    "clock-negative": (ClockAdvanced(-3.0), "ClockAdvanced.to must be at least 0, got -3.0"),
    "warm-tokens": (
        CompactionTriggered(40, (WarmItem(1, "s", -2),), (), 0, "", 0),
        f"CompactionTriggered.warm[0].tokens must be within 0..{MAX_TOKENS}, got -2",
    ),
    "gist-tokens": (
        CompactionTriggered(40, (), (), 0, "g", BIG),
        f"CompactionTriggered.gist_tokens must be within 0..{MAX_TOKENS}, got {BIG}",
    ),
    "budget-negative": (
        CompactionTriggered(-40, (), (), 0, "", 0),
        f"CompactionTriggered.budget must be within 0..{BIG - 1}, got -40",
    ),
    "dropped-0": (
        CompactionTriggered(40, (), (2, 0), 0, "", 0),
        f"CompactionTriggered.dropped[1] must be within 1..{BIG - 1}, got 0",
    ),
    "k-0": (Queried("q", "", 0, (), ()), f"Queried.k must be within 1..{BIG - 1}, got 0"),
    "superseded-by-0": (Superseded(1, 0), f"Superseded.by must be within 1..{BIG - 1}, got 0"),
    "semantic-importance": (
        Consolidated((1,), (SemanticFact("k", "v", 2.0, 1),), ()),
        "Consolidated.semantic[0].importance must be within 0..1, got 2.0",
    ),
    "procedural-episode": (
        Consolidated((1,), (), (ProceduralRule("r", -1),)),
        f"Consolidated.procedural[0].episode must be within 1..{BIG - 1}, got -1",
    ),
}
"""An event holding each impossible value, and the problem named."""


class TestImpossible:
    @pytest.mark.parametrize(("event", "problem"), IMPOSSIBLE.values(), ids=IMPOSSIBLE.keys())
    def test_an_impossible_value_is_named(self, event: Event, problem: str) -> None:
        assert problem == impossible(event)

    @pytest.mark.parametrize(
        "event",
        [
            TurnAdded(1, "tool", "hi", 0, True),
            TurnAdded(3, "system", "hi", MAX_TOKENS, False, pinned=True),
            FactWritten(1, "k", "v", 0.0),
            FactWritten(1, "k", "v", 1.0),
            ClockAdvanced(0.0),
            CompactionTriggered(40, (WarmItem(1, "s", 2),), (2,), 1, "g", 3),
            Consolidated((1, 2), (SemanticFact("k", "v", 0.5, 2),), (ProceduralRule("r", 1),)),
        ],
    )
    def test_a_possible_event_has_nothing_impossible(self, event: Event) -> None:
        assert None is impossible(event)


class TestDecoding:
    @pytest.mark.parametrize(("event", "problem"), IMPOSSIBLE.values(), ids=IMPOSSIBLE.keys())
    def test_the_codec_refuses_an_impossible_value_in_one_line(
        self, event: Event, problem: str
    ) -> None:
        name = type(event).__name__

        with pytest.raises(BadInput) as caught:
            event_from_data(name, type(event).VERSION, event_data(event))

        assert problem == str(caught.value)
