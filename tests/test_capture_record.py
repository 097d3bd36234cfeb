"""``memtape record -- CMD``: the real ``openai`` and ``anthropic`` SDKs driven through the
recording proxy against a fake provider on loopback (tests/provider.py), and what the
agent got and the capture holds (memtape.commandline.capture, memtape.capture.proxy)."""

import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memtape.capture.exchanges import pseudonymous
from memtape.lab.importers import read_transcript
from tests.capture_agent import CALLS, CANARY, SOURCE, TYPED
from tests.provider import ANSWERS, Provider

pytest.importorskip("anthropic")

MEMTAPE = [sys.executable, "-c", "import sys; from memtape.cli import main; sys.exit(main())"]
"""The command line, in a process of its own."""


def _free_port() -> str:
    """A port nothing listens on now, for ``record --port``."""
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        return str(free.getsockname()[1])


def _without_proxies() -> dict[str, str]:
    """This process's environment without a ``*_proxy`` variable, in either case."""
    return {key: value for key, value in os.environ.items() if not key.lower().endswith("_proxy")}


def _recording_true(
    out: Path, *options: str, environment: dict[str, str]
) -> "subprocess.CompletedProcess[str]":
    """``record OPTIONS --out OUT -- true`` in ``environment``, as it ended."""
    command = [*MEMTAPE, "record", *options, "--out", str(out), "--", "true"]
    return subprocess.run(
        command, capture_output=True, text=True, check=False, timeout=60, env=environment
    )


def _exports(out: Path, environment: dict[str, str]) -> list[str]:
    """The lines ``record --serve-only`` prints in ``environment``, stopped by Ctrl-C once
    it has printed them."""
    command = [*MEMTAPE, "record", "--serve-only", "--out", str(out)]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment
    )
    assert process.stderr is not None
    process.stderr.readline()  # "(Ctrl-C stops)", said once every export is printed
    process.send_signal(signal.SIGINT)
    return process.communicate(timeout=60)[0].splitlines()


def _record(provider: Provider, out: Path, *command: str) -> list[str]:
    return [
        *MEMTAPE,
        "record",
        "--upstream-openai",
        provider.url + "/v1",
        "--upstream-anthropic",
        provider.url,
        "--out",
        str(out),
        "--",
        *command,
    ]


@pytest.fixture(scope="module")
def provider() -> Iterator[Provider]:
    started = Provider().start()
    yield started
    started.stop()


