"""Text is text: escape sequences in a run reach no terminal through any command.

A run (a JSONL file and a SQLite store) whose turn texts, fact keys and
contents, queries, episodes, scenario name, model name and a model's recorded
answer hold ESC sequences (a title change, a screen clear), a carriage return
before a fake "ok" line, a C1 CSI and a bidi override: every command that reads
it prints no raw character that acts (``memtape.core.visible``), and ``--json``
still gives the exact texts back.
"""

import json
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest

from memtape.cli import main
from memtape.llm.cache import close_caches
from memtape.llm.cache_location import CACHE_ENV
from tests.conftest import SECRET_KEY
from tests.llm_runs import scenario
from tests.llm_server import ChatServer

TITLE = "\x1b]0;pwned\x07"
CLEAR = "\x1b[2J"
FAKE_OK = "\r\x1b[32mcheck ok\x1b[0m"
CSI = "\x9b31m"
OVERRIDE = "\u202eevil\u202c"
EVIL = f"{TITLE}{CLEAR}{FAKE_OK}{CSI}{OVERRIDE}"
"""Every attack at once (the scenario below writes it as TOML escapes)."""

TURN_TEXT = f"hello {EVIL} there"
KEY = f"contact{CLEAR}"
MODEL = f"test-model{TITLE}"
ANSWER = f"the summary {EVIL}"


def toml(text: str) -> str:
    """``text`` as a TOML basic string, every character outside printable ASCII escaped."""
    return (
        '"'
        + "".join(c if " " <= c < "\x7f" and c not in '"\\' else f"\\u{ord(c):04x}" for c in text)
        + '"'
    )


SCENARIO = f"""[scenario]
name = {toml("evil" + EVIL)}

[compaction]
policy = "tiered"
budget = 20
hot_n = 2

[forgetting]
policy = "importance-recency-access"
capacity = 2
half_life = 4.0
access_boost = 0.1

[consolidation]
policy = "rules"

[[consolidation.rule]]
pattern = "name is (?P<name>[A-Z][a-z]+)"
semantic.key = {toml("user.name" + CLEAR)}
semantic.text = {toml("user.name = {name}" + TITLE)}
semantic.importance = 0.9

[[consolidation.rule]]
pattern = "fee"
procedural = {toml("a rule " + EVIL)}

[[probe]]
text = {toml("probe " + EVIL)}
from = 1

[[step]]
turn = "user"
text = {toml(TURN_TEXT)}

[[step]]
turn = "assistant"
text = {toml("probe " + EVIL + " said")}
salient = true

[[step]]
turn = "user"
text = "more words to take the window over its budget now"

[[step]]
turn = "user"
text = "and more words to take the window over its budget now"

[[step]]
write = {toml(KEY)}
importance = 0.9
text = {toml("by email " + EVIL)}

[[step]]
write = {toml(KEY)}
supersedes = {toml(KEY)}
importance = 0.5
text = {toml("by phone " + EVIL)}

[[step]]
write = {toml("b" + CLEAR)}
importance = 0.1
text = {toml("b " + EVIL)}

[[step]]
read = {toml(KEY)}

[[step]]
query = {toml("which contact " + EVIL)}

[[step]]
episode = {toml("The user name is Dana " + EVIL)}

[[step]]
episode = {toml("A fee applies " + EVIL)}

[[step]]
consolidate = true
"""


class Outcome(NamedTuple):
    status: int
    out: str
    err: str


def acting(text: str) -> list[str]:
    """The characters of ``text`` that could act on a terminal (a newline ends a line)."""
    return [
        char
        for char in text
        if unicodedata.category(char) in {"Cc", "Cf", "Cs", "Zl", "Zp"}
        and char not in "\n\u200c\u200d"
    ]


def strings(data: object) -> Iterator[str]:
    """Every string in parsed JSON ``data``, keys included."""
    if isinstance(data, str):
        yield data
    elif isinstance(data, list):
        for item in data:
            yield from strings(item)
    elif isinstance(data, dict):
        for key, value in data.items():
            yield key
            yield from strings(value)


