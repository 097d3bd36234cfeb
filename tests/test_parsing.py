"""The ``memtape`` parser (``memtape.commandline.parsing``): every command listed, the
arguments of the command being run only, and each command's help as the whole parser's."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import argparse
from pathlib import Path

import pytest

from memtape.cli import main
from memtape.commandline.parsing import lab
from memtape.commandline.parsing.arguments import Command
from memtape.commandline.parsing.top import (
    EVERY,
    FAMILIES,
    build,
    for_arguments,
    named,
    subcommands,
)

NAMES = [name for commands in FAMILIES for name in commands]
"""Every command, in the order the help lists them."""

LISTED = [
    "demo",
    "run",
    "show",
    "diff",
    "policies",
    "runs",
    "check",
    "export",
    "fork",
    "why",
    "audit",
    "timeline",
    "view",
    "serve",
    "bench",
    "generate",
    "import",
    "record",
    "llm-standin",
]
"""The commands ``memtape --help`` listed before the parser was split by family."""


def _whole() -> dict[str, argparse.ArgumentParser]:
    """Every command's parser, nested ones too, by its words (``generate support``)."""
    return {command.prog.removeprefix("memtape "): command for command in subcommands(build())}


def _alone(path: str) -> argparse.ArgumentParser:
    """The parser of the command ``path`` names, built for that command alone."""
    command = path.split(maxsplit=1)[0]
    return {each.prog.removeprefix("memtape "): each for each in subcommands(build(command))}[path]


PATHS = sorted(_whole())
"""Every command's words, nested commands included."""


@pytest.fixture(autouse=True)
def columns(monkeypatch: pytest.MonkeyPatch) -> None:
    """Help wrapped at one width, whatever the terminal running the tests."""
    monkeypatch.setenv("COLUMNS", "100")


class TestNamed:
    def test_the_first_word(self) -> None:
        assert "show" == named(["show", "run.jsonl"])

    def test_after_the_options_before_the_command(self) -> None:
        assert "timeline" == named(["-v", "--color", "never", "timeline", "run.jsonl"])

    def test_a_later_command_name_is_the_commands_argument(self) -> None:
        assert "run" == named(["run", "show", "--out", "show.jsonl"])

    def test_a_mistyped_command_names_none(self) -> None:
        assert None is named(["shwo", "run.jsonl"])

    def test_no_word_names_none(self) -> None:
        assert None is named([])


class TestBuild:
    def test_every_command_is_listed_in_its_order(self) -> None:
        assert LISTED == NAMES

    def test_the_named_command_alone_is_filled_in(self) -> None:
        filled = [command.prog for command in subcommands(build("show")) if command._actions]
        assert ["memtape show"] == filled

    def test_no_command_is_filled_in_for_the_top_help(self) -> None:
        assert [] == [command.prog for command in subcommands(build(None)) if command._actions]

    def test_record_takes_no_option_it_would_ignore(self) -> None:
        """record decides nothing and asks no model: -v and --no-cache after it meant nothing."""
        options = {
            option
            for command in subcommands(build("record"))
            if command.prog == "memtape record"
            for action in command._actions
            for option in action.option_strings
        }
        assert (set(), {"--out", "--serve-only"}) == (
            options & {"-v", "--verbose", "--no-cache"},
            options & {"--out", "--serve-only"},
        )

    def test_the_top_help_is_the_whole_parsers(self) -> None:
        assert build(EVERY).format_help() == build(None).format_help()

    @pytest.mark.parametrize("path", PATHS)
    def test_each_commands_help_is_the_whole_parsers(self, path: str) -> None:
        assert _whole()[path].format_help() == _alone(path).format_help()

    @pytest.mark.parametrize("path", PATHS)
    def test_each_commands_defaults_are_the_whole_parsers(self, path: str) -> None:
        def defaults(parser: argparse.ArgumentParser) -> list[tuple[str, str]]:
            return sorted(
                (key, getattr(value, "__name__", repr(value)))
                for key, value in parser._defaults.items()
            )

        assert defaults(_whole()[path]) == defaults(_alone(path))


class TestForArguments:
    def test_a_command_first_is_alone(self) -> None:
        parser = for_arguments(["show", "run.jsonl", "--json"])
        assert ["memtape show"] == [command.prog for command in subcommands(parser)]

    @pytest.mark.parametrize(
        "argv", [["-v", "show", "run.jsonl"], ["--help", "show"], ["shwo"], []], ids=str
    )
    def test_else_every_command_is_listed(self, argv: list[str]) -> None:
        parser = for_arguments(argv)
        assert NAMES == [command.prog.removeprefix("memtape ") for command in subcommands(parser)]


class TestFormatter:
    """memtape's formatter measures the terminal only when it formats, and wraps as argparse's."""

    @pytest.mark.parametrize("columns", ["40", "100", "200"])
    def test_every_help_as_argparse_wraps_it(
        self, columns: str, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("COLUMNS", columns)
        parser = build()
        ours = [command.format_help() for command in (parser, *subcommands(parser))]
        for command in (parser, *subcommands(parser)):
            command.formatter_class = argparse.HelpFormatter
        assert [command.format_help() for command in (parser, *subcommands(parser))] == ours

    def test_a_usage_as_argparse_wraps_it(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("COLUMNS", "40")
        parser = _whole()["bench"]
        ours = parser.format_usage()
        parser.formatter_class = argparse.HelpFormatter
        assert parser.format_usage() == ours


class TestMain:
    @pytest.mark.parametrize("path", PATHS)
    def test_a_commands_help(self, path: str, capsys: pytest.CaptureFixture[str]) -> None:
        with pytest.raises(SystemExit) as stopped:
            main([*path.split(), "--help"])
        assert (0, _whole()[path].format_help()) == (stopped.value.code, capsys.readouterr().out)

    @pytest.mark.parametrize("path", ["show", "generate support", "import"])
    def test_a_commands_help_after_an_option(
        self, path: str, capsys: pytest.CaptureFixture[str]
    ) -> None:
        with pytest.raises(SystemExit) as stopped:
            main(["-v", *path.split(), "--help"])
        assert (0, _whole()[path].format_help()) == (stopped.value.code, capsys.readouterr().out)

    def test_the_top_help(self, capsys: pytest.CaptureFixture[str]) -> None:
        with pytest.raises(SystemExit):
            main(["--help"])
        assert build(EVERY).format_help() == capsys.readouterr().out

    def test_a_mistyped_command_is_one_line_with_a_hint(
        self, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """To a pipe: on a terminal (or with ``COLUMNS``) the line is broken at its width."""
        monkeypatch.delenv("COLUMNS")
        with pytest.raises(SystemExit) as stopped:
            main(["shwo", "run.jsonl"])
        error = capsys.readouterr().err
        assert (2, 1) == (stopped.value.code, len(error.splitlines()))
        assert error.endswith(": did you mean 'show'? (see memtape --help)\n")

    def test_a_command_fills_in_no_other(
        self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
    ) -> None:
        """``run`` builds its own arguments; ``bench``'s, filled in, would fail the run."""

        def refuse(parser: argparse.ArgumentParser) -> None:
            raise AssertionError(f"{parser.prog} filled in")

        monkeypatch.setitem(lab.COMMANDS, "bench", Command(lab.COMMANDS["bench"].help, refuse))
        out = tmp_path / "run.jsonl"
        assert 0 == main(["run", "refund-desk", "--out", str(out), "-q"])
