"""memtape.projections.wrapping: lines broken at spaces to a terminal's width."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

from hypothesis import given, settings
from hypothesis import strategies as st

from memtape.projections.wrapping import cells, wrap, wrapped

WORDS = st.lists(st.text(alphabet="abcdé漢█▶·", min_size=1, max_size=12), min_size=0, max_size=30)
GAPS = st.lists(st.integers(min_value=1, max_value=3), min_size=30, max_size=30)


class TestCells:
    def test_ascii_takes_a_cell_a_character(self) -> None:
        assert 5 == cells("hello")

    def test_a_colour_code_takes_none(self) -> None:
        assert 4 == cells("\033[31m41/4\033[0m")

    def test_a_wide_character_takes_two_and_a_combining_mark_none(self) -> None:
        assert (4, 1) == (cells("漢字"), cells("e\u0301"))

    def test_block_characters_take_one(self) -> None:
        assert 3 == cells("█▶·")


class TestWrap:
    def test_a_line_that_fits_is_unchanged(self) -> None:
        assert ["  a  b   c"] == wrap("  a  b   c", 10)

    def test_a_long_line_breaks_at_a_space_with_a_hanging_indent(self) -> None:
        assert ["  one two three", "      four five"] == wrap("  one two three four five", 16)

    def test_spaces_inside_a_line_are_kept(self) -> None:
        assert ["id  key   score", "       text"] == wrap("id  key   score  text", 15)

    def test_a_word_longer_than_the_line_overflows_whole(self) -> None:
        assert ["see", "    /a/very/long/path/indeed", "    ok"] == wrap(
            "see /a/very/long/path/indeed ok", 12
        )

    def test_a_row_continues_under_the_column_it_breaks_in(self) -> None:
        assert ["5  a  hot keeps", "      3, 4"] == wrap("5  a  hot keeps 3, 4", 16)

    def test_rows_of_one_table_continue_at_one_column(self) -> None:
        """However many spaces right-align a row's first cell, or a label leads it."""
        rows = ["  HOT   turn   1  user: one two three", "        turn   2  user: one two three"]

        assert [" " * 18 + "three"] * 2 == [wrap(row, 36)[1] for row in rows]

    def test_a_word_that_starts_a_column_continues_under_the_one_before(self) -> None:
        assert ["  turn  user: a b c", "        (11)"] == wrap("  turn  user: a b c  (11)", 20)

    def test_the_hang_is_at_most_half_the_width(self) -> None:
        lines = wrap(" " * 30 + "aaaa bbbb cccc", 40)

        assert [" " * 30 + "aaaa bbbb", " " * 20 + "cccc"] == lines

    def test_colour_codes_do_not_count(self) -> None:
        line = "\033[31m" + "x" * 8 + " OVER\033[0m"

        assert [line] == wrap(line, 13)

    @settings(deadline=None)
    @given(WORDS, GAPS, st.integers(min_value=20, max_value=120))
    def test_no_word_is_split_and_no_line_is_too_long_but_for_one_word(
        self, words: list[str], gaps: list[int], width: int
    ) -> None:
        line = "".join(" " * gap + word for word, gap in zip(words, gaps, strict=False))
        lines = wrap(line, width)

        assert line.split() == " ".join(lines).split()
        assert [] == [part for part in lines if cells(part) > width and len(part.split()) > 1]


class TestWrapped:
    def test_without_a_width_the_lines_are_as_they_are(self) -> None:
        lines = ["a " * 100, "b\nc"]

        assert lines == list(wrapped(lines, None))

    def test_a_line_holding_line_breaks_is_the_lines_it_holds(self) -> None:
        assert ["a", "b"] == list(wrapped(["a\nb"], 60))
