"""The recording proxy: a reverse proxy on 127.0.0.1 between an agent and its
providers. Each request goes to the OpenAI or the Anthropic upstream; each byte of the
response is relayed the moment it arrives (a stream's time to first token is the
upstream's); the exchange is written to the capture once it ends.

A request is Anthropic's when it carries an ``anthropic-version`` header (every
Anthropic SDK and Claude Code send one) or goes to ``/v1/messages``; any other is
OpenAI's. Bodies travel unencoded (``Accept-Encoding: identity`` upstream), so what
the agent gets is what the capture reads.
"""

import asyncio
import contextlib
import sys
import threading
import time
from collections.abc import Callable

import orjson

from memtape.capture.exchanges import Exchange, endpoint_of
from memtape.capture.http1 import (
    HEAD_LIMIT,
    HOP_BY_HOP,
    Head,
    HttpError,
    content_length,
    has_body,
    head_bytes,
    read_head,
    read_request_body,
    response_body,
    status_of,
)
from memtape.capture.upstream import Connection, Upstream

OPENAI_PREFIX = "/v1"
"""The path the agent's ``OPENAI_BASE_URL`` ends with (``http://127.0.0.1:PORT/v1``):
taken off before the upstream's own base path is put on."""

_NOT_FORWARDED = HOP_BY_HOP | {"host", "content-length", "accept-encoding", "expect"}
_NOT_RELAYED = HOP_BY_HOP | {"content-length"}

_REFUSED = [("Content-Length", "0"), ("Connection", "close")]

NO_TUNNEL = (
    "memtape record is no forward proxy: point the agent's OPENAI_BASE_URL or "
    "ANTHROPIC_BASE_URL at it, not its HTTPS_PROXY"
)
"""What a ``CONNECT`` is answered: an agent that takes the recorder for its HTTP proxy."""

Recorder = Callable[[Exchange], None]
"""What the proxy hands each exchange that ended (the capture writer's ``record``)."""


