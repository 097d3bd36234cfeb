"""An upstream provider: where the proxy sends a request (its origin and base path),
and the connections to it, kept open between requests as an HTTP/1.1 client keeps
them (a TLS handshake per request would cost more than everything else).

An ``https://`` upstream is reached through the HTTP proxy the environment names for
it (``HTTPS_PROXY``, else ``ALL_PROXY``; not for a host ``NO_PROXY`` names), as the
SDKs reach it: a ``CONNECT`` tunnel, TLS to the provider inside it. A plain
``http://`` upstream (a server on this machine or network) is reached directly.
"""

import asyncio
import base64
import ipaddress
import os
import socket
import ssl
import urllib.request
from urllib.parse import unquote, urlsplit

import attrs

from memtape.capture.http1 import HEAD_LIMIT, head_bytes, read_head, status_of
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
        if not _resolvable(parts.hostname):
            raise MemtapeError(f"upstream {url!r}: its host is not a valid name")
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
        named = _environment_proxy(self.host) if self.tls else None
        spoken = named is not None and named.scheme == "http"
        self.proxy = named if spoken else None
        """The HTTP proxy that carries the tunnel to this upstream, or None (directly)."""
        self.unspoken = None if spoken else named
        """The proxy the environment names for this upstream in a scheme record does not
        speak (SOCKS, TLS to the proxy): the upstream is reached directly, which the
        command says."""

    @property
    def shown(self) -> str:
        """The URL as a line of memtape's shows it: without the user and password it may
        hold (a line on stderr is kept by a terminal's scrollback and a CI job's log)."""
        return f"{'https' if self.tls else 'http'}://{self.host_header}{self.base_path}"

    def reaches_loopback(self, port: int) -> bool:
        """Whether a connection to this upstream would reach 127.0.0.1:``port`` (where the
        proxy listens): its host is ``localhost``, 127.0.0.1 in any spelling
        ``inet_aton`` takes (``127.1``), or 0.0.0.0, which a connection takes for this
        machine; and its port is ``port``."""
        return self.port == port and not self.tls and _this_machine(self.host)

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
        if self.proxy is not None:
            return await asyncio.wait_for(self._tunnel(self.proxy), CONNECT_TIMEOUT)
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

    async def _tunnel(self, proxy: "Proxy") -> Connection:
        """A connection through ``proxy``'s ``CONNECT`` tunnel, TLS to the upstream in it.
        A failure names the proxy by its variable: the error goes into the capture, which
        is shared, and the proxy's host is the user's network's, not the provider's."""
        try:
            reader, writer = await asyncio.open_connection(proxy.host, proxy.port, limit=HEAD_LIMIT)
        except OSError as error:
            raise OSError(f"the proxy ${proxy.variable}: {_failure(error)}") from None
        target = f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"
        headers = [("Host", target), *proxy.headers]
        try:
            writer.write(head_bytes(f"CONNECT {target} HTTP/1.1", headers))
            await writer.drain()
            head = await read_head(reader)
            status = status_of(head) if head is not None else None
            if status != 200:
                said = f"answered {status}" if status is not None else "closed the connection"
                raise OSError(f"the proxy ${proxy.variable} {said} to CONNECT {target}")
            assert self._context is not None, "only an https upstream is tunnelled"
            await writer.start_tls(self._context, server_hostname=self.host)
        except BaseException:
            # Whatever ends the tunnel (an answer in no HTTP, the connect timeout's
            # cancel): left open, the connection lasted as long as the proxy kept it.
            writer.close()
            raise
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


def _resolvable(host: str) -> bool:
    """Whether ``host`` is a name the resolver takes (each label 1 to 63 characters, by
    the ``idna`` codec ``getaddrinfo`` encodes it with): another is a ``UnicodeError`` at
    each connection, which nothing that connects expects."""
    try:
        host.encode("idna")
    except UnicodeError:
        return False
    return True


def _failure(error: OSError) -> str:
    """Why a connection failed, without the address the error names."""
    if isinstance(error, socket.gaierror):
        return f"its host is not found ({error.strerror})"
    if error.errno:
        return os.strerror(error.errno)
    return "no connection"


