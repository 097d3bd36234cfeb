"""memtape.reducers.blocks: a memory block created, rewritten, and refused out of order."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import pytest

from memtape.core.errors import CorruptLog
from memtape.core.events import BlockEdited, TurnAdded
from memtape.core.state import EMPTY_WINDOW, Block, Window
from memtape.reducers import fold
from memtape.reducers.blocks import block_edited

CREATED = BlockEdited("human", 1, "create", "Name: Dana.", 2, 40)


def _created() -> Window:
    return block_edited(EMPTY_WINDOW, CREATED)


class TestCreated:
    def test_version_1_adds_the_block_with_its_limit(self) -> None:
        assert (Block("human", 40, "Name: Dana.", 2, 1),) == _created().blocks

    def test_its_tokens_join_the_windows(self) -> None:
        assert 2 == _created().tokens

    def test_blocks_keep_the_order_they_were_created_in(self) -> None:
        window = block_edited(_created(), BlockEdited("persona", 1, "create", "", 0, 10))
        assert ["human", "persona"] == [block.label for block in window.blocks]

    def test_a_creation_without_a_limit_is_refused(self) -> None:
        with pytest.raises(CorruptLog, match="does not exist"):
            block_edited(EMPTY_WINDOW, BlockEdited("human", 1, "create", "", 0))


class TestEdited:
    def test_the_next_version_replaces_the_value_and_its_tokens(self) -> None:
        window = block_edited(_created(), BlockEdited("human", 2, "append", "a\nb c", 3))
        assert ((Block("human", 40, "a\nb c", 3, 2),), 3) == (window.blocks, window.tokens)

    @pytest.mark.parametrize(
        "event",
        [
            BlockEdited("human", 3, "append", "x", 1),
            BlockEdited("human", 1, "create", "x", 1, 40),
            BlockEdited("human", 2, "append", "x", 1, 40),
        ],
    )
    def test_an_edit_out_of_order_or_naming_a_limit_is_refused(self, event: BlockEdited) -> None:
        with pytest.raises(CorruptLog, match="is at version 1"):
            block_edited(_created(), event)

    def test_an_edit_of_no_block_is_refused(self) -> None:
        with pytest.raises(CorruptLog, match="block 'persona' does not exist"):
            block_edited(_created(), BlockEdited("persona", 2, "append", "x", 1))

    def test_negative_tokens_are_refused(self) -> None:
        with pytest.raises(CorruptLog, match="-1 tokens"):
            block_edited(_created(), BlockEdited("human", 2, "append", "x", -1))


class TestFold:
    def test_turns_and_compactions_carry_the_blocks_along(self) -> None:
        state = fold([CREATED, TurnAdded(1, "user", "hi", 2, False)])
        assert ((Block("human", 40, "Name: Dana.", 2, 1),), 4) == (
            state.window.blocks,
            state.window.tokens,
        )
