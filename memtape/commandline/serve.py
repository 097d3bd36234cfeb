"""``memtape serve``: the viewer, live, on loopback."""

import argparse

from memtape.runs.files import trusted
from memtape.viewer.serve import live_source, serve


def run(args: argparse.Namespace) -> int:
    """Serve the target until interrupted."""
    return serve(live_source(args.target, args.set, trust=trusted(args.trust)), args.port)