@pytest.fixture
def evil(tmp_path: Path) -> Path:
    """The scenario file."""
    path = tmp_path / "evil.toml"
    path.write_text(SCENARIO, "utf-8")
    return path


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The evil run recorded as a JSONL file and in a store, and a run whose summaries a
    model named with escapes wrote with escapes, recorded once for the module (reading
    them never asks the model): name -> address."""
    folder = tmp_path_factory.mktemp("runs")
    evil = folder / "evil.toml"
    evil.write_text(SCENARIO, "utf-8")
    server = ChatServer().start()
    server.answerer = lambda model, prompt: ANSWER
    desk = scenario(folder / "desk.toml", server.url)
    desk.write_text(
        desk.read_text("utf-8").replace('model = "test-model"', f"model = {toml(MODEL)}")
    )
    store = folder / "runs.db"
    addresses = {"jsonl": folder / "evil.jsonl", "llm": folder / "desk.jsonl"}
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("OPENAI_API_KEY", SECRET_KEY)
            patch.delenv("OPENAI_BASE_URL", raising=False)
            patch.setenv(CACHE_ENV, str(folder / "cache.sqlite"))
            for source, out in [
                (evil, addresses["jsonl"]),
                (evil, store),
                (desk, addresses["llm"]),
                (desk, store),
            ]:
                assert 0 == main(["run", str(source), "--out", str(out)])
            close_caches()
    finally:
        server.stop()
    return {
        "jsonl": str(addresses["jsonl"]),
        "sqlite": f"{store}#1",
        "llm": str(addresses["llm"]),
        "llm-sqlite": f"{store}#2",
        "store": str(store),
    }


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> "Cli":
    """``memtape ARGS...`` in-process: status, stdout, stderr."""
    return Cli(capsys)


class Cli:
    def __init__(self, capsys: pytest.CaptureFixture[str]) -> None:
        self.capsys = capsys

    def __call__(self, *argv: str) -> Outcome:
        self.capsys.readouterr()
        status = main(list(argv))
        captured = self.capsys.readouterr()
        return Outcome(status, captured.out, captured.err)


READING = [
    ("show",),
    ("show", "--at", "3"),
    ("timeline",),
    ("why", "turn:1"),
    ("why", "turn:2"),
    ("why", KEY),
    ("why", "1"),
    ("check",),
]
"""Reading commands that take one run, each followed by the run's address."""


class TestReadingCommands:
    @pytest.mark.parametrize("run", ["jsonl", "sqlite", "llm", "llm-sqlite"])
    @pytest.mark.parametrize("command", READING, ids=" ".join)
    def test_no_character_that_acts_reaches_the_terminal(
        self, cli: Cli, runs: dict[str, str], run: str, command: tuple[str, ...]
    ) -> None:
        name, *rest = command
        outcome = cli(name, runs[run], *rest)
        assert ([], []) == (acting(outcome.out), acting(outcome.err))

    @pytest.mark.parametrize("run", ["jsonl", "sqlite", "llm"])
    def test_diff_of_two_points_prints_none(self, cli: Cli, runs: dict[str, str], run: str) -> None:
        end = len(json.loads(cli("timeline", runs[run], "--json").out))
        outcome = cli("diff", runs[run], "0", str(end))
        assert ([], []) == (acting(outcome.out), acting(outcome.err))

    def test_diff_of_two_runs_at_a_step_prints_none(
        self, cli: Cli, runs: dict[str, str], evil: Path, tmp_path: Path
    ) -> None:
        roomier = tmp_path / "roomier.jsonl"
        cli("run", str(evil), "--set", "forgetting.capacity=3", "--out", str(roomier))
        outcome = cli("diff", runs["jsonl"], str(roomier), "--step", "12")
        assert (0, [], []) == (outcome.status, acting(outcome.out), acting(outcome.err))
        assert "fact 3 'b\\x1b[2J' restored" in outcome.out

    def test_runs_prints_none(self, cli: Cli, runs: dict[str, str]) -> None:
        outcome = cli("runs", runs["store"])
        assert (0, [], []) == (outcome.status, acting(outcome.out), acting(outcome.err))

    def test_the_texts_show_as_escapes(self, cli: Cli, runs: dict[str, str]) -> None:
        out = cli("why", runs["jsonl"], "turn:1").out
        shown = "\\x1b]0;pwned\\x07\\x1b[2J\\r\\x1b[32mcheck ok\\x1b[0m\\x9b31m\\u202eevil\\u202c"
        assert f"hello {shown} there" in out


class TestJson:
    @pytest.mark.parametrize(
        "command",
        [("show",), ("timeline",), ("diff", "0", "12")],
        ids=" ".join,
    )
    def test_json_prints_none_and_keeps_the_texts_exact(
        self, cli: Cli, runs: dict[str, str], command: tuple[str, ...]
    ) -> None:
        name, *rest = command
        outcome = cli(name, runs["jsonl"], *rest, "--json")
        assert (0, [], []) == (outcome.status, acting(outcome.out), acting(outcome.err))
        assert any(EVIL in text for text in strings(json.loads(outcome.out)))

    def test_why_json_prints_none(self, cli: Cli, runs: dict[str, str]) -> None:
        """Its label and steps are words for a reader: the texts in them are visible."""
        outcome = cli("why", runs["jsonl"], "turn:1", "--json")
        assert (0, [], []) == (outcome.status, acting(outcome.out), acting(outcome.err))

    def test_runs_json_keeps_the_scenario_name_exact(self, cli: Cli, runs: dict[str, str]) -> None:
        outcome = cli("runs", runs["store"], "--json")
        assert [] == acting(outcome.out)
        assert "evil" + EVIL == json.loads(outcome.out)[0]["scenario"]

    def test_show_json_keeps_the_model_answer_exact(self, cli: Cli, runs: dict[str, str]) -> None:
        outcome = cli("show", runs["llm"], "--json")
        assert [] == acting(outcome.out)
        assert ANSWER in {item["text"] for item in json.loads(outcome.out)["window"]["warm"]}


