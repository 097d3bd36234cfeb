"""``memtape serve``: the viewer in live mode, a simulation driven from the page.

The server holds one session and the page's data built so far. The page
sends commands (the scenario's or the recorded run's next one, or any command
typed into its forms) with the events it holds; the policies decide them, the
data grows by their events, and the page gets back what came after the events
it held, appends it, and redraws. A command the policies reject, or one that
is malformed, is answered 400 with the one-line reason, and the session is
unchanged.

It is for one local user, and answers its own page only (``LiveServer``):
the Host must be its own, the Origin too when there is one, and every request
must carry the session's token, which the printed URL holds.
"""

import hmac
import io
import secrets
import socket
import sys
import threading
import time
from collections.abc import Callable, Sequence
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, assert_never
from urllib.parse import parse_qs, urlsplit

import orjson

from memtape.core.codec import command_from_data
from memtape.core.commands import (
    AddTurn,
    AdvanceClock,
    Ask,
    Command,
    Consolidate,
    CreateBlock,
    EditBlock,
    Query,
    ReadFact,
    Recall,
    RecordEpisode,
    WriteFact,
)
from memtape.core.errors import BadInput, MemtapeError
from memtape.core.integers import bounded
from memtape.core.visible import visible
from memtape.policies.plumbing.model_settings import model_settings
from memtape.policies.session import Policies, Session
from memtape.projections.metrics import Planted
from memtape.runs.files import load_run
from memtape.runs.signed import check_reading, signature_required
from memtape.scenarios import is_scenario, load_scenario
from memtape.viewer.page import inline_hashes, page_html, scenario_probes
from memtape.viewer.payload import PayloadBuilder

MAX_BODY = 1 << 20
"""The largest command body the server reads, in bytes."""

READ_TIMEOUT = 10.0
"""Seconds a connection may stay silent, before its request or in it, before it is dropped."""

REQUEST_TIMEOUT = 10.0
"""Seconds a connection has to send its whole request (line, headers and body), however
it trickles it: past them it is dropped, so a client sending a byte now and then holds no
thread for long."""

TOKEN_HEADER = "X-Memtape-Token"
"""The header that carries the session's token on each request of the page to the API."""

TOKEN_QUERY = "token"
"""The query parameter that carries the session's token in the page's URL."""

TOKEN_BYTES = 32
"""Random bytes in a session's token."""

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
"""The names of the address served, as a ``Host`` header may give them (with the port)."""

READ_PATHS = frozenset({"/", "/api/data"})
"""The paths answered to a GET."""

COMMAND_PATHS = frozenset({"/api/next", "/api/command"})
"""The paths answered to a POST: the commands."""

Headers = tuple[tuple[str, str], ...]
"""Response headers, name and value, in order."""


class LiveRun:
    """A session grown by the page's commands, and the recorded commands still to come.

    The page's data is kept built so far and grown by each command's events,
    so a command costs what it added, however long the session has run.
    """

    def __init__(
        self,
        policies: Policies,
        upcoming: Sequence[Command],
        name: str,
        probes: Sequence[Planted] = (),
    ) -> None:
        self.session = Session(policies)
        self.upcoming = tuple(upcoming)
        self.sent = 0
        """How many of ``upcoming`` have been executed: the next is ``upcoming[sent]``."""
        self.name = name
        self.built = PayloadBuilder(name, policies, self.session.state, probes)
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
        self.built.add_step(session.execute(command), session.policies_at, command)

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
        case Recall(text=text, k=k):
            label = f"Next step: recall {text!r}, top {k}"
        case CreateBlock(label=block):
            label = f"Next step: create block {block!r}"
        case EditBlock(label=block, op=op):
            label = f"Next step: {op} in block {block!r}"
        case Ask(question=question):
            label = f"Next step: ask {question!r}"
        case _:
            assert_never(command)  # mypy fails here when a command kind has no label
    return {"label": label}


