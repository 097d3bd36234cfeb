"""memtape.core.codec: events and commands to JSON-ready data and back, exactly and strictly."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import json
from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from memtape.core.codec import (
    _FAST,
    _Declined,
    command_data,
    command_from_data,
    converter,
    event_data,
    event_from_data,
)
from memtape.core.commands import (
    COMMAND_TYPES,
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
from memtape.core.errors import BadInput
from memtape.core.events import (
    EVENT_TYPES,
    OMITTED_WHEN_EMPTY,
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
    ModelCall,
    ProceduralRule,
    Queried,
    Recalled,
    SemanticFact,
    Superseded,
    TurnAdded,
    ValidityClosed,
    WarmItem,
)
from memtape.policies.session import Session
from memtape.scenarios import load_scenario

AWKWARD = 0.1 + 0.2
"""A float whose shortest repr has 17 digits: it survives only at full precision."""

EVENTS: list[Event] = [
    TurnAdded(1, "user", "hello × there", 3, salient=False),
    CompactionTriggered(
        40,
        (WarmItem(8, "bare text", 2), WarmItem(7, "more", 1)),
        (6, 5),
        2,
        "[2 earlier turns summarized]",
        4,
    ),
    CompactionTriggered(40, (), (), 0, "", 0),
    CompactionTriggered(
        40,
        (WarmItem(2, "the summary", 2),),
        (),
        1,
        "",
        0,
        (ModelCall("the summary, said at length", "m-1", "0f" * 8, 120, 9, AWKWARD, False),),
    ),
    ClockAdvanced(1 / 3),
    FactWritten(1, "name", "the user is Dana", AWKWARD),
    FactRead(1),
    Superseded(2, 5),
    Evicted(4, 0.2 * 0.5**1.5),
    EpisodeRecorded(1, "the user confirmed their name"),
    Consolidated(
        (1, 2, 3),
        (SemanticFact("user.name", "user.name = Dana", AWKWARD, 1),),
        (ProceduralRule("apply the fee", 2),),
    ),
    Consolidated((), (), ()),
    Queried("who is the user", "name", 3, (2, 1), (AWKWARD, 1 / 3)),
    Queried("", "", 1, (), ()),
    CompactionTriggered(40, (), (), 0, "", 0, cleared=(WarmItem(1, "[cleared]", 1),)),
    FactWritten(2, "session.topic", "an order", 0.5, 1 / 3 + 3600, "session.*"),
    Expired(2, "ttl 3600 for keys 'session.*' from its write at t=0.333333, due at t=3600.33"),
    FactWritten(3, "address", "Oslo", 0.5, None, "", AWKWARD, 1e6 + AWKWARD),
    ValidityClosed(1, AWKWARD, 3),
    Queried("where", "address", 1, (1,), (AWKWARD,), -AWKWARD, AWKWARD),
    Recalled("cracked screen", 2, (1, 4), (AWKWARD, 1 / 3), (WarmItem(1, "ORD-7731 cracked", 3),)),
    Recalled("nothing matches", 3, (), (), ()),
    BlockEdited("human × é", 1, "create", "Name: Dana.\n", 2, 200),
    BlockEdited("human × é", 2, "find-replace", "Name: Dana Ng.\n", 3),
    Judged("pet", "NOOP", (3, 1)),
    Judged(
        "pet",
        "DELETE",
        (3,),
        3,
        (ModelCall('{"decision": "DELETE"}', "m", "ab", 2, 1, AWKWARD, True),),
    ),
    Answered("Which order × é?", "ORD-1", "ORD-1", True, False),
    Answered(
        "Which fee?",
        "10%",
        "ten per cent",
        True,
        True,
        (
            ModelCall("ten per cent", "m", "ab", 9, 3, AWKWARD, False),
            ModelCall("Yes.", "m", "cd", 4, 1, 0.5, True, 2),
        ),
    ),
]

COMMANDS: list[Command] = [
    AddTurn("user", "hi"),
    AddTurn("tool", "result", salient=False),
    AddTurn("user", "decision", salient=True),
    AddTurn("assistant", "measured", tokens=96),
    AdvanceClock(1 / 3),
    WriteFact("name", "Dana", AWKWARD),
    WriteFact("contact", "phone", 0.6, supersedes="contact"),
    WriteFact("session.topic", "an order", 0.5, expires_at=AWKWARD),
    WriteFact("address", "Oslo", 0.5, valid_from=-AWKWARD, valid_to=AWKWARD),
    Query("where", "address", 2, as_of=AWKWARD, known_at=0.0),
    ReadFact(key="name"),
    ReadFact(id=3),
    Query("who is the user", "name", 2),
    Query(),
    Recall("cracked screen", 2),
    Ask("Which order?", "ORD-1", "judge-model"),
    Ask("Which fee?", "10%", "judge-model", seed=3),
    RecordEpisode("something happened"),
    Consolidate(),
    CreateBlock("human", 200, "Name: Dana."),
    EditBlock("human", "find-replace", "Dana Ng", "Dana"),
    EditBlock("persona", "append", ""),
]


def _name(value: object) -> str:
    return type(value).__name__


def _through_json(data: Any) -> Any:
    return json.loads(json.dumps(data))


def _event_back(event: Event) -> Event:
    return event_from_data(_name(event), event.VERSION, _through_json(event_data(event)))


def _bad_event(type_name: str, data: Any, version: int | None = None) -> str:
    """The one line a bad event's fields get, read at ``version`` (default: the current)."""
    cls = EVENT_TYPES.get(type_name)
    current = version if version is not None else cls.VERSION if cls is not None else 1
    with pytest.raises(BadInput) as caught:
        event_from_data(type_name, current, data)
    return str(caught.value)