class TestWritingCommands:
    def test_run_prints_none(self, cli: Cli, evil: Path, tmp_path: Path) -> None:
        outcome = cli("run", str(evil), "--out", str(tmp_path / "again.jsonl"))
        assert (0, [], []) == (outcome.status, acting(outcome.out), acting(outcome.err))

    def test_export_prints_none(self, cli: Cli, runs: dict[str, str], tmp_path: Path) -> None:
        outcome = cli("export", runs["jsonl"], "--redact", "--out", str(tmp_path / "r.jsonl"))
        assert (0, [], []) == (outcome.status, acting(outcome.out), acting(outcome.err))

    def test_view_prints_none_and_its_page_holds_none(
        self, cli: Cli, runs: dict[str, str], tmp_path: Path
    ) -> None:
        page = tmp_path / "page.html"
        outcome = cli("view", runs["jsonl"], "--out", str(page))
        shown = acting(outcome.out) + acting(outcome.err) + acting(page.read_text("utf-8"))
        assert (0, []) == (outcome.status, shown)

    def test_bench_with_losses_prints_none(self, cli: Cli, evil: Path) -> None:
        outcome = cli(
            "bench", str(evil), "--policy", "tiered", "--policy", "sliding-window", "--losses", "-q"
        )
        assert (0, [], []) == (outcome.status, acting(outcome.out), acting(outcome.err))
        assert "missing at turn" in outcome.out

    def test_the_bench_gate_prints_none(self, cli: Cli, evil: Path) -> None:
        outcome = cli(
            "bench", str(evil), "--policy", "tiered", "-q", "--fail-if", "compactions > -1"
        )
        assert (1, [], []) == (outcome.status, acting(outcome.out), acting(outcome.err))
        assert "regressed: evil" in outcome.out

    def test_bench_json_file_holds_none_and_the_name_exact(
        self, cli: Cli, evil: Path, tmp_path: Path
    ) -> None:
        out = tmp_path / "bench.json"
        outcome = cli("bench", str(evil), "--policy", "tiered", "--json", str(out), "-q")
        text = out.read_text("utf-8")
        assert (0, []) == (outcome.status, acting(text))
        assert "evil" + EVIL == json.loads(text)["results"][0]["scenario"]


class TestImport:
    def test_a_transcript_with_escapes_prints_none_and_writes_none(
        self, cli: Cli, tmp_path: Path
    ) -> None:
        """Its name is quoted in a warning and in the scenario's comment, its texts in steps."""
        chat = tmp_path / f"chat{CLEAR}.json"
        messages = [
            {"role": "user", "content": TURN_TEXT},
            {"role": "assistant", "content": ANSWER},
        ]
        chat.write_text(json.dumps({"messages": messages}), "utf-8")
        out = tmp_path / "chat.toml"
        outcome = cli("import", str(chat), "--format", "openai-chat", "--out", str(out), "-q")
        written = out.read_text("utf-8")
        shown = (acting(outcome.out), acting(outcome.err), acting(written))
        assert (0, ([], [], [])) == (outcome.status, shown)
        assert "no turn is salient" in outcome.err
        assert 0 == main(["run", str(out), "--out", str(tmp_path / "chat.jsonl")])
        hot = json.loads(cli("show", str(tmp_path / "chat.jsonl"), "--json").out)["window"]["hot"]
        assert [TURN_TEXT, ANSWER] == [turn["text"] for turn in hot]


class TestErrors:
    def test_an_unknown_role_quoted_back_prints_none(self, cli: Cli, tmp_path: Path) -> None:
        bad = tmp_path / "bad.toml"
        bad.write_text(f'[[step]]\nturn = {toml("us" + EVIL)}\ntext = "hi"\n', "utf-8")
        outcome = cli("run", str(bad), "--out", str(tmp_path / "bad.jsonl"))
        assert (2, [], []) == (outcome.status, acting(outcome.out), acting(outcome.err))

    def test_an_unknown_section_named_back_prints_none(self, cli: Cli, tmp_path: Path) -> None:
        bad = tmp_path / "bad.toml"
        bad.write_text(f'[{toml("memory" + EVIL)}]\npolicy = "rules"\n', "utf-8")
        outcome = cli("run", str(bad), "--out", str(tmp_path / "bad.jsonl"))
        assert (2, [], []) == (outcome.status, acting(outcome.out), acting(outcome.err))
        assert "unknown section memory\\x1b]0;pwned\\x07" in outcome.err

    def test_an_unknown_fact_key_quoted_back_prints_none(
        self, cli: Cli, runs: dict[str, str]
    ) -> None:
        outcome = cli("why", runs["jsonl"], f"nokey{EVIL}")
        assert (2, [], []) == (outcome.status, acting(outcome.out), acting(outcome.err))
