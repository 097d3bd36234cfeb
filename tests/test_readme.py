"""The README stays a front page, and the docs' Python examples run as written.

Their command outputs are held by ``tests/test_docs_examples.py``.
"""

import contextlib
import io
import re
import shlex
import shutil
from pathlib import Path

import pytest

import memtape
from memtape.cli import main
from memtape.policies.text import summarizers
from memtape.policies.window.tool_clearing import ClearToolResults

ROOT = Path(__file__).parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
MAX_README_LINES = 200
"""The README is what memtape is, the two commands, a tour and links: the rest is in docs/."""


def _python_blocks(page: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", page.read_text("utf-8"), re.S)


class TestReadme:
    def test_it_is_at_most_200_lines(self) -> None:
        lines = README.read_text("utf-8").splitlines()
        assert len(lines) <= MAX_README_LINES, f"README.md has {len(lines)} lines"

    def test_it_gives_the_two_commands(self) -> None:
        """`make test` (what CI runs) and `make demo`, in the set-up block."""
        text = README.read_text("utf-8")
        setup = text.split("```sh\n", 1)[1].split("```", 1)[0]
        assert ["make", "make"] == [line.split()[0] for line in setup.splitlines()]
        assert {"demo", "test"} == {line.split()[1] for line in setup.splitlines()}

    def test_every_link_into_the_docs_names_a_page_that_exists(self) -> None:
        links = re.findall(r"\]\((docs/[^)#]+)", README.read_text("utf-8"))
        assert len(links) >= 20
        assert [] == [link for link in links if not (ROOT / link).is_file()]

    def test_it_links_every_page_of_the_docs_navigation(self) -> None:
        """Each tutorial, how-to, reference and explanation page is one click away."""
        nav = re.findall(r":\s+(\S+\.md)$", (ROOT / "mkdocs.yml").read_text("utf-8"), re.M)
        text = README.read_text("utf-8")
        missing = [page for page in nav if page.count("/") and f"docs/{page}" not in text]
        assert [] == missing


class TestDocsCodeExamples:
    def test_the_api_example_runs(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """The Python API page's example executes and leaves the run file it promises."""
        (block,) = _python_blocks(DOCS / "reference" / "api.md")
        monkeypatch.chdir(tmp_path)
        namespace: dict[str, object] = {}
        exec(block, namespace)
        assert (tmp_path / "dana.jsonl").is_file()
        assert isinstance(namespace["session"], memtape.Session)

    def test_the_summarizer_example_registers_and_builds(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        (block,) = _python_blocks(DOCS / "how-to" / "llm-summarizer.md")
        monkeypatch.setattr(summarizers, "SUMMARIZERS", dict(summarizers.SUMMARIZERS))
        namespace: dict[str, object] = {}
        exec(block, namespace)
        assert isinstance(namespace["policy"], memtape.RollingSummary)
        assert "mine" in summarizers.SUMMARIZERS

    def test_the_scenario_format_example_is_a_scenario_that_runs(self, tmp_path: Path) -> None:
        """The full example of the scenario format page: every table and step valid."""
        page = (DOCS / "reference" / "scenario-format.md").read_text("utf-8")
        example = re.findall(r"```toml\n(.*?)```", page, re.S)[0]
        (tmp_path / "my.toml").write_text(example, "utf-8")
        scenario = memtape.load_scenario(str(tmp_path / "my.toml"))
        session = memtape.Session(scenario.policies)
        session.execute_all(scenario.steps)
        kinds = {type(event).__name__ for event in session.run.events}
        assert {"TurnAdded", "Superseded", "FactRead", "Consolidated"} <= kinds

    def test_every_command_at_a_glance_runs(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The commands reference's cheat sheet runs in order with exit 0 (serve and
        llm-standin aside: they serve until stopped)."""
        page = (DOCS / "reference" / "cli.md").read_text("utf-8")
        sheet = page.split("## At a glance\n", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
        commands = [shlex.split(line, comments=True)[1:] for line in sheet.splitlines()]
        shutil.copytree(ROOT / "tests" / "fixtures", tmp_path / "tests" / "fixtures")
        monkeypatch.chdir(tmp_path)
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            statuses = {
                " ".join(argv): main(argv)
                for argv in commands
                if argv[0] not in {"serve", "llm-standin"}
            }
        assert len(statuses) >= 15
        assert {0} == set(statuses.values()), statuses

    def test_the_clear_tool_results_row_names_the_default_placeholder(self) -> None:
        """The policies table gives the placeholder the code writes by default."""
        default = ClearToolResults.from_params({"budget": 50}, "here").params()["placeholder"]
        row = next(
            line
            for line in (DOCS / "reference" / "policies.md").read_text("utf-8").splitlines()
            if line.startswith("| `clear-tool-results` |")
        )
        assert f'`placeholder` (`"{default}"`)' in row
