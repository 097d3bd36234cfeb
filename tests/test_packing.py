"""memtape.core.packing: every record comes back from its row equal, of the same type."""

import pickle
from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from memtape.core.commands import AddTurn, Consolidate, ReadFact
from memtape.core.events import (
    CompactionTriggered,
    Consolidated,
    FactWritten,
    ModelCall,
    ProceduralRule,
    SemanticFact,
    TurnAdded,
    WarmItem,
)
from memtape.core.packing import (
    RECORD_TYPES,
    Unpackable,
    _plain_slots,
    build,
    maker,
    pack,
    pack_all,
)

records: st.SearchStrategy[Any] = st.sampled_from(RECORD_TYPES).flatmap(st.from_type)
"""Any record a row may hold, its fields of any value their types allow (NaN, -0.0,
integers past 64 bits, any text)."""


def _back(record: Any) -> Any:
    """``record`` packed, pickled and unpickled as a history does, and built again."""
    return build(pickle.loads(pickle.dumps(pack(record), 5)))


class TestRoundTrip:
    @given(records)
    def test_any_record_comes_back_the_same(self, record: Any) -> None:
        back = _back(record)

        # repr, not ==: a NaN is not equal to itself, and -0.0 equals 0.0.
        assert (type(record), repr(record)) == (type(back), repr(back))

    def test_nested_records_come_back_as_records(self) -> None:
        asked = ModelCall("said", "m", "ab", 3, 1, 0.25, False)
        compaction = CompactionTriggered(
            40, (WarmItem(2, "w", 1),), (1,), 1, "gist", 1, (asked,), (WarmItem(3, "c", 1),)
        )
        consolidated = Consolidated(
            (1,), (SemanticFact("k", "t", 0.5, 1),), (ProceduralRule("r", 1),), (asked,)
        )

        assert (compaction, consolidated) == (_back(compaction), _back(consolidated))
        assert type(_back(compaction).warm[0]) is WarmItem

    def test_a_field_left_out_of_equality_comes_back_too(self) -> None:
        upcast = CompactionTriggered(40, (), (), 0, "", 0, kept=(4, 5))

        assert (4, 5) == _back(upcast).kept

    @pytest.mark.parametrize(
        "command",
        [AddTurn("user", "hi"), AddTurn("tool", "t", False), ReadFact(id=3), Consolidate()],
    )
    def test_commands_come_back(self, command: Any) -> None:
        assert (command, repr(command)) == (_back(command), repr(_back(command)))

    def test_each_type_is_a_row_of_its_fields(self) -> None:
        turn = TurnAdded(1, "user", "hi", 1, False)

        assert len(pack(turn)) == 1 + len(attrs.fields(TurnAdded))


class TestRefused:
    def test_a_record_of_another_type_is_refused(self) -> None:
        @attrs.frozen
        class Elsewhere:
            x: int

        with pytest.raises(Unpackable, match="Elsewhere"):
            pack(Elsewhere(1))

    def test_packing_many_refuses_the_first_of_another_type(self) -> None:
        with pytest.raises(Unpackable, match="object"):
            pack_all([TurnAdded(1, "user", "hi", 1, False), object()])

    def test_a_subclass_of_a_record_type_is_refused(self) -> None:
        @attrs.frozen
        class MyTurn(TurnAdded):
            pass

        with pytest.raises(Unpackable):
            pack(MyTurn(1, "user", "hi", 1, False))

    def test_a_nested_list_is_refused_rather_than_turned_into_a_tuple(self) -> None:
        compaction = CompactionTriggered(40, [WarmItem(2, "w", 1)], (), 0, "", 0)  # type: ignore[arg-type]

        with pytest.raises(Unpackable, match="list"):
            pack(compaction)

    def test_a_type_whose_init_does_more_than_set_its_slots_has_no_builder(self) -> None:
        @attrs.frozen
        class Checked:
            x: int = attrs.field(validator=attrs.validators.gt(0))

        @attrs.frozen
        class Hooked:
            x: int

            def __attrs_post_init__(self) -> None:
                pass

        assert (False, False, True) == tuple(map(_plain_slots, (Checked, Hooked, TurnAdded)))


class TestMaker:
    """``maker``: a record made through its slots, as the arriving turn of every command is."""

    @given(
        turn=st.integers(min_value=1),
        text=st.text(),
        tokens=st.integers(min_value=0),
        flags=st.tuples(st.booleans(), st.booleans()),
    )
    def test_a_made_turn_equals_the_one_its_class_makes(
        self, turn: int, text: str, tokens: int, flags: tuple[bool, bool]
    ) -> None:
        salient, pinned = flags
        fields = (turn, "tool", text, tokens, salient, ("c1",), (), pinned)

        made = maker(TurnAdded)(*fields)

        assert (TurnAdded(*fields), hash(TurnAdded(*fields))) == (made, hash(made))
        assert TurnAdded is type(made)

    def test_a_type_whose_init_does_more_than_set_its_slots_has_no_maker(self) -> None:
        @attrs.frozen
        class Checked:
            x: int = attrs.field(validator=attrs.validators.gt(0))

        with pytest.raises(TypeError, match="Checked is more than its fields' slots"):
            maker(Checked)


class Score(float):
    """A float of another type, as numpy's ``float64`` is."""


class TestOtherTypes:
    def test_a_float_of_another_type_comes_back_of_that_type(self) -> None:
        """marshal writes a float subclass that exposes a buffer (numpy's) as bytes."""
        written = FactWritten(1, "k", "t", Score(0.5))

        back = _back(written)

        assert (written, Score) == (back, type(back.importance))
