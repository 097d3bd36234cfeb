"""The command reference the docs build writes from the parser: every command, every option."""

import argparse
import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest

from memtape.cli import _parser

ROOT = Path(__file__).parent.parent
HOOK = ROOT / "docs" / "_hooks" / "cli_reference.py"


def _hook() -> ModuleType:
    spec = importlib.util.spec_from_file_location("cli_reference", HOOK)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


cli_reference = _hook()


def _sections(page: str) -> dict[str, str]:
    """Each ``## heading`` of the page and the text under it, table escapes undone."""
    parts = re.split(r"^## (.+)$", page.replace("\\|", "|"), flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def _commands(
    parser: argparse.ArgumentParser, words: tuple[str, ...] = ()
) -> list[tuple[str, argparse.ArgumentParser]]:
    """Every command's heading and parser, found here independently of the hook."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, command in action.choices.items():
                found.append((" ".join(("memtape", *words, name)), command))
                found += _commands(command, (*words, name))
    return found


class TestReference:
    def test_the_page_is_the_marker_s_replacement(self) -> None:
        page = (ROOT / "docs" / "reference" / "cli.md").read_text("utf-8")
        built = cli_reference.on_page_markdown(page, page=None)
        assert cli_reference.MARKER in page
        assert cli_reference.MARKER not in built
        assert cli_reference.render(_parser()) in built

    def test_a_page_without_the_marker_is_left_alone(self) -> None:
        assert "# Other\n" == cli_reference.on_page_markdown("# Other\n", page=None)

    @pytest.mark.parametrize("heading", [name for name, _ in _commands(_parser())])
    def test_every_command_has_its_section(self, heading: str) -> None:
        assert heading in _sections(cli_reference.render(_parser()))

    def test_every_option_of_every_command_is_in_its_section_or_the_global_ones(self) -> None:
        sections = _sections(cli_reference.render(_parser()))
        missing = []
        for heading, command in _commands(_parser()):
            for action in command._actions:
                if isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
                    continue
                names = action.option_strings or [str(action.metavar or action.dest)]
                for name in names:
                    if f"`{name}" not in sections[heading] + sections["Global options"]:
                        missing.append(f"{heading}: {name}")
        assert [] == missing

    def test_a_new_option_shows_in_the_page(self) -> None:
        """The page follows the parser: an option added to a command is in its section."""
        parser = _parser()
        run = dict(_commands(parser))["memtape run"]
        run.add_argument("--brand-new", metavar="X", help="an option added just now")
        section = _sections(cli_reference.render(parser))["memtape run"]
        assert "| `--brand-new X` | an option added just now |" in section

    def test_the_usage_does_not_depend_on_the_terminal(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("COLUMNS", "40")
        narrow = cli_reference.render(_parser())
        monkeypatch.setenv("COLUMNS", "200")
        assert narrow == cli_reference.render(_parser())
