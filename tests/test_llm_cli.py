"""A model in the loop, end to end through the ``memtape`` command and a real test server.

A run whose rolling summary asks a model is recorded against the test
server (``tests.llm_server``); then it is read, checked and forked with the
server gone and the openai SDK unimportable; ``check --live`` asks again; and
each way a model can fail is one line, with nothing written.
"""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import json
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memtape.cli import main
from memtape.core.errors import Rejected
from memtape.core.events import CompactionTriggered
from memtape.viewer.serve import live_source
from tests.chained import lines_of, rechained, write_lines
from tests.conftest import SECRET_KEY
from tests.llm_runs import scenario
from tests.llm_server import ChatServer, serving

ROOT = Path(__file__).resolve().parent.parent

COMPACTION_FIELDS = ["budget", "warm", "dropped", "cold", "gist", "gist_tokens"]


def _record(tmp_path: Path, server: ChatServer, **tables: str) -> Path:
    path = scenario(tmp_path / "desk.toml", server.url, **tables)
    out = tmp_path / "desk.jsonl"
    assert 0 == main(["run", str(path), "--out", str(out)])
    return out


def _offline(*commands: list[str], cwd: Path) -> dict[str, Any]:
    """Run ``memtape`` commands in a fresh interpreter where ``import openai`` fails:
    each command's exit status, and whether the SDK was imported."""
    script = textwrap.dedent(
        f"""
        import json, sys
        sys.modules["openai"] = None  # import openai now raises ImportError
        from memtape.cli import main
        codes = [main(args) for args in {list(commands)!r}]
        print(json.dumps({{"codes": codes}}))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "MEMTAPE_LLM_CACHE": "none.db"},
        check=False,
    )
    assert "" == done.stderr
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    result["stdout"] = done.stdout
    return result


@pytest.mark.usefixtures("llm_env")
class TestRecorded:
    def test_each_compaction_line_carries_its_call_and_nothing_else_new(
        self, tmp_path: Path, chat_server: ChatServer
    ) -> None:
        lines = lines_of(_record(tmp_path, chat_server))
        compactions = [line for line in lines[1:] if line["type"] == "CompactionTriggered"]

        assert 3 == len(compactions)
        for line in compactions:
            assert 5 == line["v"]
            assert [*COMPACTION_FIELDS, "asked"] == list(line["event"])
            (call,) = line["event"]["asked"]
            assert [
                "output",
                "model",
                "prompt",
                "prompt_tokens",
                "completion_tokens",
                "seconds",
                "cached",
            ] == list(call)

    def test_the_header_records_the_llm_table_and_the_prompt(
        self, tmp_path: Path, chat_server: ChatServer
    ) -> None:
        header = lines_of(_record(tmp_path, chat_server))[0]

        assert {
            "model": "test-model",
            "base_url": chat_server.url,
            "temperature": 0.0,
            "timeout": 5.0,
            "max_retries": 0,
        } == header["policies"]["llm"]
        assert "{turns}" in header["policies"]["compaction"]["prompt"]

    def test_reading_commands_run_with_the_server_gone_and_no_sdk(
        self, tmp_path: Path, chat_server: ChatServer
    ) -> None:
        run = _record(tmp_path, chat_server)
        chat_server.stop()
        ends = len(lines_of(run)) - 1

        result = _offline(
            ["show", str(run)],
            ["show", str(run), "--at", "6", "--json"],
            ["timeline", str(run), "--json"],
            ["diff", str(run), "0", str(ends)],
            ["why", str(run), "turn:4"],
            ["view", str(run), "--out", "page.html"],
            ["fork", str(run), "--at", str(ends), "--out", "fork.jsonl"],
            ["export", str(run), "--redact", "--out", "redacted.jsonl"],
            ["check", str(run)],
            cwd=tmp_path,
        )

        assert [0] * 9 == result["codes"]
        assert "re-decides to itself" in result["stdout"]
        assert (tmp_path / "page.html").is_file()
        assert 3 == chat_server.requests

    def test_a_fork_within_the_recorded_answers_is_answered_by_the_cache(
        self, tmp_path: Path, chat_server: ChatServer
    ) -> None:
        run = _record(tmp_path, chat_server)
        chat_server.stop()

        assert 0 == main(["fork", str(run), "--at", "4", "--out", str(tmp_path / "f.jsonl")])
        forked = [
            line["event"]["asked"][0]
            for line in lines_of(tmp_path / "f.jsonl")[1:]
            if line["type"] == "CompactionTriggered"
        ]
        assert [True] * 3 == [call["cached"] for call in forked]

    def test_runs_names_the_model_beside_the_policies(
        self, tmp_path: Path, chat_server: ChatServer, capsys: pytest.CaptureFixture[str]
    ) -> None:
        path = scenario(tmp_path / "desk.toml", chat_server.url)
        store = tmp_path / "runs.db"
        assert 0 == main(["run", str(path), "--out", str(store)])
        capsys.readouterr()

        assert 0 == main(["runs", str(store)])
        assert "compaction rolling-summary, llm test-model" in capsys.readouterr().out

    def test_timeline_says_which_model_was_asked(
        self, tmp_path: Path, chat_server: ChatServer, capsys: pytest.CaptureFixture[str]
    ) -> None:
        run = _record(tmp_path, chat_server)
        capsys.readouterr()

        assert 0 == main(["timeline", str(run)])
        compactions = [
            line for line in capsys.readouterr().out.splitlines() if "compaction" in line
        ]
        assert 3 == len(compactions)
        assert all("asked test-model" in line for line in compactions)


@pytest.mark.usefixtures("llm_env")
class TestRedacted:
    def test_a_redacted_copy_keeps_each_calls_figures_and_none_of_its_text(
        self, tmp_path: Path, chat_server: ChatServer
    ) -> None:
        run = _record(tmp_path, chat_server)
        copy = tmp_path / "copy.jsonl"

        assert 0 == main(["export", str(run), "--redact", "--out", str(copy)])
        calls = [
            (line["event"]["asked"][0], line["event"]["warm"][-1]["text"])
            for line in lines_of(run)[1:]
            if line["type"] == "CompactionTriggered"
        ]
        masked = [
            (line["event"]["asked"][0], line["event"]["warm"][-1]["text"])
            for line in lines_of(copy)[1:]
            if line["type"] == "CompactionTriggered"
        ]
        assert 3 == len(masked)
        figures = ("model", "prompt_tokens", "completion_tokens", "seconds", "cached")
        for (call, summary), (copied, copied_summary) in zip(calls, masked, strict=True):
            assert [call[f] for f in figures] == [copied[f] for f in figures]
            assert len(call["output"].split()) == len(copied["output"].split())
            assert "$180.00" not in copied["output"]
            assert "0" * 32 == copied["prompt"]
            assert len(summary.split()) == len(copied_summary.split())
        assert "test-model" == lines_of(copy)[0]["policies"]["llm"]["model"]
        assert chat_server.url not in copy.read_text("utf-8")


@pytest.mark.usefixtures("llm_env")
class TestCheck:
    def test_check_replays_the_recorded_answers_without_asking(
        self, tmp_path: Path, chat_server: ChatServer, capsys: pytest.CaptureFixture[str]
    ) -> None:
        run = _record(tmp_path, chat_server)
        chat_server.salt = "would differ"

        assert 0 == main(["check", str(run)])
        assert "re-decides to itself" in capsys.readouterr().out
        assert 3 == chat_server.requests

    def test_an_edited_answer_no_longer_re_decides(
        self, tmp_path: Path, chat_server: ChatServer, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """The summary in the WARM tier must be what the policy makes of the recorded answer."""
        run = _record(tmp_path, chat_server)
        lines = lines_of(run)
        at = next(i for i, line in enumerate(lines) if line.get("type") == "CompactionTriggered")
        lines[at]["event"]["asked"][0]["output"] = "[test-model] $999.00"
        write_lines(run, rechained(lines))
        capsys.readouterr()

        assert 1 == main(["check", str(run)])
        out = capsys.readouterr().out
        assert f"event {lines[at]['at']}: re-decide:" in out
        assert "$999.00" in out

    def test_an_answer_to_another_prompt_is_a_finding(
        self, tmp_path: Path, chat_server: ChatServer, capsys: pytest.CaptureFixture[str]
    ) -> None:
        run = _record(tmp_path, chat_server)
        lines = lines_of(run)
        at = next(i for i, line in enumerate(lines) if line.get("type") == "CompactionTriggered")
        lines[at]["event"]["asked"][0]["prompt"] = "0" * 32
        write_lines(run, rechained(lines))
        capsys.readouterr()

        assert 1 == main(["check", str(run)])
        out = capsys.readouterr().out
        assert "the run recorded an answer to prompt 00000000000000000000000000000000" in out

    def test_live_asks_every_recorded_question_again_past_the_cache(
        self, tmp_path: Path, chat_server: ChatServer, capsys: pytest.CaptureFixture[str]
    ) -> None:
        run = _record(tmp_path, chat_server)
        capsys.readouterr()

        assert 0 == main(["check", str(run), "--live", "--trust"])
        assert "the model gives the 3 recorded answers again" in capsys.readouterr().out
        assert 6 == chat_server.requests

    def test_live_reports_each_changed_answer_as_a_finding(
        self, tmp_path: Path, chat_server: ChatServer, capsys: pytest.CaptureFixture[str]
    ) -> None:
        run = _record(tmp_path, chat_server)
        chat_server.salt = "today"
        capsys.readouterr()

        assert 1 == main(["check", str(run), "--live", "--trust"])
        findings = capsys.readouterr().out.splitlines()
        assert 3 == len(findings)
        assert all(": live: " in line and "today" in line for line in findings)
        assert all("integrity" not in line and "re-decide" not in line for line in findings)

    def test_live_with_the_server_gone_is_one_line(
        self, tmp_path: Path, chat_server: ChatServer, capsys: pytest.CaptureFixture[str]
    ) -> None:
        run = _record(tmp_path, chat_server)
        chat_server.stop()
        capsys.readouterr()

        assert 2 == main(["check", str(run), "--live", "--trust"])
        err = capsys.readouterr().err
        assert 1 == len(err.splitlines())
        assert err.startswith(f"memtape: error: cannot reach the model server {chat_server.url}")


FAILURES = {
    "refused": ("cannot reach the model server {url}: ", 0),
    "timeout": ("the model server {url} did not answer within 0.5 s", 0),
    "401": ("the model server {url} answered 401 Unauthorized: told to fail with 401", 1),
    "429": ("the model server {url} answered 429 Too Many Requests", 3),
    "500": ("the model server {url} answered 500 Internal Server Error", 3),
    "503": ("the model server {url} answered 503 Service Unavailable", 3),
    "malformed": ("the model server {url} answered with malformed JSON", 1),
    "no text": ("the model server {url} answered model 'test-model' without a message text", 1),
}


@pytest.mark.usefixtures("llm_env")
class TestFailures:
    @pytest.mark.parametrize("mode", list(FAILURES))
    def test_each_failure_is_one_line_and_nothing_is_written(
        self,
        mode: str,
        tmp_path: Path,
        chat_server: ChatServer,
        llm_env: Path,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        path = scenario(
            tmp_path / "desk.toml", chat_server.url, llm="max_retries = 2\ntimeout = 0.5"
        )
        out = tmp_path / "desk.jsonl"
        out.write_bytes(b"what was here before\n")
        url = chat_server.url
        if mode == "refused":
            chat_server.stop()
        elif mode == "timeout":
            chat_server.stall(5, times=3)
        elif mode == "malformed":
            chat_server.malformed()
        elif mode == "no text":
            chat_server.malformed(body='{"object": "chat.completion", "choices": []}')
        else:
            chat_server.fail(int(mode), times=3)
        expected, requests = FAILURES[mode]

        assert 2 == main(["run", str(path), "--out", str(out)])
        err = capsys.readouterr().err
        assert 1 == len(err.splitlines())
        assert err.startswith(f"memtape: error: {path}: step 5: {expected.format(url=url)}")
        assert "Traceback" not in err
        assert SECRET_KEY not in err
        assert b"what was here before\n" == out.read_bytes()
        if mode not in ("refused", "timeout"):
            assert requests == chat_server.requests

    def test_retries_come_first_and_a_recovered_server_is_answered(
        self, tmp_path: Path, chat_server: ChatServer
    ) -> None:
        path = scenario(tmp_path / "desk.toml", chat_server.url, llm="max_retries = 2")
        chat_server.fail(503, times=2)

        assert 0 == main(["run", str(path), "--out", str(tmp_path / "desk.jsonl")])
        assert 5 == chat_server.requests

    def test_a_key_a_server_quotes_back_is_masked(
        self, tmp_path: Path, chat_server: ChatServer, capsys: pytest.CaptureFixture[str]
    ) -> None:
        path = scenario(tmp_path / "desk.toml", chat_server.url)
        chat_server.fail(401, body=f"Incorrect API key provided: {SECRET_KEY}")

        assert 2 == main(["run", str(path), "--out", str(tmp_path / "desk.jsonl")])
        err = capsys.readouterr().err
        assert SECRET_KEY not in err
        assert "Incorrect API key provided: ***" in err

    def test_openais_server_without_a_key_is_one_line(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ) -> None:
        monkeypatch.delenv("OPENAI_API_KEY")
        path = scenario(tmp_path / "desk.toml", "https://api.openai.com/v1")

        assert 2 == main(["run", str(path), "--out", str(tmp_path / "desk.jsonl")])
        assert capsys.readouterr().err.startswith(
            f"memtape: error: {path}: step 5: the model server https://api.openai.com/v1 "
            "needs a key: set OPENAI_API_KEY"
        )

    def test_a_local_server_needs_no_key(
        self, tmp_path: Path, chat_server: ChatServer, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.delenv("OPENAI_API_KEY")

        _record(tmp_path, chat_server)
        assert {"Bearer unused"} == set(chat_server.authorizations)


class TestInterrupted:
    def test_ctrl_c_while_waiting_on_the_model_is_one_line_and_the_store_stays_whole(
        self,
        tmp_path: Path,
        chat_server: ChatServer,
        llm_env: Path,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        path = scenario(tmp_path / "desk.toml", chat_server.url, llm="timeout = 60")
        store = tmp_path / "runs.db"
        assert 0 == main(["run", str(path), "--out", str(store)])
        chat_server.stall(30, times=10)
        env = {
            "PYTHONPATH": str(ROOT),
            "PATH": "/usr/bin:/bin",
            "OPENAI_API_KEY": SECRET_KEY,
            "MEMTAPE_LLM_CACHE": str(tmp_path / "other-cache.sqlite"),
        }
        child = subprocess.Popen(
            [sys.executable, "-m", "memtape.cli", "run", str(path), "--out", str(store)],
            env=env,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 60
        while chat_server.requests < 4 and time.monotonic() < deadline:
            time.sleep(0.05)
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=30)

        assert (130, ["memtape: interrupted: nothing more was written"]) == (
            child.returncode,
            err.splitlines(),
        )
        capsys.readouterr()
        assert 0 == main(["runs", str(store), "--json"])
        assert [1] == [run["id"] for run in json.loads(capsys.readouterr().out)]
        assert 0 == main(["check", f"{store}#1"])


class TestKey:
    def test_the_key_reaches_the_server_and_nothing_else(
        self,
        tmp_path: Path,
        chat_server: ChatServer,
        llm_env: Path,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        path = scenario(tmp_path / "desk.toml", chat_server.url)
        out = tmp_path / "desk.jsonl"

        assert 0 == main(["-v", "run", str(path), "--out", str(out)])
        assert 0 == main(["-v", "check", str(out), "--live", "--trust"])
        assert 0 == main(["export", str(out), "--redact", "--out", str(tmp_path / "r.jsonl")])
        printed = capsys.readouterr()
        assert {f"Bearer {SECRET_KEY}"} == set(chat_server.authorizations)
        written = [p for p in tmp_path.rglob("*") if p.is_file()]
        assert llm_env in written
        for found in [
            *(p.read_bytes() for p in written),
            printed.out.encode(),
            printed.err.encode(),
        ]:
            assert SECRET_KEY.encode() not in found


@pytest.fixture
def crafted() -> Iterator[ChatServer]:
    """The server a crafted run names: it must never hear from memtape."""
    yield from serving()


def _re_pointed(tmp_path: Path, user: ChatServer, crafted: ChatServer) -> Path:
    """A run recorded against the user's server, then edited to name ``crafted`` and
    another model, and chained again (the chain is public, so an edit passes ``check``)."""
    run = _record(tmp_path, user)
    lines = lines_of(run)
    lines[0]["policies"]["llm"].update(model="evil-model", base_url=crafted.url)
    return write_lines(tmp_path / "crafted.jsonl", rechained(lines))


REFUSAL = (
    "the run's [llm] table records model 'evil-model' at {url}; a file never chooses the "
    "model or the server your key goes to, so nothing was sent: name the model "
    "(--set llm.model=NAME [--set llm.base_url=URL]; without a URL, OPENAI_BASE_URL, else "
    "OpenAI's, is asked) or trust the run (--trust, or MEMTAPE_TRUST=1)"
)


@pytest.mark.usefixtures("llm_env")
class TestAFileNeverChoosesTheServer:
    """A run file's ``[llm]`` table names a model and a server; without ``--trust`` neither
    is asked, and the key goes only to the server the user configured."""

    @pytest.fixture
    def user(self, chat_server: ChatServer, monkeypatch: pytest.MonkeyPatch) -> ChatServer:
        """The user's own server, which OPENAI_BASE_URL names."""
        monkeypatch.setenv("OPENAI_BASE_URL", chat_server.url)
        return chat_server

    def test_a_fork_asks_nothing_and_says_how_to_go_on(
        self,
        tmp_path: Path,
        user: ChatServer,
        crafted: ChatServer,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        run = _re_pointed(tmp_path, user, crafted)
        before = user.requests
        capsys.readouterr()

        assert 2 == main(["fork", str(run), "--at", "0", "--out", str(tmp_path / "f.jsonl")])
        err = capsys.readouterr().err
        assert [f"memtape: error: {run}: " + REFUSAL.format(url=crafted.url)] == err.splitlines()
        assert ([], before) == (crafted.authorizations, user.requests)
        assert not (tmp_path / "f.jsonl").exists()

    def test_a_fork_that_names_the_model_asks_the_users_server_and_records_it(
        self, tmp_path: Path, user: ChatServer, crafted: ChatServer
    ) -> None:
        run = _re_pointed(tmp_path, user, crafted)
        before = user.requests
        out = tmp_path / "f.jsonl"

        assert 0 == main(
            ["fork", str(run), "--at", "0", "--set", "llm.model=mine", "--out", str(out)]
        )
        assert [] == crafted.authorizations
        assert [f"Bearer {SECRET_KEY}"] * 3 == user.authorizations[before:]
        assert {"mine"} == {body["model"] for body in user.bodies[before:]}
        header = lines_of(out)[0]
        assert {"model": "mine", "temperature": 0.0, "timeout": 5.0, "max_retries": 0} == (
            header["policies"]["llm"]
        )
        assert crafted.url not in json.dumps(header)

    def test_a_base_url_alone_does_not_name_the_model(
        self,
        tmp_path: Path,
        user: ChatServer,
        crafted: ChatServer,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        run = _re_pointed(tmp_path, user, crafted)
        before = user.requests
        out = tmp_path / "f.jsonl"
        capsys.readouterr()

        setting = f"llm.base_url={user.url}"
        assert 2 == main(["fork", str(run), "--at", "0", "--set", setting, "--out", str(out)])
        assert "--set llm.model=NAME" in capsys.readouterr().err
        assert ([], before) == (crafted.authorizations, user.requests)

    @pytest.mark.parametrize("how", ["--trust", "MEMTAPE_TRUST=1"])
    def test_trust_asks_the_server_the_run_records(
        self,
        how: str,
        tmp_path: Path,
        user: ChatServer,
        crafted: ChatServer,
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        run = _re_pointed(tmp_path, user, crafted)
        out = tmp_path / "f.jsonl"
        flags = [how] if how.startswith("--") else []
        if not flags:
            monkeypatch.setenv(*how.split("="))

        assert 0 == main(["fork", str(run), "--at", "0", *flags, "--out", str(out)])
        assert [f"Bearer {SECRET_KEY}"] * 3 == crafted.authorizations
        assert crafted.url == lines_of(out)[0]["policies"]["llm"]["base_url"]

    def test_a_serve_step_asks_nothing(
        self, tmp_path: Path, user: ChatServer, crafted: ChatServer
    ) -> None:
        run = _re_pointed(tmp_path, user, crafted)
        before = user.requests
        live = live_source(str(run))
        for _ in range(4):
            live.next()

        with pytest.raises(Rejected) as refused:
            live.next()
        assert f"{run}: " + REFUSAL.format(url=crafted.url) == str(refused.value)
        assert ([], before) == (crafted.authorizations, user.requests)

    def test_a_serve_step_asks_the_model_the_user_names_of_the_users_server(
        self, tmp_path: Path, user: ChatServer, crafted: ChatServer
    ) -> None:
        run = _re_pointed(tmp_path, user, crafted)
        before = user.requests
        live = live_source(str(run), ["llm.model=mine"])
        for _ in range(8):
            live.next()

        assert [] == crafted.authorizations
        assert [f"Bearer {SECRET_KEY}"] * 3 == user.authorizations[before:]

    def test_check_live_asks_nothing(
        self,
        tmp_path: Path,
        user: ChatServer,
        crafted: ChatServer,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        run = _re_pointed(tmp_path, user, crafted)
        before = user.requests
        capsys.readouterr()

        assert 2 == main(["check", str(run), "--live"])
        assert [
            f"memtape: error: {run}: " + REFUSAL.format(url=crafted.url)
        ] == capsys.readouterr().err.splitlines()
        assert ([], before) == (crafted.authorizations, user.requests)

    def test_check_live_asks_the_model_the_user_names(
        self,
        tmp_path: Path,
        user: ChatServer,
        crafted: ChatServer,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        run = _re_pointed(tmp_path, user, crafted)
        before = user.requests
        capsys.readouterr()

        assert 0 == main(["check", str(run), "--live", "--set", "llm.model=test-model"])
        assert "the model gives the 3 recorded answers again" in capsys.readouterr().out
        assert [] == crafted.authorizations
        assert [f"Bearer {SECRET_KEY}"] * 3 == user.authorizations[before:]

    def test_check_without_live_and_a_cached_fork_need_no_flag(
        self, tmp_path: Path, user: ChatServer, crafted: ChatServer
    ) -> None:
        run = _record(tmp_path, user)
        before = user.requests

        assert 0 == main(["check", str(run)])
        assert 0 == main(["fork", str(run), "--at", "0", "--out", str(tmp_path / "f.jsonl")])
        assert ([], before) == (crafted.authorizations, user.requests)

    def test_check_takes_only_model_settings(
        self, tmp_path: Path, user: ChatServer, capsys: pytest.CaptureFixture[str]
    ) -> None:
        run = _record(tmp_path, user)
        capsys.readouterr()

        assert 2 == main(["check", str(run), "--set", "compaction.budget=60"])
        assert [
            f"memtape: error: {run}: --set 'compaction.budget=60': a recorded run takes only "
            "llm.* settings (the model asked, e.g. llm.model=NAME); fork it to change its "
            "policies"
        ] == capsys.readouterr().err.splitlines()


@pytest.mark.usefixtures("llm_env")
class TestCappedAnswers:
    def test_a_huge_answer_is_recorded_cut_and_the_timeline_says_by_how_much(
        self, tmp_path: Path, chat_server: ChatServer, capsys: pytest.CaptureFixture[str]
    ) -> None:
        chat_server.answerer = lambda model, prompt: "$9 " * 30_000
        run = _record(tmp_path, chat_server)
        capsys.readouterr()

        calls = [
            line["event"]["asked"][0]
            for line in lines_of(run)[1:]
            if line["type"] == "CompactionTriggered"
        ]
        assert [("$9 " * 30_000)[:65_536]] * 3 == [call["output"] for call in calls]
        assert [90_000 - 65_536] * 3 == [call["cut"] for call in calls]
        assert 0 == main(["timeline", str(run)])
        cut = [line for line in capsys.readouterr().out.splitlines() if "answer cut by" in line]
        assert 3 == len(cut)
        assert all("answer cut by 24464 characters" in line for line in cut)


def test_a_compaction_event_without_a_call_is_a_v1_line_with_a_new_version(
    tmp_path: Path,
) -> None:
    """The lean log: the deterministic summarizer's compactions are no longer than before."""
    out = tmp_path / "plain.jsonl"
    path = scenario(tmp_path / "desk.toml", "http://127.0.0.1:9/v1", compaction="")

    assert 0 == main(["run", str(path), "--out", str(out)])
    compactions = [
        line for line in lines_of(out)[1:] if line["type"] == CompactionTriggered.__name__
    ]
    assert compactions
    assert all(COMPACTION_FIELDS == list(line["event"]) for line in compactions)