def live_source(target: str, settings: Sequence[str] = (), *, trust: bool = False) -> LiveRun:
    """A live session for a scenario (its steps to come) or a run (its recorded commands).

    ``settings`` (``AXIS.PARAM=VALUE``, as ``memtape run --set``) change a
    scenario's policies; a run is re-decided from the start under the policies
    that began it, which only ``llm.*`` settings change (the model asked: a
    run's own recorded model is asked only when ``trust`` says so; ``memtape
    fork`` changes the rest). Re-deciding runs the policies' code, so a run
    naming a policy by import path is refused unless ``trust`` says its code
    is the user's to run.
    """
    if is_scenario(target):
        scenario = load_scenario(target)
        policies = scenario.policies.with_settings(settings) if settings else scenario.policies
        return LiveRun(policies, scenario.steps, scenario.name, scenario.probes)
    model_settings(settings, target)
    loaded = load_run(target, trust=trust)
    loaded.require_code("serve")
    unvouched = check_reading(target, len(loaded.session.run), require=signature_required())
    for said in (*loaded.dropped, *([unvouched] if unvouched else [])):
        warning = visible(f"{target}: {said}", "message")
        print(f"memtape: warning: {warning}", file=sys.stderr)
    session = loaded.session
    policies = session.policies_at(0)
    if settings:
        policies = policies.with_settings(settings)
    probes = scenario_probes(loaded.scenario)
    return LiveRun(policies, session.run.commands, loaded.scenario, probes)


def serve(live: LiveRun, port: int = 0) -> int:
    """Serve the live page on 127.0.0.1 (a free port when ``port`` is 0) until Ctrl-C.

    The line printed names the page's URL with the session's token: the one
    way in.
    """
    server = make_server(live, port)
    try:
        # Inside the try: a Ctrl-C right after the URL is printed still stops cleanly.
        print(f"memtape serve: {visible(live.name)} at {server.url} (Ctrl-C stops)", flush=True)
        server.serve_forever()
    except KeyboardInterrupt:
        print("memtape serve: stopped", file=sys.stderr)
    finally:
        server.server_close()
    return 0


def make_server(
    live: LiveRun,
    port: int = 0,
    read_timeout: float = READ_TIMEOUT,
    request_timeout: float = REQUEST_TIMEOUT,
) -> "LiveServer":
    """A server for the live page bound to 127.0.0.1 (not yet serving)."""
    if not 0 <= port <= 65535:
        raise BadInput(f"--port {port} is not a port (0..65535)")
    try:
        return LiveServer(live, port, read_timeout, request_timeout)
    except OSError as error:
        raise BadInput(f"cannot listen on 127.0.0.1:{port}: {error.strerror}") from None


class LiveServer(ThreadingHTTPServer):
    """The live page's server on 127.0.0.1: it answers its own page only.

    As Jupyter's server does, it refuses a request that names another host
    (``Host``: a page on a DNS name rebound to 127.0.0.1 reaches the port, but
    names its own host), that comes from another origin (``Origin``, when the
    browser sends one), or that lacks the session's token: in the URL
    (``/?token=…``, the one printed at start) for the page, in the
    ``X-Memtape-Token`` header for the API. The page gets the token inside its
    own HTML, which only a reader that has the token and is this origin can
    fetch. A command is a ``POST`` of ``application/json``: neither a form nor
    a ``no-cors`` fetch from another page can send that type, or the header; a
    fetch in ``cors`` mode can, after a preflight, which this server never grants.

    The token stays in the page's URL, so a reload keeps working, and nothing
    leaks it (``Referrer-Policy: no-referrer``; the page loads nothing from
    elsewhere and cannot be framed). A cookie was not chosen: browsers send a
    cookie for 127.0.0.1 to every port of it, and ``SameSite`` counts another
    port as the same site, so any other local server, and any page it serves,
    would be sent the secret.

    Each connection may stay silent ``read_timeout`` seconds at most, and has
    ``request_timeout`` seconds in all to send its request; a client that
    stalls, trickles or disconnects is one line on stderr, never a traceback,
    and holds only its own (daemon) thread.
    """

    daemon_threads = True
    """A stalled client's thread does not keep the process alive after Ctrl-C."""

    def __init__(
        self,
        live: LiveRun,
        port: int,
        read_timeout: float = READ_TIMEOUT,
        request_timeout: float = REQUEST_TIMEOUT,
    ) -> None:
        super().__init__(("127.0.0.1", port), LiveHandler)
        self.live = live
        self.read_timeout = read_timeout
        self.request_timeout = request_timeout
        self.token = secrets.token_urlsafe(TOKEN_BYTES)
        self.port: int = self.server_address[1]
        self.hosts = frozenset(f"{name}:{self.port}" for name in LOOPBACK_NAMES)
        """The ``Host`` values that name this server."""
        self.origins = frozenset(f"http://{host}" for host in self.hosts)
        """The ``Origin`` values of its own page."""
        self.response_headers = _response_headers()

    @property
    def origin(self) -> str:
        """The page's origin, as printed."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        """The page's address, with the session's token."""
        return f"{self.origin}/?{TOKEN_QUERY}={self.token}"

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client gone mid-request is one line; anything else is a bug, with its traceback."""
        error = sys.exc_info()[1]
        if isinstance(error, ConnectionError | TimeoutError):
            _went_away(error)
        else:
            super().handle_error(request, client_address)


