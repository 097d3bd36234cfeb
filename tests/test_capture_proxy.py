"""The recording proxy on its own (memtape.capture.proxy), in this process: keep-alive,
chunked requests, an unreachable upstream, a close-delimited body, the route to each
upstream. The SDKs' end-to-end runs are tests/test_capture_record.py's."""

import contextlib
import http.client
import json
import shutil
import socket
import socketserver
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memtape.capture import proxy as proxy_module
from memtape.capture.exchanges import Exchange
from memtape.capture.proxy import CaptureProxy, ProxyThread
from memtape.capture.upstream import Upstream
from tests.provider import Provider
from tests.serving import serving

CHAT = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode()


class Running:
    """A proxy in front of an upstream, and the exchanges it recorded."""

    def __init__(self, openai: str, anthropic: str) -> None:
        self.exchanges: list[Exchange] = []
        self.thread = ProxyThread(
            lambda: CaptureProxy(
                self.exchanges.append, openai=Upstream(openai), anthropic=Upstream(anthropic)
            )
        )
        self.port = self.thread.start()

    def connection(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)


@pytest.fixture
def provider() -> Iterator[Provider]:
    started = Provider().start()
    yield started
    started.stop()


@pytest.fixture
def proxy(provider: Provider) -> Iterator[Running]:
    running = Running(provider.url + "/v1", provider.url)
    yield running
    running.thread.stop()


def _post(
    connection: http.client.HTTPConnection, path: str, body: Any, headers: dict[str, str]
) -> tuple[int, bytes]:
    chunked = headers.get("Transfer-Encoding") == "chunked"
    connection.request("POST", path, body=body, headers=headers, encode_chunked=chunked)
    response = connection.getresponse()
    return response.status, response.read()


def _one_chat(openai: str, anthropic: str) -> tuple[int, bytes, list[Exchange]]:
    """One chat request through a proxy started for it (and stopped): the status and body
    the agent got, and the exchanges the proxy recorded."""
    running = Running(openai, anthropic)
    try:
        status, body = _post(running.connection(), "/v1/chat/completions", CHAT, {})
    finally:
        running.thread.stop()
    return status, body, running.exchanges


class TestRelay:
    def test_two_requests_share_one_connection(self, proxy: Running, provider: Provider) -> None:
        connection = proxy.connection()
        headers = {"content-type": "application/json"}
        first = _post(connection, "/v1/chat/completions", CHAT, headers)
        socket_before = connection.sock
        second = _post(connection, "/v1/chat/completions", CHAT, headers)
        assert ([200, 200], True, provider.sent[-2:]) == (
            [first[0], second[0]],
            socket_before is connection.sock,
            [first[1], second[1]],
        )

    def test_a_chunked_request_body_reaches_the_upstream_whole(
        self, proxy: Running, provider: Provider
    ) -> None:
        connection = proxy.connection()
        pieces = iter([CHAT[:10], CHAT[10:]])
        _post(connection, "/v1/chat/completions", pieces, {"Transfer-Encoding": "chunked"})
        assert json.loads(CHAT) == provider.received[-1].body

    def test_an_http_1_0_agent_gets_a_stream_unchunked_to_the_close(
        self, proxy: Running, provider: Provider
    ) -> None:
        body = json.dumps({"model": "m", "stream": True, "messages": []}).encode()
        with socket.create_connection(("127.0.0.1", proxy.port), timeout=30) as agent:
            agent.sendall(
                b"POST /v1/chat/completions HTTP/1.0\r\nContent-Length: %d\r\n\r\n%s"
                % (len(body), body)
            )
            received = b""
            while piece := agent.recv(65536):
                received += piece
        head, _, got = received.partition(b"\r\n\r\n")
        assert (True, False, provider.sent[-1]) == (
            b"connection: close" in head.lower(),
            b"transfer-encoding" in head.lower(),
            got,
        )

    def test_an_anthropic_version_header_routes_to_the_anthropic_upstream(
        self, provider: Provider
    ) -> None:
        running = Running("http://127.0.0.1:9/v1", provider.url)
        try:
            status, _ = _post(
                running.connection(),
                "/v1/messages",
                json.dumps({"model": "c", "messages": []}).encode(),
                {"anthropic-version": "2023-06-01"},
            )
        finally:
            running.thread.stop()
        assert (200, "/v1/messages") == (status, provider.received[-1].path)

    def test_the_v1_of_the_agents_base_url_gives_way_to_the_upstreams_path(
        self, provider: Provider
    ) -> None:
        running = Running(provider.url + "/v1", provider.url)
        try:
            connection = running.connection()
            connection.request("GET", "/v1/models?limit=2")
            connection.getresponse().read()
        finally:
            running.thread.stop()
        assert ("GET", "/v1/models?limit=2") == (
            running.exchanges[-1].method,
            running.exchanges[-1].path,
        )


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and ``PROVIDER_NAME``, and its key (openssl's
    command line)."""
    if shutil.which("openssl") is None:
        pytest.skip("no openssl command to make a certificate")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            f"subjectAltName=IP:127.0.0.1,DNS:{PROVIDER_NAME}",
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


PROVIDER_NAME = "provider.test"
"""A provider's host name that is not this machine's: the tunnelling proxy reaches it on
127.0.0.1 (the recorder never resolves it: the proxy does)."""


class Tunnels(socketserver.ThreadingTCPServer):
    """An HTTP proxy on 127.0.0.1 that answers ``CONNECT host:port`` with a tunnel, as a
    company's HTTPS proxy does; ``asked`` holds each CONNECT's target and its
    ``Proxy-Authorization``."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Tunnel)
        self.asked: list[tuple[str, str | None]] = []

    @property
    def url(self) -> str:
        """The proxy's URL, as ``HTTPS_PROXY`` names it."""
        return f"http://user:pw@127.0.0.1:{self.server_address[1]}"


