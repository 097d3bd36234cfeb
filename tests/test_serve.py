"""``memtape serve``: the live session behind the page, and its HTTP answers."""

import json
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memtape.cli import main
from memtape.core.commands import AddTurn, Query, WriteFact
from memtape.core.errors import BadInput, Rejected
from memtape.runfiles import load_run
from memtape.viewer import payload
from memtape.viewer.payload import run_payload
from memtape.viewer.serve import LiveRun, live_source, make_server, next_label
from tests.mixed import mixed_live

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

    def test_settings_are_refused_for_a_recorded_run(self, tmp_path: Path) -> None:
        path = tmp_path / "rd.jsonl"
        assert 0 == main(["run", "refund-desk", "--out", str(path)])
        with pytest.raises(BadInput, match="--set changes a scenario's policies"):
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
def url() -> Iterator[str]:
    server = make_server(LiveRun(live_source("dana-facts").session.policies, [], "dana-facts"))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    host, port = server.server_address[:2]
    yield f"http://{host!s}:{port}"
    server.shutdown()
    server.server_close()


def post(url: str, body: bytes) -> tuple[int, object]:
    request = urllib.request.Request(url, data=body, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


class TestHttp:
    def test_the_page_is_served_live(self, url: str) -> None:
        with urllib.request.urlopen(f"{url}/", timeout=10) as response:
            page = response.read().decode("utf-8")
        assert 200 == response.status
        assert '"live":true' in page

    def test_a_command_answers_the_grown_run(self, url: str) -> None:
        body = json.dumps({"kind": "write", "key": "k", "text": "v", "importance": 0.5}).encode()
        status, data = post(f"{url}/api/command", body)
        assert 200 == status
        assert isinstance(data, dict)
        assert [["k", "v", 0.5, 0.0]] == data["runs"][0]["facts"]

    @pytest.mark.parametrize(
        ("body", "error"),
        [
            (b"{", "the command is not JSON"),
            (b'{"kind": "fly"}', "unknown command kind 'fly'"),
            (b'{"kind": "read", "key": "x", "id": null}', "cannot read 'x'"),
            (b"", "a command is a JSON object"),
        ],
    )
    def test_a_bad_command_is_400_with_one_line(self, url: str, body: bytes, error: str) -> None:
        status, data = post(f"{url}/api/command", body)
        assert 400 == status
        assert isinstance(data, dict)
        assert data["error"].startswith(error)
        assert "\n" not in data["error"]
        _, after = post(f"{url}/api/next", b"")
        assert isinstance(after, dict)
        assert "every recorded step has been sent" in after["error"]

    def test_since_asks_for_what_came_after(self, url: str) -> None:
        write = json.dumps({"kind": "write", "key": "a", "text": "v", "importance": 0.5}).encode()
        assert 200 == post(f"{url}/api/command", write)[0]
        second = json.dumps({"kind": "write", "key": "b", "text": "w", "importance": 0.4}).encode()
        status, data = post(f"{url}/api/command?since=1", second)
        assert 200 == status
        assert isinstance(data, dict)
        run = data["runs"][0]
        assert {"events": 1, "steps": 1, "turns": 0, "facts": 1} == run["from"]
        assert [["b", "w", 0.4, 0.0]] == run["facts"]
        assert [2] == run["ends"]
        with urllib.request.urlopen(f"{url}/api/data?since=0", timeout=10) as response:
            whole = json.loads(response.read())["runs"][0]
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
        ],
    )
    def test_a_bad_since_is_400_and_the_command_is_not_run(
        self, url: str, query: str, error: str
    ) -> None:
        body = json.dumps({"kind": "write", "key": "k", "text": "v", "importance": 0.5}).encode()
        status, data = post(f"{url}/api/command?{query}", body)
        assert 400 == status
        assert isinstance(data, dict)
        assert data["error"].startswith(error)
        with urllib.request.urlopen(f"{url}/api/data", timeout=10) as response:
            assert [] == json.loads(response.read())["runs"][0]["frames"]
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"{url}/api/data?{query}", timeout=10)
        assert 400 == refused.value.code
        assert json.loads(refused.value.read())["error"].startswith(error)

    def test_a_length_that_is_no_ascii_number_is_400(self, url: str) -> None:
        """``²`` passes ``str.isdigit`` but not ``int``: refused, not a dropped connection."""
        body = json.dumps({"kind": "write", "key": "k", "text": "v", "importance": 0.5}).encode()
        request = urllib.request.Request(
            f"{url}/api/command", data=body, method="POST", headers={"Content-Length": "\u00b2"}
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)
        assert 400 == refused.value.code
        assert json.loads(refused.value.read())["error"].startswith("a command is a JSON object")

    def test_an_unknown_path_is_404(self, url: str) -> None:
        status, _ = post(f"{url}/api/nothing", b"{}")
        assert 404 == status


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

    def test_ctrl_c_stops_cleanly(self) -> None:
        process = subprocess.Popen(
            [sys.executable, "-m", "memtape.cli", "serve", "dana-facts"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("memtape serve: dana-facts at http://127.0.0.1:")
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=20)
        assert 0 == process.returncode
        assert "memtape serve: stopped\n" == err
