"""``memtape llm-standin``: a stand-in for a model server, on loopback, until Ctrl-C."""

import argparse
import sys
from typing import Any

from memtape.core.plural import counted
from memtape.core.visible import visible
from memtape.llm.standin import make_server


def run(args: argparse.Namespace) -> int:
    """Serve the stand-in on 127.0.0.1 until interrupted; a line for each answer it gives."""

    def heard(reply: dict[str, Any]) -> None:
        usage = reply["usage"]
        print(
            f"answered {visible(reply['model'])}: {usage['prompt_tokens']} words in, "
            f"{usage['completion_tokens']} out",
            flush=True,
        )

    server = make_server(args.port, heard=heard)
    try:
        # Inside the try: a Ctrl-C right after the URL is printed still stops cleanly.
        print(
            "memtape llm-standin: a stand-in, not a model: it answers the first sentence of "
            "the last lines it is sent",
            flush=True,
        )
        print(f"export OPENAI_BASE_URL={server.url} OPENAI_API_KEY=standin", flush=True)
        print("(Ctrl-C stops)", flush=True)
        server.serve_forever()
    except KeyboardInterrupt:
        answers = counted(server.answered, "answer")
        print(f"memtape llm-standin: stopped after {answers}", file=sys.stderr)
    finally:
        server.server_close()
    return 0