def _bad_command(data: Any) -> str:
    with pytest.raises(BadInput) as caught:
        command_from_data(data)
    return str(caught.value)


class TestEventRoundTrip:
    def test_the_samples_cover_every_event_type(self) -> None:
        assert set(EVENT_TYPES) == {_name(e) for e in EVENTS}

    @pytest.mark.parametrize("event", EVENTS, ids=_name)
    def test_an_event_survives_json_unchanged(self, event: Event) -> None:
        assert event == _event_back(event)

    def test_event_data_holds_the_fields_only(self) -> None:
        assert {"id": 4, "score": 0.25} == event_data(Evicted(4, 0.25))

    def test_nested_parts_become_plain_data(self) -> None:
        assert {
            "budget": 40,
            "warm": [{"turn": 2, "text": "t", "tokens": 1}],
            "dropped": [1],
            "cold": 0,
            "gist": "",
            "gist_tokens": 0,
        } == _through_json(
            event_data(CompactionTriggered(40, (WarmItem(2, "t", 1),), (1,), 0, "", 0))
        )

    def test_floats_keep_full_precision(self) -> None:
        back = _event_back(FactWritten(1, "k", "v", AWKWARD))
        assert isinstance(back, FactWritten)

        assert AWKWARD.hex() == back.importance.hex()

    def test_an_eviction_score_keeps_full_precision(self) -> None:
        score = 0.2 * 0.5**1.5
        back = _event_back(Evicted(4, score))
        assert isinstance(back, Evicted)

        assert score.hex() == back.score.hex()

    def test_tuples_come_back_as_tuples(self) -> None:
        back = _event_back(EVENTS[1])
        assert isinstance(back, CompactionTriggered)

        assert (tuple, tuple) == (type(back.warm), type(back.dropped))

    def test_a_model_call_comes_back_exactly(self) -> None:
        assert EVENTS[3] == _event_back(EVENTS[3])

    def test_nested_tuples_come_back_as_tuples(self) -> None:
        back = _event_back(EVENTS[10])
        assert isinstance(back, Consolidated)

        assert (tuple, tuple, tuple) == (
            type(back.episodes),
            type(back.semantic),
            type(back.procedural),
        )

    def test_an_integer_where_a_float_belongs_becomes_a_float(self) -> None:
        back = event_from_data("ClockAdvanced", 1, {"to": 6})
        assert isinstance(back, ClockAdvanced)

        assert (6.0, float) == (back.to, type(back.to))