class Session:
    """One run of the agent under ``memtape record``, read back."""

    def __init__(self, folder: Path, provider: Provider) -> None:
        agent = folder / "agent.py"
        agent.write_text(SOURCE)
        self.capture = folder / "capture.jsonl"
        self.sent = list(provider.sent)
        self.result = subprocess.run(
            _record(provider, self.capture, sys.executable, str(agent), str(folder)),
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        self.sent = provider.sent[len(self.sent) :]
        self.received = provider.received[-CALLS:]
        self.got = [(folder / "received" / f"{n:02d}.bin").read_bytes() for n in range(1, 12)]
        self.summary = json.loads((folder / "summary.json").read_text())
        text = self.capture.read_text()
        self.text = text
        self.header, *rest = [json.loads(line) for line in text.splitlines()]
        self.lines: list[dict[str, Any]] = rest


@pytest.fixture(scope="module")
def session(provider: Provider, tmp_path_factory: pytest.TempPathFactory) -> Session:
    return Session(tmp_path_factory.mktemp("session"), provider)


class TestRelay:
    def test_the_agent_exits_cleanly_and_so_does_record(self, session: Session) -> None:
        assert (0, "") == (session.result.returncode, session.result.stdout)

    def test_the_agent_gets_every_body_byte_for_byte(self, session: Session) -> None:
        # The typed streams' bytes are the SDK's own (b""); the dropped stream's, what
        # arrived before the drop (the test compares the rest).
        kept = [n - 1 for n in range(1, CALLS) if n not in TYPED]
        assert [session.sent[i] for i in kept] == [session.got[i] for i in kept]

    def test_the_typed_sdk_streams_read_their_answers(self, session: Session) -> None:
        expected = {"chat_text": "Paris.", "anthropic_text": "Paris.", "fail_status": 500}
        assert expected == {k: session.summary[k] for k in expected}

    def test_a_dropped_stream_drops_the_agents_connection_too(self, session: Session) -> None:
        dropped = session.sent[-1]
        assert ("RemoteProtocolError", True) == (
            session.summary["drop_error"],
            dropped.startswith(session.got[-1]),
        )

    def test_the_upstream_gets_the_agents_key(self, session: Session) -> None:
        keys = [
            r.headers.get("authorization", "") + r.headers.get("x-api-key", "")
            for r in session.received
        ]
        assert [True] * CALLS == [CANARY in key for key in keys]


class TestCapture:
    def test_the_capture_holds_no_key_nor_cookie(self, session: Session) -> None:
        leaks = [
            s
            for s in (CANARY, "secret-cookie", "authorization", "x-api-key", "ratelimit")
            if s in session.text.lower()
        ]
        assert [] == leaks

    def test_the_header_line_comes_first(self, session: Session) -> None:
        assert (1, "memtape 0.2.0") == (
            session.header["memtape_capture"],
            session.header["recorder"],
        )

    def test_each_exchange_is_a_line_in_order(self, session: Session) -> None:
        expected = [
            ("openai.chat", 200, False),
            ("openai.chat", 200, True),
            ("openai.chat", 200, True),
            ("openai.responses", 200, False),
            ("openai.responses", 200, True),
            ("openai.responses", 200, False),
            ("anthropic.messages", 200, False),
            ("anthropic.messages", 200, True),
            ("anthropic.messages", 200, True),
            ("openai.chat", 500, False),
            ("anthropic.messages", 200, True),
        ]
        actual = [(line["endpoint"], line["status"], line["stream"]) for line in session.lines]
        assert (list(range(1, 12)), expected) == (
            [line["exchange"] for line in session.lines],
            actual,
        )

    def test_a_stream_is_captured_as_the_same_request_unstreamed_answers(
        self, session: Session
    ) -> None:
        streamed = [1, 4, 7, 8]  # the chat stream at 2 did not ask for its usage
        expected = [
            json.loads(ANSWERS[session.received[i].path](session.received[i].body)[0])
            for i in streamed
        ]
        assert expected == [session.lines[i]["response"] for i in streamed]

    def test_the_request_is_the_body_as_sent_but_for_who_sent_it(self, session: Session) -> None:
        """As sent, the fields that name the user kept as their digests
        (``memtape.capture.exchanges.pseudonymous``)."""
        sent = [pseudonymous(r.body) for r in session.received]
        assert sent == [line["request"] for line in session.lines]

    def test_an_upstream_error_is_recorded_with_its_body(self, session: Session) -> None:
        failed = session.lines[9]
        assert (500, json.loads(session.got[9]), None) == (
            failed["status"],
            failed["response"],
            failed["error"],
        )

    def test_a_dropped_connection_is_recorded_as_such(self, session: Session) -> None:
        dropped = session.lines[10]
        size = len(session.sent[-1])
        assert (f"connection dropped after {size:,} bytes", "msg_01") == (
            dropped["error"],
            dropped["response"]["id"],
        )

    def test_only_allow_listed_headers_are_written(self, session: Session) -> None:
        names = {name for line in session.lines for name in line["request_headers"]}
        names |= {name for line in session.lines for name in line["response_headers"]}
        allowed = {"content-type", "anthropic-version", "user-agent", "request-id", "x-request-id"}
        assert set() == {n for n in names if n not in allowed and not n.startswith("x-stainless-")}

    def test_timings_are_in_order(self, session: Session) -> None:
        ordered = [
            line["timings"]["start"] <= line["timings"]["first_byte"] <= line["timings"]["end"]
            for line in session.lines
        ]
        assert [True] * CALLS == ordered


class TestThreads:
    def test_a_chats_requests_share_a_thread(self, session: Session) -> None:
        assert 1 == len({line["thread"] for line in session.lines[:3]})

    def test_previous_response_id_joins_the_thread_it_names(self, session: Session) -> None:
        threads = [line["thread"] for line in session.lines[3:6]]
        assert (threads[0], True) == (threads[2], threads[0] != threads[1])

    def test_anthropic_user_id_makes_a_session_thread(self, session: Session) -> None:
        assert ["s-", "f-"] == [line["thread"][:2] for line in session.lines[6:8]]


class TestCommand:
    def test_records_exit_status_is_the_agents(self, provider: Provider, tmp_path: Path) -> None:
        command = _record(
            provider, tmp_path / "c.jsonl", sys.executable, "-c", "raise SystemExit(7)"
        )
        assert 7 == subprocess.run(command, capture_output=True, check=False).returncode

    def test_the_agent_sees_the_proxys_base_urls(self, provider: Provider, tmp_path: Path) -> None:
        show = "import os; print(os.environ['OPENAI_BASE_URL'], os.environ['ANTHROPIC_BASE_URL'])"
        command = _record(provider, tmp_path / "c.jsonl", sys.executable, "-c", show)
        openai, anthropic = subprocess.run(
            command, capture_output=True, text=True, check=True
        ).stdout.split()
        port = anthropic.rsplit(":", 1)[1]
        assert (f"http://127.0.0.1:{port}/v1", f"http://127.0.0.1:{port}") == (openai, anthropic)

    def test_the_upstreams_are_the_variables_the_agent_would_have_read(
        self, provider: Provider, tmp_path: Path
    ) -> None:
        """Without ``--upstream-*``, ``OPENAI_BASE_URL`` and ``ANTHROPIC_BASE_URL`` as they
        were when ``record`` started name the providers (the public endpoints, which this
        machine may not reach, only when they are unset)."""
        out = tmp_path / "c.jsonl"
        ask = (
            "import os, urllib.request\n"
            "for base, path in (('OPENAI_BASE_URL', '/chat/completions'),"
            " ('ANTHROPIC_BASE_URL', '/v1/messages')):\n"
            "    request = urllib.request.Request(os.environ[base] + path, "
            'data=b\'{"model": "m", "messages": []}\', '
            "headers={'content-type': 'application/json'})\n"
            "    urllib.request.urlopen(request).read()\n"
        )
        environment = {
            **os.environ,
            "OPENAI_BASE_URL": provider.url + "/v1",
            "ANTHROPIC_BASE_URL": provider.url,
        }
        before = len(provider.received)
        command = [*MEMTAPE, "record", "--out", str(out), "--", sys.executable, "-c", ask]
        result = subprocess.run(
            command, capture_output=True, text=True, check=False, timeout=120, env=environment
        )
        lines = [json.loads(line) for line in out.read_text().splitlines()[1:]]
        assert (
            0,
            ["/v1/chat/completions", "/v1/messages"],
            [(200, "openai.chat"), (200, "anthropic.messages")],
        ) == (
            result.returncode,
            [received.path for received in provider.received[before:]],
            [(line["status"], line["endpoint"]) for line in lines],
        )

    def test_an_agent_whose_environment_names_an_http_proxy_reaches_the_recorder(
        self, provider: Provider, tmp_path: Path
    ) -> None:
        """The SDKs send a request for 127.0.0.1 through ``HTTP_PROXY`` unless ``NO_PROXY``
        spares it: the agent's ``NO_PROXY`` (and ``no_proxy``) get 127.0.0.1 and
        localhost, keeping the hosts they named."""
        agent = (
            "import os, openai\n"
            "client = openai.OpenAI(api_key='k', max_retries=0)\n"
            "client.chat.completions.create(model='m', messages=[])\n"
            "print(os.environ['NO_PROXY'], os.environ['no_proxy'])\n"
        )
        dead = "http://127.0.0.1:9"
        environment = {
            **os.environ,
            "HTTP_PROXY": dead,
            "HTTPS_PROXY": dead,
            "ALL_PROXY": dead,
            "NO_PROXY": "corp.example",
        }
        environment.pop("no_proxy", None)
        out = tmp_path / "c.jsonl"
        result = subprocess.run(
            _record(provider, out, sys.executable, "-c", agent),
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
            env=environment,
        )
        spared = "corp.example,127.0.0.1,localhost"
        assert (0, [spared, spared], 2) == (
            result.returncode,
            result.stdout.split(),
            len(out.read_text().splitlines()),
        ), result.stderr

    def test_a_command_that_cannot_start_is_one_line_and_127(
        self, provider: Provider, tmp_path: Path
    ) -> None:
        out = tmp_path / "c.jsonl"
        command = _record(provider, out, str(tmp_path / "no-such-agent"))
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        assert (
            127,
            [f"memtape: error: {tmp_path / 'no-such-agent'}: command not found"],
            False,
        ) == (
            result.returncode,
            result.stderr.splitlines(),
            out.exists(),
        )

    def test_a_command_that_cannot_start_leaves_an_earlier_capture_as_it_was(
        self, provider: Provider, tmp_path: Path
    ) -> None:
        out = tmp_path / "c.jsonl"
        out.write_text('{"memtape_capture": 1}\n')
        subprocess.run(_record(provider, out, str(tmp_path / "nothing")), check=False)
        assert '{"memtape_capture": 1}\n' == out.read_text()

    def test_a_port_in_use_is_one_line_and_writes_nothing(self, tmp_path: Path) -> None:
        out = tmp_path / "c.jsonl"
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            port = str(taken.getsockname()[1])
            command = [*MEMTAPE, "record", "--port", port, "--out", str(out), "--", "true"]
            result = subprocess.run(command, capture_output=True, text=True, check=False)
        lines = result.stderr.splitlines()
        assert (2, 1, True, False) == (
            result.returncode,
            len(lines),
            lines[0].startswith(f"memtape: error: port {port}: "),
            out.exists(),
        )

    def test_sigterm_is_passed_to_the_agent_whose_status_is_records(
        self, provider: Provider, tmp_path: Path
    ) -> None:
        waits = "import time; print('ready', flush=True); time.sleep(120)"
        recorder = subprocess.Popen(
            _record(provider, tmp_path / "c.jsonl", sys.executable, "-c", waits),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert recorder.stdout is not None
        assert "ready\n" == recorder.stdout.readline()
        recorder.send_signal(signal.SIGTERM)
        _, stderr = recorder.communicate(timeout=60)
        assert (128 + signal.SIGTERM, False) == (recorder.returncode, "Traceback" in stderr)

    @pytest.mark.parametrize(
        ("arguments", "says"),
        [
            (["--serve-only", "--", "true"], "runs no command"),
            ([], "needs a command"),
            (["--upstream-openai", "ftp://x", "--", "true"], "not an http"),
            (["--port", "99999", "--", "true"], "--port 99999 is not a port"),
            (["--port", "-1", "--", "true"], "--port -1 is not a port"),
            (["--upstream-anthropic", "http://[::1", "--", "true"], "'http://[::1': not a URL"),
            # No name the resolver takes: each request was an exchange with no status and
            # no error, the agent's connection closed unanswered, a line of UnicodeError.
            (
                ["--upstream-openai", "https://api..example/v1", "--", "true"],
                "'https://api..example/v1': its host is not a valid name",
            ),
        ],
    )
    def test_bad_usage_is_one_line_and_writes_nothing(
        self, tmp_path: Path, arguments: list[str], says: str
    ) -> None:
        out = tmp_path / "c.jsonl"
        command = [*MEMTAPE, "record", "--out", str(out), *arguments]
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        lines = result.stderr.splitlines()
        assert (2, 1, True, False) == (
            result.returncode,
            len(lines),
            says in result.stderr,
            out.exists(),
        )

    def test_an_upstream_refused_from_the_environment_names_its_variable(
        self, tmp_path: Path
    ) -> None:
        out = tmp_path / "c.jsonl"
        command = [*MEMTAPE, "record", "--out", str(out), "--", "true"]
        environment = {**os.environ, "OPENAI_BASE_URL": "localhost:8000"}
        result = subprocess.run(
            command, capture_output=True, text=True, check=False, timeout=60, env=environment
        )
        assert (
            2,
            [
                "memtape: error: $OPENAI_BASE_URL: upstream 'localhost:8000': "
                "not an http:// or https:// URL"
            ],
            False,
        ) == (result.returncode, result.stderr.splitlines(), out.exists())

    @pytest.mark.parametrize(
        ("given", "named"),
        [
            ({"OPENAI_BASE_URL": "http://127.0.0.1:{port}/v1"}, "$OPENAI_BASE_URL"),
            ({"ANTHROPIC_BASE_URL": "http://localhost:{port}"}, "$ANTHROPIC_BASE_URL"),
            ({"--upstream-openai": "http://127.0.0.1:{port}/v1"}, "--upstream-openai"),
        ],
    )
    def test_an_upstream_that_is_the_proxy_itself_is_refused(
        self, tmp_path: Path, given: dict[str, str], named: str
    ) -> None:
        """A shell that exported an earlier ``--serve-only``'s variables, then records on
        the same port: each request would go round to the proxy for ever."""
        port = _free_port()
        ((name, url),) = given.items()
        url = url.format(port=port)
        out = tmp_path / "c.jsonl"
        options = [name, url] if name.startswith("--") else []
        environment = {**os.environ, name: url} if not options else dict(os.environ)
        result = _recording_true(out, "--port", port, *options, environment=environment)
        assert (
            2,
            [
                f"memtape: error: {named} ({url}) is this proxy's own address, "
                f"127.0.0.1:{port}: each request would come back to it"
            ],
            False,
        ) == (result.returncode, result.stderr.splitlines(), out.exists())

    @pytest.mark.parametrize("name", ["HTTPS_PROXY", "all_proxy"])
    def test_an_https_proxy_that_is_the_proxy_itself_is_refused(
        self, tmp_path: Path, name: str
    ) -> None:
        """An https upstream's tunnel through the recorder's own address: each ``CONNECT``
        came back to the recorder, which tunnelled it again, until no file descriptor was
        left (123 capture lines from one request, and a traceback)."""
        port = _free_port()
        out = tmp_path / "c.jsonl"
        environment = {**_without_proxies(), name: f"http://me:secret@localhost:{port}"}
        result = _recording_true(out, "--port", port, environment=environment)
        assert (
            2,
            [
                f"memtape: error: the default upstream's proxy, ${name}, is this proxy's "
                f"own address, 127.0.0.1:{port}: each request would come back to it"
            ],
            False,
        ) == (result.returncode, result.stderr.splitlines(), out.exists())

    def test_a_proxy_record_does_not_speak_is_said_not_passed_over_silently(
        self, tmp_path: Path
    ) -> None:
        """A SOCKS ``ALL_PROXY``: the recorder reaches the providers directly, where the
        SDKs would have gone through the proxy (or failed); it says so, once, naming each
        upstream without the password its URL holds."""
        environment = {**_without_proxies(), "ALL_PROXY": "socks5h://me:secret@127.0.0.1:1080"}
        environment["OPENAI_BASE_URL"] = "https://me:s3cret@gateway.example:8443/v1"
        environment.pop("ANTHROPIC_BASE_URL", None)
        result = _recording_true(tmp_path / "c.jsonl", environment=environment)
        assert (
            0,
            "memtape record: warning: $ALL_PROXY names a socks5h:// proxy, which record does "
            "not speak: it reaches https://gateway.example:8443/v1 and "
            "https://api.anthropic.com directly",
        ) == (result.returncode, result.stderr.splitlines()[0])

    @pytest.mark.parametrize(
        ("no_capture", "command", "status"), [(True, "true", 2), (False, "nothing-such", 127)]
    )
    def test_a_refusal_with_a_proxy_passed_over_is_still_one_line(
        self, tmp_path: Path, no_capture: bool, command: str, status: int
    ) -> None:
        """The warning is said once nothing is refused: it came before the refusal of an
        ``--out`` that is no capture, or of a command not found, two lines."""
        out = tmp_path / "c.jsonl"
        if no_capture:
            out.write_text('{"format": "memtape-run"}\n')
        environment = {**_without_proxies(), "ALL_PROXY": "socks5://127.0.0.1:1080"}
        result = subprocess.run(
            [*MEMTAPE, "record", "--out", str(out), "--", command],
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
            env=environment,
        )
        assert (status, 1) == (result.returncode, len(result.stderr.splitlines()))

    def test_an_out_in_no_directory_is_refused(self, tmp_path: Path) -> None:
        out = tmp_path / "missing" / "c.jsonl"
        command = [*MEMTAPE, "record", "--out", str(out), "--", "true"]
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        assert (2, 1, False) == (result.returncode, len(result.stderr.splitlines()), out.exists())

    def test_an_out_that_is_no_capture_is_refused_and_left_as_it_was(self, tmp_path: Path) -> None:
        out = tmp_path / "run.jsonl"
        out.write_text('{"format": "memtape-run"}\n')
        command = [*MEMTAPE, "record", "--out", str(out), "--", "true"]
        result = subprocess.run(command, capture_output=True, text=True, check=False, timeout=60)
        assert (2, 1, '{"format": "memtape-run"}\n') == (
            result.returncode,
            len(result.stderr.splitlines()),
            out.read_text(),
        )

    def test_an_out_that_is_a_fifo_is_refused_at_once(self, tmp_path: Path) -> None:
        out = tmp_path / "c.jsonl"
        os.mkfifo(out)
        command = [*MEMTAPE, "record", "--out", str(out), "--", "true"]
        result = subprocess.run(command, capture_output=True, text=True, check=False, timeout=60)
        assert (2, [f"memtape: error: {out}: cannot write it: it is a FIFO"]) == (
            result.returncode,
            result.stderr.splitlines(),
        )


def _wait_for(predicate: Any, what: str) -> None:
    """Wait for ``predicate``, however slow the machine: only a hang (no sign in ten
    thousand looks, minutes apart from any load) fails."""
    for _ in range(10_000):
        if predicate():
            return
        time.sleep(0.05)
    pytest.fail(f"no {what}")


class TestServeOnly:
    def test_serve_only_prints_the_exports_and_stops_on_ctrl_c(
        self, provider: Provider, tmp_path: Path
    ) -> None:
        out = tmp_path / "c.jsonl"
        command = [
            *MEMTAPE,
            "record",
            "--serve-only",
            "--upstream-openai",
            provider.url + "/v1",
            "--out",
            str(out),
        ]
        process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        assert process.stdout is not None
        exports = [process.stdout.readline().strip() for _ in range(2)]
        url = exports[0].split("=", 1)[1]
        with urllib.request.urlopen(f"{url}/models") as answer:
            models = json.loads(answer.read())
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
        port = url.rsplit(":", 1)[1].split("/")[0]
        assert (
            [f"export OPENAI_BASE_URL={url}", f"export ANTHROPIC_BASE_URL=http://127.0.0.1:{port}"],
            {"object": "list", "data": []},
            0,
            False,
        ) == (exports, models, process.returncode, "Traceback" in stderr)

    def test_a_shell_with_an_http_proxy_is_told_to_spare_the_recorder_too(
        self, tmp_path: Path
    ) -> None:
        environment = {**os.environ, "https_proxy": "http://proxy.example:3128"}
        for name in ("NO_PROXY", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
            environment.pop(name, None)
        exports = _exports(tmp_path / "c.jsonl", environment)
        assert [
            "OPENAI_BASE_URL",
            "ANTHROPIC_BASE_URL",
            "NO_PROXY=127.0.0.1,localhost",
            "no_proxy=127.0.0.1,localhost",
        ] == [
            exports[0].split("=")[0].removeprefix("export "),
            exports[1].split("=")[0].removeprefix("export "),
            *[line.removeprefix("export ") for line in exports[2:]],
        ]

    def test_a_shell_whose_lower_case_no_proxy_is_set_is_told_to_spare_the_recorder(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The SDKs read ``no_proxy`` before ``NO_PROXY`` (as ``urllib`` does): an export
        of ``NO_PROXY`` alone left the shell's ``no_proxy`` in force, and the agent's
        requests for 127.0.0.1 went to the HTTP proxy."""
        environment = _without_proxies()
        environment.update({"https_proxy": "http://proxy.example:3128", "no_proxy": "corp.example"})
        exports = _exports(tmp_path / "c.jsonl", environment)
        for line in exports:
            name, value = shlex.split(line.removeprefix("export "))[0].split("=", 1)
            environment[name] = value
        monkeypatch.setattr(os, "environ", environment)
        # The hosts the SDKs (by urllib's reading of the variables) reach directly.
        spared = urllib.request.getproxies_environment().get("no", "")
        assert ["corp.example", "127.0.0.1", "localhost"] == spared.split(",")


class TestKilled:
    def test_a_killed_recorder_leaves_a_readable_capture(
        self, provider: Provider, tmp_path: Path
    ) -> None:
        out = tmp_path / "c.jsonl"
        agent = tmp_path / "agent.py"
        agent.write_text(
            "import json, os, sys, time, urllib.request\n"
            "open(sys.argv[1], 'w').write(str(os.getpid()))\n"
            "for n in range(2):\n"
            "    request = urllib.request.Request(os.environ['OPENAI_BASE_URL'] + "
            "'/chat/completions', data=json.dumps({'model': 'm', 'messages': []}).encode(), "
            "headers={'content-type': 'application/json'})\n"
            "    urllib.request.urlopen(request).read()\n"
            "time.sleep(600)\n"
        )
        pid_file = tmp_path / "agent.pid"
        recorder = subprocess.Popen(
            _record(provider, out, sys.executable, str(agent), str(pid_file)),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            _wait_for(lambda: out.exists() and out.read_text().count("\n") >= 3, "two exchanges")
        finally:
            recorder.kill()
            recorder.wait()
            _wait_for(pid_file.exists, "agent pid")
            os.kill(int(pid_file.read_text()), signal.SIGKILL)
        lines = [json.loads(line) for line in out.read_text().splitlines()]
        assert [None, 1, 2] == [line.get("exchange") for line in lines]


DETECTING_AGENT = """
import json
import sys

import anthropic

client = anthropic.Anthropic(api_key="sk-e2e-key")
SYSTEM = "You help with refunds."


def user(text):
    return {"role": "user", "content": text}


def said(text):
    return {"role": "assistant", "content": text}


def ask(messages, model="claude-test", **more):
    raw = client.messages.with_raw_response.create(
        model=model, max_tokens=64, system=SYSTEM, metadata={"user_id": "e2e"},
        messages=messages, **more,
    )
    return raw.http_response.json()


TOOLS = [{"name": "lookup", "input_schema": {"type": "object", "properties": {}}}]
m = [user("Refund ORD-9 please")]
reply = ask(m)                                                      # 1
m += [said("Paris."), user("And ORD-10?")]
ask(m)                                                              # 2: extends
m += [said("Paris."), user("Look ORD-10 up")]
call = ask(m, tools=TOOLS)["content"][0]                            # 3: a tool call
result = {"type": "tool_result", "tool_use_id": call["id"], "content": "ORD-10: pending, 40 EUR"}
m += [{"role": "assistant", "content": [call]}, {"role": "user", "content": [result]}]
ask(m)                                                              # 4
m[-1] = {"role": "user", "content": [{**result, "content": "[cleared]"}]}
m += [said("Paris."), user("Thanks")]
ask(m)                                                              # 5: a clearing
m = m[2:] + [said("Paris."), user("Next one")]
ask(m)                                                              # 6: a truncation
m = [user("Summary of the talk so far: ORD-9 refunded."), user("What next?")]
ask(m)                                                              # 7: a summary
m += [said("Paris."), user("Compact, then go on")]
compacted = ask(m, model="compact")                                 # 8: provider compaction
m += [{"role": "assistant", "content": compacted["content"]}, user("Then?")]
ask(m)                                                              # 9
m += [said("Paris."), user("Look ORD-11 up")]
call = ask(m, tools=TOOLS)["content"][0]                            # 10: a tool call
result = {"type": "tool_result", "tool_use_id": call["id"], "content": "ORD-11: open"}
m += [{"role": "assistant", "content": [call]}, {"role": "user", "content": [result]}]
edits = {"edits": [{"type": "clear_tool_uses_20250919"}]}
ask(m, extra_body={"context_management": edits})                    # 11: the provider clears
"""
"""An agent, on the real ``anthropic`` SDK, that does to its own context each thing the
importer detects: a tool result cleared in place (request 5), a dropped prefix (6), earlier
turns replaced by a summary (7), the provider's compaction (its block in reply 8) and the
provider's context management (the edit reply 11 says it applied)."""

RESPONSES_AGENT = """
import openai

client = openai.OpenAI(api_key="sk-e2e-key")
TOOLS = [{"type": "function", "name": "lookup", "parameters": {"type": "object"}}]


def user(text):
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def ask(items, **more):
    # As Codex asks: the whole input each time, nothing stored, a session header.
    raw = client.responses.with_raw_response.create(
        model="gpt-test", instructions="You fix bugs.", input=items, store=False,
        extra_headers={"session_id": "codex-7"}, **more,
    )
    return raw.http_response.json()["output"]


items = [user("Fix the failing test")]
stream = client.responses.create(
    model="gpt-test", instructions="You fix bugs.", input=items, store=False, tools=TOOLS,
    stream=True, extra_headers={"session_id": "codex-7"},
)
done = [event.response for event in stream if event.type == "response.completed"]
call = done[0].output[0]                                            # 1: a call, streamed
items += [{"type": "function_call", "call_id": call.call_id, "name": call.name,
           "arguments": call.arguments},
          {"type": "function_call_output", "call_id": call.call_id, "output": "1 failed"}]
items += ask(items) + [user("Go on")]                               # 2: extends
items += ask(items) + [user("And the docs?")]                       # 3
compacted = {"type": "compaction", "id": "cmp_1", "encrypted_content": "gAAAAB-opaque"}
ask([compacted, user("And the docs?")])                             # 4: a compaction item
"""
"""An agent on the real ``openai`` SDK's Responses API as Codex drives it (no stored
responses, a ``session_id`` header): a function call streamed (request 1) and answered,
then its history replaced by a compaction item (4)."""


@pytest.fixture(scope="module")
def detected(provider: Provider, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The capture of ``DETECTING_AGENT`` run under ``memtape record``."""
    return _recorded_agent(provider, tmp_path_factory.mktemp("detecting"), DETECTING_AGENT)


def _recorded_agent(provider: Provider, folder: Path, source: str) -> Path:
    """The capture of the agent ``source`` run under ``memtape record`` in ``folder``."""
    agent = folder / "agent.py"
    agent.write_text(source)
    out = folder / "capture.jsonl"
    result = subprocess.run(
        _record(provider, out, sys.executable, str(agent)),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert (0, "Traceback" in result.stderr) == (result.returncode, False), result.stderr
    return out


def _found(capture: Path) -> list[tuple[str, str | None]]:
    """Each compaction the import finds in ``capture``: its exchange and its trigger."""
    return [
        ((compaction.label or "").split(",")[0], compaction.trigger)
        for compaction in read_transcript(capture).compactions
    ]


class TestDetectedThroughTheProxy:
    def test_each_change_the_agent_made_is_found_at_the_request_it_made_it(
        self, detected: Path
    ) -> None:
        assert [
            ("exchange 5", "clearing"),
            ("exchange 6", "truncation"),
            ("exchange 7", "summary"),
            ("exchange 8", "compaction block"),
            ("exchange 11", "context management"),
        ] == _found(detected)

    def test_a_responses_agents_call_and_compaction_item_are_found(
        self, provider: Provider, tmp_path: Path
    ) -> None:
        out = _recorded_agent(provider, tmp_path, RESPONSES_AGENT)
        ledger = read_transcript(out).ledger
        assert ledger is not None
        assert ([("exchange 4", "compaction item")], (1, 1, 1, 1)) == (
            _found(out),
            (ledger.calls_in, ledger.calls_out, ledger.results_in, ledger.results_out),
        )

    def test_the_import_benches_with_a_recorded_row_beside_memtapes_policies(
        self, detected: Path, tmp_path: Path
    ) -> None:
        scenario = tmp_path / "agent.toml"
        imported = subprocess.run(
            [*MEMTAPE, "import", str(detected), "--out", str(scenario), "--tokenizer", "words"],
            capture_output=True,
            text=True,
            check=False,
        )
        assert 0 == imported.returncode, imported.stderr
        command = [*MEMTAPE, "bench", str(scenario), "-q"]
        command += ["--policy", "recorded", "--policy", "tiered", "--policy", "clear-tool-results"]
        wide = {**os.environ, "COLUMNS": "300"}  # a row a line
        benched = subprocess.run(command, capture_output=True, text=True, check=False, env=wide)
        rows = [line.split() for line in benched.stdout.splitlines()]
        policies = [row[1] for row in rows if row[:1] == ["capture"]]
        recorded = next(row for row in rows if row[:2] == ["capture", "recorded"])
        assert (0, ["recorded", "tiered", "clear-tool-results"], True) == (
            benched.returncode,
            policies,
            "compactions=5" in recorded,
        )
