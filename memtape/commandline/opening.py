"""What the commands that read a run share: opening a run, or a scenario run in memory."""

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memtape.commandline.output import complain
from memtape.core.errors import BadInput, Rejected
from memtape.core.paths import regular_file
from memtape.core.visible import visible
from memtape.policies.session import Session
from memtape.runs.files import LoadedRun, load_run, trusted
from memtape.runs.signed import check_reading, signature_required
from memtape.scenarios.shipped import SHIPPED, is_scenario
from memtape.storage import SQLITE_SUFFIX, parse_address

if TYPE_CHECKING:
    from memtape.scenarios.loader import Scenario


def simulate(scenario: "Scenario", args: argparse.Namespace | None = None) -> Session:
    """A session that has executed every step of ``scenario``; a rejected step is named.
    Progress goes to stderr for ``args``' command (as its ``-v`` and ``-q`` ask)."""
    from memtape.lab.progress import EVERY  # noqa: PLC0415 (rich: only when a scenario runs)

    session = Session(scenario.policies)
    steps = scenario.steps
    with _progress(args, scenario.name, len(steps)) as progress:
        for number, command in enumerate(steps, start=1):
            try:
                session.execute(command)
            except Rejected as error:
                raise Rejected(f"{scenario.source}: step {number}: {error}") from None
            if number % EVERY == 0 and number < len(steps):
                progress.update(number)
        progress.update(len(steps))
    return session


def _progress(args: argparse.Namespace | None, what: str, total: int) -> Any:
    """The progress of ``total`` commands on stderr, as ``-v`` and ``-q`` ask."""
    from memtape.lab.progress import Progress, progress_mode  # noqa: PLC0415

    verbose = args is not None and bool(getattr(args, "verbose", False))
    quiet = args is None or bool(getattr(args, "quiet", False))
    mode = progress_mode(sys.stderr, verbose=verbose, quiet=quiet)
    return Progress(what, total, mode=mode, err=sys.stderr)


def open_run(
    target: str,
    settings: Sequence[str] = (),
    *,
    trust: bool = False,
    args: argparse.Namespace | None = None,
) -> LoadedRun:
    """A run file, or a scenario (shipped name or .toml file) run in memory (with
    progress, for ``args``' command), its policies changed by ``settings``
    (``AXIS.PARAM=VALUE``).

    A run file's policies named by import path are imported only when the
    user trusts it (``--trust``, ``MEMTAPE_TRUST=1``); a scenario is the user's
    own configuration, and its import paths are imported as ``run`` does.

    A run file loads only the steps its chain head covers; what was left out
    is a warning on stderr, and so is a chain or signature that does not hold
    under ``MEMTAPE_SIGNING_KEY``. With ``MEMTAPE_REQUIRE_SIGNED=1`` a run not
    signed under the key is refused (``memtape.runs.signed``).
    """
    if is_scenario(target):
        # A run file needs no loader.
        from memtape.scenarios.loader import load_scenario, with_settings  # noqa: PLC0415

        scenario = with_settings(load_scenario(target), settings)
        cost = scenario.cost.table() or None
        return LoadedRun(simulate(scenario, args), scenario.name, Path(target), cost=cost)
    if settings:
        raise BadInput(
            f"{target}: --set changes a scenario's policies; fork a recorded run instead"
        )
    path = parse_address(target)[0]
    if path.suffix not in {".jsonl", SQLITE_SUFFIX}:
        from memtape.scenarios.loader import shipped_hint  # noqa: PLC0415 (a missing file only)

        shipped = ", ".join(SHIPPED)
        hint = shipped_hint(target)
        missing = (
            f"no such run file, and not a scenario (shipped: {shipped}, or a .toml file){hint}"
        )
        regular_file(path, "run file", missing=missing)
    loaded = load_run(target, trust=trusted(trust))
    unvouched = check_reading(target, len(loaded.session.run), require=signature_required())
    for said in (*loaded.dropped, *([unvouched] if unvouched else [])):
        warning = visible(f"{target}: {said}", "message")
        complain("warning", warning)
    return loaded
