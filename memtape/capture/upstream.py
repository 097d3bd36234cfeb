"""An upstream provider: where the proxy sends a request (its origin and base path),
and the connections to it, kept open between requests as an HTTP/1.1 client keeps
them (a TLS handshake per request would cost more than everything else)."""

import asyncio
import ipaddress
import socket
import ssl
from urllib.parse import urlsplit

import attrs

from memtape.capture.http1 import HEAD_LIMIT
from memtape.core.errors import MemtapeError

CONNECT_TIMEOUT = 30.0
"""Seconds to wait for a connection to the upstream before calling it unreachable."""


@attrs.define(eq=False)
class Connection:
    """An open connection to the upstream; ``reused`` once it has carried a response."""

    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    reused: bool = False


class Upstream:
    """A provider's base URL, and a pool of idle connections to its origin."""

    def __init__(self, url: str) -> None:
        try:
            parts = urlsplit(url)
        except ValueError as error:  # an unclosed IPv6 bracket, say
            raise MemtapeError(f"upstream {url!r}: not a URL ({error})") from None
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise MemtapeError(f"upstream {url!r}: not an http:// or https:// URL")
        self.url = url
        self.tls = parts.scheme == "https"
        self.host = parts.hostname
        try:
            self.port = parts.port or (443 if self.tls else 80)
        except ValueError:
            raise MemtapeError(f"upstream {url!r}: its port is not a number") from None
        self.base_path = parts.path.rstrip("/")
        default = (443 if self.tls else 80) == self.port
        name = f"[{self.host}]" if ":" in self.host else self.host
        self.host_header = name if default else f"{name}:{self.port}"
        self._idle: list[Connection] = []
        self._context = ssl.create_default_context() if self.tls else None

    def reaches_loopback(self, port: int) -> bool:
        """Whether a connection to this upstream would reach 127.0.0.1:``port`` (where the
        proxy listens): its host is ``localhost``, 127.0.0.1 in any spelling
        ``inet_aton`` takes (``127.1``), or 0.0.0.0, which a connection takes for this
        machine; and its port is ``port``."""
        if self.port != port or self.tls:
            return False
        if self.host.lower().rstrip(".") == "localhost":
            return True
        try:
            address = ipaddress.IPv4Address(socket.inet_aton(self.host))
        except OSError:
            return False
        return address in (ipaddress.IPv4Address("127.0.0.1"), ipaddress.IPv4Address("0.0.0.0"))

    def target(self, path: str, *, strip: str = "") -> str:
        """The request target upstream of an agent's ``path``: the base path, then the
        agent's path with the prefix ``strip`` (the ``/v1`` its base URL ended with)
        taken off."""
        if strip and (path == strip or path.startswith((strip + "/", strip + "?"))):
            path = path[len(strip) :]
        return self.base_path + path

    async def connect(self) -> Connection:
        """An idle connection if one is still open, else a new one."""
        while self._idle:
            connection = self._idle.pop()
            if not connection.reader.at_eof() and not connection.writer.is_closing():
                return connection
            connection.writer.close()
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection(
                self.host,
                self.port,
                ssl=self._context,
                server_hostname=self.host if self.tls else None,
                limit=HEAD_LIMIT,
            ),
            CONNECT_TIMEOUT,
        )
        return Connection(reader, writer)

    def release(self, connection: Connection) -> None:
        """Keep a connection whose response was read to its end, for the next request."""
        connection.reused = True
        self._idle.append(connection)

    def close(self) -> None:
        """Close every idle connection."""
        for connection in self._idle:
            connection.writer.close()
        self._idle.clear()
