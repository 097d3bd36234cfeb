"""The viewer's page: self-contained, with the run's data unable to escape its script."""

import json
import re
from pathlib import Path

from memtape.policies.session import Session
from memtape.runs.files import LoadedRun
from memtape.scenarios import load_scenario
from memtape.viewer.page import page_html, script_json, view_page

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


class TestScriptJson:
    def test_no_character_that_could_end_or_confuse_a_script_element(self) -> None:
        text = script_json({"text": HOSTILE})
        for character in "<>&\u2028\u2029":
            assert character not in text

    def test_it_parses_back_to_the_same_data(self) -> None:
        data = {"text": HOSTILE, "n": [1, 2.5, None, True]}
        assert data == json.loads(script_json(data))


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
