"""policies.plumbing.params: typed parameters whose errors name the place and the parameter."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import datetime
import math
from typing import Any

import pytest

from memtape.core.errors import BadInput
from memtape.policies.plumbing.params import Params

WHERE = "f.toml: [forgetting]"

NOT_NUMBERS = ["4", [4], {"n": 4}, datetime.date(2024, 5, 27), True, False]
"""Values a TOML file can hold where a number belongs, none of them a number."""


def _refusal(call: Any, *args: Any, **kwargs: Any) -> str:
    with pytest.raises(BadInput) as caught:
        call(*args, **kwargs)
    return str(caught.value)


class TestInteger:
    def test_an_integer_is_read(self) -> None:
        assert 4 == Params({"capacity": 4}, WHERE).integer("capacity", minimum=1)

    def test_the_default_stands_in_for_a_missing_integer(self) -> None:
        assert 2 == Params({}, WHERE).integer("hot_n", 2, minimum=0)

    def test_the_minimum_itself_is_accepted(self) -> None:
        assert 0 == Params({"hot_n": 0}, WHERE).integer("hot_n", minimum=0)

    def test_an_integer_below_the_minimum_is_refused_naming_place_and_parameter(self) -> None:
        params = Params({"capacity": 0}, WHERE)

        assert f"{WHERE}: capacity must be an integer >= 1, got 0" == _refusal(
            params.integer, "capacity", minimum=1
        )

    @pytest.mark.parametrize("value", [4.0, "4", True, None, [4]], ids=repr)
    def test_a_non_integer_is_refused(self, value: Any) -> None:
        params = Params({"capacity": value}, WHERE)

        assert f"{WHERE}: capacity must be an integer >= 1, got {value!r}" == _refusal(
            params.integer, "capacity", minimum=1
        )

    def test_a_missing_integer_without_default_is_named(self) -> None:
        assert f"{WHERE}: missing parameter capacity" == _refusal(
            Params({}, WHERE).integer, "capacity", minimum=1
        )


class TestNumber:
    def test_an_integer_is_read_as_a_float(self) -> None:
        value = Params({"half_life": 4}, WHERE).number("half_life", minimum=0.0)

        assert (4.0, float) == (value, type(value))

    def test_the_default_stands_in_for_a_missing_number(self) -> None:
        assert 0.1 == Params({}, WHERE).number("access_boost", 0.1, minimum=0.0)

    def test_an_inclusive_minimum_accepts_the_bound(self) -> None:
        assert 0.0 == Params({"boost": 0}, WHERE).number("boost", minimum=0.0)

    def test_an_exclusive_minimum_refuses_the_bound(self) -> None:
        params = Params({"half_life": 0}, WHERE)

        assert f"{WHERE}: half_life must be a number in (0, inf), got 0" == _refusal(
            params.number, "half_life", minimum=0.0, exclusive_minimum=True
        )

    def test_a_number_below_the_minimum_is_refused(self) -> None:
        params = Params({"importance": -0.5}, WHERE)

        assert f"{WHERE}: importance must be a number in [0, 1], got -0.5" == _refusal(
            params.number, "importance", minimum=0.0, maximum=1.0
        )

    def test_the_maximum_itself_is_accepted(self) -> None:
        assert 1.0 == Params({"importance": 1}, WHERE).number(
            "importance", minimum=0.0, maximum=1.0
        )

    def test_a_number_above_the_maximum_is_refused(self) -> None:
        params = Params({"importance": 1.5}, WHERE)

        assert f"{WHERE}: importance must be a number in [0, 1], got 1.5" == _refusal(
            params.number, "importance", minimum=0.0, maximum=1.0
        )

    @pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
    def test_a_number_that_is_not_finite_is_refused(self, value: float) -> None:
        params = Params({"half_life": value}, WHERE)

        assert _refusal(params.number, "half_life", minimum=0.0).startswith(
            f"{WHERE}: half_life must be a number in [0, inf), got"
        )

    @pytest.mark.parametrize("value", [-math.inf, math.nan, "x"], ids=repr)
    def test_without_bounds_a_number_is_asked_to_be_finite(self, value: Any) -> None:
        """'[-inf, inf)' refused -inf while naming it as within the range."""
        params = Params({"as_of": value}, WHERE)

        assert f"{WHERE}: as_of must be a finite number, got {value!r}" == _refusal(
            params.number, "as_of", minimum=-math.inf
        )

    @pytest.mark.parametrize("value", NOT_NUMBERS, ids=repr)
    def test_a_value_that_is_not_a_number_is_refused_naming_the_parameter(self, value: Any) -> None:
        params = Params({"half_life": value}, WHERE)

        assert f"{WHERE}: half_life must be a number in [0, inf), got {value!r}" == _refusal(
            params.number, "half_life", minimum=0.0
        )

    @pytest.mark.parametrize("value", ["4"], ids=repr)
    def test_a_value_that_is_not_a_number_is_refused_against_an_exclusive_minimum(
        self, value: Any
    ) -> None:
        params = Params({"half_life": value}, WHERE)

        assert f"{WHERE}: half_life must be a number in (0, inf), got {value!r}" == _refusal(
            params.number, "half_life", minimum=0.0, exclusive_minimum=True
        )

    def test_a_missing_number_without_default_is_named(self) -> None:
        assert f"{WHERE}: missing parameter importance" == _refusal(
            Params({}, WHERE).number, "importance", minimum=0.0
        )


class TestText:
    def test_a_string_is_read(self) -> None:
        assert "words" == Params({"tokenizer": "words"}, WHERE).text("tokenizer")

    def test_the_default_stands_in_for_a_missing_string(self) -> None:
        assert "words" == Params({}, WHERE).text("tokenizer", "words")

    def test_an_empty_default_is_a_default_not_a_missing_parameter(self) -> None:
        assert "" == Params({}, WHERE).text("about", "")

    @pytest.mark.parametrize("value", [3, True, ["a"]], ids=repr)
    def test_a_non_string_is_refused(self, value: Any) -> None:
        params = Params({"tokenizer": value}, WHERE)

        assert f"{WHERE}: tokenizer must be a string, got {value!r}" == _refusal(
            params.text, "tokenizer"
        )

    def test_a_missing_string_without_default_is_named(self) -> None:
        assert f"{WHERE}: missing parameter text" == _refusal(Params({}, WHERE).text, "text")


class TestRawAndOptional:
    def test_raw_gives_any_shape(self) -> None:
        assert [{"a": 1}] == Params({"rule": [{"a": 1}]}, WHERE).raw("rule")

    def test_raw_falls_back_to_its_default(self) -> None:
        assert [] == Params({}, WHERE).raw("rule", [])

    def test_optional_gives_none_when_absent(self) -> None:
        assert None is Params({}, WHERE).optional("supersedes")

    def test_optional_gives_the_value_when_present(self) -> None:
        assert "contact" == Params({"supersedes": "contact"}, WHERE).optional("supersedes")


class TestDone:
    def test_done_accepts_a_table_whose_parameters_were_all_read(self) -> None:
        params = Params({"capacity": 4}, WHERE)
        params.integer("capacity", minimum=1)

        params.done()

    def test_done_names_every_unknown_parameter_sorted(self) -> None:
        params = Params({"capacity": 4, "zeta": 1, "alpha": 2}, WHERE)
        params.integer("capacity", minimum=1)

        assert f"{WHERE}: unknown parameters alpha, zeta" == _refusal(params.done)

    def test_a_parameter_read_with_its_default_is_not_left_over(self) -> None:
        params = Params({}, WHERE)
        params.number("half_life", 4.0, minimum=0.0)

        params.done()

    def test_error_names_the_place_and_the_parameter(self) -> None:
        assert f"{WHERE}: budget is wrong" == str(Params({}, WHERE).error("budget", "is wrong"))

    def test_the_data_given_is_not_changed(self) -> None:
        data = {"capacity": 4}
        Params(data, WHERE).integer("capacity", minimum=1)

        assert {"capacity": 4} == data


class TestNumbersPastAFloat:
    def test_an_integer_too_large_for_a_float_is_out_of_range_not_a_crash(self) -> None:
        with pytest.raises(BadInput, match="half_life must be a number"):
            Params({"half_life": 10**400}, "here").number("half_life", minimum=0.0)


class TestIntegersPast64Bits:
    def test_an_integer_past_64_bits_is_refused_naming_the_bound(self) -> None:
        with pytest.raises(BadInput, match="budget must be at most 9223372036854775807"):
            Params({"budget": 2**64}, "here").integer("budget", minimum=1)

    def test_the_largest_64_bit_integer_is_accepted(self) -> None:
        assert 2**63 - 1 == Params({"budget": 2**63 - 1}, "here").integer("budget", minimum=1)
