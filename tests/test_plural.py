"""memtape.core.plural: a count and its noun, singular only for one."""

import pytest

from memtape.core.plural import counted, noun_for


@pytest.mark.parametrize(
    ("count", "expected"), [(0, "0 tokens"), (1, "1 token"), (2, "2 tokens"), (-1, "-1 tokens")]
)
def test_only_one_is_singular(count: int, expected: str) -> None:
    assert expected == counted(count, "token")


def test_an_irregular_plural_is_told() -> None:
    assert ("1 reply", "3 replies") == (
        counted(1, "reply", "replies"),
        counted(3, "reply", "replies"),
    )


def test_the_noun_alone_reads_as_its_count() -> None:
    assert ("parameter", "parameters", "replies") == (
        noun_for(1, "parameter"),
        noun_for(2, "parameter"),
        noun_for(0, "reply", "replies"),
    )
