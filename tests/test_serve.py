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

import pytest

from memtape.cli import main
from memtape.core.commands import AddTurn, Query, WriteFact
from memtape.core.errors import BadInput, Rejected
from memtape.runfiles import load_run
from memtape.viewer.serve import LiveRun, live_source, make_server, next_label


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