class _Tunnel(socketserver.StreamRequestHandler):
    server: Tunnels

    def handle(self) -> None:
        lines = []
        while (line := self.rfile.readline().decode("latin-1").strip()) != "":
            lines.append(line)
        target = lines[0].split(" ")[1]
        authorization = next(
            (
                line.split(":", 1)[1].strip()
                for line in lines[1:]
                if line.lower().startswith("proxy-authorization:")
            ),
            None,
        )
        self.server.asked.append((target, authorization))
        host, port = target.rsplit(":", 1)
        host = "127.0.0.1" if host == PROVIDER_NAME else host
        with socket.create_connection((host, int(port))) as upstream:
            self.wfile.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            self.wfile.flush()
            client = self.connection

            def pipe(source: socket.socket, sink: socket.socket) -> None:
                with contextlib.suppress(OSError):
                    while data := source.recv(65536):
                        sink.sendall(data)
                with contextlib.suppress(OSError):
                    sink.shutdown(socket.SHUT_WR)

            back = threading.Thread(target=pipe, args=(upstream, client), daemon=True)
            back.start()
            pipe(client, upstream)
            back.join()


class Silent(socketserver.ThreadingTCPServer):
    """A proxy on 127.0.0.1 that answers a ``CONNECT`` with ``answer`` and says nothing
    more; ``closed`` is set once the recorder closes a connection."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, answer: bytes) -> None:
        super().__init__(("127.0.0.1", 0), _Silence)
        self.answer = answer
        self.closed = threading.Event()

    @property
    def url(self) -> str:
        """The proxy's URL, as ``HTTPS_PROXY`` names it."""
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Silence(socketserver.StreamRequestHandler):
    server: Silent

    def handle(self) -> None:
        while self.rfile.readline().strip():
            pass
        self.wfile.write(self.server.answer)
        self.wfile.flush()
        self.connection.settimeout(60)
        with contextlib.suppress(OSError):
            while self.connection.recv(4096):
                pass
            self.server.closed.set()


