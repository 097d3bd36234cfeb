"""``memtape record``: run an agent behind the recording proxy, or serve the proxy alone
(``--serve-only``), writing each exchange to a capture file."""

import argparse
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

from memtape.capture.exchanges import Exchange
from memtape.capture.proxy import CaptureProxy, ProxyThread
from memtape.capture.upstream import Upstream
from memtape.capture.writer import CaptureWriter
from memtape.core.errors import MemtapeError
from memtape.core.paths import check_writable
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
    command = _command(args)
    if not 0 <= args.port <= 65535:
        raise MemtapeError(f"--port {args.port} is not a port (0..65535)")
    openai, openai_from = _upstream(
        args.upstream_openai, "--upstream-openai", "OPENAI_BASE_URL", OPENAI_DEFAULT
    )
    anthropic, anthropic_from = _upstream(
        args.upstream_anthropic, "--upstream-anthropic", "ANTHROPIC_BASE_URL", ANTHROPIC_DEFAULT
    )
    out = Path(args.out)
    check_writable(out)

    capture: CaptureWriter | None = None

    def record(exchange: Exchange) -> None:
        assert capture is not None, "no request arrives before the capture is open"
        capture.record(exchange)

    proxy = ProxyThread(lambda: CaptureProxy(record, openai=openai, anthropic=anthropic))
    try:
        port = proxy.start(args.port)
    except OSError as error:
        raise MemtapeError(f"port {args.port}: {error.strerror or error}") from None
    size_before = out.stat().st_size if out.exists() else None
    try:
        _refuse_itself(port, [(openai_from, openai), (anthropic_from, anthropic)])
        capture = CaptureWriter(out)
    except MemtapeError:
        proxy.stop()
        raise
    except OSError as error:
        proxy.stop()
        raise MemtapeError(f"{visible(str(out))}: {error.strerror or error}") from None
    urls = {
        "OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1",
        "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}",
    }
    try:
        if args.serve_only:
            _say_unspoken([openai, anthropic])
            status = _serve(urls)
        else:
            child = _start(command, urls)
            if isinstance(child, int):
                # Nothing ran, so nothing is recorded: the file is as it was.
                proxy.stop()
                capture.close()
                _restore(out, size_before)
                return child
            _say_unspoken([openai, anthropic])  # once nothing is refused: a refusal is one line
            status = _wait(child)
    finally:
        proxy.stop()
        capture.close()
    print(
        f"memtape record: {counted(capture.written, 'exchange')} written to {visible(str(out))}",
        file=sys.stderr,
    )
    return status


def _command(args: argparse.Namespace) -> list[str]:
    """The agent's command (after ``--``), which ``--serve-only`` goes without."""
    command = list(args.command)
    if command[:1] == ["--"]:
        command = command[1:]
    if args.serve_only and command:
        raise MemtapeError("record --serve-only runs no command: drop the command or the option")
    if not args.serve_only and not command:
        raise MemtapeError("record needs a command to run after --, or --serve-only")
    return command


def _upstream(given: str | None, option: str, variable: str, default: str) -> tuple[Upstream, str]:
    """The upstream the option names, else the environment's variable, else ``default``;
    and where it came from (the option, ``$VARIABLE``, or the default), which a refusal
    of it names."""
    if given:
        url, named = given, option
    elif os.environ.get(variable):
        url, named = os.environ[variable], f"${variable}"
    else:
        url, named = default, "the default upstream"
    try:
        return Upstream(url), named
    except MemtapeError as error:
        raise MemtapeError(f"{named}: {error}") from None


def _refuse_itself(port: int, upstreams: list[tuple[str, Upstream]]) -> None:
    """Refuse an upstream, or the HTTP proxy tunnelling to it, that is the proxy's own
    address (a shell that exported an earlier ``--serve-only``'s variables, recording on
    its port again): each request would be sent back to the proxy, again and again."""
    for named, upstream in upstreams:
        if upstream.reaches_loopback(port):
            raise MemtapeError(
                f"{named} ({visible(upstream.shown)}) is this proxy's own address, "
                f"127.0.0.1:{port}: each request would come back to it"
            )
        if upstream.proxy is not None and upstream.proxy.reaches_loopback(port):
            # Its URL is not shown: it may hold the proxy's password.
            raise MemtapeError(
                f"{named}'s proxy, ${upstream.proxy.variable}, is this proxy's own address, "
                f"127.0.0.1:{port}: each request would come back to it"
            )