def _went_away(reason: BaseException | str) -> None:
    """Say on stderr, in one line, that a client disconnected or stalled."""
    if isinstance(reason, OSError) and reason.strerror:
        reason = reason.strerror
    print(f"memtape serve: a client went away ({visible(str(reason), 'message')})", file=sys.stderr)


def _response_headers() -> Headers:
    """The headers on every response: a policy that lets only the page's own inline style and
    script run and only this origin be fetched, and no sniffing, referrer or framing."""
    style, script = inline_hashes()
    policy = "; ".join(
        (
            "default-src 'none'",
            f"script-src {script}",
            f"style-src {style}",
            "connect-src 'self'",
            "base-uri 'none'",
            "form-action 'none'",
            "frame-ancestors 'none'",
        )
    )
    return (
        ("Content-Security-Policy", policy),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
        ("Cross-Origin-Resource-Policy", "same-origin"),
        ("Cache-Control", "no-store"),
    )


class TooSlow(TimeoutError):
    """A client that did not send its whole request in the server's ``request_timeout``."""


class _Request(io.RawIOBase):
    """A connection's incoming bytes, each read given what is left of the time the client
    has to send its request (and no more than ``read_timeout`` of silence)."""

    def __init__(self, connection: socket.socket, read_timeout: float, total: float) -> None:
        super().__init__()
        self._connection = connection
        self._read_timeout = read_timeout
        self._total = total
        self._deadline = time.monotonic() + total

    def readable(self) -> bool:
        """Always: the connection is read from."""
        return True

    def readinto(self, buffer: Any) -> int:
        """Receive into ``buffer``; past the deadline, ``TooSlow``."""
        left = self._deadline - time.monotonic()
        if left > 0:
            self._connection.settimeout(min(self._read_timeout, left))
            try:
                return self._connection.recv_into(buffer)
            except TimeoutError:
                if self._deadline > time.monotonic():
                    raise
        raise TooSlow(f"sent its request too slowly: over {self._total:g} s")


class Refused(Exception):
    """A request answered ``status`` with the one-line ``reason``, and nothing run
    (``allow``: the method the path takes, for a 405)."""

    def __init__(self, status: HTTPStatus, reason: str, allow: str | None = None) -> None:
        super().__init__(reason)
        self.status = status
        self.allow = allow


