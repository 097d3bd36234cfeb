"""Live capture: a local reverse proxy (``memtape record``) and SDK client wrappers
(``wrap``) that write what an agent sent its provider and what it got back, one
exchange a line, to a capture file (docs/reference/capture-format.md).

The proxy is a pipe and recording is a side effect: every byte is relayed as it
arrives; the capture is assembled beside it and written once the exchange ends.
"""

from pathlib import Path
from typing import TypeVar

Client = TypeVar("Client")


def wrap(client: Client, *, out: str | Path) -> Client:
    """Make an ``openai`` or ``anthropic`` client (sync or async) append each exchange
    it has to the capture file ``out``, streams included; returns the same client.

    ``memtape.capture.wrapping.wrap`` does it; importing this package imports no SDK.
    """
    from memtape.capture.wrapping import wrap as wrapping  # noqa: PLC0415 (httpx2 on use)

    return wrapping(client, out=out)