def _say_unspoken(upstreams: list[Upstream]) -> None:
    """Say, once a variable, that the proxy it names is not spoken (SOCKS, or TLS to the
    proxy) and which upstreams are reached directly instead: the SDKs would have gone
    through it, or failed."""
    passed_over: dict[tuple[str, str], list[str]] = {}
    for upstream in upstreams:
        if upstream.unspoken is not None:
            named = (upstream.unspoken.variable, upstream.unspoken.scheme)
            passed_over.setdefault(named, []).append(visible(upstream.shown))
    for (variable, scheme), urls in passed_over.items():
        print(
            f"memtape record: warning: ${variable} names a {visible(scheme)}:// proxy, which "
            f"record does not speak: it reaches {' and '.join(urls)} directly",
            file=sys.stderr,
        )


PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy")
"""The variables (in either case) that send an SDK's requests through an HTTP proxy."""


def _serve(urls: dict[str, str]) -> int:
    exports = dict(urls)
    if any(os.environ.get(name) or os.environ.get(name.upper()) for name in PROXY_VARIABLES):
        # The shell the exports go to sends requests through its proxy, 127.0.0.1's too;
        # both cases, as the SDKs read no_proxy before NO_PROXY.
        exports.update(_sparing_loopback())
    try:
        for name, value in exports.items():
            print(f"export {name}={shlex.quote(value)}", flush=True)
        print("(Ctrl-C stops)", file=sys.stderr, flush=True)
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        return 0


def _start(command: list[str], urls: dict[str, str]) -> "subprocess.Popen[bytes] | int":
    """The agent's process, or the status a shell gives a command it cannot start (and
    its one line said)."""
    try:
        return subprocess.Popen(command, env={**os.environ, **urls, **_sparing_loopback()})
    except FileNotFoundError:
        print(f"memtape: error: {visible(command[0])}: command not found", file=sys.stderr)
        return EXIT_NOT_FOUND
    except OSError as error:
        reason = error.strerror or str(error)
        print(f"memtape: error: {visible(command[0])}: {reason}", file=sys.stderr)
        return EXIT_NOT_EXECUTABLE


LOOPBACK = ("127.0.0.1", "localhost")
"""The hosts an agent must reach directly, never through an HTTP proxy: the recorder's."""


def _sparing_loopback() -> dict[str, str]:
    """``NO_PROXY`` and ``no_proxy`` for the agent: the hosts either named (the lower-case
    one first, as the SDKs read them), then ``LOOPBACK``. An SDK sends a request for
    127.0.0.1 through ``HTTP_PROXY`` or ``ALL_PROXY`` unless ``NO_PROXY`` spares it."""
    hosts: list[str] = []
    for name in ("no_proxy", "NO_PROXY"):
        for host in os.environ.get(name, "").split(","):
            if host.strip() and host.strip() not in hosts:
                hosts.append(host.strip())
    hosts += [host for host in LOOPBACK if host not in hosts]
    spared = ",".join(hosts)
    return {"NO_PROXY": spared, "no_proxy": spared}


FORWARDED = (signal.SIGTERM, signal.SIGHUP)
"""Signals ``record`` passes on to the agent, whose exit then ends the recording (Ctrl-C
reaches it directly: they share the terminal's process group)."""


def _wait(child: "subprocess.Popen[bytes]") -> int:
    previous = {number: signal.getsignal(number) for number in FORWARDED}
    for number in FORWARDED:
        signal.signal(number, lambda received, _frame: child.send_signal(received))
    try:
        while True:
            try:
                status = child.wait()
                break
            except KeyboardInterrupt:
                # Ctrl-C reached the agent too: its exit is ours.
                continue
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
    # A signal that ended the agent, as a shell reports it (SIGTERM: 143).
    return status if status >= 0 else 128 - status


def _restore(out: Path, size: int | None) -> None:
    """The capture file as it was before this recording: gone if it was not there."""
    if size is None:
        out.unlink(missing_ok=True)
    else:
        with out.open("r+b") as file:
            file.truncate(size)
