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

from memtape.core.visible import visible
from memtape.runs.files import LoadedRun
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


def loaded_payload(loaded: LoadedRun, name: str | None = None) -> dict[str, Any]:
    """The page's data for a loaded run (a run file, a store's run, or a simulated scenario),
    its panel headed ``name`` (default: the scenario's)."""
    session = loaded.session
    return run_payload(session.run, session.policies_at, name or loaded.scenario)


def view_page(runs: Sequence[LoadedRun]) -> str:
    """The static page for one run, or two runs side by side (``--compare``)."""
    names = run_names(runs)
    data = {
        "runs": [loaded_payload(loaded, name) for loaded, name in zip(runs, names, strict=True)],
        "live": False,
        "next": None,
    }
    return page_html(data, " vs ".join(names))


def run_names(runs: Sequence[LoadedRun]) -> list[str]:
    """What tells compared runs apart: the scenario, each axis's policy, and the parameters
    every run has with values that differ (then the files' names, if even those agree).
    A single run is named by its scenario."""
    if len(runs) < 2:
        return [loaded.scenario for loaded in runs]
    tables = [_policy_tables(loaded) for loaded in runs]
    keys = dict.fromkeys(key for table in tables for key in table)
    differing = [
        key
        for key in keys
        if all(key in table for table in tables) and len({repr(t[key]) for t in tables}) > 1
    ]
    names = []
    for loaded, table in zip(runs, tables, strict=True):
        policies = [f"{axis} {table[(axis, 'policy')]}" for axis, name in table if name == "policy"]
        shown = [
            f"{axis}.{name}={table[(axis, name)]}"
            for axis, name in differing
            if name != "policy" and (axis, name) in table
        ]
        names.append(f"{loaded.scenario} · {', '.join(policies + shown) or 'no policies'}")
    if len(set(names)) < len(names):
        names = [f"{name} ({loaded.path.name})" for name, loaded in zip(names, runs, strict=True)]
    return names


def _policy_tables(loaded: LoadedRun) -> dict[tuple[str, str], Any]:
    """Each scalar parameter of the run's first policies, by (axis, parameter)."""
    policies = loaded.session.policies_at(0)
    found: dict[tuple[str, str], Any] = {}
    for axis in ("compaction", "forgetting", "consolidation"):
        policy = getattr(policies, axis)
        if policy is None:
            continue
        for name, value in policy.params().items():
            if isinstance(value, str | int | float | bool):
                found[(axis, name)] = value
    return found


def page_html(data: Mapping[str, Any], title: str) -> str:
    """The template with the style, the script and ``data`` (as script-safe JSON) inlined."""
    style, script = inline_code()
    parts = {
        "title": html.escape(visible(f"memtape · {title}")),
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
    """``data`` as JSON that cannot end or confuse the ``<script>`` element holding it, and
    holds no character that acts on a terminal (the page's source may be shown in one):
    the page reads back the exact data."""
    return visible(orjson.dumps(data).decode("utf-8").translate(_SCRIPT_SAFE), "json")
