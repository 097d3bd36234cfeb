"""``memtape record``: run an agent behind the recording proxy, or serve the proxy alone
(``--serve-only``), writing each exchange to a capture file."""

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from memtape.capture.exchanges import Exchange
from memtape.capture.proxy import CaptureProxy, ProxyThread
from memtape.capture.upstream import Upstream
from memtape.capture.writer import CaptureWriter
from memtape.core.errors import MemtapeError
from memtape.core.plural import counted
from memtape.core.visible import visible

OPENAI_DEFAULT = "https://api.openai.com/v1"
"""The OpenAI upstream when neither ``--upstream-openai`` nor ``OPENAI_BASE_URL`` says."""
ANTHROPIC_DEFAULT = "https://api.anthropic.com"
"""The Anthropic upstream when neither ``--upstream-anthropic`` nor ``ANTHROPIC_BASE_URL``
says."""

EXIT_NOT_FOUND = 127
"""A command that does not exist, as a shell reports it."""
EXIT_NOT_EXECUTABLE = 126
"""A command that exists but cannot be run, as a shell reports it."""


def run(args: argparse.Namespace) -> int:
    """Record an agent's exchanges (or serve until Ctrl-C); the agent's exit status."""
    command = list(args.command)
    if command[:1] == ["--"]:
        command = command[1:]
    if args.serve_only and command:
        raise MemtapeError("record --serve-only runs no command: drop the command or the option")
    if not args.serve_only and not command:
        raise MemtapeError("record needs a command to run after --, or --serve-only")
    openai = Upstream(args.upstream_openai or os.environ.get("OPENAI_BASE_URL") or OPENAI_DEFAULT)
    anthropic = Upstream(
        args.upstream_anthropic or os.environ.get("ANTHROPIC_BASE_URL") or ANTHROPIC_DEFAULT
    )
    out = Path(args.out)
    if not out.parent.is_dir():
        raise MemtapeError(f"{visible(str(out))}: no such directory {visible(str(out.parent))}")
    if out.is_dir():
        raise MemtapeError(f"{visible(str(out))}: a directory, not a capture file")

    capture: CaptureWriter | None = None

    def record(exchange: Exchange) -> None:
        assert capture is not None, "no request arrives before the capture is open"
        capture.record(exchange)

    proxy = ProxyThread(lambda: CaptureProxy(record, openai=openai, anthropic=anthropic))
    try:
        port = proxy.start(args.port)
    except OSError as error:
        raise MemtapeError(f"port {args.port}: {error.strerror or error}") from None
    try:
        capture = CaptureWriter(out)
    except OSError as error:
        proxy.stop()
        raise MemtapeError(f"{visible(str(out))}: {error.strerror or error}") from None
    urls = {
        "OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1",
        "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}",
    }
    try:
        if args.serve_only:
            return _serve(urls)
        return _run_agent(command, urls)
    finally:
        proxy.stop()
        capture.close()
        print(
            f"memtape record: {counted(capture.written, 'exchange')} written to "
            f"{visible(str(out))}",
            file=sys.stderr,
        )


def _serve(urls: dict[str, str]) -> int:
    try:
        for name, url in urls.items():
            print(f"export {name}={url}", flush=True)
        print("(Ctrl-C stops)", file=sys.stderr, flush=True)
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        return 0


def _run_agent(command: list[str], urls: dict[str, str]) -> int:
    try:
        child = subprocess.Popen(command, env={**os.environ, **urls})
    except FileNotFoundError:
        print(f"memtape: error: {visible(command[0])}: command not found", file=sys.stderr)
        return EXIT_NOT_FOUND
    except OSError as error:
        reason = error.strerror or str(error)
        print(f"memtape: error: {visible(command[0])}: {reason}", file=sys.stderr)
        return EXIT_NOT_EXECUTABLE
    while True:
        try:
            status = child.wait()
            break
        except KeyboardInterrupt:
            # Ctrl-C reached the agent too (one process group): its exit is ours.
            continue
    # A signal that ended the agent, as a shell reports it (SIGTERM: 143).
    return status if status >= 0 else 128 - status
