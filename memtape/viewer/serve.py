"""``memtape serve``: the viewer in live mode, a simulation driven from the page.

The server holds one session and the page's data built so far. The page
sends commands (the scenario's or the recorded run's next one, or any command
typed into its forms) with the events it holds; the policies decide them, the
data grows by their events, and the page gets back what came after the events
it held, appends it, and redraws. A command the policies reject, or one that
is malformed, is answered 400 with the one-line reason, and the session is
unchanged.
"""

import sys
import threading
from collections.abc import Sequence
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, assert_never
from urllib.parse import parse_qs, urlsplit

import orjson

from memtape.core.codec import command_from_data
from memtape.core.commands import (
    AddTurn,
    AdvanceClock,
    Command,
    Consolidate,
    Query,
    ReadFact,
    RecordEpisode,
    WriteFact,
)
from memtape.core.errors import BadInput, MemtapeError, one_line
from memtape.policies.session import Policies, Session
from memtape.runfiles import load_run
from memtape.scenarios import is_scenario, load_scenario
from memtape.viewer.page import page_html
from memtape.viewer.payload import PayloadBuilder

MAX_BODY = 1 << 20
"""The largest command body the server reads, in bytes."""


class LiveRun:
    """A session grown by the page's commands, and the recorded commands still to come.

    The page's data is kept built so far and grown by each command's events,
    so a command costs what it added, however long the session has run.
    """

    def __init__(self, policies: Policies, upcoming: Sequence[Command], name: str) -> None:
        self.session = Session(policies)
        self.upcoming = tuple(upcoming)
        self.sent = 0
        """How many of ``upcoming`` have been executed: the next is ``upcoming[sent]``."""
        self.name = name
        self.built = PayloadBuilder(name, policies, self.session.state)
        self._lock = threading.Lock()

    def next(self) -> None:
        """Execute the next recorded command; a rejection leaves it next."""
        with self._lock:
            if self.sent == len(self.upcoming):
                raise BadInput(f"{self.name}: every recorded step has been sent")
            self._execute(self.upcoming[self.sent])
            self.sent += 1

    def command(self, data: Any) -> None:
        """Decode and execute one command the page sent (``{"kind": ..., fields}``)."""
        command = command_from_data(data)
        with self._lock:
            self._execute(command)

    def _execute(self, command: Command) -> None:
        session = self.session
        self.built.add_step(session.execute(command), session.policies_at)

    def check_since(self, since: int) -> None:
        """Refuse a ``since`` that is not a command's end in the run so far."""
        with self._lock:
            self.built.steps_at(since)

    def data(self, since: int | None = None) -> dict[str, Any]:
        """The page's data: the run so far (or only what came after event ``since``), live,
        and what "next" would send."""
        with self._lock:
            built = self.built
            run = built.payload() if since is None else built.since(since)
            upcoming = self.upcoming[self.sent] if self.sent < len(self.upcoming) else None
        return {
            "runs": [run],
            "live": True,
            "next": None if upcoming is None else next_label(upcoming),
        }


def next_label(command: Command) -> dict[str, str]:
    """What the page's "next" button says it will send."""
    match command:
        case AddTurn():
            label = "Add next turn"
        case WriteFact(key=key):
            label = f"Next step: write {key!r}"
        case ReadFact(key=key, id=fact_id):
            label = (
                f"Next step: read {key!r}" if key is not None else f"Next step: read fact {fact_id}"
            )
        case Query(text=text, key=key, k=k):
            asked = f" {text!r}" if text else ""
            expecting = f" expecting {key!r}" if key else ""
            label = f"Next step: query{asked}{expecting}, top {k}"
        case AdvanceClock(to=to):
            label = f"Next step: advance the clock to t={to:g}"
        case RecordEpisode():
            label = "Next step: record an episode"
        case Consolidate():
            label = "Next step: consolidate"
        case _:
            assert_never(command)  # mypy fails here when a command kind has no label
    return {"label": label}


def live_source(target: str, settings: Sequence[str] = (), *, trust: bool = False) -> LiveRun:
    """A live session for a scenario (its steps to come) or a run (its recorded commands).

    ``settings`` (``AXIS.PARAM=VALUE``, as ``memtape run --set``) change a
    scenario's policies; a run is re-decided from the start under the policies
    that began it, which settings do not change (``memtape fork`` does that).
    Re-deciding runs the policies' code, so a run naming a policy by import
    path is refused unless ``trust`` says its code is the user's to run.
    """
    if is_scenario(target):
        scenario = load_scenario(target)
        policies = scenario.policies.with_settings(settings) if settings else scenario.policies
        return LiveRun(policies, scenario.steps, scenario.name)
    if settings:
        raise BadInput(
            f"{target}: --set changes a scenario's policies; fork a recorded run instead"
        )
    loaded = load_run(target, trust=trust)
    loaded.require_code("serve")
    if loaded.torn is not None:
        print(f"memtape: warning: {target}: {one_line(loaded.torn)}", file=sys.stderr)
    session = loaded.session
    return LiveRun(session.policies_at(0), session.run.commands, loaded.scenario)


