"""memtape.policies.text.summarizers: the default summary, the registry, and the cap."""

from collections.abc import Sequence

import pytest

from memtape.core.errors import BadInput
from memtape.core.events import TurnAdded
from memtape.policies.text.summarizers import SalientTexts, cap, name_of, summarizer_named
from memtape.policies.text.tokenizers import Cl100kBase, WordCount

TURNS = (
    TurnAdded(1, "user", "Hi there, how are you?", 6, False),
    TurnAdded(2, "tool", "refund window: 30 days", 5, True),
    TurnAdded(3, "user", "The order is ORD-3300", 5, True),
)


class TestSalientTexts:
    def test_keeps_the_salient_texts_and_drops_the_chatter(self) -> None:
        assert "refund window: 30 days The order is ORD-3300" == SalientTexts()("", TURNS, 99)

    def test_the_previous_summary_comes_first(self) -> None:
        assert "earlier refund window: 30 days" == SalientTexts()("earlier", TURNS[:2], 99)

    def test_only_chatter_and_nothing_before_is_an_empty_summary(self) -> None:
        assert "" == SalientTexts()("", TURNS[:1], 99)

    def test_it_is_found_by_its_name(self) -> None:
        assert SalientTexts() == summarizer_named("salient")


class TestNames:
    def test_an_unknown_name_is_refused_with_the_known_ones(self) -> None:
        with pytest.raises(BadInput, match=r"unknown summarizer 'gpt' \(known: salient; register"):
            summarizer_named("gpt")

    def test_a_function_is_named_by_its_name(self) -> None:
        def my_llm(previous: str, turns: Sequence[TurnAdded], limit: int) -> str:
            return previous

        assert "my_llm" == name_of(my_llm)

    def test_an_object_without_a_name_is_named_by_its_class(self) -> None:
        class Anonymous:
            def __call__(self, previous: str, turns: Sequence[TurnAdded], limit: int) -> str:
                return previous

        assert "Anonymous" == name_of(Anonymous())


class TestCap:
    def test_a_text_within_the_limit_is_unchanged(self) -> None:
        assert "a  b\tc" == cap("a  b\tc", 3, WordCount().count)

    def test_an_overlong_text_keeps_its_newest_words(self) -> None:
        assert "d e" == cap("a b c d e", 2, WordCount().count)

    def test_a_limit_of_zero_leaves_nothing(self) -> None:
        assert "" == cap("a b c", 0, WordCount().count)

    def test_under_a_byte_pair_encoding_the_result_fits_the_limit(self) -> None:
        text = "The customer ORD-3300 asked about the $180.00 refund after the 30-day window."
        count = Cl100kBase().count
        capped = cap(text, 8, count)

        assert count(capped) <= 8 < count(" ".join(text.split()[-len(capped.split()) - 1 :]))
        assert text.endswith(capped)
