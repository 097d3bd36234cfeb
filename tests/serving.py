"""Servers the tests start in a thread and stop when done."""

import contextlib
import socketserver
import threading
from collections.abc import Iterator
from typing import TypeVar

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