class TestEventStrictness:
    def test_a_string_where_a_number_belongs_is_named(self) -> None:
        message = _bad_event("Evicted", {"id": 4, "score": "0.07"})

        assert "Evicted.score" in message

    def test_a_string_where_an_integer_belongs_is_named(self) -> None:
        message = _bad_event("FactRead", {"id": "1"})

        assert "FactRead.id" in message

    def test_a_float_where_an_integer_belongs_is_rejected(self) -> None:
        message = _bad_event("FactRead", {"id": 1.0})

        assert "FactRead.id" in message

    def test_a_boolean_where_an_integer_belongs_is_rejected(self) -> None:
        message = _bad_event("FactRead", {"id": True})

        assert "FactRead.id" in message

    def test_a_boolean_where_a_number_belongs_is_rejected(self) -> None:
        message = _bad_event("ClockAdvanced", {"to": False})

        assert "ClockAdvanced.to" in message

    def test_a_number_where_a_string_belongs_is_rejected(self) -> None:
        message = _bad_event("EpisodeRecorded", {"id": 1, "text": 5})

        assert "EpisodeRecorded.text" in message

    def test_a_number_where_a_boolean_belongs_is_rejected(self) -> None:
        data = {"turn": 1, "role": "user", "text": "hi", "tokens": 2, "salient": 1}

        assert "TurnAdded.salient" in _bad_event("TurnAdded", data)

    def test_a_missing_field_is_named(self) -> None:
        assert "Evicted.score is missing" == _bad_event("Evicted", {"id": 4})

    def test_an_extra_field_is_named(self) -> None:
        message = _bad_event("Evicted", {"id": 4, "score": 0.5, "reason": "weak"})

        assert "Evicted has no field reason" == message

    def test_a_bad_nested_field_is_named_by_its_path(self) -> None:
        data = event_data(EVENTS[1])
        data["warm"][0]["turn"] = "8"

        assert "CompactionTriggered.warm[0].turn" in _bad_event("CompactionTriggered", data)

    def test_an_extra_nested_field_is_named_by_its_path(self) -> None:
        data = event_data(EVENTS[1])
        data["warm"][1]["colour"] = "red"

        message = _bad_event("CompactionTriggered", data)

        assert "CompactionTriggered.warm[1] has no field colour" == message

    @pytest.mark.parametrize(
        ("field", "value", "expected"),
        [
            ("tokens", "abc", 'TurnAdded.tokens must be an integer, got "abc"'),
            ("tokens", 1.5, "TurnAdded.tokens must be an integer, got 1.5"),
            ("salient", 1, "TurnAdded.salient must be true or false, got 1"),
            ("text", None, "TurnAdded.text must be a string, got null"),
        ],
    )
    def test_a_wrong_type_is_said_in_the_file_s_terms(
        self, field: str, value: object, expected: str
    ) -> None:
        """What the field must be, and the value as the JSON file spells it."""
        data = {"turn": 1, "role": "user", "text": "hi", "tokens": 2, "salient": False}
        data[field] = value
        assert expected == _bad_event("TurnAdded", data)

    def test_a_long_value_is_cut_short(self) -> None:
        message = _bad_event("EpisodeRecorded", {"id": "x" * 500, "text": "t"})
        assert message.startswith('EpisodeRecorded.id must be an integer, got "xxx')
        quoted = message.partition(", got ")[2]
        assert (True, 60) == (quoted.endswith("..."), len(quoted))

    def test_every_problem_is_named_in_one_line(self) -> None:
        data = event_data(EVENTS[1])
        data["dropped"] = None
        data["warm"][0] = "x"
        message = _bad_event("CompactionTriggered", data)
        assert (
            "CompactionTriggered.warm[0] must be an object of fields; "
            "CompactionTriggered.dropped must be a list, got null"
        ) == message

    def test_an_unknown_type_is_named(self) -> None:
        assert "unknown event type 'FactForgotten'" == _bad_event("FactForgotten", {"id": 1})

    def test_a_future_version_is_refused_saying_which(self) -> None:
        message = _bad_event("Evicted", {"id": 4, "score": 0.5}, version=2)

        assert message.startswith("Evicted version 2 is not readable here")

    def test_fields_that_are_not_an_object_are_refused(self) -> None:
        assert "Evicted: expected an object of fields, got [4, 0.5]" == _bad_event(
            "Evicted", [4, 0.5]
        )

    def test_a_rejection_hides_the_cattrs_error_behind_it(self) -> None:
        with pytest.raises(BadInput) as caught:
            event_from_data("FactRead", 1, {"id": "x"})

        assert True is caught.value.__suppress_context__


