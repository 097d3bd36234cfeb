"""Every output the README and the docs show is what memtape prints now.

The convention (docs/contributing.md says it for writers):

- A fenced block marked ``console`` is an example that is run. Each line starting with
  ``$ `` is a command; the lines after it, up to the next ``$ `` or the block's end,
  are what it prints (stdout and stderr as a terminal shows them, interleaved).
- ``$ memtape ...`` runs in-process (``memtape.cli.main``), after any ``NAME=VALUE``
  words before it, set in the environment for that command alone. A few file commands
  (``sed``, ``cp``, ``mv``, ``rm``, ``mkdir``, ``cat``, ``head``, ``tail``, ``ls``,
  ``touch``) run in a shell, to prepare a file (an edited run, say). Any other command
  is a mistake in the page, and fails it.
- Each page runs in a fresh temporary directory holding a copy of the repository's
  ``tests/fixtures/`` and ``examples/``; its blocks run in order, so a later block
  may read what an earlier one wrote. The model server (``$OPENAI_BASE_URL``) is the
  tests' loopback stand-in, ``tests/llm_server.py``, with a dummy key and a fresh cache.
- A line ``...`` alone stands for any number of lines (none included); ``...`` inside
  a line stands for any text, so a line ending in ``...`` is matched as a prefix.
- Volatile figures are masked on both sides before comparing: durations (``2.0 s``,
  ``13.8 ms``, ``62.7 µs``), rates (``520,000 events/s``), timestamps, the temporary
  directory's path and a served port. Trailing spaces do not count.
- Blocks marked ``sh`` show commands without their output: each ``memtape`` line in
  them must still parse (an option removed from the parser fails the page).
"""

import contextlib
import difflib
import io
import os
import re
import shlex
import shutil
import subprocess
import traceback
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest

from memtape.cli import _parser, main
from tests.llm_server import ChatServer

ROOT = Path(__file__).parent.parent
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")], key=str)
"""Every page whose examples are held to the program."""
FILE_COMMANDS = frozenset({"sed", "cp", "mv", "rm", "mkdir", "cat", "head", "tail", "ls", "touch"})
"""The commands besides ``memtape`` a console block may run: preparing files only."""
ELLIPSIS = "..."
ASSIGNMENT = re.compile(r"[A-Z_][A-Z0-9_]*=")
"""``NAME=VALUE`` before a command: an environment variable for that command."""
WIDTH = "100"
"""The terminal width the examples are run at (COLUMNS): narrow, and fixed."""

VOLATILE = (
    (
        re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:Z|[+-]\d\d:?\d\d)?"),
        "<time>",
    ),
    (re.compile(r"\b\d[\d,]*(?:\.\d+)?\s?[\w./]+/s\b"), "<rate>"),
    (re.compile(r"\b\d[\d,]*(?:\.\d+)?(?:[–-]\d[\d,]*(?:\.\d+)?)?\s?(?:µs|ms|s)\b"), "<time>"),
    (re.compile(r"(127\.0\.0\.1|localhost):\d+"), r"\1:<port>"),
)
"""Figures that differ from run to run, and what each becomes on both sides."""


@attrs.frozen
class Example:
    """One command of a console block and the output the page shows for it."""

    page: Path
    line: int
    command: str
    expected: tuple[str, ...]
    block: int


def console_examples(page: Path) -> list[Example]:
    """The commands of ``page``'s console blocks, in order, with their shown output."""
    examples: list[Example] = []
    lines = page.read_text("utf-8").splitlines()
    inside = False
    block = 0
    current: tuple[int, str] | None = None
    output: list[str] = []

    def close() -> None:
        if current is not None:
            examples.append(Example(page, current[0], current[1], tuple(output), block))

    for number, line in enumerate(lines, 1):
        fence = line.strip()
        if not inside:
            if fence == "```console":
                inside, block, current, output = True, block + 1, None, []
            continue
        if fence == "```":
            close()
            inside, current = False, None
        elif line.startswith("$ "):
            close()
            current, output = (number, line[2:].strip()), []
        elif current is None:
            raise AssertionError(f"{_where(page, number)}: output before any `$ ` command")
        else:
            output.append(line)
    assert not inside, f"{page.name}: a console block is never closed"
    return examples


def shown_commands(page: Path) -> Iterator[tuple[int, list[str]]]:
    """The ``memtape`` lines of ``page``'s ``sh`` blocks, each with its line number (a line
    ending in a backslash goes on on the next)."""
    inside = False
    lines = page.read_text("utf-8").splitlines()
    for number, line in enumerate(lines, 1):
        fence = line.strip()
        if fence in ("```sh", "```bash"):
            inside = True
        elif fence.startswith("```"):
            inside = False
        elif inside and line.startswith("memtape "):
            command, at = line, number
            while command.endswith("\\") and at < len(lines):
                command, at = command[:-1] + lines[at], at + 1
            yield number, shlex.split(command, comments=True)[1:]


