"""``memtape why``: the life of a turn or a fact, with the numbers behind each step."""

import argparse

from memtape.commandline.opening import open_run
from memtape.commandline.output import emit
from memtape.core.errors import MemtapeError
from memtape.projections.audit import audit, life_data, parse_target, render_life


def run(args: argparse.Namespace) -> int:
    """Print the life of ``args.target`` in the run."""
    loaded = open_run(args.run, trust=args.trust)
    try:
        life = audit(loaded.session.run, loaded.session.policies_at, parse_target(args.target))
    except MemtapeError as error:
        raise MemtapeError(f"{args.run}: {error}") from None
    emit(args, life_data(life), lambda data, _: render_life(life))
    return 0