class TestCommandRoundTrip:
    def test_the_samples_cover_every_command_kind(self) -> None:
        assert set(COMMAND_TYPES.values()) == {type(c) for c in COMMANDS}

    @pytest.mark.parametrize("command", COMMANDS, ids=repr)
    def test_a_command_survives_json_unchanged(self, command: Command) -> None:
        assert command == command_from_data(_through_json(command_data(command)))

    def test_command_data_carries_the_kind_first(self) -> None:
        assert {"kind": "read", "key": None, "id": 3} == command_data(ReadFact(id=3))

    def test_a_command_without_fields_is_just_its_kind(self) -> None:
        assert {"kind": "consolidate"} == command_data(Consolidate())

    def test_floats_keep_full_precision(self) -> None:
        back = command_from_data(_through_json(command_data(AdvanceClock(1 / 3))))
        assert isinstance(back, AdvanceClock)

        assert (1 / 3).hex() == back.to.hex()

    def test_the_input_data_is_not_changed(self) -> None:
        data = {"kind": "episode", "text": "x"}

        command_from_data(data)

        assert {"kind": "episode", "text": "x"} == data


class TestMeasuredTurns:
    def test_a_turn_without_tokens_is_written_as_before_they_existed(self) -> None:
        """No ``tokens`` key: a run's bytes, and its chain, are what they were."""
        expected: dict[str, Any] = {
            "kind": "turn",
            "role": "user",
            "text": "hi",
            "salient": None,
            "calls": [],
            "answers": [],
            "pin": False,
        }
        assert expected == command_data(AddTurn("user", "hi"))

    def test_a_turn_line_without_tokens_reads_back_by_the_fast_path(self) -> None:
        data = command_data(AddTurn("user", "hi"))
        del data["kind"]

        assert AddTurn("user", "hi") == _FAST[AddTurn](data)

    def test_a_measured_turn_writes_its_tokens(self) -> None:
        assert 96 == command_data(AddTurn("assistant", "x", tokens=96))["tokens"]

    def test_tokens_that_are_no_integer_are_named(self) -> None:
        data = {**command_data(AddTurn("user", "hi")), "tokens": "96"}

        assert "turn.tokens" in _bad_command(data)


class TestCommandStrictness:
    def test_a_string_where_a_number_belongs_is_named(self) -> None:
        data = {"kind": "write", "key": "k", "text": "v", "importance": "0.5", "supersedes": None}

        assert "write.importance" in _bad_command(data)

    def test_a_missing_field_is_named(self) -> None:
        message = _bad_command({"kind": "write", "key": "k", "text": "v"})

        assert "write.importance is missing" == message

    def test_an_extra_field_is_named(self) -> None:
        message = _bad_command({"kind": "turn", "role": "user", "text": "hi", "mood": "happy"})

        assert "turn has no field mood" == message

    def test_a_salient_flag_must_be_a_boolean(self) -> None:
        message = _bad_command({"kind": "turn", "role": "user", "text": "hi", "salient": "yes"})

        assert "turn.salient" in message

    def test_a_read_id_must_be_an_integer(self) -> None:
        assert "read.id" in _bad_command({"kind": "read", "id": "3"})

    def test_an_unknown_kind_is_named(self) -> None:
        assert "unknown command kind 'forget'" == _bad_command({"kind": "forget"})

    @pytest.mark.parametrize("data", [[], "turn", {"role": "user"}, {"kind": 3}], ids=repr)
    def test_data_without_a_kind_is_refused(self, data: Any) -> None:
        assert _bad_command(data).startswith("a command must be an object with a kind")


