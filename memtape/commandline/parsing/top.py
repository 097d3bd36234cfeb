"""The top parser: every command's name and help, and the arguments of the one being run.

Filling in a parser is most of what building one costs (argparse formats and
translates as each argument is added), and a command reads only its own: so
the top parser lists every command (``memtape --help`` and the "did you mean"
of a mistyped command read no more than that), and fills in only the command
that the arguments name, or every command when asked for the whole parser
(the docs' reference, the tests).
"""

import argparse
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, NoReturn

from memtape._version import __version__
from memtape.commandline.parsing import importing, lab, runs, servers, viewer
from memtape.commandline.parsing.arguments import Command
from memtape.core.visible import visible
from memtape.llm.cache_location import CACHE_ENV, DEFAULT_CACHE

EXIT_USAGE = 2
"""The status of every error the user can cause."""

FAMILIES: tuple[Mapping[str, Command], ...] = (
    runs.COMMANDS,
    viewer.COMMANDS,
    lab.COMMANDS,
    importing.COMMANDS,
    servers.COMMANDS,
)
"""Every family's commands, in the order ``memtape --help`` lists them."""

COLOURED = frozenset({"memtape demo", "memtape show", "memtape timeline"})
"""The commands whose output has colour: the only ones that take ``--color`` after them."""

UNDECIDING = frozenset({"memtape record"})
"""The commands that decide nothing and ask no model: ``-v`` and ``--no-cache`` would
mean nothing after them, so they take neither (before the command, any command takes them)."""

EVERY = "*"
"""``build``'s word for the whole parser: every command filled in."""


HELP_POSITION = 24
"""argparse's default: the column where an option's help starts, at most."""


class _Formatter(argparse.HelpFormatter):
    """argparse's help formatter, measuring the terminal when it formats, not when it is made.

    argparse makes a formatter for every argument it adds, only to check its
    metavar, and measuring the terminal imports shutil (and the compression
    modules shutil imports): a command that prints no help or usage needs neither.
    """

    def __init__(self, prog: str) -> None:
        super().__init__(prog, width=0)  # measured by format_help

    def format_help(self) -> str:
        """The help or usage, wrapped to the terminal as argparse's own formatter wraps it."""
        import shutil  # noqa: PLC0415 (help or usage is being printed)

        # What argparse's formatter sets when it is made without a width.
        self._width = shutil.get_terminal_size().columns - 2
        self._max_help_position = min(
            HELP_POSITION, max(self._width - 20, self._indent_increment * 2)
        )
        return super().format_help()


class _Parser(argparse.ArgumentParser):
    """argparse with its errors in memtape's one-line form, formatting with ``_Formatter``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        from memtape.commandline.output import complain  # noqa: PLC0415 (an error only)

        complain("error", f"{visible(message, 'message')}{_hint(message)} (see {self.prog} --help)")
        self.exit(EXIT_USAGE)


def _hint(message: str) -> str:
    """``": did you mean 'show'?"`` after argparse's ``invalid choice: 'shwo' (choose from
    ...)``, when a choice is close; ``""`` otherwise."""
    if "invalid choice: " not in message:
        return ""
    import re  # noqa: PLC0415 (a mistyped command only)

    from memtape.core.spelling import did_you_mean  # noqa: PLC0415

    found = re.search(
        r"invalid choice: '(?P<given>[^']*)' \(choose from (?P<choices>.*)\)", message
    )
    if found is None:
        return ""
    # Quoted or not, as Python's versions differ.
    choices = [choice.strip().strip("'") for choice in found["choices"].split(",")]
    return did_you_mean(found["given"], choices)


def named(argv: Sequence[str]) -> str | None:
    """The command ``argv`` runs: its first word that names one (no option before the
    command takes a command's name as its value), or None."""
    for word in argv:
        for commands in FAMILIES:
            if word in commands:
                return word
    return None


def for_arguments(argv: Sequence[str]) -> argparse.ArgumentParser:
    """The parser ``argv`` needs: with the arguments of the command it names only, and that
    command alone when it is the first word (no option before it, such as ``--help``,
    can ask for the others), else listed among every command."""
    command = named(argv)
    return build(command, alone=bool(argv) and argv[0] == command)


def build(command: str | None = EVERY, *, alone: bool = False) -> argparse.ArgumentParser:
    """The ``memtape`` parser, with the arguments of ``command`` only (None: of no
    command, as ``memtape --help`` needs), or of every command (``EVERY``); with
    ``alone``, ``command`` is the only command it lists."""
    parser = _Parser(
        prog="memtape",
        description="Simulate the memory policies of LLM agents as an event-sourced system.",
    )
    parser.add_argument("--version", action="version", version=f"memtape {__version__}")
    _add_global_options(parser, defaults=True)
    # The commands' usage starts "memtape" (no argument comes before a command): said, where
    # argparse would format the top usage to find it, measuring the terminal.
    chosen = parser.add_subparsers(
        title="commands", metavar="COMMAND", required=True, prog=parser.prog
    )
    for commands in FAMILIES:
        for name, listed in commands.items():
            if command not in (name, EVERY):
                if not alone:
                    # Listed, never parsed: a word names one command only, the one filled in.
                    chosen.add_parser(name, help=listed.help, add_help=False)
                continue
            filled: argparse.ArgumentParser = chosen.add_parser(name, help=listed.help)
            listed.fill(filled)
            for each in (filled, *subcommands(filled)):
                if each.prog not in UNDECIDING:
                    _add_global_options(each, defaults=False, color=each.prog in COLOURED)
    return parser


def _add_global_options(
    parser: argparse.ArgumentParser, *, defaults: bool, color: bool = True
) -> None:
    """``-v`` and ``--color`` (where there is colour), before the command (``defaults``)
    or after it.

    After it they have no default of their own, so an option given before the
    command is not overwritten by a subcommand that did not see it.
    """
    unset: dict[str, Any] = {} if defaults else {"default": argparse.SUPPRESS}
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="log each decision to stderr", **unset
    )
    if color:
        parser.add_argument(
            "--color",
            choices=("auto", "always", "never"),
            help="colour the meter (default: auto, when writing to a terminal)",
            **({"default": "auto"} if defaults else unset),
        )
    parser.add_argument(
        "--no-cache",
        action="store_true",
        help=(
            f"ask the model every time: no response cache (default: ${CACHE_ENV}, "
            f"else {DEFAULT_CACHE})"
        ),
        **unset,
    )


def subcommands(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    """Every subcommand of ``parser``, nested ones (``generate support``) included."""
    # argparse has no public way to list the parsers its subcommands made.
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command in action.choices.values():
                yield command
                yield from subcommands(command)