class TestTls:
    def test_an_https_upstream_is_reached_with_its_certificate_verified(
        self, certificate: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("SSL_CERT_FILE", str(certificate[0]))
        provider = Provider().start(tls=certificate)
        running = Running(provider.url + "/v1", provider.url)
        try:
            connection = running.connection()
            first = _post(connection, "/v1/chat/completions", CHAT, {})
            second = _post(connection, "/v1/chat/completions", CHAT, {})
        finally:
            running.thread.stop()
            provider.stop()
        assert ([200, 200], provider.sent) == ([first[0], second[0]], [first[1], second[1]])

    def test_an_https_upstream_is_reached_through_the_environments_https_proxy(
        self, certificate: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Where the provider is reached only through a company's proxy: ``HTTPS_PROXY``
        (with its credentials) carries a tunnel to the provider, which is still verified."""
        monkeypatch.setenv("SSL_CERT_FILE", str(certificate[0]))
        provider = Provider().start(tls=certificate)
        with serving(Tunnels()) as tunnels:
            monkeypatch.setenv("HTTPS_PROXY", tunnels.url)
            monkeypatch.delenv("NO_PROXY", raising=False)
            monkeypatch.delenv("no_proxy", raising=False)
            named = provider.url.replace("127.0.0.1", PROVIDER_NAME)
            try:
                status, body, _ = _one_chat(named + "/v1", named)
            finally:
                provider.stop()
        port = provider.url.rsplit(":", 1)[1]
        assert (200, provider.sent, [(f"{PROVIDER_NAME}:{port}", "Basic dXNlcjpwdw==")]) == (
            status,
            [body],
            tunnels.asked,
        )

    def test_an_https_upstream_on_this_machine_is_reached_directly(
        self, certificate: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A company's proxy cannot reach a gateway on the user's loopback, NO_PROXY or not."""
        monkeypatch.setenv("SSL_CERT_FILE", str(certificate[0]))
        provider = Provider().start(tls=certificate)
        with serving(Tunnels()) as tunnels:
            monkeypatch.setenv("HTTPS_PROXY", tunnels.url)
            monkeypatch.delenv("NO_PROXY", raising=False)
            monkeypatch.delenv("no_proxy", raising=False)
            try:
                status, body, _ = _one_chat(provider.url + "/v1", provider.url)
            finally:
                provider.stop()
        assert (200, provider.sent, []) == (status, [body], tunnels.asked)

    def test_a_proxy_that_refuses_the_tunnel_is_an_unreachable_upstream(
        self, provider: Provider, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("HTTPS_PROXY", provider.url)  # it answers CONNECT with a 501
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        status, _, exchanges = _one_chat("https://api.example/v1", "https://api.example")
        assert (
            502,
            "upstream unreachable: the proxy $HTTPS_PROXY answered 501 to CONNECT api.example:443",
        ) == (status, exchanges[-1].error)

    def test_a_proxy_not_there_is_an_unreachable_upstream_its_address_unwritten(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The error goes into the capture, which is shared: it names the variable, not
        the company's proxy host (nor the address a refused connection names)."""
        with socket.socket() as free:
            free.bind(("127.0.0.1", 0))
            port = free.getsockname()[1]
        monkeypatch.setenv("https_proxy", f"http://127.0.0.1:{port}")
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        status, _, exchanges = _one_chat("https://api.example/v1", "https://api.example")
        assert (502, "upstream unreachable: the proxy $https_proxy: Connection refused") == (
            status,
            exchanges[-1].error,
        )

    def test_a_proxy_that_answers_no_http_is_closed(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """A proxy that answers the ``CONNECT`` in another protocol: the recorder closes
        its connection, where it had left it open for as long as the proxy kept it (one
        more with each request)."""
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        with serving(Silent(b"SSH-2.0-OpenSSH_9.6\r\n\r\n")) as silent:
            monkeypatch.setenv("HTTPS_PROXY", silent.url)
            status, _, _ = _one_chat("https://api.example/v1", "https://api.example")
            closed = silent.closed.wait(30)
        assert (502, True) == (status, closed)

    def test_a_host_no_proxy_names_is_reached_directly(
        self, certificate: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("SSL_CERT_FILE", str(certificate[0]))
        provider = Provider().start(tls=certificate)
        with serving(Tunnels()) as tunnels:
            monkeypatch.setenv("HTTPS_PROXY", tunnels.url)
            monkeypatch.setenv("NO_PROXY", "127.0.0.1")
            try:
                status, _, _ = _one_chat(provider.url + "/v1", provider.url)
            finally:
                provider.stop()
        assert (200, []) == (status, tunnels.asked)

    def test_an_unverified_certificate_is_an_unreachable_upstream(
        self, certificate: tuple[Path, Path]
    ) -> None:
        provider = Provider().start(tls=certificate)
        running = Running(provider.url + "/v1", provider.url)
        try:
            status, _ = _post(running.connection(), "/v1/chat/completions", CHAT, {})
        finally:
            running.thread.stop()
            provider.stop()
        error = running.exchanges[-1].error or ""
        assert (502, True, []) == (status, "CERTIFICATE_VERIFY_FAILED" in error, provider.sent)


class TestListening:
    def test_it_listens_on_loopback_only(self, proxy: Running) -> None:
        assert ("127.0.0.1", proxy.port) == proxy.thread.address

    def test_a_browser_s_request_is_refused_unforwarded_and_unrecorded(
        self, proxy: Running, provider: Provider
    ) -> None:
        before = len(provider.received)
        status, _ = _post(
            proxy.connection(),
            "/v1/chat/completions",
            CHAT,
            {"Origin": "https://pages.example", "Content-Type": "text/plain"},
        )
        assert (403, before, []) == (status, len(provider.received), proxy.exchanges)

    def test_a_connect_is_refused_unforwarded_and_unrecorded(
        self, proxy: Running, provider: Provider
    ) -> None:
        """An agent whose ``HTTPS_PROXY`` names the recorder (a reverse proxy, not a
        forward one): its ``CONNECT`` went to the provider as a request to the path
        ``/v1api.openai.com:443`` and into the capture as an exchange."""
        before = len(provider.received)
        connection = proxy.connection()
        connection.request("CONNECT", "api.openai.com:443")
        response = connection.getresponse()
        said = json.loads(response.read())["error"]["message"]
        assert (405, before, [], True) == (
            response.status,
            len(provider.received),
            proxy.exchanges,
            said.startswith("memtape record is no forward proxy"),
        )


class TestTrouble:
    def test_a_fault_of_the_recorder_is_a_502_and_an_exchange_saying_so(
        self,
        provider: Provider,
        monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        """Whatever goes wrong inside the recorder, the capture holds the exchange with its
        error (it held one with no status and no error) and the agent gets an answer."""

        async def broken(*args: Any, **kwargs: Any) -> bool:
            raise RuntimeError("a bug")

        monkeypatch.setattr(proxy_module, "_relay", broken)
        status, body, exchanges = _one_chat(provider.url + "/v1", provider.url)
        assert (
            502,
            "the recorder failed: a bug",
            "the recorder failed: a bug",
            "memtape record: RuntimeError: a bug\n",
        ) == (
            status,
            json.loads(body)["error"]["message"],
            exchanges[-1].error,
            capsys.readouterr().err,
        )

    def test_a_malformed_request_line_is_a_400(self, proxy: Running, provider: Provider) -> None:
        before = len(provider.received)
        with socket.create_connection(("127.0.0.1", proxy.port), timeout=30) as agent:
            agent.sendall(b"NOT A REQUEST LINE\r\nHost: x\r\n\r\n")
            answer = agent.recv(65536)
        assert (b"HTTP/1.1 400 ", before) == (answer[:13], len(provider.received))

    @pytest.mark.parametrize(
        "framing",
        [
            "Content-Length: \u00b2\r\n\r\nab",
            "Content-Length: " + "9" * 5000 + "\r\n\r\n",
            "Transfer-Encoding: chunked\r\n\r\n-1\r\n",
            "Transfer-Encoding: chunked\r\n\r\n0x3\r\nabc\r\n0\r\n\r\n",
        ],
        ids=["superscript-digit-length", "5000-digit-length", "negative-chunk", "0x-chunk"],
    )
    def test_a_malformed_body_framing_is_a_400_and_nothing_is_forwarded(
        self, proxy: Running, provider: Provider, framing: str
    ) -> None:
        before = len(provider.received)
        request = f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n{framing}"
        with socket.create_connection(("127.0.0.1", proxy.port), timeout=30) as agent:
            agent.sendall(request.encode("latin-1"))
            answer = agent.recv(65536)
        assert (b"HTTP/1.1 400 ", before) == (answer[:13], len(provider.received))

    def test_a_capture_that_cannot_be_written_is_one_line_and_the_proxy_serves_on(
        self, provider: Provider, capsys: pytest.CaptureFixture[str]
    ) -> None:
        def full(exchange: Exchange) -> None:
            raise OSError(28, "No space left on device")

        thread = ProxyThread(
            lambda: CaptureProxy(
                full, openai=Upstream(provider.url + "/v1"), anthropic=Upstream(provider.url)
            )
        )
        port = thread.start()
        try:
            statuses = [
                _post(
                    http.client.HTTPConnection("127.0.0.1", port, timeout=30),
                    "/v1/chat/completions",
                    CHAT,
                    {},
                )[0]
                for _ in range(2)
            ]
        finally:
            thread.stop()
        assert (
            [200, 200],
            ["memtape record: OSError: [Errno 28] No space left on device"] * 2,
        ) == (
            statuses,
            capsys.readouterr().err.splitlines(),
        )

    def test_an_unreachable_upstream_is_a_502_and_an_error(self) -> None:
        with socket.socket() as closed:
            closed.bind(("127.0.0.1", 0))
            port = closed.getsockname()[1]
        running = Running(f"http://127.0.0.1:{port}/v1", f"http://127.0.0.1:{port}")
        try:
            status, _ = _post(running.connection(), "/v1/chat/completions", CHAT, {})
        finally:
            running.thread.stop()
        exchange = running.exchanges[-1]
        assert (502, None, True) == (
            status,
            exchange.status,
            (exchange.error or "").startswith("upstream unreachable: "),
        )

    def test_a_body_delimited_by_the_close_reaches_the_agent_whole(self) -> None:
        body = b'{"id": "close-delimited"}'
        with socket.socket() as server:
            server.bind(("127.0.0.1", 0))
            server.listen()

            def answer() -> None:
                peer, _ = server.accept()
                with peer:
                    peer.recv(65536)
                    peer.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n")
                    peer.sendall(body)

            threading.Thread(target=answer, daemon=True).start()
            url = f"http://127.0.0.1:{server.getsockname()[1]}"
            running = Running(url + "/v1", url)
            try:
                got = _post(running.connection(), "/v1/chat/completions", CHAT, {})
            finally:
                running.thread.stop()
        assert ((200, body), {"id": "close-delimited"}) == (
            got,
            json.loads(running.exchanges[-1].response_body),
        )


class TestConcurrency:
    def test_twenty_streams_at_once_each_get_their_own_bytes(
        self, proxy: Running, provider: Provider
    ) -> None:
        got: dict[int, bytes] = {}

        def stream(number: int) -> None:
            body = {"model": "slow", "stream": True, "user": str(number), "messages": []}
            got[number] = _post(
                proxy.connection(), "/v1/chat/completions", json.dumps(body).encode(), {}
            )[1]

        threads = [threading.Thread(target=stream, args=(n,)) for n in range(20)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        # An exchange is written just after its last byte reaches the agent.
        deadline = time.monotonic() + 30
        while len(proxy.exchanges) < 20 and time.monotonic() < deadline:
            time.sleep(0.01)
        sent = {json.loads(body.split(b"\n")[0][6:])["id"]: body for body in provider.sent[-20:]}
        captured = {
            json.loads(exchange.request_body)["user"]: bytes(exchange.response_body)
            for exchange in proxy.exchanges
        }
        assert ({n: sent[f"chatcmpl-{n}"] for n in range(20)}, 20) == (got, len(captured))
        assert {str(n): got[n] for n in range(20)} == captured
