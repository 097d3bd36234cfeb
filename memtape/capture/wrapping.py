"""``wrap``: an ``openai`` or ``anthropic`` SDK client that writes a capture file as it
talks, without a proxy.

The client's HTTP transport (and any proxy transport the environment mounted) is
replaced by one that passes each request through to the original and tees the
response's bytes, as they are read, into an ``Exchange``; once the body is read to
its end (or fails, or is closed early), the exchange goes to the capture writer. The
SDK parses the same bytes it always did, streams included. As with the proxy,
responses are asked for unencoded (``Accept-Encoding: identity``), so the capture
reads what the SDK read.
"""

import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TypeVar

import httpx2

from memtape.capture.exchanges import Exchange, endpoint_of, is_stream
from memtape.capture.proxy import Recorder
from memtape.capture.reassembly import stream_ended
from memtape.capture.writer import CaptureWriter
from memtape.core.errors import MemtapeError
from memtape.core.visible import visible

Client = TypeVar("Client")

_writers: dict[Path, CaptureWriter] = {}
_writers_lock = threading.Lock()


def wrap(client: Client, *, out: str | Path) -> Client:
    """Make ``client`` (``openai.OpenAI`` or ``AsyncOpenAI``, ``anthropic.Anthropic`` or
    ``AsyncAnthropic``) append each exchange it has from now on to the capture file
    ``out``; returns the same client. Clients wrapped with the same ``out`` share one
    writer: one header, one numbering. A client wrapped already (or one whose HTTP
    client another wrapped client shares) is returned as it is when ``out`` is its
    file, and refused when it is another: each exchange is written once."""
    http = getattr(client, "_client", None)
    if not isinstance(http, httpx2.Client | httpx2.AsyncClient):
        raise MemtapeError(
            f"wrap: {type(client).__name__} is not an openai or anthropic client "
            "(no HTTP client of its own to wrap)"
        )
    if isinstance(http._transport, _Tee | _AsyncTee):
        if http._transport.writer.path.resolve() == Path(out).resolve():
            return client
        raise MemtapeError(
            f"wrap: this {type(client).__name__} already writes its exchanges to "
            f"{visible(str(http._transport.writer.path))}: wrap it once"
        )
    writer = _writer(Path(out))
    if isinstance(http, httpx2.Client):
        http._transport = _Tee(http._transport, writer)
        http._mounts = {
            pattern: None if mounted is None else _Tee(mounted, writer)
            for pattern, mounted in http._mounts.items()
        }
    else:
        http._transport = _AsyncTee(http._transport, writer)
        http._mounts = {
            pattern: None if mounted is None else _AsyncTee(mounted, writer)
            for pattern, mounted in http._mounts.items()
        }
    return client


def _writer(out: Path) -> CaptureWriter:
    key = out.resolve()
    with _writers_lock:
        if key not in _writers:
            try:
                _writers[key] = CaptureWriter(out)
            except OSError as error:
                raise MemtapeError(f"{out}: {error.strerror or error}") from None
        return _writers[key]


def _unfailing(writer: CaptureWriter) -> Recorder:
    """The writer's ``record``, a write it cannot make (a full disk) said in one line on
    stderr: the recording fails, never the program's call, as with the proxy."""

    def record(exchange: Exchange) -> None:
        try:
            writer.record(exchange)
        except OSError as error:
            reason = error.strerror or str(error)
            print(f"memtape wrap: {visible(str(writer.path))}: {reason}", file=sys.stderr)

    return record


def _exchange(request: httpx2.Request) -> Exchange:
    """The exchange a request starts; its ``Accept-Encoding`` set to identity. It is
    Anthropic's when it carries an ``anthropic-version`` header, as the proxy tells it
    (every Anthropic SDK sends one, no OpenAI one does), whichever client was wrapped:
    an OpenAI and an Anthropic client may share one HTTP client, and so one tee."""
    request.headers["Accept-Encoding"] = "identity"
    path = request.url.raw_path.decode("ascii", "replace")
    anthropic = "anthropic-version" in request.headers
    return Exchange(
        method=request.method,
        path=path,
        endpoint=endpoint_of(request.method, path, anthropic=anthropic),
        request_headers=[
            (name.decode("latin-1"), value.decode("latin-1")) for name, value in request.headers.raw
        ],
        request_body=request.content,
    )


