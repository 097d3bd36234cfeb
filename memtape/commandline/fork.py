"""``memtape fork``: re-decide a run from a point under changed policy parameters."""

import argparse

from memtape.commandline.numbers import within
from memtape.commandline.opening import open_run
from memtape.commandline.writing import not_an_input, run_output
from memtape.core.errors import MemtapeError
from memtape.core.visible import visible
from memtape.llm.client import NotChosen
from memtape.runs.files import save_run
from memtape.runs.signed import check_copying
from memtape.scenarios import is_scenario
from memtape.storage import is_sqlite, resolve_address


def run(args: argparse.Namespace) -> int:
    """Keep the first ``--at`` events and re-decide the rest with ``--set``."""
    out = run_output(args.out)
    if not is_sqlite(out):
        # A store takes the fork beside its source; a run file would lose the source.
        not_an_input(out, [args.run])
    source = args.run if is_scenario(args.run) else resolve_address(args.run)
    loaded = open_run(source, trust=args.trust)
    run = loaded.session.run
    within(args.at, len(run), f"{args.run}: --at")
    if loaded.redacted:
        raise MemtapeError(f"{args.run}: a redacted run cannot be re-decided, so not forked")
    loaded.require_code("fork")
    if not is_scenario(args.run):
        check_copying(source, args.at)  # the fork is signed when the key is set
    try:
        forked = loaded.session.fork(args.at, args.set)
    except NotChosen:
        raise  # it names the run already
    except MemtapeError as error:
        raise MemtapeError(f"{args.run}: {error}") from None
    origin = {"run": source, "at": args.at, "set": args.set}
    address = save_run(forked, out, loaded.scenario, origin=origin, cost=loaded.cost)
    kept = sum(1 for step in range(1, run.steps + 1) if run.batch(step)[1] <= args.at)
    changes = ", ".join(args.set) or "no changes"
    print(
        visible(
            f"forked {args.run} after event {args.at}: kept {kept} of {run.steps} steps, "
            f"re-decided the rest with {changes}; {len(forked.run)} events to {address}",
            "message",
        )
    )
    return 0
