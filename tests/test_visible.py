"""memtape.core.visible: text that could act on a terminal is printed as escapes."""

import ast
import json
import re
import sys
import unicodedata
from typing import Literal

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from memtape.core.visible import visible

JOINERS = {"\u200c", "\u200d"}
"""The two format characters kept: emoji and several scripts need them."""

Acting = Literal["Cc", "Cf", "Cs", "Zl", "Zp"]
ACTING_CATEGORIES: tuple[Acting, ...] = ("Cc", "Cf", "Cs", "Zl", "Zp")
"""The categories whose characters act rather than read: controls, format characters,
surrogates, the line and paragraph separators."""

# Every code point, the surrogates included, weighted towards the ones that act.
texts = st.text(
    st.one_of(
        st.characters(codec=None, categories=ACTING_CATEGORIES),
        st.sampled_from("\\xuUnrt'\"\x1b\x9b\u202e\u200d"),
        st.characters(codec=None),
    )
)


def acting(char: str) -> bool:
    """Whether ``char`` is one the printed text must not hold raw."""
    return unicodedata.category(char) in ACTING_CATEGORIES and char not in JOINERS


def read_back(shown: str) -> str:
    """``shown`` read as the body of a Python string literal: the inverse of ``visible``."""
    body = shown.replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    value = ast.literal_eval(f'"{body}"')
    assert isinstance(value, str)
    return value


class TestField:
    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("\x1b]0;title\x07", "\\x1b]0;title\\x07"),
            ("\x1b[2J", "\\x1b[2J"),
            ("done\r\x1b[32mcheck ok", "done\\r\\x1b[32mcheck ok"),
            ("\x9b31m", "\\x9b31m"),
            ("a\nb\tc", "a\\nb\\tc"),
            ("\u202eevil\u202c", "\\u202eevil\\u202c"),
            ("\u2066x\u2069", "\\u2066x\\u2069"),
            ("na\u200bme", "na\\u200bme"),
            ("\U000e0041\U000e0042", "\\U000e0041\\U000e0042"),
            ("\ud800", "\\ud800"),
            ("\x7f\x00", "\\x7f\\x00"),
        ],
    )
    def test_a_character_that_acts_is_written_as_its_escape(self, text: str, expected: str) -> None:
        assert expected == visible(text)

    def test_a_backslash_is_doubled_so_an_escape_in_the_text_reads_apart_from_a_control(
        self,
    ) -> None:
        assert ("\\\\x1b", "\\x1b") == (visible("\\x1b"), visible("\x1b"))

    def test_ordinary_text_is_left_as_it_is(self) -> None:
        text = 'Dana\'s order é 日本語 😀 👩\u200d👩\u200d👧 ❤\ufe0f $180.00 "quoted"'
        assert text == visible(text)

    @settings(deadline=None)
    @given(texts)
    def test_the_output_holds_no_character_that_acts(self, text: str) -> None:
        assert [] == [char for char in visible(text) if acting(char)]

    @settings(deadline=None)
    @given(texts)
    def test_the_output_reads_back_as_the_text_so_no_two_texts_print_alike(self, text: str) -> None:
        assert text == read_back(visible(text))


class TestMessage:
    def test_a_quote_made_by_repr_reads_as_it_did(self) -> None:
        role = "us\x1ber\\"
        message = f"unknown role {role!r} at step 3"
        assert message == visible(message, "message")

    def test_a_control_quoted_raw_is_escaped_and_the_message_stays_one_line(self) -> None:
        assert "turn 'a\\nb\\r\\x1b[2J' is bad" == visible("turn 'a\nb\r\x1b[2J' is bad", "message")

    @settings(deadline=None)
    @given(texts)
    def test_the_output_holds_no_character_that_acts(self, text: str) -> None:
        assert [] == [char for char in visible(text, "message") if acting(char)]


PAIRED = re.compile("[\ud800-\udbff][\udc00-\udfff]")
"""A high surrogate and a low one side by side: JSON reads their escapes as one character,
and no text read from JSON holds them apart."""


class TestJson:
    def test_an_acting_character_in_a_string_is_written_as_a_json_escape(self) -> None:
        text = json.dumps({"k\x9b": ["\x1b[2J\u202e\U000e0041\\"]}, ensure_ascii=False)
        expected = '{"k\\u009b": ["\\u001b[2J\\u202e\\udb40\\udc41\\\\"]}'
        assert expected == visible(text, "json")

    def test_the_layout_of_an_indented_text_is_kept(self) -> None:
        text = json.dumps({"a": "x"}, indent=2)
        assert text == visible(text, "json")

    @settings(deadline=None)
    @given(st.recursive(texts, lambda inner: st.lists(inner) | st.dictionaries(texts, inner)))
    def test_the_data_reads_back_exactly_and_the_text_holds_no_acting_character(
        self, data: object
    ) -> None:
        text = json.dumps(data, ensure_ascii=False, indent=2)
        assume(PAIRED.search(text) is None)
        shown = visible(text, "json")
        assert (data, []) == (json.loads(shown), [c for c in shown if acting(c) and c != "\n"])


class TestTheSet:
    def test_every_format_character_of_this_python_is_escaped_but_the_joiners(self) -> None:
        """The set is written out; a Python whose Unicode adds a format character says so."""
        missed = [
            f"U+{code:04X}"
            for code in range(sys.maxunicode + 1)
            if acting(chr(code)) and visible(chr(code)) == chr(code)
        ]
        assert [] == missed