def mask(text: str, workdir: Path) -> str:
    """``text`` with every volatile figure masked and no trailing spaces."""
    text = text.replace(f"{workdir}/", "").replace(str(workdir), ".")
    for pattern, replacement in VOLATILE:
        text = pattern.sub(replacement, text)
    return "\n".join(line.rstrip() for line in text.splitlines())


def matches(expected: tuple[str, ...] | list[str], actual: list[str]) -> bool:
    """Whether ``actual`` is what ``expected`` shows, ``...`` lines and parts as wildcards."""
    patterns = [
        None
        if line.strip() == ELLIPSIS
        else re.compile(".*".join(re.escape(part) for part in line.split(ELLIPSIS)))
        for line in expected
    ]
    reachable = {0}  # how many actual lines the patterns so far can have consumed
    for pattern in patterns:
        if pattern is None:
            reachable = set(range(min(reachable), len(actual) + 1))
        else:
            reachable = {
                count + 1
                for count in reachable
                if count < len(actual) and pattern.fullmatch(actual[count])
            }
        if not reachable:
            return False
    return len(actual) in reachable


def run_command(command: str, workdir: Path) -> tuple[int, str]:
    """Run one shown command in ``workdir``: its exit status and everything it printed."""
    words = shlex.split(command)
    if ASSIGNMENT.match(words[0]):
        settings = dict(word.split("=", 1) for word in _leading_assignments(words))
        with _environment(settings):
            return run_command(command.split(None, len(settings))[-1], workdir)
    if words[0] == "memtape":
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
            try:
                status = main(words[1:])
            except SystemExit as exit_:  # argparse: a usage error or --help
                status = exit_.code if isinstance(exit_.code, int) else 1
            except Exception:
                status = -1
                buffer.write(traceback.format_exc())
        return status, buffer.getvalue()
    if words[0] not in FILE_COMMANDS:
        raise AssertionError(
            f"`{words[0]}` is not run in docs examples: only memtape and the file commands "
            f"{', '.join(sorted(FILE_COMMANDS))} (show other commands in an ```sh block)"
        )
    done = subprocess.run(
        command, shell=True, cwd=workdir, capture_output=True, text=True, check=False
    )
    return done.returncode, done.stdout + done.stderr


def _leading_assignments(words: list[str]) -> list[str]:
    assignments = []
    for word in words:
        if not ASSIGNMENT.match(word):
            break
        assignments.append(word)
    return assignments


@contextlib.contextmanager
def _environment(settings: dict[str, str]) -> Iterator[None]:
    """``settings`` in the environment for the duration, as a shell's ``A=B cmd`` does."""
    before = {name: os.environ.get(name) for name in settings}
    os.environ.update(settings)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                del os.environ[name]
            else:
                os.environ[name] = value


def _where(page: Path, line: int) -> str:
    return f"{page.relative_to(ROOT) if page.is_relative_to(ROOT) else page}:{line}"


def mismatch(example: Example, status: int, printed: str, workdir: Path) -> str | None:
    """Why ``printed`` is not what ``example`` shows, as a diff; None when it is."""
    actual = mask(printed, workdir).splitlines()
    expected = mask("\n".join(example.expected), workdir).splitlines()
    if matches(expected, actual):
        return None
    diff = difflib.unified_diff(expected, actual, "the page shows", "memtape prints", lineterm="")
    return "\n".join(
        [f"{_where(example.page, example.line)}: $ {example.command}  (exit {status})", *diff]
    )


def prepare(workdir: Path) -> None:
    """What every page's examples may reach: the repository's fixtures and examples."""
    shutil.copytree(ROOT / "tests" / "fixtures", workdir / "tests" / "fixtures")
    shutil.copytree(
        ROOT / "examples", workdir / "examples", ignore=shutil.ignore_patterns("__pycache__")
    )