def serve(live: LiveRun, port: int = 0) -> int:
    """Serve the live page on 127.0.0.1 (a free port when ``port`` is 0) until Ctrl-C."""
    server = make_server(live, port)
    host, bound = server.server_address[:2]
    try:
        # Inside the try: a Ctrl-C right after the URL is printed still stops cleanly.
        print(f"memtape serve: {live.name} at http://{host!s}:{bound}/ (Ctrl-C stops)", flush=True)
        server.serve_forever()
    except KeyboardInterrupt:
        print("memtape serve: stopped", file=sys.stderr)
    finally:
        server.server_close()
    return 0


def make_server(live: LiveRun, port: int = 0) -> ThreadingHTTPServer:
    """A server for the live page bound to 127.0.0.1 (not yet serving)."""
    if not 0 <= port <= 65535:
        raise BadInput(f"--port {port} is not a port (0..65535)")
    try:
        return ThreadingHTTPServer(("127.0.0.1", port), _handler(live))
    except OSError as error:
        raise BadInput(f"cannot listen on 127.0.0.1:{port}: {error.strerror}") from None


def _handler(live: LiveRun) -> type[BaseHTTPRequestHandler]:
    class Handler(LiveHandler):
        run = live

    return Handler


class LiveHandler(BaseHTTPRequestHandler):
    """The page at ``/``, its data at ``/api/data``; commands at ``/api/next``, ``/api/command``.

    ``?since=N`` (the events the page holds) on the data or a command asks
    for only what came after event N, for the page to append.
    """

    run: LiveRun

    def do_GET(self) -> None:
        """The page, or the run's data."""
        try:
            path, since = self._route()
            if path == "/":
                page = page_html(self.run.data(), self.run.name).encode("utf-8")
                self._send(HTTPStatus.OK, page, "text/html; charset=utf-8")
            elif path == "/api/data":
                self._json(HTTPStatus.OK, self.run.data(since))
            else:
                self._json(HTTPStatus.NOT_FOUND, {"error": f"no such page: {self.path}"})
        except MemtapeError as error:
            self._json(HTTPStatus.BAD_REQUEST, {"error": one_line(str(error))})

    def do_POST(self) -> None:
        """A command: the grown run, or 400 with the one-line reason it was refused."""
        try:
            path, since = self._route()
            if since is not None:
                # Refused before the command runs: a refusal changes nothing.
                self.run.check_since(since)
            if path == "/api/next":
                self.run.next()
            elif path == "/api/command":
                self.run.command(self._body())
            else:
                self._json(HTTPStatus.NOT_FOUND, {"error": f"no such command path: {self.path}"})
                return
        except MemtapeError as error:
            self._json(HTTPStatus.BAD_REQUEST, {"error": one_line(str(error))})
            return
        self._json(HTTPStatus.OK, self.run.data(since))

    def _route(self) -> tuple[str, int | None]:
        """The path, and ``since`` if the query names it (a whole number, or refused)."""
        parts = urlsplit(self.path)
        values = parse_qs(parts.query).get("since")
        if values is None:
            return parts.path, None
        if len(values) != 1 or not _whole_number(values[0]):
            raise BadInput(f"since must be one whole number of events, got {values!r}")
        return parts.path, int(values[0])

    def _body(self) -> Any:
        declared = self.headers.get("Content-Length") or "0"
        length = int(declared) if _whole_number(declared) else 0
        if not 0 < length <= MAX_BODY:
            raise BadInput(f"a command is a JSON object of at most {MAX_BODY} bytes")
        try:
            return orjson.loads(self.rfile.read(length))
        except orjson.JSONDecodeError as error:
            raise BadInput(f"the command is not JSON: {error}") from None

    def _json(self, status: HTTPStatus, data: Any) -> None:
        self._send(status, orjson.dumps(data), "application/json")

    def _send(self, status: HTTPStatus, body: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the page shows what happened; stderr stays for errors."""


def _whole_number(text: str) -> bool:
    """Whether ``text`` is ASCII digits only (``str.isdigit`` alone admits ``²``, which
    ``int`` refuses)."""
    return text.isascii() and text.isdigit()