class LiveHandler(BaseHTTPRequestHandler):
    """The page at ``/``, its data at ``/api/data``; commands at ``/api/next``, ``/api/command``.

    ``?since=N`` (the events the page holds) on the data or a command asks
    for only what came after event N, for the page to append. A request that
    is not this server's own page's (see ``LiveServer``) is refused 403, a
    command not sent as JSON 415, a path used with the wrong method 405.
    """

    server: LiveServer

    def setup(self) -> None:
        """The connection, with its read timeout, and its request read against the time the
        client has to send it whole."""
        super().setup()
        self.connection.settimeout(self.server.read_timeout)
        request = _Request(self.connection, self.server.read_timeout, self.server.request_timeout)
        self.rfile.close()  # the base class's, replaced: it holds the connection open
        self.rfile = io.BufferedReader(request)

    def do_GET(self) -> None:
        """The page, or the run's data."""
        self._answer(self._read)

    def do_POST(self) -> None:
        """A command: the grown run, or 400 with the one-line reason it was refused."""
        self._answer(self._command)

    def _answer(self, respond: Callable[[str, int | None], None]) -> None:
        """Admit the request, then ``respond`` to its path and ``since``; a refusal is
        answered with its status and one-line reason, and changes nothing."""
        try:
            self._admit()
            respond(*self._route())
        except Refused as refused:
            allow = () if refused.allow is None else (("Allow", refused.allow),)
            self._json(refused.status, {"error": visible(str(refused), "message")}, allow)
        except MemtapeError as error:
            self._json(HTTPStatus.BAD_REQUEST, {"error": visible(str(error), "message")})

    def _read(self, path: str, since: int | None) -> None:
        live = self.server.live
        if path == "/":
            headers = {TOKEN_HEADER: self.server.token}
            page = page_html({**live.data(), "headers": headers}, live.name)
            self._send(HTTPStatus.OK, page.encode("utf-8"), "text/html; charset=utf-8")
        elif path == "/api/data":
            self._json(HTTPStatus.OK, live.data(since))
        elif path in COMMAND_PATHS:
            raise Refused(HTTPStatus.METHOD_NOT_ALLOWED, f"{path} takes a POST", allow="POST")
        else:
            raise Refused(HTTPStatus.NOT_FOUND, f"no such page: {self.path}")

    def _command(self, path: str, since: int | None) -> None:
        live = self.server.live
        if path in READ_PATHS:
            raise Refused(HTTPStatus.METHOD_NOT_ALLOWED, f"{path} takes a GET", allow="GET")
        if path not in COMMAND_PATHS:
            raise Refused(HTTPStatus.NOT_FOUND, f"no such command path: {self.path}")
        if self.headers.get_content_type() != "application/json":
            raise Refused(
                HTTPStatus.UNSUPPORTED_MEDIA_TYPE,
                "a command is sent with Content-Type: application/json",
            )
        if since is not None:
            # Refused before the command runs: a refusal changes nothing.
            live.check_since(since)
        if path == "/api/next":
            live.next()
        else:
            live.command(self._body())
        self._json(HTTPStatus.OK, live.data(since))

    def _admit(self) -> None:
        """Refuse (403) a request that names another host, comes from another origin, or
        lacks the session's token (in the URL for the page, in the header for the API)."""
        server = self.server
        hosts = self.headers.get_all("Host") or []
        if len(hosts) != 1 or hosts[0].lower() not in server.hosts:
            raise Refused(HTTPStatus.FORBIDDEN, f"this server answers for {server.origin} only")
        origins = self.headers.get_all("Origin")
        if origins is not None and (len(origins) != 1 or origins[0].lower() not in server.origins):
            raise Refused(HTTPStatus.FORBIDDEN, "a request from another origin is refused")
        parts = urlsplit(self.path)
        if parts.path == "/":
            given = parse_qs(parts.query).get(TOKEN_QUERY, [])
            token = given[0] if len(given) == 1 else ""
        else:
            token = self.headers.get(TOKEN_HEADER, "")
        if not hmac.compare_digest(token.encode("utf-8"), server.token.encode("utf-8")):
            raise Refused(
                HTTPStatus.FORBIDDEN,
                "the session's token is missing or wrong: open the URL memtape serve printed",
            )

    def _route(self) -> tuple[str, int | None]:
        """The path, and ``since`` if the query names it (a whole number, or refused)."""
        parts = urlsplit(self.path)
        values = parse_qs(parts.query).get("since")
        if values is None:
            return parts.path, None
        if len(values) != 1 or not _whole_number(values[0]):
            raise BadInput(f"since must be one whole number of events, got {values!r}")
        return parts.path, bounded(values[0], "since")

    def _body(self) -> Any:
        declared = self.headers.get("Content-Length") or "0"
        try:
            length = bounded(declared, "Content-Length") if _whole_number(declared) else 0
        except BadInput:
            length = 0  # past 64 bits: refused below, with any other length out of range
        if not 0 < length <= MAX_BODY:
            raise BadInput(f"a command is a JSON object of at most {MAX_BODY} bytes")
        body = self.rfile.read(length)
        if len(body) < length:
            raise ConnectionAbortedError(f"its command ended after {len(body)} of {length} bytes")
        try:
            return orjson.loads(body)
        except orjson.JSONDecodeError as error:
            raise BadInput(f"the command is not JSON: {error}") from None

    def _json(self, status: HTTPStatus, data: Any, headers: Headers = ()) -> None:
        self._send(status, orjson.dumps(data), "application/json", headers)

    def _send(self, status: HTTPStatus, body: bytes, kind: str, headers: Headers = ()) -> None:
        self.send_response(status)
        # The reads may have left a timeout of what was left of the request's time.
        self.connection.settimeout(self.server.read_timeout)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (*self.server.response_headers, *headers):
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """The base class's own refusals (a malformed request, an unsupported method) as
        JSON with every response's headers, like the others."""
        self.close_connection = True
        status = HTTPStatus(code)
        self._json(status, {"error": visible(message or status.phrase, "message")})

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the page shows what happened; stderr stays for errors."""

    def log_error(self, format: str, *args: Any) -> None:
        """One line on stderr. The base class calls this when a read or write timed out (its
        other call, from ``send_error``, is overridden here)."""
        if any(isinstance(arg, TooSlow) for arg in args):
            _went_away(next(arg for arg in args if isinstance(arg, TooSlow)))
        elif any(isinstance(arg, TimeoutError) for arg in args):
            _went_away(f"stalled for {self.server.read_timeout:g} s")
        else:
            print(f"memtape serve: {visible(format % args, 'message')}", file=sys.stderr)


def _whole_number(text: str) -> bool:
    """Whether ``text`` is ASCII digits only (``str.isdigit`` alone admits ``²``, which
    ``int`` refuses)."""
    return text.isascii() and text.isdigit()
