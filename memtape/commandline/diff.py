"""``memtape diff``: what changed between two points of a run, or two runs at one step."""

import argparse

from memtape.commandline.numbers import is_integer, within
from memtape.commandline.opening import open_run
from memtape.commandline.output import emit
from memtape.core.errors import MemtapeError
from memtape.core.integers import bounded
from memtape.projections.diffs import diff_data, render_diff, step_diff, step_diff_data
from memtape.runs.files import LoadedRun


def run(args: argparse.Namespace) -> int:
    """Compare ``RUN A B``, or ``RUN1 RUN2 --step N``."""
    targets: list[str] = args.targets
    if args.step is not None:
        if len(targets) != 2:
            raise MemtapeError("diff --step compares two runs: memtape diff RUN1 RUN2 --step N")
        first, second = (open_run(target, trust=args.trust) for target in targets)
        compared = step_diff(first.session.run, second.session.run, args.step)
        budgets = (_budget(first, compared.before), _budget(second, compared.after))
        data = step_diff_data(compared, budgets)
    else:
        if len(targets) == 2 and not is_integer(targets[1]):
            raise MemtapeError(
                "diff of two runs needs --step N (after which command to compare them): "
                "memtape diff RUN1 RUN2 --step N"
            )
        if len(targets) != 3:
            raise MemtapeError("diff compares two points of a run: memtape diff RUN A B")
        loaded = open_run(targets[0], trust=args.trust)
        run = loaded.session.run
        before, after = (_position(text, len(run), targets[0]) for text in targets[1:])
        budgets = (_budget(loaded, before), _budget(loaded, after))
        data = diff_data(run.diff(before, after), before=before, after=after, budgets=budgets)
    emit(args, data, render_diff)
    return 0


def _budget(loaded: LoadedRun, position: int) -> int | None:
    compaction = loaded.session.policies_at(position).compaction
    return None if compaction is None else compaction.budget


def _position(text: str, length: int, name: str) -> int:
    if not is_integer(text):
        raise MemtapeError(
            f"{name}: a point of a run is an event number in ASCII digits, got {text!r}"
        )
    return within(bounded(text, f"{name}: the event number"), length, f"{name}: event")