@attrs.frozen
class Proxy:
    """An HTTP proxy the environment names, and the headers a ``CONNECT`` to it carries
    (its credentials, when its URL has them)."""

    host: str
    port: int
    headers: tuple[tuple[str, str], ...]
    variable: str
    """The variable that named it (``HTTPS_PROXY``...), which a refusal names."""
    scheme: str = "http"
    """Its URL's scheme: ``http`` is the only one spoken."""

    def reaches_loopback(self, port: int) -> bool:
        """Whether a connection to this proxy would reach 127.0.0.1:``port``, as
        ``Upstream.reaches_loopback`` says of an upstream."""
        return self.port == port and _this_machine(self.host)


def _this_machine(host: str) -> bool:
    """Whether ``host`` is ``localhost``, 127.0.0.1 in any spelling ``inet_aton`` takes
    (``127.1``), 0.0.0.0, which a connection takes for this machine, or a name that
    resolves to one of them."""
    if host.lower().rstrip(".") == "localhost":
        return True
    here = (ipaddress.IPv4Address("127.0.0.1"), ipaddress.IPv4Address("0.0.0.0"))
    try:
        return ipaddress.IPv4Address(socket.inet_aton(host)) in here
    except OSError:
        pass
    # Any other name is resolved (a caller asks only when the port is the proxy's own):
    # localhost.localdomain, or the machine's name, may name 127.0.0.1 too.
    try:
        found = socket.getaddrinfo(host, None, socket.AF_INET, socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return False
    return any(ipaddress.IPv4Address(info[4][0]) in here for info in found)


def _loopback(host: str) -> bool:
    """Whether ``host`` is ``localhost`` or a loopback address (127.0.0.0/8, ``::1``), in any
    spelling ``inet_aton`` takes."""
    host = host.lower().rstrip(".").strip("[]")
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:
        return ipaddress.IPv4Address(socket.inet_aton(host)).is_loopback
    except OSError:
        return False


def _environment_proxy(host: str) -> Proxy | None:
    """The proxy ``HTTPS_PROXY`` (else ``ALL_PROXY``) names for ``host``, either case, in
    whatever scheme (only ``http://`` is spoken); None when neither is set, when ``host`` is
    this machine (a company's proxy cannot reach a gateway on the user's loopback), or when
    ``NO_PROXY`` spares ``host``."""
    proxies = urllib.request.getproxies_environment()
    scheme = "https" if proxies.get("https") else "all"
    url = proxies.get(scheme)
    if not url or _loopback(host) or _spared(host, proxies.get("no", "")):
        return None
    try:
        parts = urlsplit(url if "://" in url else f"http://{url}")
        port = parts.port or 80
    except ValueError:
        parts = None
    if parts is None or not parts.hostname or not _resolvable(parts.hostname):
        # Never the URL itself: a refusal is printed, and a CI job's log keeps it.
        raise MemtapeError(
            f"${_variable(scheme)} is not a proxy URL (an http:// URL with a host and a "
            "port; its value is not shown, as it may hold a password)"
        )
    if parts.scheme != "http":
        return Proxy(parts.hostname, port, (), _variable(scheme), parts.scheme)
    headers: tuple[tuple[str, str], ...] = ()
    if parts.username is not None:
        pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
        headers = (("Proxy-Authorization", "Basic " + base64.b64encode(pair.encode()).decode()),)
    return Proxy(parts.hostname, port, headers, _variable(scheme))


def _variable(scheme: str) -> str:
    """The variable the environment's proxy for ``scheme`` came from: its lower-case
    name when that one is set (it wins, as ``urllib`` reads them), else the upper."""
    lower = f"{scheme}_proxy"
    return lower if os.environ.get(lower) else lower.upper()


def _spared(host: str, no_proxy: str) -> bool:
    """Whether ``NO_PROXY``'s list spares ``host``: ``*``, the host itself, or a domain it
    is in (``example.com`` and ``.example.com`` both spare ``api.example.com``); a port
    after a name is not compared."""
    host = host.lower().rstrip(".")
    for entry in no_proxy.split(","):
        name = entry.strip().lower()
        if name.startswith("[") and "]" in name:
            name = name[1 : name.index("]")]
        elif name.count(":") == 1:
            name = name.split(":")[0]
        name = name.lstrip(".").rstrip(".")
        if name == "*" or (name and (host == name or host.endswith("." + name))):
            return True
    return False
