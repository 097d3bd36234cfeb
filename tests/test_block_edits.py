"""memtape.core.block_edits: what an edit makes of a memory block's value, or why not."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import pytest

from memtape.core.block_edits import edited_value, within
from memtape.core.errors import Rejected
from memtape.core.state import Block

HUMAN = Block("human", 30, "Name: Dana.", 2, 1)


class TestEditedValue:
    @pytest.mark.parametrize(
        ("op", "text", "find", "expected"),
        [
            ("replace", "Name: Ana.", "", "Name: Ana."),
            ("append", "Porto.", "", "Name: Dana.\nPorto."),
            ("find-replace", "Ana", "Dana", "Name: Ana."),
        ],
    )
    def test_each_op_makes_its_value(self, op: str, text: str, find: str, expected: str) -> None:
        assert expected == edited_value(HUMAN, op, text, find)

    def test_an_append_to_an_empty_block_is_the_text_alone(self) -> None:
        assert "Porto." == edited_value(Block("human", 30, "", 0, 1), "append", "Porto.")

    @pytest.mark.parametrize(
        ("block", "op", "text", "find", "why"),
        [
            (Block("p", 30, "Polite.", 1, 1, read_only=True), "append", "x", "", "read-only"),
            (HUMAN, "insert", "x", "", "op is one of replace, append, find-replace"),
            (HUMAN, "find-replace", "x", "Lisbon", "holds no 'Lisbon' to replace"),
            (HUMAN, "append", "x" * 30, "", "holds at most 30 characters: this edit would"),
        ],
    )
    def test_a_refused_edit_says_why(
        self, block: Block, op: str, text: str, find: str, why: str
    ) -> None:
        with pytest.raises(Rejected, match=why):
            edited_value(block, op, text, find)


class TestWithin:
    def test_a_value_at_the_limit_is_within_it(self) -> None:
        within("human", "x" * 5, 5)

    def test_one_past_it_is_refused(self) -> None:
        with pytest.raises(Rejected, match="this edit would make it 6, so it is refused"):
            within("human", "x" * 6, 5)
