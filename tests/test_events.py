"""memtape.core.events and memtape.core.commands: frozen, versioned, registered by name."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import attrs
import pytest

from memtape.core.commands import (
    COMMAND_KINDS,
    COMMAND_TYPES,
    STEP_KINDS,
    AddTurn,
    AdvanceClock,
    Ask,
    Command,
    Consolidate,
    CreateBlock,
    EditBlock,
    Query,
    ReadFact,
    Recall,
    RecordEpisode,
    WriteFact,
)
from memtape.core.events import (
    EVENT_TYPES,
    Answered,
    BlockEdited,
    ClockAdvanced,
    CompactionTriggered,
    Consolidated,
    EpisodeRecorded,
    Event,
    Evicted,
    Expired,
    FactRead,
    FactWritten,
    Judged,
    ProceduralRule,
    Queried,
    Recalled,
    SemanticFact,
    Superseded,
    TurnAdded,
    ValidityClosed,
    WarmItem,
)

EVENTS: list[Event] = [
    TurnAdded(1, "user", "hello there", 3, salient=False),
    CompactionTriggered(40, (WarmItem(2, "bare text", 2),), (1,), 1, "[1 earlier]", 2),
    ClockAdvanced(6.0),
    FactWritten(1, "name", "the user is Dana", 0.9),
    FactRead(1),
    Queried("what is the user called", "name", 3, (1, 4), (0.9, 0.25)),
    Superseded(2, 5),
    Evicted(4, 0.0707),
    EpisodeRecorded(1, "the user confirmed their name"),
    Consolidated((1, 2), (SemanticFact("k", "v", 0.5, 1),), (ProceduralRule("do it", 2),)),
    Expired(1, "its own expires_at, due at t=6"),
    ValidityClosed(1, 4.0, 2),
    Recalled("order", 2, (3, 1), (1.5, 0.25), (WarmItem(3, "order ORD-7731", 4),)),
    BlockEdited("human", 1, "create", "Name: Dana.", 2, 200),
    Judged("pet", "UPDATE", (1, 3), 3),
    Answered("Which order is it?", "ORD-7731", "ORD-7731", True, False),
]

COMMANDS: list[Command] = [
    AddTurn("user", "hi"),
    AdvanceClock(6.0),
    WriteFact("name", "Dana", 0.9),
    ReadFact(key="name"),
    Query("what is the user called", "name", 2),
    RecordEpisode("something happened"),
    Consolidate(),
    Recall("order number", 2),
    CreateBlock("human", 200, "Name: Dana."),
    EditBlock("human", "append", "Lives in Porto."),
    Ask("Which order is it?", "ORD-7731", "judge-model"),
]


def _name(event: object) -> str:
    return type(event).__name__


class TestEventTypes:
    def test_the_kernel_events_are_registered_by_class_name(self) -> None:
        assert {
            "TurnAdded",
            "CompactionTriggered",
            "ClockAdvanced",
            "FactWritten",
            "FactRead",
            "Queried",
            "Superseded",
            "Evicted",
            "EpisodeRecorded",
            "Consolidated",
            "Expired",
            "ValidityClosed",
            "Recalled",
            "BlockEdited",
            "Judged",
            "Answered",
        } == set(EVENT_TYPES)

    def test_each_registered_name_is_its_class_name(self) -> None:
        assert list(EVENT_TYPES) == [cls.__name__ for cls in EVENT_TYPES.values()]

    def test_the_samples_cover_every_registered_type(self) -> None:
        assert set(EVENT_TYPES) == {_name(e) for e in EVENTS}

    @pytest.mark.parametrize("cls", EVENT_TYPES.values(), ids=list(EVENT_TYPES))
    def test_every_event_type_carries_its_schema_version(self, cls: type[Event]) -> None:
        """TurnAdded is at 2 (calls, answers, pinned), Consolidated at 4 (asked, then a
        call's cut, then block edits), CompactionTriggered at 5 (what moves, not what stays,
        then a call's cut, then recall), BlockEdited at 2 (read_only); every other type is
        at its first."""
        versions = {
            TurnAdded: 2,
            Consolidated: 4,
            BlockEdited: 2,
            CompactionTriggered: 5,
            FactWritten: 3,
            Queried: 2,
        }
        assert versions.get(cls, 1) == cls.VERSION

    @pytest.mark.parametrize("cls", EVENT_TYPES.values(), ids=list(EVENT_TYPES))
    def test_the_version_is_not_a_field(self, cls: type[Event]) -> None:
        assert "VERSION" not in {f.name for f in attrs.fields(cls)}


class TestEventsAreImmutableValues:
    @pytest.mark.parametrize("event", EVENTS, ids=_name)
    def test_an_event_cannot_be_changed(self, event: Event) -> None:
        field = attrs.fields(type(event))[0].name

        with pytest.raises(attrs.exceptions.FrozenInstanceError):
            setattr(event, field, None)

    @pytest.mark.parametrize("event", EVENTS, ids=_name)
    def test_an_event_has_slots_and_no_instance_dict(self, event: Event) -> None:
        assert (True, False) == (hasattr(type(event), "__slots__"), hasattr(event, "__dict__"))

    @pytest.mark.parametrize("event", EVENTS, ids=_name)
    def test_equal_events_are_equal_and_hash_alike(self, event: Event) -> None:
        twin = attrs.evolve(event)

        assert (event, hash(event)) == (twin, hash(twin))

    def test_events_differing_in_one_field_are_not_equal(self) -> None:
        assert FactRead(1) != FactRead(2)

    def test_a_query_records_its_results_and_scores_as_tuples(self) -> None:
        queried = Queried("", "", 2, (3, 1), (0.5, 0.25))

        assert ((3, 1), (0.5, 0.25)) == (queried.results, queried.scores)

    def test_collections_in_events_are_tuples(self) -> None:
        compaction = EVENTS[1]
        assert isinstance(compaction, CompactionTriggered)

        assert (tuple, tuple) == (type(compaction.warm), type(compaction.dropped))

    def test_parts_of_events_are_frozen_too(self) -> None:
        item = WarmItem(2, "bare", 1)

        with pytest.raises(attrs.exceptions.FrozenInstanceError):
            item.tokens = 5  # type: ignore[misc]


class TestCommands:
    def test_command_kinds_are_the_scenario_step_names_and_ask(self) -> None:
        kinds = ["turn", "advance", "write", "read", "query", "episode", "consolidate"]
        assert [*kinds, "recall", "block", "edit", "ask"] == list(COMMAND_TYPES)

    def test_a_scenario_step_is_any_command_but_an_ask(self) -> None:
        assert [kind for kind in COMMAND_TYPES if kind != "ask"] == list(STEP_KINDS)

    def test_command_kinds_invert_command_types(self) -> None:
        assert {cls: kind for kind, cls in COMMAND_TYPES.items()} == COMMAND_KINDS

    def test_the_samples_cover_every_command_kind(self) -> None:
        assert set(COMMAND_TYPES.values()) == {type(c) for c in COMMANDS}

    def test_a_turn_leaves_salience_to_the_policy_by_default(self) -> None:
        assert None is AddTurn("tool", "result").salient

    def test_a_write_supersedes_nothing_by_default(self) -> None:
        assert None is WriteFact("k", "v", 0.5).supersedes

    def test_a_read_names_neither_key_nor_id_by_default(self) -> None:
        assert (None, None) == (ReadFact().key, ReadFact().id)

    def test_a_query_asks_nothing_expects_nothing_and_wants_three_by_default(self) -> None:
        assert ("", "", 3) == (Query().text, Query().key, Query().k)

    @pytest.mark.parametrize("command", [c for c in COMMANDS if attrs.fields(type(c))], ids=_name)
    def test_a_command_cannot_be_changed(self, command: Command) -> None:
        with pytest.raises(attrs.exceptions.FrozenInstanceError):
            setattr(command, attrs.fields(type(command))[0].name, None)
