"""``memtape view``: a self-contained HTML page to scrub through a run."""

import argparse
import re

from memtape.commandline.opening import open_run
from memtape.commandline.writing import not_an_input
from memtape.core.visible import visible
from memtape.lab.files import output_path, write_atomic
from memtape.viewer.page import view_page


def run(args: argparse.Namespace) -> int:
    """Write the page to ``--out`` (default: the scenario's name + .html)."""
    # --set changes the scenario RUN; --compare RUN2 stays as it is (the baseline).
    targets = [args.run] + ([args.compare] if args.compare else [])
    given = None if args.out is None else not_an_input(output_path(args.out), targets)
    opened = [args.run, *([args.compare] if args.compare else [])]
    runs = [
        open_run(target, args.set if n == 0 else (), trust=args.trust, args=args)
        for n, target in enumerate(opened)
    ]
    out = given or not_an_input(output_path(f"{_file_stem(runs[0].scenario)}.html"), targets)
    write_atomic(out, view_page(runs).encode("utf-8"))
    print(f"wrote {visible(str(out))}: open it in a browser")
    return 0


def _file_stem(name: str) -> str:
    """``name`` (a run header's scenario name) as a file name in the current directory:
    a header may say anything, so no separator or leading dot survives."""
    stem = re.sub(r"[^\w.-]+", "-", name).strip("-.")
    return stem or "run"
