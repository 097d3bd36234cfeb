"""memtape.lab.importers.fields: the fields every reader reads alike."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

from typing import Any

import pytest

from memtape.core.errors import BadInput
from memtape.lab.importers.fields import (
    UnreadCount,
    anthropic_usage,
    inclusive_usage,
    listed,
    token_count,
)
from memtape.scenarios.usage import Usage


class TestListed:
    @pytest.mark.parametrize("data", [{}, {"calls": None}, None, "text"])
    def test_nothing_there_is_an_empty_list(self, data: Any) -> None:
        assert [] == listed(data, "calls", "f:1")

    def test_a_list_is_itself(self) -> None:
        assert [1, 2] == listed({"calls": [1, 2]}, "calls", "f:1")

    def test_anything_else_is_refused_naming_the_place_and_key(self) -> None:
        with pytest.raises(BadInput) as caught:
            listed({"calls": "x" * 100}, "calls", "f:1")
        assert f"f:1: calls must be a list, got '{'x' * 56}..." == str(caught.value)


class TestTokenCount:
    @pytest.mark.parametrize(("value", "count"), [(0, 0), (96, 96), (None, None)])
    def test_an_integer_of_at_least_zero_or_nothing(self, value: Any, count: int | None) -> None:
        assert count == token_count(value, "f:1: input_tokens")

    @pytest.mark.parametrize(
        ("value", "shown"), [(-1, "-1"), (True, "True"), ("9", "'9'"), (1.0, "1.0")]
    )
    def test_anything_else_is_none_and_said_naming_the_entry_and_field(
        self, value: Any, shown: str
    ) -> None:
        with pytest.warns(UnreadCount) as caught:
            count = token_count(value, "f:1: input_tokens")
        assert (None, [f"f:1: input_tokens: not a token count, read as none: {shown}"]) == (
            count,
            [str(warning.message) for warning in caught],
        )


class TestAnthropicUsage:
    def test_its_four_counts_in_order(self) -> None:
        usage = {
            "input_tokens": 4,
            "output_tokens": 96,
            "cache_read_input_tokens": 13027,
            "cache_creation_input_tokens": 1812,
        }
        assert Usage(4, 96, 13027, 1812) == anthropic_usage(usage, "f:1: usage")

    @pytest.mark.parametrize("value", [None, "x", {}, {"service_tier": "standard"}])
    def test_no_count_is_no_usage(self, value: Any) -> None:
        assert None is anthropic_usage(value, "f:1: usage")

    def test_a_count_that_is_none_is_said_naming_its_key(self) -> None:
        with pytest.warns(UnreadCount) as caught:
            usage = anthropic_usage({"input_tokens": -1, "output_tokens": 3}, "f:1: usage")
        assert (
            Usage(None, 3),
            ["f:1: usage.input_tokens: not a token count, read as none: -1"],
        ) == (
            usage,
            [str(warning.message) for warning in caught],
        )


class TestInclusiveUsage:
    def test_the_cached_part_is_taken_off_the_prompt(self) -> None:
        assert Usage(70, 5, 20, 10) == inclusive_usage(100, 5, 20, 10)

    def test_cached_tokens_past_the_prompt_were_counted_apart(self) -> None:
        assert Usage(100, 5, 300) == inclusive_usage(100, 5, 300)

    def test_no_count_is_no_usage(self) -> None:
        assert None is inclusive_usage(None, None, None)
