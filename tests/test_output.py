"""memtape.commandline.output: every command's text fits the terminal's width.

Each command runs twice in-process: with ``COLUMNS`` unset and stdout not a terminal (the
lines whole, as a pipe gets them), and with ``COLUMNS`` set. The fitted output holds the
same words as the whole one (none split across lines, none lost), and no line is wider
than the width unless it is a single word.
"""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import contextlib
import fcntl
import os
import pty
import re
import struct
import sys
import termios
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TextIO

import pytest

from memtape.cli import main
from memtape.commandline.output import terminal_width
from memtape.projections.wrapping import cells

Printed = Callable[..., str]


@pytest.fixture
def printed(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Printed:
    """What ``memtape ARGV`` prints on stdout at ``columns`` (None: COLUMNS unset)."""

    def run(*argv: str, columns: int | None = None) -> str:
        if columns is None:
            monkeypatch.delenv("COLUMNS", raising=False)
        else:
            monkeypatch.setenv("COLUMNS", str(columns))
        capsys.readouterr()
        status = main(list(argv))
        out = capsys.readouterr().out
        assert status in {0, 1}, out
        return out

    return run


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory holding refund-desk and sleep-pass recorded to run files, and two runs in
    a store."""
    where = tmp_path_factory.mktemp("recorded")
    recordings = [
        ("refund-desk", "r.jsonl"),
        ("sleep-pass", "s.jsonl"),
        ("refund-desk", "runs.db"),
        ("dana-facts", "runs.db"),
    ]
    for name, out in recordings:
        assert 0 == main(["run", name, "--out", str(where / out), "-q"])
    return where


def _too_wide(text: str, width: int) -> list[str]:
    """The lines of ``text`` wider than ``width`` that are more than one word."""
    return [line for line in text.splitlines() if cells(line) > width and len(line.split()) > 1]


COMMANDS = {
    "demo": ["demo"],
    "show": ["show", "refund-desk"],
    "show-store": ["show", "dana-facts"],
    "show-memory": ["show", "sleep-pass"],
    "timeline": ["timeline", "refund-desk"],
    "why": ["why", "refund-desk", "turn:2"],
    "why-fact": ["why", "dana-facts", "contact"],
    "diff": ["diff", "{dir}/s.jsonl", "0", "6"],
    "runs": ["runs", "{dir}/runs.db"],
    "check": ["check", "{dir}/r.jsonl", "-q"],
    "run": ["run", "refund-desk", "--out", "{dir}/recorded-again-to-a-long-name.jsonl", "-q"],
}
"""Each command, with what it reads (``{dir}``: the ``recorded`` directory)."""


class TestEveryCommandFits:
    @pytest.mark.parametrize("width", [60, 80])
    @pytest.mark.parametrize("command", sorted(COMMANDS))
    def test_no_line_is_wider_than_the_terminal(
        self, printed: Printed, recorded: Path, command: str, width: int
    ) -> None:
        argv = [arg.format(dir=recorded) for arg in COMMANDS[command]]

        assert [] == _too_wide(printed(*argv, columns=width), width)

    @pytest.mark.parametrize("width", [60, 80])
    @pytest.mark.parametrize("command", sorted(COMMANDS))
    def test_no_word_is_split_or_lost(
        self, printed: Printed, recorded: Path, command: str, width: int
    ) -> None:
        argv = [arg.format(dir=recorded) for arg in COMMANDS[command]]
        whole = printed(*argv)
        fitted = printed(*argv, columns=width)

        assert Counter(_words(whole)) == Counter(_words(fitted))

    def test_the_whole_lines_are_wider_than_the_terminal(
        self, printed: Printed, recorded: Path
    ) -> None:
        """Every command above prints a line wider than 80 when not fitted (the tests can fail)."""
        narrow = [
            command
            for command, argv in COMMANDS.items()
            if not _too_wide(printed(*[arg.format(dir=recorded) for arg in argv]), 80)
        ]

        assert [] == narrow


def _words(text: str) -> list[str]:
    """The words of ``text``; a meter's bar counts as one word, whatever its width."""
    return ["<bar>" if word[0] in "█·" else word for word in text.split()]


BENCH = ["bench", "refund-desk", "dana-facts", "--jobs", "1", "-q"]
BENCH_POLICIES = ["tiered", "clear-tool-results", "rolling-summary:keep=4", "lru"]


class TestBench:
    @pytest.fixture
    def argv(self) -> list[str]:
        return [*BENCH, *(arg for name in BENCH_POLICIES for arg in ("--policy", name))]

    @pytest.mark.parametrize("width", [60, 80])
    def test_the_re_sent_tokens_and_the_probes_kept_stay(
        self, printed: Printed, argv: list[str], width: int
    ) -> None:
        heading = printed(*argv, columns=width).splitlines()[0]

        assert ("re-sent", "probes kept") == tuple(
            name for name in ("re-sent", "probes kept") if name in heading
        )

    @pytest.mark.parametrize("width", [60, 80])
    def test_no_line_is_wider_than_the_terminal(
        self, printed: Printed, argv: list[str], width: int
    ) -> None:
        assert [] == _too_wide(printed(*argv, columns=width), width)

    @pytest.mark.parametrize("width", [60, 80])
    def test_every_word_is_one_the_whole_table_prints(
        self, printed: Printed, argv: list[str], width: int
    ) -> None:
        """No word is split: each is one of the unfitted output's, but those of the note
        naming the columns left out, the rule under the headings and the shared column's
        heading."""
        whole = {word.strip(",") for word in printed(*argv).split()}
        note = re.compile(r"columns left out .*?to\s+choose", re.S)
        fitted = note.sub("", printed(*argv, columns=width), count=1)
        words = [word.strip(",") for word in fitted.split() if not word.startswith("─")]

        assert [] == [word for word in words if word not in whole]


@pytest.fixture
def terminal() -> Iterator[TextIO]:
    """A terminal 93 columns wide (a pseudo-terminal) to write to."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 93, 0, 0))
    with open(follower, "w") as stream:
        yield stream
    os.close(leader)


class TestTerminalWidth:
    def test_a_pipe_without_columns_has_no_width(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.delenv("COLUMNS", raising=False)

        assert None is terminal_width()

    def test_columns_sets_it(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("COLUMNS", "97")

        assert 97 == terminal_width()

    def test_it_is_never_under_60(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("COLUMNS", "30")

        assert 60 == terminal_width()

    def test_columns_that_is_not_a_number_is_ignored(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("COLUMNS", "wide")

        assert None is terminal_width()

    def test_columns_of_five_thousand_digits_is_ignored(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("COLUMNS", "9" * 5000)

        assert None is terminal_width()

    def test_a_terminal_gives_its_own_width(
        self, monkeypatch: pytest.MonkeyPatch, terminal: TextIO
    ) -> None:
        monkeypatch.delenv("COLUMNS", raising=False)
        # Here rather than in the fixture: pytest sets its own stdout as each phase starts.
        monkeypatch.setattr(sys, "stdout", terminal)

        assert 93 == terminal_width()


COMPLAINTS = {
    "error": [
        "bench",
        "refund-desk",
        "-q",
        "--policy",
        "tiered",
        "--set",
        "cost.model=claude-sonet",
    ],
    "usage": ["bench", "refund-desk", "--columns"],
    "warning": [
        "import",
        "tests/fixtures/coding-chat.jsonl",
        "--out",
        "{dir}/c.toml",
        "--tokenizer",
        "words",
    ],
}
"""A command for each kind of line on stderr: an error of ours, argparse's, a warning."""


@pytest.fixture
def complained(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Callable[[str, int | None], str]:
    """What the command ``COMPLAINTS[kind]`` prints on stderr at ``columns``."""

    def run(kind: str, columns: int | None) -> str:
        if columns is None:
            monkeypatch.delenv("COLUMNS", raising=False)
        else:
            monkeypatch.setenv("COLUMNS", str(columns))
        capsys.readouterr()
        with contextlib.suppress(SystemExit):
            main([arg.format(dir=tmp_path) for arg in COMPLAINTS[kind]])
        return capsys.readouterr().err

    return run


class TestComplaints:
    @pytest.mark.parametrize("kind", sorted(COMPLAINTS))
    def test_a_complaint_fits_the_width(
        self, complained: Callable[[str, int | None], str], kind: str
    ) -> None:
        said = complained(kind, 60)

        assert ([], True) == (_too_wide(said, 60), said.startswith("memtape: "))

    @pytest.mark.parametrize("kind", sorted(COMPLAINTS))
    def test_its_words_are_the_whole_line_s(
        self, complained: Callable[[str, int | None], str], kind: str
    ) -> None:
        whole = complained(kind, None)

        assert (1, whole.split()) == (len(whole.splitlines()), complained(kind, 60).split())
