"""``memtape show``: the projections at one point of a run."""

import argparse

from memtape.commandline.numbers import within
from memtape.commandline.opening import open_run
from memtape.commandline.output import emit, terminal_width
from memtape.projections.text import render_view
from memtape.projections.view import view_data


def run(args: argparse.Namespace) -> int:
    """Show the window, the store and the memory after event ``--at`` (default: the end)."""
    loaded = open_run(args.run, trust=args.trust)
    run = loaded.session.run
    at = len(run) if args.at is None else within(args.at, len(run), f"{args.run}: --at")
    view = view_data(run.state_at(at), at, loaded.session.policies_at(at))
    width = terminal_width()
    emit(args, view, lambda data, color: render_view(data, color, width))
    return 0
