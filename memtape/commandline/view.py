"""``memtape view``: a self-contained HTML page to scrub through a run."""

import argparse
import re
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from memtape.commandline.opening import open_run
from memtape.commandline.writing import not_an_input
from memtape.core.errors import BadInput
from memtape.core.events import TurnAdded
from memtape.core.visible import visible
from memtape.lab.choices import AUTO
from memtape.lab.files import output_path, write_atomic
from memtape.runs.files import LoadedRun
from memtape.scenarios.shipped import SHIPPED, is_scenario
from memtape.storage import SQLITE_SUFFIX, parse_address, resolve_address
from memtape.viewer.page import page_run, run_digest, scenario_probes, view_page

if TYPE_CHECKING:
    from memtape.projections.metrics import Planted
    from memtape.scenarios.probes import Probe

PAGE_HEAD = 4096
"""How much of an existing page is read for the run it names (its head holds the tag)."""


def run(args: argparse.Namespace) -> int:
    """Write the page to ``--out`` (default: the run file's name + .html), refusing to
    replace a page of another run unless ``--force`` says so."""
    # --set changes the scenario RUN; --compare RUN2 stays as it is (the baseline).
    targets = [args.run] + ([args.compare] if args.compare else [])
    settings: Sequence[str] = args.set or ()
    given = None if args.out is None else not_an_input(output_path(args.out), targets)
    out = given or not_an_input(output_path(page_name(targets)), targets)
    shown = runs_shown(targets, settings)
    # Refused before anything runs: simulating a long scenario should not end in a refusal.
    if not args.force:
        claim(out, shown)
    runs = [
        open_run(target, settings if n == 0 else (), trust=args.trust, args=args)
        for n, target in enumerate(targets)
    ]
    pairs = zip(targets, runs, strict=True)
    probes = [probes_for(target, loaded, args.probes) for target, loaded in pairs]
    write_atomic(out, view_page(runs, probes, shown).encode("utf-8"))
    print(f"wrote {visible(str(out))}: open it in a browser")
    return 0


def load_probes(target: str) -> "tuple[Probe, ...]":
    """The probes the scenario ``target`` (a shipped name or a ``.toml`` file) plants."""
    from memtape.scenarios.loader import load_scenario  # noqa: PLC0415 (a run file needs no loader)

    return load_scenario(target).probes


def probes_for(target: str, loaded: LoadedRun, spec: str | None) -> "Sequence[Planted]":
    """The probes the page follows on run ``target``: those ``--probes spec`` names, else the
    scenario's (a run file's: the shipped scenario's its header names, if it is one)."""
    if spec is not None:
        return chosen_probes(spec, loaded)
    return load_probes(target) if is_scenario(target) else scenario_probes(loaded.scenario)


def chosen_probes(spec: str, loaded: LoadedRun) -> "Sequence[Planted]":
    """The probes ``--probes spec`` names for ``loaded``: ``auto`` plants them by the
    import rule on its turns; a scenario (shipped, or a ``.toml`` with ``[[step]]`` tables)
    gives its own; any other ``.toml`` or ``.jsonl`` file is a probes file, checked against
    the run's turns."""
    from memtape.lab.probes import auto_probes, probes_from_file  # noqa: PLC0415

    events = loaded.session.run.events
    turns = [(event.role, event.text) for event in events if isinstance(event, TurnAdded)]
    if spec == AUTO:
        return auto_probes(turns)
    if spec in SHIPPED or (spec.endswith(".toml") and _has_steps(Path(spec))):
        return load_probes(spec)
    return probes_from_file(Path(spec), turns)


def _has_steps(path: Path) -> bool:
    """Whether the TOML file at ``path`` reads as a scenario (it has ``[[step]]`` tables);
    anything unreadable is left for the probes file's reader to refuse, in its words."""
    try:
        return "step" in tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return False


def page_name(targets: Sequence[str]) -> str:
    """The page's default name, in the current directory: each target's stem (``a.jsonl``
    → ``a``, ``runs.db#3`` → ``runs-3``, ``refund-desk`` → ``refund-desk``), joined by
    ``-vs-`` for a comparison, then ``.html``."""
    return "-vs-".join(_file_stem(_target_stem(target)) for target in targets) + ".html"


def _target_stem(target: str) -> str:
    if target in SHIPPED:
        return target
    path, run_id = _address(target)
    return path.stem if run_id is None else f"{path.stem}-{run_id}"


def _address(target: str) -> tuple[Path, int | None]:
    """The file and run id ``target`` names, a store's newest run resolved to its id."""
    path, run_id = parse_address(target)
    if path.suffix == SQLITE_SUFFIX and run_id is None and path.is_file():
        path, run_id = parse_address(resolve_address(target))
    return path, run_id


def runs_shown(targets: Sequence[str], settings: Sequence[str]) -> str:
    """What names the runs a page shows, so that a page can tell its own run from another:
    each target as an absolute path (a store's run with its id, the newest resolved) or a
    shipped scenario's name, the first with its settings."""
    named = []
    for n, target in enumerate(targets):
        if target in SHIPPED:
            name = f"scenario {target}"
        else:
            path, run_id = _address(target)
            name = str(path.resolve()) + ("" if run_id is None else f"#{run_id}")
        if n == 0 and settings:
            name += "".join(f" --set {setting}" for setting in settings)
        named.append(name)
    return " vs ".join(named)


def claim(out: Path, shown: str) -> None:
    """Refuse ``out`` if it holds anything but the page of the runs ``shown`` (a page of
    another run, or a file that is not a memtape page): ``--force`` replaces it. An empty
    file holds nothing to lose (``touch page.html`` first is fine)."""
    try:
        with out.open("rb") as existing:
            head = existing.read(PAGE_HEAD).decode("utf-8", errors="replace")
    except FileNotFoundError:
        return
    except OSError as error:
        raise BadInput(f"{out}: cannot read it: {error.strerror}") from None
    found = page_run(head)
    if head == "" or found == run_digest(shown):
        return
    what = "not a memtape page" if found is None else "the page of another run"
    raise BadInput(f"{out}: cannot write it: it is {what}; --force replaces it")


def _file_stem(name: str) -> str:
    """``name`` as a file name in the current directory: no separator or leading dot
    survives."""
    stem = re.sub(r"[^\w.-]+", "-", name).strip("-.")
    return stem or "run"
