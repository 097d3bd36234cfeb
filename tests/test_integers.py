"""memtape.core.integers: whole numbers from text, bounded before they are made."""

import pytest

from memtape.core.errors import BadInput
from memtape.core.integers import LARGEST, bounded, is_digits


class TestBounded:
    @pytest.mark.parametrize(
        ("text", "expected"),
        [("0", 0), ("42", 42), ("-7", -7), ("0007", 7), (str(LARGEST), LARGEST), ("0" * 5000, 0)],
    )
    def test_digits_within_the_bound_are_their_number(self, text: str, expected: int) -> None:
        assert expected == bounded(text, "n")

    def test_a_number_past_64_bits_is_too_large(self) -> None:
        with pytest.raises(BadInput) as caught:
            bounded(str(LARGEST + 1), "--at")

        assert f"--at is too large: {LARGEST + 1} (at most {LARGEST})" == str(caught.value)

    @pytest.mark.parametrize("sign", ["", "-"])
    def test_five_thousand_digits_are_too_large_in_one_short_line(self, sign: str) -> None:
        with pytest.raises(BadInput) as caught:
            bounded(sign + "9" * 5000, "the id")

        assert f"the id is too large: 5000 digits (at most {LARGEST})" == str(caught.value)

    @pytest.mark.parametrize("text", ["", "-", "٣", "3_0", " 3", "+3"])
    def test_anything_but_ascii_digits_is_not_read(self, text: str) -> None:
        with pytest.raises(ValueError, match="not ASCII digits"):
            bounded(text, "n")


class TestIsDigits:
    @pytest.mark.parametrize(("text", "expected"), [("12", True), ("²", False), ("", False)])
    def test_only_ascii_digits_are_digits(self, text: str, expected: bool) -> None:
        assert expected == is_digits(text)
