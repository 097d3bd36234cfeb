"""Servers the tests start in a thread and stop when done."""

import contextlib
import socketserver
import ssl
import sys
import threading
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from typing import Any, TypeVar

S = TypeVar("S", bound=socketserver.BaseServer)

POLL = 0.02
"""How often a serving thread looks for a shutdown, in seconds: ``serve_forever``'s half
a second would be waited at the end of every test that starts a server."""


def start(server: S) -> S:
    """``server`` answering in a daemon thread (stop it with :func:`stop`)."""
    threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": POLL}, daemon=True
    ).start()
    return server


def stop(server: socketserver.BaseServer) -> None:
    """Stop ``server`` answering and close its socket."""
    server.shutdown()
    server.server_close()


@contextlib.contextmanager
def serving(server: S) -> Iterator[S]:
    """``server`` answering in a thread while the block runs."""
    start(server)
    try:
        yield server
    finally:
        stop(server)


class KeepingServer(ThreadingHTTPServer):
    """A threading HTTP server that keeps what went wrong in a request (``errors``)
    rather than printing it on stderr, which the tests read. A client that went away
    (a closed or reset connection, as a client's pool does when it is collected, or a
    client that gave up waiting) is no error of the server's and is not kept."""

    daemon_threads = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.errors: list[BaseException] = []
        self._errors_lock = threading.Lock()

    def handle_error(self, request: Any, client_address: Any) -> None:
        error = sys.exc_info()[1]
        if error is None or isinstance(error, (ConnectionError, ssl.SSLError, TimeoutError)):
            return
        with self._errors_lock:
            self.errors.append(error)
