"""Just enough HTTP/1.1 for a reverse proxy, on asyncio streams: a request read from
the agent (its head and whole body), a response head read from the upstream, and the
upstream's body read piece by piece as it arrives (by ``Content-Length``, chunked, or
until the connection closes)."""

import asyncio
import re
from collections.abc import AsyncIterator

import attrs

HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-connection",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
    }
)
"""Headers about one connection, never passed on to the next (RFC 9110, 7.6.1)."""

HEAD_LIMIT = 256 * 1024
"""The longest request or response head read, in bytes."""


_DECIMAL = re.compile(r"[0-9]{1,18}")
"""A ``Content-Length``: ASCII digits only (``isdigit`` takes ``\u00b2`` too, which ``int``
refuses), few enough to be a length (``int`` refuses 5,000 of them)."""

_HEXADECIMAL = re.compile(rb"[0-9A-Fa-f]{1,15}")
"""A chunk's size: hexadecimal digits only (``int(..., 16)`` also takes ``0x3``, ``-1``
and ``1_0``)."""


class HttpError(Exception):
    """A message that is not HTTP/1.1 as this module reads it."""


@attrs.frozen
class Head:
    """A request's or a response's first line and headers, as sent."""

    first_line: str
    headers: list[tuple[str, str]]

    def header(self, name: str) -> str | None:
        """The first header of this (lower-case) name."""
        return next((value for key, value in self.headers if key.lower() == name), None)

    def tokens(self, name: str) -> set[str]:
        """The comma-separated values of every header of this name, in lower case."""
        return {
            token.strip().lower()
            for key, value in self.headers
            if key.lower() == name
            for token in value.split(",")
            if token.strip()
        }


async def read_head(reader: asyncio.StreamReader) -> Head | None:
    """The next head on the connection; None when it closed before one began."""
    try:
        data = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as ended:
        if not ended.partial.strip():
            return None
        raise HttpError("the connection closed inside a message head") from None
    except asyncio.LimitOverrunError:
        raise HttpError(f"a message head over {HEAD_LIMIT:,} bytes") from None
    lines = data.decode("latin-1").split("\r\n")
    first, headers = lines[0], []
    for line in lines[1:]:
        if not line:
            continue
        name, colon, value = line.partition(":")
        if not colon or not name or name != name.strip():
            raise HttpError(f"a malformed header line: {line[:80]!r}")
        headers.append((name, value.strip()))
    return Head(first, headers)


async def read_request_body(reader: asyncio.StreamReader, head: Head) -> bytes:
    """A request's whole body, by its ``Content-Length`` or its chunks."""
    if "chunked" in head.tokens("transfer-encoding"):
        return b"".join([piece async for piece in _chunks(reader)])
    return await reader.readexactly(content_length(head) or 0)


def content_length(head: Head) -> int | None:
    """The ``Content-Length`` a head declares; None when it declares none."""
    value = head.header("content-length")
    if value is None:
        return None
    if _DECIMAL.fullmatch(value.strip()) is None:
        raise HttpError(f"a malformed Content-Length: {value[:40]!r}")
    return int(value)


def status_of(head: Head) -> int:
    """A response head's status code."""
    parts = head.first_line.split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit():
        raise HttpError(f"a malformed status line: {head.first_line[:80]!r}")
    return int(parts[1])


def has_body(method: str, status: int) -> bool:
    """Whether a response to ``method`` with ``status`` carries a body at all."""
    return method != "HEAD" and status not in (204, 304) and not 100 <= status < 200


async def response_body(
    reader: asyncio.StreamReader, head: Head, method: str
) -> AsyncIterator[bytes]:
    """A response's body, piece by piece as the upstream sends it; raises
    ``asyncio.IncompleteReadError`` or ``ConnectionError`` when the connection drops
    before the body's end."""
    if not has_body(method, status_of(head)):
        return
    if "chunked" in head.tokens("transfer-encoding"):
        async for piece in _chunks(reader):
            yield piece
        return
    length = content_length(head)
    if length is None:
        while piece := await reader.read(65536):
            yield piece
        return
    while length > 0:
        piece = await reader.read(min(length, 65536))
        if not piece:
            raise asyncio.IncompleteReadError(b"", length)
        length -= len(piece)
        yield piece


async def _chunks(reader: asyncio.StreamReader) -> AsyncIterator[bytes]:
    """The data of each chunk of a chunked body; its trailers are read and dropped."""
    while True:
        line = await reader.readuntil(b"\r\n")
        size_text = line.split(b";", 1)[0].strip()
        if _HEXADECIMAL.fullmatch(size_text) is None:
            raise HttpError(f"a malformed chunk size: {size_text[:20]!r}")
        size = int(size_text, 16)
        if size == 0:
            while (await reader.readuntil(b"\r\n")) != b"\r\n":
                pass
            return
        data = await reader.readexactly(size)
        if await reader.readexactly(2) != b"\r\n":
            raise HttpError("a chunk not followed by CRLF")
        yield data


def head_bytes(first_line: str, headers: list[tuple[str, str]]) -> bytes:
    """A head as sent on the wire."""
    lines = [first_line, *(f"{name}: {value}" for name, value in headers), "", ""]
    return "\r\n".join(lines).encode("latin-1")
