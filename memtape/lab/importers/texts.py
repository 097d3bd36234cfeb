"""How the parts of a message read in a turn's text, the same in every format.

Texts are kept verbatim. What is not text is written so that a reader (and
a probe) still finds it: a tool call as ``call NAME(ARGUMENTS)`` (arguments
verbatim when the format gives a string, else as compact JSON in the file's
key order), a model's thinking or reasoning as ``[thinking] TEXT`` or
``[reasoning] TEXT``, a failed tool result as ``[error] TEXT``, a refusal as
``[refusal] TEXT``, and what has no text (an image, a file, audio, redacted
thinking) as a bracketed note of what it was: ``[image: image/png]``.
A message's ``name`` heads its text as ``NAME: ``. A turn's parts are
joined one a line.
"""

import json
from typing import Any

from memtape.core.errors import BadInput


def call_text(name: Any, arguments: Any, where: str) -> str:
    """A tool call as its turn's text shows it: ``call NAME(ARGUMENTS)``."""
    if not isinstance(name, str) or not name:
        raise BadInput(f"{where}: a tool call needs a name, got {name!r}")
    return f"call {name}({json_text(arguments)})"


def json_text(value: Any) -> str:
    """A value as text: a string verbatim, anything else as compact JSON (keys in file order)."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def marked(mark: str, text: str) -> str:
    """``text`` headed by a bracketed ``mark``: ``[thinking] ...``, ``[error] ...``."""
    return f"[{mark}] {text}" if text else f"[{mark}]"


def noted(kind: str, detail: Any = None) -> str:
    """What has no text, as a bracketed note: ``[image: image/png]``, ``[redacted thinking]``."""
    if isinstance(detail, str) and detail:
        return f"[{kind}: {_short(detail)}]"
    return f"[{kind}]"


def named(name: Any, where: str) -> str:
    """The head a message's ``name`` gives its text (``""`` for none)."""
    if name is None or name == "":
        return ""
    if not isinstance(name, str):
        raise BadInput(f"{where}: a message's name must be a string, got {name!r}")
    return f"{name}: "


def image_note(url: Any) -> str:
    """An image given by URL: its URL, or a data URL's media type (never its base64 bytes)."""
    if isinstance(url, str) and url.startswith("data:"):
        return noted("image", url[5:].split(";", 1)[0].split(",", 1)[0])
    return noted("image", url)


def _short(detail: str) -> str:
    """A note's detail, cut at 200 characters (a URL may carry a long query)."""
    return detail if len(detail) <= 200 else detail[:200] + "..."
