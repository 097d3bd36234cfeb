"""The documentation site (mkdocs.yml): it works opened from disk, and wide outputs scroll.

The fast tests read the configuration; the slow one builds the site (``make docs-check``
builds it in ``make test`` already) and follows its navigation.
"""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
DOCS = ROOT / "docs"


def _setting(name: str) -> list[str]:
    """The values of a top-level setting of mkdocs.yml: its value, or its list's items."""
    config = (ROOT / "mkdocs.yml").read_text("utf-8")
    found = re.search(rf"^{name}:(.*)\n((?:  - .*\n)*)", config, re.M)
    assert found is not None, f"mkdocs.yml has no {name}"
    items = re.findall(r"  - (.*)", found.group(2))
    return items or [found.group(1).strip()]


class TestConfiguration:
    def test_pages_are_linked_as_html_files(self) -> None:
        """``page.html``, not ``page/``: a browser shows a directory listing for the latter
        when the site is opened from disk."""
        assert ["false"] == _setting("use_directory_urls")

    def test_the_wide_output_stylesheet_is_used_and_present(self) -> None:
        sheets = _setting("extra_css")

        assert ["stylesheets/wide.css"] == sheets
        assert (DOCS / sheets[0]).is_file()

    def test_code_blocks_keep_their_lines_and_scroll(self) -> None:
        css = (DOCS / "stylesheets" / "wide.css").read_text("utf-8")

        assert "white-space: pre;" in css
        assert "overflow-x: auto;" in css


@pytest.mark.slow  # a site build: tens of seconds
class TestBuiltSite:
    @pytest.fixture(scope="class")
    @staticmethod
    def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
        out = tmp_path_factory.mktemp("site")
        build = ["build", "--strict", "--quiet", "--site-dir", str(out)]
        subprocess.run(
            [sys.executable, "-m", "mkdocs", *build],
            cwd=ROOT,
            env={"PYTHONPATH": str(ROOT), "NO_MKDOCS_2_WARNING": "1", "PATH": ""},
            check=True,
        )
        return out

    def test_every_navigation_link_is_an_html_file_of_the_site(self, site: Path) -> None:
        page = (site / "index.html").read_text("utf-8")
        links = re.findall(r'<a href="([^"#]+)[^"]*" class="md-nav__link', page)
        pages = [link for link in links if not link.startswith("http")]

        assert len(pages) >= 20
        assert [] == [link for link in pages if not link.endswith(".html")]
        assert [] == [link for link in pages if not (site / link).is_file()]

    def test_every_page_links_the_stylesheet(self, site: Path) -> None:
        pages = sorted(site.rglob("*.html"))

        assert [] == [page for page in pages if "stylesheets/wide.css" not in page.read_text()]