def run_page(examples: list[Example], workdir: Path) -> list[str]:
    """Run ``examples`` in order in ``workdir``; the diff of each whose output differs."""
    problems = []
    for example in examples:
        status, printed = run_command(example.command, workdir)
        problem = mismatch(example, status, printed, workdir)
        if problem is not None:
            problems.append(problem)
    return problems


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chat_server: ChatServer) -> Path:
    """A fresh directory to run a page in, with a fixed, quiet environment: no signing key,
    and the model server the loopback stand-in (``tests/llm_server.py``), with a dummy key."""
    prepare(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", WIDTH)
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("MEMTAPE_LLM_CACHE", str(tmp_path / ".memtape" / "llm-cache.sqlite"))
    monkeypatch.setenv("MEMTAPE_COUNTEREXAMPLES", str(tmp_path / ".memtape" / "counterexamples"))
    monkeypatch.setenv("OPENAI_BASE_URL", chat_server.url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-docs-examples")
    for name in ("MEMTAPE_SIGNING_KEY", "MEMTAPE_REQUIRE_SIGNED", "MEMTAPE_TRUST"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def _page_id(page: Path) -> str:
    return str(page.relative_to(ROOT))


EXAMPLE_PAGES = [page for page in PAGES if console_examples(page)]


class TestPages:
    @pytest.mark.parametrize("page", EXAMPLE_PAGES, ids=_page_id)
    def test_every_shown_output_is_printed_now(self, page: Path, workdir: Path) -> None:
        """Each command of the page's console blocks prints what the page shows."""
        problems = run_page(console_examples(page), workdir)
        if problems:
            pytest.fail("\n\n".join(["the page's examples are stale:", *problems]), pytrace=False)

    @pytest.mark.parametrize("page", PAGES, ids=_page_id)
    def test_every_shown_command_parses(self, page: Path) -> None:
        """Each memtape line of the page's sh blocks is a command the parser takes."""
        refused = []
        parser = _parser()
        for line, argv in shown_commands(page):
            with contextlib.redirect_stderr(io.StringIO()) as errors:
                try:
                    parser.parse_args(argv)
                except SystemExit:
                    refused.append(f"{_where(page, line)}: {errors.getvalue().strip()}")
        assert [] == refused

    def test_the_readme_and_the_docs_show_outputs(self) -> None:
        """The collection finds examples in the README and across the docs (it can fail)."""
        assert ROOT / "README.md" in EXAMPLE_PAGES
        assert len(EXAMPLE_PAGES) >= 8


class TestConvention:
    def test_an_ellipsis_line_stands_for_any_lines(self) -> None:
        assert matches(["a", "...", "d"], ["a", "b", "c", "d"])
        assert matches(["a", "...", "d"], ["a", "d"])
        assert not matches(["a", "...", "d"], ["a", "b", "c"])

    def test_an_ellipsis_in_a_line_stands_for_any_text(self) -> None:
        assert matches(["peak   3..."], ["peak   304   5"])
        assert matches(["x ... z"], ["x y y z"])
        assert not matches(["peak   3..."], ["peak   404"])

    def test_a_line_without_ellipsis_must_be_equal(self) -> None:
        assert not matches(["ok"], ["ok", "more"])
        assert not matches(["ok", "more"], ["ok"])

    def test_volatile_figures_are_masked(self, tmp_path: Path) -> None:
        shown = mask(f"took 2.0 s at 520,000 events/s in {tmp_path}/a.json, 13.8 ms", tmp_path)
        printed = mask(f"took 8.4 s at 771,000 events/s in {tmp_path}/a.json, 0.2 ms", tmp_path)
        assert shown == printed
        assert "15 events in 10 steps" == mask("15 events in 10 steps", tmp_path)

    def test_an_assignment_sets_the_environment_for_one_command(self, workdir: Path) -> None:
        status, _ = run_command(
            "MEMTAPE_SIGNING_KEY=k memtape run refund-desk --out s.jsonl", workdir
        )
        assert (0, False) == (status, "MEMTAPE_SIGNING_KEY" in os.environ)
        assert (
            "signed with a valid signature"
            in run_command("MEMTAPE_SIGNING_KEY=k memtape check s.jsonl", workdir)[1]
        )

    def test_other_commands_are_refused(self, tmp_path: Path) -> None:
        with pytest.raises(AssertionError, match="pytest"):
            run_command("pytest -q", tmp_path)

    def test_the_stale_check_example_is_caught(self, workdir: Path) -> None:
        """The README's old `check` example (issue 15, friction 4) fails, with its diff."""
        page = workdir / "old.md"
        page.write_text(
            "```console\n"
            "$ memtape run refund-desk --out refund.jsonl\n"
            "recorded 15 events from 10 steps of refund-desk to refund.jsonl\n"
            """$ sed '5s/"tokens": 12/"tokens": 13/' refund.jsonl > edited.jsonl\n"""
            "$ memtape check edited.jsonl\n"
            "edited.jsonl: event 4: chain: ...\n"
            "edited.jsonl: event 4: re-decide: ...\n"
            "edited.jsonl: event 6: budget: the window holds 41 tokens, over the budget of 40,"
            " while WARM still holds 1 item(s) to push cold\n"
            "```\n",
            "utf-8",
        )
        (problem,) = run_page(console_examples(page), workdir)
        assert problem.startswith(f"{page}:5: $ memtape check edited.jsonl  (exit 1)")
        assert "-edited.jsonl: event 6: budget: " in problem
        assert "+edited.jsonl: event 6: budget: " in problem
        assert "though the policy could keep as few as 24" in problem