def _answered(exchange: Exchange, response: httpx2.Response) -> None:
    exchange.first_byte = time.time()
    exchange.status = response.status_code
    exchange.response_headers = [
        (name.decode("latin-1"), value.decode("latin-1")) for name, value in response.headers.raw
    ]


def _closed_early(exchange: Exchange) -> str | None:
    """The error of a body the program closed before its end; None when what it read
    was whole (all its ``Content-Length``, or a stream up to its last event: an SDK
    stops reading there, before the connection's own end)."""
    body = bytes(exchange.response_body)
    declared = exchange.response_header("content-length")
    whole = (
        declared == str(len(body))
        if declared is not None
        else is_stream(exchange) and stream_ended(exchange.endpoint, body)
    )
    return None if whole else f"the client closed the body after {len(body):,} bytes"


def _ended(exchange: Exchange, record: Recorder, error: str | None = None) -> None:
    exchange.end = time.time()
    exchange.error = exchange.error or error
    record(exchange)


class _Tee(httpx2.BaseTransport):
    def __init__(self, inner: httpx2.BaseTransport, writer: CaptureWriter) -> None:
        self.inner = inner
        self.writer = writer
        self.record = _unfailing(writer)

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        request.read()
        exchange = _exchange(request)
        try:
            response = self.inner.handle_request(request)
        except Exception as error:
            _ended(exchange, self.record, f"upstream unreachable: {error or type(error).__name__}")
            raise
        _answered(exchange, response)
        assert isinstance(response.stream, httpx2.SyncByteStream)
        response.stream = _TeeStream(response.stream, exchange, self.record)
        return response

    def close(self) -> None:
        self.inner.close()


class _TeeStream(httpx2.SyncByteStream):
    def __init__(self, inner: httpx2.SyncByteStream, exchange: Exchange, record: Recorder) -> None:
        self.inner = inner
        self.exchange = exchange
        self.record = record
        self.done = False

    def __iter__(self) -> Iterator[bytes]:
        try:
            for piece in self.inner:
                self.exchange.response_body += piece
                yield piece
        except Exception:
            self._end(f"connection dropped after {len(self.exchange.response_body):,} bytes")
            raise
        self._end()

    def close(self) -> None:
        self._end(_closed_early(self.exchange))
        self.inner.close()

    def _end(self, error: str | None = None) -> None:
        if not self.done:
            self.done = True
            _ended(self.exchange, self.record, error)


class _AsyncTee(httpx2.AsyncBaseTransport):
    def __init__(self, inner: httpx2.AsyncBaseTransport, writer: CaptureWriter) -> None:
        self.inner = inner
        self.writer = writer
        self.record = _unfailing(writer)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        await request.aread()
        exchange = _exchange(request)
        try:
            response = await self.inner.handle_async_request(request)
        except Exception as error:
            _ended(exchange, self.record, f"upstream unreachable: {error or type(error).__name__}")
            raise
        _answered(exchange, response)
        assert isinstance(response.stream, httpx2.AsyncByteStream)
        response.stream = _AsyncTeeStream(response.stream, exchange, self.record)
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


class _AsyncTeeStream(httpx2.AsyncByteStream):
    def __init__(self, inner: httpx2.AsyncByteStream, exchange: Exchange, record: Recorder) -> None:
        self.inner = inner
        self.exchange = exchange
        self.record = record
        self.done = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for piece in self.inner:
                self.exchange.response_body += piece
                yield piece
        except Exception:
            self._end(f"connection dropped after {len(self.exchange.response_body):,} bytes")
            raise
        self._end()

    async def aclose(self) -> None:
        self._end(_closed_early(self.exchange))
        await self.inner.aclose()

    def _end(self, error: str | None = None) -> None:
        if not self.done:
            self.done = True
            _ended(self.exchange, self.record, error)