class CaptureProxy:
    """The proxy's server, on the running event loop: ``start`` it, ``close`` it."""

    def __init__(self, record: Recorder, *, openai: Upstream, anthropic: Upstream) -> None:
        self.record = record
        self.openai = openai
        self.anthropic = anthropic
        self.address: tuple[str, int] = ("", 0)
        """The host and port it listens on, once started."""
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()

    async def start(self, port: int = 0) -> int:
        """Listen on 127.0.0.1:``port`` (0: a free port); returns the port."""
        self._server = await asyncio.start_server(
            self._connection, "127.0.0.1", port, limit=HEAD_LIMIT
        )
        host, bound = self._server.sockets[0].getsockname()[:2]
        self.address = (str(host), int(bound))
        return self.address[1]

    async def close(self) -> None:
        """Stop listening, end every connection, close the upstream connections."""
        if self._server is not None:
            self._server.close()
        for task in list(self._connections):
            task.cancel()
        await asyncio.gather(*self._connections, return_exceptions=True)
        self.openai.close()
        self.anthropic.close()

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        try:
            while await self._one_request(reader, writer):
                pass
        except (HttpError, asyncio.IncompleteReadError):
            with contextlib.suppress(ConnectionError):
                writer.write(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
        except (ConnectionError, asyncio.CancelledError):
            pass
        except Exception as error:  # the agent's connection ends; the proxy serves on
            print(f"memtape record: {type(error).__name__}: {error}", file=sys.stderr)
        finally:
            self._connections.discard(task)
            writer.close()

    async def _one_request(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        """Relay one request and its response; whether the connection stays open."""
        head = await read_head(reader)
        if head is None:
            return False
        parts = head.first_line.split(" ")
        if len(parts) != 3 or not parts[0].isalpha() or not parts[2].startswith("HTTP/1."):
            raise HttpError(f"a malformed request line: {head.first_line[:80]!r}")
        method, path, version = parts
        if path.startswith(("http://", "https://")):
            path = "/" + path.split("/", 3)[3] if path.count("/") >= 3 else "/"
        if head.header("origin") is not None:
            # A browser's request (a page the user has open posting to 127.0.0.1): an agent
            # or an SDK sends no Origin. Never forwarded, never in the capture.
            writer.write(head_bytes("HTTP/1.1 403 Forbidden", _REFUSED))
            await writer.drain()
            return False
        if method == "CONNECT":
            # An agent whose HTTPS_PROXY names the recorder: never forwarded, never in
            # the capture.
            await _answer_error(agent=writer, status="405 Method Not Allowed", message=NO_TUNNEL)
            return False
        if "100-continue" in head.tokens("expect"):
            writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        body = await read_request_body(reader, head)
        anthropic = head.header("anthropic-version") is not None or path.startswith("/v1/messages")
        exchange = Exchange(
            method=method,
            path=path,
            endpoint=endpoint_of(method, path, anthropic=anthropic),
            request_headers=head.headers,
            request_body=body,
        )
        upstream = self.anthropic if anthropic else self.openai
        target = upstream.target(path, strip="" if anthropic else OPENAI_PREFIX)
        # An HTTP/1.0 agent reads no chunks: an unframed body ends with the connection.
        legacy = version == "HTTP/1.0"
        keep_open = "close" not in head.tokens("connection") and not legacy
        try:
            relayed = await _relay(upstream, target, head, exchange, writer, chunks=not legacy)
        except asyncio.CancelledError:
            exchange.error = exchange.error or "the recorder stopped during the exchange"
            raise
        except (HttpError, asyncio.IncompleteReadError, ConnectionError):
            raise
        except Exception as error:
            # A fault of the recorder's own: the capture says so (never an exchange with no
            # status and no error), and an agent that had no answer yet gets a 502.
            exchange.error = exchange.error or f"the recorder failed: {_reason(error)}"
            print(f"memtape record: {type(error).__name__}: {error}", file=sys.stderr)
            if exchange.status is None:
                await _answer_error(agent=writer, status="502 Bad Gateway", message=exchange.error)
            return False
        finally:
            exchange.end = time.time()
            self.record(exchange)
        return relayed and keep_open


async def _relay(
    upstream: Upstream,
    target: str,
    head: Head,
    exchange: Exchange,
    agent: asyncio.StreamWriter,
    *,
    chunks: bool,
) -> bool:
    """Send the request upstream and relay its response to the agent as it arrives,
    a body of unknown length in chunks (unless not ``chunks``: then as it comes, the
    connection's close its end); whether the agent's connection may carry another
    request."""
    request = _upstream_request(upstream, target, head, exchange)
    try:
        connection, response = await _send(upstream, request)
    except (OSError, TimeoutError, HttpError, asyncio.IncompleteReadError) as error:
        exchange.error = f"upstream unreachable: {_reason(error)}"
        await _answer_unreachable(agent, exchange.error)
        return False
    exchange.first_byte = time.time()
    status = status_of(response)
    exchange.status = status
    exchange.response_headers = response.headers
    body = has_body(exchange.method, status)
    chunked = "chunked" in response.tokens("transfer-encoding")
    length = None if chunked else content_length(response)
    ended_by_close = body and not chunked and length is None
    rechunk = body and length is None and chunks
    headers = [(k, v) for k, v in response.headers if k.lower() not in _NOT_RELAYED]
    if (declared := response.header("content-length")) is not None and not chunked:
        headers.append(("Content-Length", declared))
    elif rechunk:
        headers.append(("Transfer-Encoding", "chunked"))
    elif body:
        headers.append(("Connection", "close"))
    agent.write(head_bytes(f"HTTP/1.1 {response.first_line.split(' ', 1)[1]}", headers))
    relayed = 0
    try:
        async for piece in response_body(connection.reader, response, exchange.method):
            exchange.response_body += piece
            relayed += len(piece)
            agent.write(b"%x\r\n%s\r\n" % (len(piece), piece) if rechunk else piece)
            await agent.drain()
    except (OSError, HttpError, asyncio.IncompleteReadError) as error:
        connection.writer.close()
        if isinstance(error, ConnectionError) and agent.is_closing():
            exchange.error = f"agent disconnected after {relayed:,} bytes"
        else:
            exchange.error = f"connection dropped after {relayed:,} bytes"
        # The agent sees what it would have seen from the upstream: a body cut short.
        agent.close()
        return False
    if rechunk:
        agent.write(b"0\r\n\r\n")
    await agent.drain()
    if "close" in response.tokens("connection") or ended_by_close:
        connection.writer.close()
    else:
        upstream.release(connection)
    return True


def _upstream_request(upstream: Upstream, target: str, head: Head, exchange: Exchange) -> bytes:
    headers = [("Host", upstream.host_header)]
    headers += [(k, v) for k, v in head.headers if k.lower() not in _NOT_FORWARDED]
    headers.append(("Accept-Encoding", "identity"))
    if exchange.request_body or exchange.method in ("POST", "PUT", "PATCH"):
        headers.append(("Content-Length", str(len(exchange.request_body))))
    return head_bytes(f"{exchange.method} {target} HTTP/1.1", headers) + exchange.request_body


async def _send(upstream: Upstream, request: bytes) -> tuple[Connection, Head]:
    """Send a request on a pooled connection (again on a new one if the pooled one had
    been closed by the upstream meanwhile); its response's head."""
    connection = await upstream.connect()
    try:
        return connection, await _exchange_head(connection, request)
    except (ConnectionError, asyncio.IncompleteReadError, _ClosedBeforeHead):
        connection.writer.close()
        if not connection.reused:
            raise
    connection = await upstream.connect()
    return connection, await _exchange_head(connection, request)


class _ClosedBeforeHead(ConnectionError):
    """The upstream closed the connection before it began a response."""


async def _exchange_head(connection: Connection, request: bytes) -> Head:
    connection.writer.write(request)
    await connection.writer.drain()
    while True:
        head = await read_head(connection.reader)
        if head is None:
            raise _ClosedBeforeHead("the upstream closed the connection without answering")
        status = status_of(head)
        if not 100 <= status < 200 or status == 101:
            return head


async def _answer_unreachable(agent: asyncio.StreamWriter, message: str) -> None:
    await _answer_error(agent=agent, status="502 Bad Gateway", message=message)


async def _answer_error(*, agent: asyncio.StreamWriter, status: str, message: str) -> None:
    """Answer the agent ``status`` with ``message`` in a provider's JSON error, and close."""
    body = orjson.dumps({"error": {"type": "memtape_record", "message": message}})
    headers = [("Content-Type", "application/json"), ("Content-Length", str(len(body)))]
    headers.append(("Connection", "close"))
    agent.write(head_bytes(f"HTTP/1.1 {status}", headers) + body)
    with contextlib.suppress(ConnectionError):
        await agent.drain()


def _reason(error: BaseException) -> str:
    if isinstance(error, TimeoutError):
        return "no connection in time"
    return str(error) or type(error).__name__


class ProxyThread:
    """The proxy on an event loop of its own thread, for a caller that has other work
    (running the agent): ``start`` returns once it listens; ``stop`` ends it."""

    def __init__(self, make: Callable[[], CaptureProxy]) -> None:
        self._make = make
        self._loop = asyncio.new_event_loop()
        self._proxy: CaptureProxy | None = None
        self._ready = threading.Event()
        self._failure: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="memtape-record", daemon=True)
        self._port = 0

    def start(self, port: int = 0) -> int:
        """Start listening on 127.0.0.1:``port``; returns the port. Raises ``OSError``
        when the port cannot be had."""
        self._port = port
        self._thread.start()
        self._ready.wait()
        if self._failure is not None:
            raise self._failure
        return self.address[1]

    @property
    def address(self) -> tuple[str, int]:
        """The host and port the proxy listens on."""
        assert self._proxy is not None, "the proxy is not started"
        return self._proxy.address

    def stop(self) -> None:
        """Close the proxy and end its thread."""
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join()

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._proxy = self._make()
            self._loop.run_until_complete(self._proxy.start(self._port))
        except BaseException as failure:  # handed to the thread that waits in start
            self._failure = failure
            self._ready.set()
            return
        self._ready.set()
        self._loop.run_forever()
        self._loop.run_until_complete(self._proxy.close())
        self._loop.close()
