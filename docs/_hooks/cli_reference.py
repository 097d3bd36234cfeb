"""The command-line reference, written from the ``memtape`` parser itself.

mkdocs runs this module as a hook: a page holding the marker ``<!-- memtape:cli -->``
gets the reference in its place at build time, so the page cannot drift from the
parser. ``tests/test_docs_reference.py`` holds every option of every command to it.
"""

import argparse
from collections.abc import Iterator
from typing import Any

MARKER = "<!-- memtape:cli -->"
"""Where a page wants the generated reference."""
USAGE_WIDTH = 88
"""The usage lines' width: fixed, so the page does not depend on the build's terminal."""


def command_parsers(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser, str]]:
    """Every command under ``parser``, depth first: its words, its parser, its one-line help."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            for name, command in action.choices.items():
                words = (*path, name)
                yield words, command, helps.get(name, "")
                yield from command_parsers(command, words)


def options_of(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The arguments a parser documents: everything but ``-h`` and its subcommand slot."""
    return [
        action
        for action in parser._actions
        if not isinstance(action, argparse._HelpAction | argparse._SubParsersAction)
        and action.help != argparse.SUPPRESS
    ]


def _cell(text: str) -> str:
    """``text`` safe inside a Markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")


def _name(action: argparse.Action) -> str:
    """How an argument is written: ``--out FILE``, ``-q, --quiet``, ``RUN``."""
    if not action.option_strings:
        return f"`{_cell(str(action.metavar or action.dest))}`"
    metavar = action.metavar or (
        "{" + ",".join(action.choices) + "}" if action.choices else action.dest.upper()
    )
    takes_value = action.nargs != 0
    return ", ".join(
        f"`{_cell(f'{option} {metavar}' if takes_value else option)}`"
        for option in action.option_strings
    )


def _notes(action: argparse.Action) -> str:
    """Required, repeatable, choices and default, as the table's last column says them."""
    notes = []
    if action.required and action.option_strings:
        notes.append("required")
    if isinstance(action, argparse._AppendAction):
        notes.append("repeatable")
    if action.nargs in ("+", "*"):
        notes.append("one or more" if action.nargs == "+" else "any number")
    if action.nargs == "?":
        notes.append("optional")
    if action.choices and not isinstance(action, argparse._SubParsersAction):
        notes.append("one of " + ", ".join(f"`{choice}`" for choice in action.choices))
    default = action.default
    said = "default" in (action.help or "")
    if default not in (None, False, [], argparse.SUPPRESS) and action.nargs != 0 and not said:
        notes.append(f"default `{default}`")
    return _cell("; ".join(notes))


def _usage(parser: argparse.ArgumentParser) -> str:
    formatter = argparse.HelpFormatter(parser.prog, width=USAGE_WIDTH)
    formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups)
    return formatter.format_help().strip()


def _table(actions: list[argparse.Action], parser: argparse.ArgumentParser) -> list[str]:
    formatter: Any = parser._get_formatter()
    rows = ["| argument | what it is | |", "| --- | --- | --- |"]
    for action in actions:
        help_text = formatter._expand_help(action) if action.help else ""
        rows.append(f"| {_name(action)} | {_cell(help_text)} | {_notes(action)} |")
    return rows


def render(parser: argparse.ArgumentParser) -> str:
    """The reference of ``parser`` in Markdown: global options, then each command."""
    top = options_of(parser)
    shared = {option for action in top for option in action.option_strings}
    lines = [
        "## Global options",
        "",
        f"Given before the command (`{parser.prog} -v run ...`) or after it. "
        f"{parser.description or ''}",
        "",
        "```text",
        _usage(parser),
        "```",
        "",
        *_table(top, parser),
        "",
    ]
    for words, command, summary in command_parsers(parser):
        own = [
            action
            for action in options_of(command)
            if not (action.option_strings and set(action.option_strings) <= shared)
        ]
        lines += [
            f"## {parser.prog} {' '.join(words)}",
            "",
            *([summary[0].upper() + summary[1:] + ".", ""] if summary else []),
            *([command.description, ""] if command.description else []),
            "```text",
            _usage(command),
            "```",
            "",
        ]
        if own:
            lines += [*_table(own, command), ""]
    return "\n".join(lines)


def on_page_markdown(markdown: str, **_: object) -> str:
    """mkdocs hook: the generated reference in place of the marker."""
    if MARKER not in markdown:
        return markdown
    from memtape.cli import _parser  # noqa: PLC0415 (only pages with the marker need the CLI)

    return markdown.replace(MARKER, render(_parser()))
