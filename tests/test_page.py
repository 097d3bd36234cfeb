"""The viewer's page: self-contained, with the run's data unable to escape its script."""

import json
import re
from pathlib import Path

from memtape.core.visible import visible
from memtape.policies.session import Session
from memtape.runs.files import LoadedRun
from memtape.scenarios import load_scenario
from memtape.viewer.page import inline_code, page_html, script_json, view_page

HOSTILE = "</script><script>alert(1)</script><!-- \u2028\u2029 & {{script}} {{data}}"


def loaded(name: str) -> LoadedRun:
    scenario = load_scenario(name)
    session = Session(scenario.policies)
    session.execute_all(scenario.steps)
    return LoadedRun(session, scenario.name, Path(name))


def embedded(page: str) -> object:
    """The JSON in the page's data element, parsed."""
    match = re.search(
        r'<script type="application/json" id="memtape-data">(.*?)</script>', page, re.S
    )
    assert match is not None
    return json.loads(match.group(1))


def script_acting() -> re.Pattern[str]:
    """The class of characters ``viewer.js`` escapes, as a Python regular expression."""
    found = re.search(r"const ACTING = /\(\?!\[\\t\\n\]\)\[(.*?)\]/gu;", inline_code()[1])
    assert found is not None, "viewer.js has no ACTING class"
    body = found.group(1).replace("\\0", "\\x00")
    body = re.sub(r"\\u\{([0-9a-f]+)\}", lambda m: f"\\U{int(m.group(1), 16):08x}", body)
    return re.compile(f"[{body}]")


class TestScriptJson:
    def test_no_character_that_could_end_or_confuse_a_script_element(self) -> None:
        text = script_json({"text": HOSTILE})
        for character in "<>&\u2028\u2029":
            assert character not in text

    def test_it_parses_back_to_the_same_data(self) -> None:
        data = {"text": HOSTILE, "n": [1, 2.5, None, True]}
        assert data == json.loads(script_json(data))

    def test_no_character_that_acts_on_a_terminal_and_the_same_data_back(self) -> None:
        data = {"k\x9b": "\x1b]0;title\x07\x1b[2J\r\u202eevil\u202c\U000e0041"}
        text = script_json(data)
        assert (data, text) == (json.loads(text), visible(text, "message"))


class TestTexts:
    def test_the_script_escapes_the_characters_visible_escapes(self) -> None:
        """``viewer.js`` keeps its own copy of the set: the two must not drift."""
        pattern = script_acting()
        chars = [chr(code) for code in range(0x110000)]
        memtape = [c for c in chars if visible(c, "message") != c]
        assert memtape == [c for c in chars if pattern.fullmatch(c)]

    def test_the_title_shows_the_scenario_name_visible(self) -> None:
        page = page_html({"runs": []}, "evil\x1b]0;t\x07")
        assert "<title>memtape · evil\\x1b]0;t\\x07</title>" in page


class TestPageHtml:
    def test_hostile_data_stays_inside_its_element_and_is_not_substituted(self) -> None:
        data = {"runs": [], "live": False, "next": None, "text": HOSTILE}
        page = page_html(data, HOSTILE)
        assert 2 == page.count("<script")
        assert 2 == page.count("</script>")
        assert data == embedded(page)
        assert "<title>memtape · &lt;/script&gt;" in page

    def test_the_page_needs_no_network(self) -> None:
        page = view_page([loaded("refund-desk")])
        for reference in ("http://", "https://", "src=", "href=", "@import", "url("):
            assert reference not in page

    def test_two_runs_side_by_side(self) -> None:
        page = view_page([loaded("refund-desk"), loaded("dana-facts")])
        data = embedded(page)
        assert isinstance(data, dict)
        assert [
            "refund-desk · compaction tiered",
            "dana-facts · forgetting importance-recency-access",
        ] == [run["name"] for run in data["runs"]]
        assert (
            "<title>memtape · refund-desk · compaction tiered vs "
            "dana-facts · forgetting importance-recency-access</title>"
        ) in page
