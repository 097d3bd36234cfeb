"""``memtape serve``: the live session behind the page, and its HTTP answers."""

import base64
import hashlib
import http.client
import json
import re
import select
import signal
import socket
import struct
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import attrs
import pytest

from memtape.cli import main
from memtape.core.commands import AddTurn, Query, WriteFact
from memtape.core.errors import BadInput, Rejected
from memtape.runs.files import load_run
from memtape.viewer import payload
from memtape.viewer.payload import run_payload
from memtape.viewer.serve import (
    TOKEN_HEADER,
    LiveServer,
    live_source,
    make_server,
    next_label,
)
from tests.chained import forged_past_head
from tests.mixed import mixed_live
from tests.serving import serving, start, stop

GROWN = ("ends", "turns", "facts", "rows", "frames")
"""The payload's arrays a page appends to."""


def appended(held: dict[str, Any], chunk: dict[str, Any]) -> dict[str, Any]:
    """What a page holds after appending ``chunk`` (checked to follow on) to ``held``."""
    origin = chunk["from"]
    assert origin["events"] == len(held["frames"])
    assert (origin["turns"], origin["facts"]) == (len(held["turns"]), len(held["facts"]))
    return {**held, **{key: held[key] + chunk[key] for key in GROWN}}


class TestLiveRun:
    def test_next_sends_the_scenarios_commands_in_order(self) -> None:
        live = live_source("refund-desk")
        assert {"label": "Add next turn"} == live.data()["next"]
        for _ in range(10):
            live.next()
        assert 10 == live.session.run.steps
        assert live.data()["next"] is None
        with pytest.raises(BadInput, match="every recorded step has been sent"):
            live.next()

    def test_a_recorded_run_replays_its_commands(self, tmp_path: Path) -> None:
        path = tmp_path / "dana.jsonl"
        assert 0 == main(["run", "dana-facts", "--out", str(path)])
        recorded = load_run(path).session.run
        live = live_source(str(path))
        assert "Next step: write 'name'" == live.data()["next"]["label"]
        for _ in range(recorded.steps):
            live.next()
        assert recorded.events == live.session.run.events
        assert live.data()["next"] is None

    def test_a_required_signature_refuses_an_unsigned_run(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        path = tmp_path / "dana.jsonl"
        assert 0 == main(["run", "dana-facts", "--out", str(path)])
        monkeypatch.setenv("MEMTAPE_SIGNING_KEY", "the key")
        monkeypatch.setenv("MEMTAPE_REQUIRE_SIGNED", "1")

        with pytest.raises(BadInput, match=r"a signed run is required .* it is unsigned"):
            live_source(str(path))

    def test_a_forged_step_past_the_head_is_not_replayed(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ) -> None:
        monkeypatch.setenv("MEMTAPE_SIGNING_KEY", "the key")
        path = tmp_path / "dana.jsonl"
        assert 0 == main(["run", "dana-facts", "--out", str(path)])
        forged_past_head(path)
        monkeypatch.setenv("MEMTAPE_REQUIRE_SIGNED", "1")
        capsys.readouterr()
        live = live_source(str(path))

        assert 9 == len(live.upcoming)
        assert "come after the header's chain head" in capsys.readouterr().err

    def test_a_refused_command_changes_nothing(self) -> None:
        live = live_source("dana-facts")
        live.next()
        before = live.data()
        with pytest.raises(Rejected, match="no active fact has that key"):
            live.command({"kind": "read", "key": "nobody", "id": None})
        with pytest.raises(BadInput):
            live.command({"kind": "advance", "to": "soon"})
        assert before == live.data()

    def test_labels_name_the_next_command(self) -> None:
        assert "Add next turn" == next_label(AddTurn("user", "hi"))["label"]
        assert "Next step: write 'k'" == next_label(WriteFact("k", "v", 0.5))["label"]
        assert (
            "Next step: query 'who' expecting 'name', top 2"
            == (next_label(Query("who", "name", 2))["label"])
        )
        assert "Next step: query, top 1" == next_label(Query("", "", 1))["label"]

    def test_a_query_is_sent_like_any_command_and_a_bad_k_is_refused(self) -> None:
        live = live_source("dana-facts")
        for _ in range(4):
            live.next()
        live.command({"kind": "query", "text": "", "key": "name", "k": 2})
        rows = live.data()["runs"][0]["rows"]
        assert "Queried" == rows[-1][1]
        assert ["", "name", 2] == rows[-1][3][:3]
        before = live.data()
        with pytest.raises(Rejected, match="k must be an integer >= 1, got 0"):
            live.command({"kind": "query", "text": "", "key": "", "k": 0})
        assert before == live.data()

    def test_settings_change_a_scenarios_policies(self) -> None:
        live = live_source("refund-desk", ["compaction.policy=sliding-window"])
        assert "sliding-window" == live.data()["runs"][0]["params"]["compaction"]
        live.next()
        assert 1 == live.session.run.steps

    def test_settings_other_than_the_models_are_refused_for_a_recorded_run(
        self, tmp_path: Path
    ) -> None:
        path = tmp_path / "rd.jsonl"
        assert 0 == main(["run", "refund-desk", "--out", str(path)])
        with pytest.raises(BadInput, match=r"a recorded run takes only llm\.\* settings"):
            live_source(str(path), ["compaction.budget=60"])


class TestIncremental:
    @pytest.mark.parametrize("shipped", [False, True])
    def test_what_a_page_appends_after_each_command_is_the_whole_payload(
        self, monkeypatch: pytest.MonkeyPatch, shipped: bool
    ) -> None:
        if shipped:
            # The ranking's shipped rows carry over from one command to the next.
            monkeypatch.setattr(payload, "PAGE_SCORERS", frozenset())
        live = mixed_live(120, seed=7)
        held = live.data()["runs"][0]
        for count in range(len(live.upcoming)):
            if count % 10 == 9:
                # A typed command between recorded ones (a turn: it leaves the store as it is,
                # so every recorded read still finds its fact).
                live.command({"kind": "turn", "role": "user", "text": "hi", "salient": None})
            live.next()
            answer = live.data(len(held["frames"]))
            held = appended(held, answer["runs"][0])
        session = live.session
        assert held == run_payload(session.run, session.policies_at, "mixed")
        assert any("R" in frame for frame in held["frames"]) == shipped
        assert len(session.run) > session.run.steps > 120

    def test_a_command_answers_only_its_own_events(self) -> None:
        live = mixed_live(60, seed=3)
        for _ in range(50):
            live.next()
        held = len(live.session.run)
        live.next()
        chunk = live.data(held)["runs"][0]
        run = live.session.run
        start, end = run.batch(run.steps)
        assert [[run.steps, type(e).__name__] for e in run.events[start:end]] == [
            row[:2] for row in chunk["rows"]
        ]
        assert [end] == chunk["ends"]

    def test_next_does_not_consume_the_recorded_commands(self) -> None:
        live = mixed_live(20, seed=1)
        recorded = list(live.upcoming)
        for _ in range(5):
            live.next()
        assert recorded == list(live.upcoming)
        assert 5 == live.sent
        assert tuple(recorded[:5]) == live.session.run.commands


@pytest.fixture
def server() -> Iterator[LiveServer]:
    """``memtape serve`` on dana-facts (its recorded steps still to send), in a thread."""
    with serving(make_server(live_source("dana-facts"))) as started:
        yield started


@attrs.frozen
class Answer:
    """A response: its status, its headers (names in lower case) and its body."""

    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def data(self) -> Any:
        """The body, parsed as JSON."""
        return json.loads(self.body)

    @property
    def error(self) -> str:
        """The one-line reason of a refusal."""
        reason = self.data["error"]
        assert isinstance(reason, str)
        assert "\n" not in reason
        return reason


def ask(
    server: LiveServer,
    method: str,
    path: str,
    body: bytes | None = None,
    headers: Mapping[str, str | None] | None = None,
) -> Answer:
    """A request as the server's own page sends it (its Host, the token, JSON), each header
    replaced by ``headers`` (``None``: not sent)."""
    chosen: dict[str, str | None] = {
        "Host": f"127.0.0.1:{server.port}",
        TOKEN_HEADER: server.token,
        "Content-Type": "application/json",
        **(headers or {}),
    }
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    try:
        connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        for name, value in chosen.items():
            if value is not None:
                connection.putheader(name, value)
        if body is not None and "Content-Length" not in chosen:
            connection.putheader("Content-Length", str(len(body)))
        connection.endheaders(body)
        response = connection.getresponse()
        found = {name.lower(): value for name, value in response.getheaders()}
        return Answer(response.status, found, response.read())
    finally:
        connection.close()


def page_path(server: LiveServer) -> str:
    """The page's path with the session's token, as the printed URL names it."""
    return f"/?token={server.token}"


def write(key: str = "k") -> bytes:
    return json.dumps({"kind": "write", "key": key, "text": "v", "importance": 0.5}).encode()


def unchanged(server: LiveServer) -> bool:
    """Whether the session is as it began: no event, no recorded step sent."""
    return 0 == len(server.live.session.run) == server.live.sent


class TestHttp:
    def test_the_page_is_served_live_with_the_token_for_its_requests(
        self, server: LiveServer
    ) -> None:
        answer = ask(server, "GET", page_path(server))
        page = answer.body.decode("utf-8")
        assert 200 == answer.status
        assert "text/html; charset=utf-8" == answer.headers["content-type"]
        assert '"live":true' in page
        assert f'"headers":{{"{TOKEN_HEADER}":"{server.token}"}}' in page

    def test_a_command_answers_the_grown_run(self, server: LiveServer) -> None:
        answer = ask(server, "POST", "/api/command", write())
        assert 200 == answer.status
        assert [["k", "v", 0.5, 0.0]] == answer.data["runs"][0]["facts"]

    def test_a_charset_on_the_json_type_is_taken(self, server: LiveServer) -> None:
        headers = {"Content-Type": "application/json; charset=utf-8"}
        assert 200 == ask(server, "POST", "/api/command", write(), headers).status

    @pytest.mark.parametrize(
        ("body", "error"),
        [
            (b"{", "the command is not JSON"),
            (b'{"kind": "fly"}', "unknown command kind 'fly'"),
            (b'{"kind": "read", "key": "x", "id": null}', "cannot read 'x'"),
            (b"", "a command is a JSON object"),
        ],
    )
    def test_a_bad_command_is_400_with_one_line(
        self, server: LiveServer, body: bytes, error: str
    ) -> None:
        answer = ask(server, "POST", "/api/command", body)
        assert 400 == answer.status
        assert answer.error.startswith(error)
        assert unchanged(server)
        # The recorded steps go on from the first.
        assert 200 == ask(server, "POST", "/api/next", b"{}").status
        assert server.live.upcoming[:1] == server.live.session.run.commands

    def test_since_asks_for_what_came_after(self, server: LiveServer) -> None:
        assert 200 == ask(server, "POST", "/api/command", write("a")).status
        second = json.dumps({"kind": "write", "key": "b", "text": "w", "importance": 0.4})
        answer = ask(server, "POST", "/api/command?since=1", second.encode())
        assert 200 == answer.status
        run = answer.data["runs"][0]
        assert {"events": 1, "steps": 1, "turns": 0, "facts": 1} == run["from"]
        assert [["b", "w", 0.4, 0.0]] == run["facts"]
        assert [2] == run["ends"]
        whole = ask(server, "GET", "/api/data?since=0").data["runs"][0]
        assert [["a", "v", 0.5, 0.0], ["b", "w", 0.4, 0.0]] == whole["facts"]

    @pytest.mark.parametrize(
        ("query", "error"),
        [
            ("since=x", "since must be one whole number of events, got ['x']"),
            ("since=-1", "since must be one whole number of events, got ['-1']"),
            ("since=1&since=0", "since must be one whole number of events"),
            # A digit to str.isdigit, but not to int.
            ("since=%C2%B2", "since must be one whole number of events, got ['\u00b2']"),
            ("since=5", "since=5 is out of range 0..0"),
            (f"since={'9' * 5000}", f"since is too large: 5000 digits (at most {2**63 - 1})"),
        ],
        ids=["letter", "negative", "twice", "superscript", "past-the-end", "5000-digits"],
    )
    def test_a_bad_since_is_400_and_the_command_is_not_run(
        self, server: LiveServer, query: str, error: str
    ) -> None:
        answer = ask(server, "POST", f"/api/command?{query}", write())
        assert 400 == answer.status
        assert answer.error.startswith(error)
        assert [] == ask(server, "GET", "/api/data").data["runs"][0]["frames"]
        refused = ask(server, "GET", f"/api/data?{query}")
        assert 400 == refused.status
        assert refused.error.startswith(error)

    @pytest.mark.parametrize("length", ["\u00b2", "9" * 5000], ids=["superscript", "5000-digits"])
    def test_a_length_that_is_no_ascii_number_is_400(self, server: LiveServer, length: str) -> None:
        """``²`` passes ``str.isdigit`` but not ``int``, nor do 5000 digits pass ``int``:
        refused, not a dropped connection."""
        answer = ask(server, "POST", "/api/command", write(), {"Content-Length": length})
        assert 400 == answer.status
        assert answer.error.startswith("a command is a JSON object")

    @pytest.mark.parametrize("method", ["GET", "POST"])
    def test_an_unknown_path_is_404(self, server: LiveServer, method: str) -> None:
        answer = ask(server, method, "/api/nothing", b"{}" if method == "POST" else None)
        assert 404 == answer.status
        assert "/api/nothing" in answer.error


OTHER_HOSTS = [
    "evil.example",
    "evil.example:{port}",
    "127.0.0.1",
    "127.0.0.1:1",
    "127.0.0.1.evil.example:{port}",
    "localhost:{port}.evil.example",
    "",
    None,
]
"""``Host`` values (``{port}``: the server's) that do not name the server; ``None``: none sent."""

READ = pytest.param("GET", "/api/data", None, id="read")
PAGE = pytest.param("GET", "/?token={token}", None, id="page")
NEXT = pytest.param("POST", "/api/next", b"{}", id="next")
COMMAND = pytest.param("POST", "/api/command", write(), id="command")

REQUESTS = [READ, PAGE, NEXT, COMMAND]
"""A read, the page (``{token}``: the right one), and each command."""


def filled(template: str | None, server: LiveServer) -> str | None:
    return None if template is None else template.format(port=server.port, token=server.token)


class TestOwnPageOnly:
    @pytest.mark.parametrize("host", OTHER_HOSTS)
    @pytest.mark.parametrize(("method", "path", "body"), REQUESTS)
    def test_a_request_naming_another_host_is_403_and_changes_nothing(
        self,
        server: LiveServer,
        host: str | None,
        method: str,
        path: str,
        body: bytes | None,
    ) -> None:
        """A page on a DNS name rebound to 127.0.0.1 sends its own name as the Host."""
        answer = ask(
            server, method, path.format(token=server.token), body, {"Host": filled(host, server)}
        )
        assert 403 == answer.status
        assert f"this server answers for http://127.0.0.1:{server.port} only" == answer.error
        assert unchanged(server)

    def test_two_host_headers_are_403(self, server: LiveServer) -> None:
        request = (
            f"GET /api/data HTTP/1.0\r\nHost: 127.0.0.1:{server.port}\r\nHost: evil.example\r\n"
            f"{TOKEN_HEADER}: {server.token}\r\n\r\n"
        )
        assert raw_status(server, request.encode()) == 403

    @pytest.mark.parametrize(
        "host", ["127.0.0.1:{port}", "localhost:{port}", "LocalHost:{port}", "[::1]:{port}"]
    )
    def test_each_name_of_loopback_with_the_port_is_answered(
        self, server: LiveServer, host: str
    ) -> None:
        assert 200 == ask(server, "GET", "/api/data", None, {"Host": filled(host, server)}).status

    @pytest.mark.parametrize("token", [None, "", "wrong", "{token}x", "{token_cut}", "é{token}"])
    @pytest.mark.parametrize(("method", "path", "body"), [READ, NEXT, COMMAND])
    def test_the_api_without_the_right_token_is_403_and_changes_nothing(
        self,
        server: LiveServer,
        token: str | None,
        method: str,
        path: str,
        body: bytes | None,
    ) -> None:
        given = (
            None if token is None else token.format(token=server.token, token_cut=server.token[:-1])
        )
        answer = ask(server, method, path, body, {TOKEN_HEADER: given})
        assert 403 == answer.status
        assert answer.error.startswith("the session's token is missing or wrong")
        assert unchanged(server)

    def test_the_api_takes_the_token_in_its_header_only(self, server: LiveServer) -> None:
        answer = ask(server, "GET", f"/api/data?token={server.token}", None, {TOKEN_HEADER: None})
        assert 403 == answer.status

    @pytest.mark.parametrize(
        "query", ["", "?token=", "?token=wrong", "?token={token}x", "?token={token}&token={token}"]
    )
    def test_the_page_without_the_right_token_in_its_url_is_403(
        self, server: LiveServer, query: str
    ) -> None:
        """The header alone does not open the page: the page's token is the URL's."""
        answer = ask(server, "GET", "/" + query.format(token=server.token))
        assert 403 == answer.status
        assert answer.error.endswith("open the URL memtape serve printed")
        assert server.token.encode() not in answer.body

    def test_each_server_has_its_own_long_random_token(self) -> None:
        live = live_source("dana-facts")
        servers = [make_server(live), make_server(live)]
        try:
            tokens = {server.token for server in servers}
        finally:
            for server in servers:
                server.server_close()
        assert 2 == len(tokens)
        assert all(len(token) >= 43 for token in tokens)

    @pytest.mark.parametrize(
        "kind",
        [
            None,
            "text/plain",
            "text/plain;charset=UTF-8",
            "application/x-www-form-urlencoded",
            "multipart/form-data; boundary=x",
            "application/jsonx",
            "text/json",
        ],
    )
    @pytest.mark.parametrize(
        ("path", "body"),
        [
            pytest.param("/api/next", b"{}", id="next"),
            pytest.param("/api/command", write(), id="command"),
        ],
    )
    def test_a_command_not_sent_as_json_is_415_and_changes_nothing(
        self, server: LiveServer, kind: str | None, path: str, body: bytes
    ) -> None:
        """What a form or a ``no-cors`` fetch from another page can send, refused."""
        answer = ask(server, "POST", path, body, {"Content-Type": kind})
        assert 415 == answer.status
        assert "a command is sent with Content-Type: application/json" == answer.error
        assert unchanged(server)

    @pytest.mark.parametrize(
        "origin",
        [
            "http://evil.example",
            "null",
            "http://127.0.0.1:1",
            "https://127.0.0.1:{port}",
            "http://127.0.0.1:{port}.evil.example",
        ],
    )
    @pytest.mark.parametrize(("method", "path", "body"), REQUESTS)
    def test_a_request_from_another_origin_is_403_and_changes_nothing(
        self,
        server: LiveServer,
        origin: str,
        method: str,
        path: str,
        body: bytes | None,
    ) -> None:
        headers = {"Origin": filled(origin, server)}
        answer = ask(server, method, path.format(token=server.token), body, headers)
        assert 403 == answer.status
        assert "a request from another origin is refused" == answer.error
        assert unchanged(server)

    @pytest.mark.parametrize("origin", ["http://127.0.0.1:{port}", "http://localhost:{port}"])
    def test_a_command_from_its_own_origin_is_run(self, server: LiveServer, origin: str) -> None:
        headers = {"Origin": filled(origin, server)}
        assert 200 == ask(server, "POST", "/api/command", write(), headers).status
        assert 1 == len(server.live.session.run)

    @pytest.mark.parametrize("path", ["/api/next", "/api/command"])
    def test_a_get_on_a_command_path_is_405_and_runs_nothing(
        self, server: LiveServer, path: str
    ) -> None:
        answer = ask(server, "GET", path)
        assert 405 == answer.status
        assert "POST" == answer.headers["allow"]
        assert f"{path} takes a POST" == answer.error
        assert unchanged(server)

    @pytest.mark.parametrize("path", ["/", "/api/data"])
    def test_a_post_on_a_page_is_405(self, server: LiveServer, path: str) -> None:
        answer = ask(server, "POST", path + f"?token={server.token}", b"{}")
        assert 405 == answer.status
        assert "GET" == answer.headers["allow"]
        assert unchanged(server)


def csp(answer: Answer) -> dict[str, str]:
    """The response's Content-Security-Policy, directive -> its sources."""
    policy = answer.headers["content-security-policy"]
    return dict(part.strip().split(" ", 1) for part in policy.split(";"))


def sha256_source(code: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(code.encode()).digest()).decode() + "'"


class TestHeaders:
    @pytest.mark.parametrize(
        ("method", "path", "headers", "status"),
        [
            ("GET", "/?token={token}", {}, 200),
            ("GET", "/api/data", {}, 200),
            ("GET", "/", {}, 403),
            ("GET", "/api/data", {"Host": "evil.example"}, 403),
            ("GET", "/api/nothing", {}, 404),
            ("GET", "/api/next", {}, 405),
            ("POST", "/api/next", {"Content-Type": "text/plain"}, 415),
            ("POST", "/api/next?since=5", {}, 400),
            ("PUT", "/api/next", {}, 501),
        ],
        ids=[
            "page",
            "read",
            "page without token",
            "other host",
            "unknown path",
            "GET on a command",
            "not JSON",
            "refused command",
            "unknown method",
        ],
    )
    def test_every_response_carries_the_policy_and_the_guards(
        self, server: LiveServer, method: str, path: str, headers: dict[str, str], status: int
    ) -> None:
        answer = ask(
            server,
            method,
            path.format(token=server.token),
            b"{}" if method != "GET" else None,
            headers,
        )
        assert status == answer.status
        policy = csp(answer)
        assert "'none'" == policy["default-src"]
        assert "'self'" == policy["connect-src"]
        for directive in ("frame-ancestors", "base-uri", "form-action"):
            assert "'none'" == policy[directive]
        assert "nosniff" == answer.headers["x-content-type-options"]
        assert "no-referrer" == answer.headers["referrer-policy"]
        assert "no-store" == answer.headers["cache-control"]
        if status != 200:
            assert answer.error

    def test_the_policy_lets_only_the_pages_own_inline_style_and_script_run(
        self, server: LiveServer
    ) -> None:
        answer = ask(server, "GET", page_path(server))
        page = answer.body.decode("utf-8")
        style = re.findall(r"<style>(.*?)</style>", page, re.S)
        scripts = re.findall(r"<script>(.*?)</script>", page, re.S)
        assert 1 == len(style) == len(scripts)
        policy = csp(answer)
        assert sha256_source(style[0]) == policy["style-src"]
        assert sha256_source(scripts[0]) == policy["script-src"]
        # The data's element is not a script the browser runs.
        assert 1 == page.count('<script type="application/json" id="memtape-data">')
        assert 2 == page.count("<script")


def raw_status(server: LiveServer, request: bytes) -> int:
    """The status the server answers to ``request``, sent as it is."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=60) as client:
        client.sendall(request)
        answer = client.makefile("rb").read()
    return int(answer.split(b" ", 2)[1])


class TestServer:
    def test_a_port_out_of_range_is_refused(self) -> None:
        with pytest.raises(BadInput, match="not a port"):
            make_server(live_source("refund-desk"), 70000)

    def test_a_port_in_use_is_one_clear_error(self) -> None:
        first = make_server(live_source("refund-desk"))
        try:
            with pytest.raises(BadInput, match=r"cannot listen on 127\.0\.0\.1"):
                make_server(live_source("refund-desk"), first.server_address[1])
        finally:
            first.server_close()

    def test_the_printed_url_carries_the_token_opens_the_page_and_ctrl_c_stops(self) -> None:
        process = subprocess.Popen(
            [sys.executable, "-m", "memtape.cli", "serve", "dana-facts"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert process.stdout is not None
        line = process.stdout.readline()
        printed = re.fullmatch(
            r"memtape serve: dana-facts at (http://127\.0\.0\.1:\d+/)\?token=([\w-]{43,})"
            r" \(Ctrl-C stops\)\n",
            line,
        )
        try:
            assert printed is not None, line
            origin, token = printed.groups()
            with urllib.request.urlopen(f"{origin}?token={token}", timeout=60) as response:
                page = response.read().decode("utf-8")
            assert f'"{TOKEN_HEADER}":"{token}"' in page
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(origin, timeout=60)
            assert 403 == refused.value.code
        finally:
            process.send_signal(signal.SIGINT)
            _, err = process.communicate(timeout=60)
        assert 0 == process.returncode
        assert "memtape serve: stopped\n" == err


def started(read_timeout: float, request_timeout: float = 10.0) -> LiveServer:
    """A live server on dana-facts with ``read_timeout`` (and ``request_timeout``), serving
    in a thread."""
    live = live_source("dana-facts")
    return start(make_server(live, read_timeout=read_timeout, request_timeout=request_timeout))


def trickled(server: LiveServer, request: bytes, every: float) -> bool:
    """Send ``request`` a byte at a time, ``every`` seconds apart; whether the server closed
    the connection before it was all sent."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=60) as client:
        for index in range(len(request)):
            try:
                client.sendall(request[index : index + 1])
            except ConnectionError:
                return True
            readable, _, _ = select.select([client], [], [], every)
            if readable:
                try:
                    return b"" == client.recv(1)
                except ConnectionError:
                    return True
    return False


def stopped(server: LiveServer) -> None:
    stop(server)


def head(server: LiveServer, path: str, length: int) -> bytes:
    """A command's request line and headers, right in all but the body to come."""
    return (
        f"POST {path} HTTP/1.0\r\nHost: 127.0.0.1:{server.port}\r\n"
        f"{TOKEN_HEADER}: {server.token}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {length}\r\n\r\n"
    ).encode()


def logged(capsys: pytest.CaptureFixture[str], lines: int = 1) -> str:
    """What the server has written to stderr, once it has written ``lines`` lines (or given up
    after 30 s), and a moment later, for whatever would follow them."""
    err = ""
    deadline = time.monotonic() + 30
    while err.count("\n") < lines and time.monotonic() < deadline:
        time.sleep(0.02)
        err += capsys.readouterr().err
    time.sleep(0.2)
    return err + capsys.readouterr().err


SILENCES = {
    "nothing": b"",
    "half a request line": b"GET /api/da",
    "half the headers": b"GET /api/data HTTP/1.0\r\nHost: 127.0.0.1\r\n",
}
"""What a stalled client sends before it falls silent."""


class TestClients:
    @pytest.mark.parametrize("sent", SILENCES.values(), ids=SILENCES.keys())
    def test_a_silent_client_holds_up_no_other(
        self, capsys: pytest.CaptureFixture[str], sent: bytes
    ) -> None:
        # Longer than any test waits: a server held up by the silent client could only answer
        # the other once it had dropped the silent one.
        server = started(read_timeout=3600)
        try:
            with socket.create_connection(("127.0.0.1", server.port), timeout=60) as silent:
                silent.sendall(sent)
                assert 200 == ask(server, "GET", "/api/data").status
                # The silent client is still connected: the other was answered meanwhile.
                silent.setblocking(False)
                with pytest.raises(BlockingIOError):
                    silent.recv(1)
            # Once it leaves, what the server says of it (if anything) is one line.
            err = logged(capsys, lines=0)
            assert all(
                line.startswith("memtape serve: a client went away (") for line in err.splitlines()
            )
        finally:
            stopped(server)

    @pytest.mark.parametrize("sent", SILENCES.values(), ids=SILENCES.keys())
    def test_a_client_silent_past_the_timeout_is_dropped_with_one_line(
        self, capsys: pytest.CaptureFixture[str], sent: bytes
    ) -> None:
        server = started(read_timeout=0.3)
        try:
            with socket.create_connection(("127.0.0.1", server.port), timeout=60) as silent:
                silent.sendall(sent)
                assert b"" == silent.recv(1)
            assert "memtape serve: a client went away (stalled for 0.3 s)\n" == logged(capsys)
        finally:
            stopped(server)

    def test_a_client_trickling_its_request_is_dropped_when_its_time_is_up(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """Each byte comes well within the read timeout; the request as a whole does not
        (60 s of trickling at most: on a server without a total, the test ends, failing)."""
        server = started(read_timeout=30, request_timeout=1)
        try:
            request = head(server, "/api/command", len(write())) + write()
            assert trickled(server, request, every=60 / len(request))
            assert (
                "memtape serve: a client went away (sent its request too slowly: over 1 s)\n"
                == logged(capsys)
            )
            assert 0 == len(server.live.session.run)
        finally:
            stopped(server)

    def test_a_client_silent_mid_body_is_dropped_and_nothing_runs(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        server = started(read_timeout=0.3)
        try:
            with socket.create_connection(("127.0.0.1", server.port), timeout=60) as silent:
                silent.sendall(head(server, "/api/command", len(write())) + write()[:5])
                assert b"" == silent.recv(1)
            assert "memtape serve: a client went away (stalled for 0.3 s)\n" == logged(capsys)
            assert 0 == len(server.live.session.run)
        finally:
            stopped(server)

    @pytest.mark.parametrize("reset", [False, True], ids=["closed", "reset"])
    def test_a_client_gone_mid_body_is_one_line_and_runs_nothing(
        self, capsys: pytest.CaptureFixture[str], reset: bool
    ) -> None:
        server = started(read_timeout=30)
        try:
            client = socket.create_connection(("127.0.0.1", server.port), timeout=60)
            if reset:
                # Closing with a zero linger sends a reset, not an orderly end.
                client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            client.sendall(head(server, "/api/command", len(write())) + write()[:5])
            time.sleep(0.1)
            client.close()
            err = logged(capsys)
            expected = (
                "Connection reset by peer"
                if reset
                else f"its command ended after 5 of {len(write())} bytes"
            )
            assert f"memtape serve: a client went away ({expected})\n" == err
            assert 0 == len(server.live.session.run)
            # And the server goes on answering.
            assert 200 == ask(server, "POST", "/api/command", write()).status
        finally:
            stopped(server)