class TestCodecCoversEveryField:
    @pytest.mark.parametrize("event", EVENTS, ids=_name)
    def test_event_data_names_every_field(self, event: Event) -> None:
        """Every field, but one left out while it holds its empty default."""
        written = [
            f.name
            for f in attrs.fields(type(event))
            if not (f.metadata.get(OMITTED_WHEN_EMPTY) and getattr(event, f.name) == f.default)
        ]
        assert written == list(event_data(event))

    def test_a_compaction_that_asked_no_model_writes_no_asked_field(self) -> None:
        assert "asked" not in event_data(CompactionTriggered(40, (), (), 0, "", 0))

    def test_a_line_without_the_omitted_field_reads_back_by_the_fast_path(self) -> None:
        data = event_data(CompactionTriggered(40, (), (), 0, "", 0))

        assert CompactionTriggered(40, (), (), 0, "", 0) == _FAST[CompactionTriggered](data)

    def test_the_fast_path_declines_an_extra_field_beside_an_omitted_one(self) -> None:
        data = {**event_data(CompactionTriggered(40, (), (), 0, "", 0)), "extra": 1}

        with pytest.raises(_Declined):
            _FAST[CompactionTriggered](data)


class TestClearedInPlace:
    """A compaction that clears nothing in place writes the line a version-1 one did."""

    def test_an_empty_cleared_is_left_out_and_read_back_as_empty(self) -> None:
        event = CompactionTriggered(40, (), (1,), 0, "", 0)
        data = event_data(event)
        assert ("cleared" not in data, event) == (
            True,
            event_from_data("CompactionTriggered", 3, data),
        )

    def test_a_cleared_turn_is_written_and_read_back(self) -> None:
        cleared = (WarmItem(1, "[x]", 1),)
        event = CompactionTriggered(40, (), (), 0, "", 0, cleared=cleared)
        data = event_data(event)
        assert ([{"turn": 1, "text": "[x]", "tokens": 1}], event) == (
            data["cleared"],
            event_from_data("CompactionTriggered", 3, data),
        )

    def test_the_fast_path_builds_both_shapes(self) -> None:
        bare = event_data(CompactionTriggered(40, (), (1,), 0, "", 0))
        full = {**bare, "cleared": [{"turn": 3, "text": "x", "tokens": 1}]}
        build = _FAST[CompactionTriggered]
        assert ((), 3) == (build(bare).cleared, build(full).cleared[0].turn)


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)


@st.composite
def field_data(draw: st.DrawFn) -> tuple[type[Any], dict[str, Any]]:
    """A class and JSON-shaped data for it: its own field names, with any values."""
    cls = draw(st.sampled_from([*EVENT_TYPES.values(), *COMMAND_TYPES.values()]))
    names = [field.name for field in attrs.fields(cls)]
    data = {name: draw(json_values) for name in names}
    if draw(st.booleans()) and names:
        data.pop(draw(st.sampled_from(names)))
    return cls, data


class TestFastPath:
    @given(field_data())
    def test_whatever_the_fast_path_builds_cattrs_builds_alike(
        self, case: tuple[type[Any], dict[str, Any]]
    ) -> None:
        """The fast path changes speed, never results: it declines what it cannot match."""
        cls, data = case
        try:
            fast = _FAST[cls](data)
        except _Declined:
            return
        slow = converter.structure(data, cls)
        assert (slow, repr(slow)) == (fast, repr(fast))

    @pytest.mark.parametrize("name", ["refund-desk", "dana-facts", "sleep-pass"])
    def test_every_recorded_event_takes_the_fast_path(self, name: str) -> None:
        scenario = load_scenario(name)
        session = Session(scenario.policies)
        session.execute_all(scenario.steps)
        for event in session.run.events:
            data = json.loads(json.dumps(event_data(event)))
            assert event == _FAST[type(event)](data)

    def test_a_query_takes_the_fast_path(self) -> None:
        queried = Queried("who", "name", 3, (2, 1), (AWKWARD, 0.5))
        data = _through_json(event_data(queried))

        assert queried == _FAST[Queried](data)

    def test_the_fast_path_declines_an_integer_score(self) -> None:
        data = {"text": "", "key": "", "k": 1, "results": [1], "scores": [1]}

        with pytest.raises(_Declined):
            _FAST[Queried](data)


class TestListsAreLists:
    @pytest.mark.parametrize("value", ["", {}, "ab", 3])
    def test_only_a_list_structures_as_a_tuple_field(self, value: object) -> None:
        data = {
            "budget": 40,
            "hot": value,
            "warm": [],
            "dropped": [],
            "cold": 0,
            "gist": "",
            "gist_tokens": 0,
        }

        with pytest.raises(BadInput, match=r"^CompactionTriggered version 2 .*hot must be a list"):
            event_from_data("CompactionTriggered", 1, data)
