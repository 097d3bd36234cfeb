"""Text from a run, a scenario, a transcript or a model, made safe to print: text is text.

A run file may hold anything in its texts, keys and names, and a model may
answer anything. Printed raw, an ESC starts a terminal sequence (a changed
window title, a cleared screen, a cursor moved back over a line), a carriage
return or a bidi override makes a line show what it does not hold. Every
renderer, to a terminal or a file, routes such text through ``visible``,
which writes each character that could act instead of read as an escape in
Python's own notation, so a reader can paste it into Python:

- ``\\t``, ``\\n``, ``\\r``; a backslash as ``\\\\``;
- any other character as ``\\xNN`` (below U+0100), ``\\uNNNN`` or
  ``\\UNNNNNNNN``: every C0 control, DEL, every C1 control (U+0080-U+009F,
  a terminal's CSI among them), the lone surrogates (which UTF-8 cannot even
  encode), the line and paragraph separators, and the format characters
  (Unicode's Cf: bidi embeddings, overrides, isolates and marks, zero-width
  spaces, the byte-order mark, the tag characters that can smuggle invisible
  words) but the two joiners, U+200C and U+200D, which emoji and several
  scripts need to read right.

``--json`` and the viewer's page keep the data exact: there each such
character is written as JSON's own escape (``visible``'s ``json`` form), and
the page's script shows each as ``visible`` does (``viewer.js`` holds the same
set, keeping newline and tab: the page wraps a text, and a dropped turn's
shows its lines).

Variation selectors (U+FE00-U+FE0F, a part of everyday emoji) are kept: they
change a glyph's look, never the order or the visibility of what is around it.

The set is written here, not asked of ``unicodedata`` at run time, so that
every Python prints a text the same way (``tests/test_visible.py`` holds it
to the interpreter's Cf).
"""

import re
from functools import cache
from typing import Literal

Form = Literal["field", "message", "json"]
"""How a text is placed, which decides what of it is escaped (see ``visible``)."""

_ACTING = (
    "\\x00-\\x1f\\x7f-\\x9f"  # C0, DEL, C1
    "\\u00ad\\u0600-\\u0605\\u061c\\u06dd\\u070f\\u0890\\u0891\\u08e2\\u180e"
    "\\u200b\\u200e\\u200f\\u2028-\\u202e\\u2060-\\u2064\\u2066-\\u206f"
    "\\ud800-\\udfff\\ufeff\\ufff9-\\ufffb"
    "\\U000110bd\\U000110cd\\U00013430-\\U00013438\\U0001bca0-\\U0001bca3"
    "\\U0001d173-\\U0001d17a\\U000e0001\\U000e0020-\\U000e007f"
)
"""The characters that act rather than read, as a regular expression's class body."""

_SOURCES: dict[Form, str] = {
    "field": f"[{_ACTING}\\\\]",
    "message": f"[{_ACTING}]",
    # Raw tab, newline and carriage return in a JSON text are its layout: a string's own
    # are escaped by the encoder already.
    "json": f"(?![\\t\\n\\r])[{_ACTING}]",
}

_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r", "\\": "\\\\"}


def visible(text: str, form: Form = "field") -> str:
    """``text`` with every character that could act on a terminal (or reorder a line, or
    hide) written as its escape, in the ``form`` of the place it is printed in:

    - ``field`` (the default): a value in one line, a table's cell, a turn in ``show``'s
      row, a key, a name. Tab and newline are escaped too, so no text breaks its row or
      shifts its columns, and a backslash is doubled, so the form is injective: two
      different texts never print alike (a text holding the four characters ``\\x1b``
      prints as ``\\\\x1b``, an ESC as ``\\x1b``).
    - ``message``: an error or a report line, memtape's words around quoted data. Its data
      is quoted with ``repr`` or already made visible, whose backslashes are escapes of
      their own, so backslashes are kept (doubling them would garble the quote); the
      controls, line breaks included, are escaped. Not injective, and need not be: a
      message names a place, it does not carry the data.
    - ``json``: a JSON text (``--json``, the page's data), whose encoder escapes only what
      JSON requires (below U+0020). Each other acting character is written as JSON's own
      ``\\uXXXX`` (a surrogate pair beyond U+FFFF), which every parser reads back as that
      very character: the data stays exact, and the text prints safely.
    """
    return _pattern(form).sub(_json_escape if form == "json" else _escape, text)


@cache
def _pattern(form: Form) -> re.Pattern[str]:
    # Compiled on first use: the error printer imports this module, and ``--help`` should
    # not pay for patterns it never uses.
    return re.compile(_SOURCES[form])


def quoted(text: str) -> str:
    """``text`` in the ``field`` form between single quotes, as a line quotes a key or a
    query among its own words. A quote in the text is left as it is: the quotes are
    always the first and the last character, so the form stays injective."""
    return f"'{visible(text)}'"


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def _json_escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x10000:
        return f"\\u{code:04x}"
    high, low = divmod(code - 0x10000, 0x400)
    return f"\\u{0xD800 + high:04x}\\u{0xDC00 + low:04x}"
