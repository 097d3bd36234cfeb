"""The commands that stand beside a model server: ``record`` (a proxy in front of the
real one) and ``llm-standin`` (a stand-in for one)."""

import argparse

from memtape.commandline.numbers import integer
from memtape.commandline.parsing.arguments import Command, handler

STANDIN_PORT = 8808
"""The stand-in's port unless ``--port`` says another: fixed, so a scenario may name it."""


def record(parser: argparse.ArgumentParser) -> None:
    """``record``'s parser: the capture proxy (memtape/capture)."""
    parser.description = (
        "Run CMD with OPENAI_BASE_URL and ANTHROPIC_BASE_URL pointing at a proxy on "
        "127.0.0.1 that forwards each request to the real provider, relays the response "
        "as it arrives (streams chunk by chunk), and appends each exchange to a capture "
        "file: the request, the reassembled response, timings, status and a thread key; "
        "never a credential or any header off its allow-list. Exits with CMD's status. "
        "With --serve-only, prints the two variables to export and serves until Ctrl-C."
    )
    parser.add_argument(
        "--out", required=True, metavar="CAPTURE.jsonl", help="the capture file (appended to)"
    )
    parser.add_argument(
        "--port", type=integer, default=0, help="the proxy's port (default: a free one)"
    )
    parser.add_argument(
        "--upstream-openai",
        metavar="URL",
        help="where OpenAI requests go (default: $OPENAI_BASE_URL, else https://api.openai.com/v1)",
    )
    parser.add_argument(
        "--upstream-anthropic",
        metavar="URL",
        help=(
            "where Anthropic requests go (default: $ANTHROPIC_BASE_URL, else "
            "https://api.anthropic.com)"
        ),
    )
    parser.add_argument(
        "--serve-only", action="store_true", help="run no command: serve until Ctrl-C"
    )
    parser.add_argument(
        "command",
        nargs=argparse.REMAINDER,
        metavar="-- CMD [ARGS...]",
        help="the agent to run, after --",
    )
    parser.set_defaults(handler=handler("capture"))


def standin(parser: argparse.ArgumentParser) -> None:
    """``llm-standin``'s parser: a stand-in for a model server (memtape/llm/standin.py)."""
    parser.description = (
        "Serve a stand-in for an OpenAI-compatible model server on 127.0.0.1, until "
        "Ctrl-C: it answers POST /v1/chat/completions with the first sentence of each of "
        "the last three lines of the user and tool messages it is sent, and GET /v1/models. "
        "It is not a model: it shows the whole path (a request, the answer recorded into "
        "the run, a replay that asks nothing) before you point memtape at a real server. "
        "Export the OPENAI_BASE_URL it prints."
    )
    parser.add_argument(
        "--port",
        type=integer,
        default=STANDIN_PORT,
        help=f"the port (default: {STANDIN_PORT}; 0 for a free one)",
    )
    parser.set_defaults(handler=handler("llm_standin"))


COMMANDS = {
    "record": Command("run an agent behind a local proxy that records its model requests", record),
    "llm-standin": Command(
        "a stand-in for a model server on 127.0.0.1, to try an [llm] table offline", standin
    ),
}
"""This family's commands, in the order ``memtape --help`` lists them."""
