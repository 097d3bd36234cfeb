"""The viewer's page: one self-contained HTML file, its script, style and data inlined."""

import base64
import hashlib
import html
import re
from collections.abc import Mapping, Sequence
from functools import cache
from importlib.resources import files
from typing import Any

import orjson

from memtape.runfiles import LoadedRun
from memtape.viewer.payload import run_payload

_PLACEHOLDER = re.compile(r"\{\{(title|style|script|data)\}\}")

# Inside a <script> element only "</script" (any case) and "<!--" end or
# confuse it; escaping every <, > and & in the JSON rules both out whatever the
# run's texts hold. U+2028/9 are escaped too: JSON allows them in strings,
# older JavaScript parsers did not.
_SCRIPT_SAFE = {
    ord("<"): "\\u003c",
    ord(">"): "\\u003e",
    ord("&"): "\\u0026",
    0x2028: "\\u2028",
    0x2029: "\\u2029",
}


def loaded_payload(loaded: LoadedRun) -> dict[str, Any]:
    """The page's data for a loaded run (a run file, a store's run, or a simulated scenario)."""
    session = loaded.session
    return run_payload(session.run, session.policies_at, loaded.scenario)


def view_page(runs: Sequence[LoadedRun]) -> str:
    """The static page for one run, or two runs side by side (``--compare``)."""
    data = {"runs": [loaded_payload(loaded) for loaded in runs], "live": False, "next": None}
    return page_html(data, " vs ".join(loaded.scenario for loaded in runs))


def page_html(data: Mapping[str, Any], title: str) -> str:
    """The template with the style, the script and ``data`` (as script-safe JSON) inlined."""
    style, script = inline_code()
    parts = {
        "title": html.escape(f"memtape · {title}"),
        "style": style,
        "script": script,
        "data": script_json(data),
    }
    template = files("memtape.viewer").joinpath("template.html").read_text(encoding="utf-8")
    # One pass, so that nothing inserted is ever taken for a placeholder.
    return _PLACEHOLDER.sub(lambda match: parts[match.group(1)], template)


@cache
def inline_code() -> tuple[str, str]:
    """The page's style and script, exactly as ``page_html`` inlines them."""
    package = files("memtape.viewer")
    return (
        package.joinpath("viewer.css").read_text(encoding="utf-8"),
        package.joinpath("viewer.js").read_text(encoding="utf-8"),
    )


def inline_hashes() -> tuple[str, str]:
    """The Content-Security-Policy sources (``'sha256-…'``) of the page's style and script:
    a policy naming them lets the page's own inline code run, and nothing else inline."""
    style, script = inline_code()
    return _csp_hash(style), _csp_hash(script)


def _csp_hash(code: str) -> str:
    digest = hashlib.sha256(code.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


def script_json(data: Any) -> str:
    """``data`` as JSON that cannot end or confuse the ``<script>`` element holding it."""
    return orjson.dumps(data).decode("utf-8").translate(_SCRIPT_SAFE)
