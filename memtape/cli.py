"""The ``memtape`` command: demo, run, show, timeline.

Every error the user can cause is one line on stderr and exit status 2:
no traceback, and nothing written.
"""

import argparse
import json
import logging
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any, NoReturn

import attrs
import structlog

from memtape._version import __version__
from memtape.checking import check_file
from memtape.core.errors import BadInput, MemtapeError, Rejected, one_line
from memtape.core.logs import LOGGER_NAME
from memtape.core.paths import regular_file, same_file
from memtape.demo import demo_lines
from memtape.lab.files import output_path, write_atomic
from memtape.lab.generate import store_workload, support_session
from memtape.lab.importers import FORMATS, import_transcript
from memtape.lab.importers.scenario import PINS
from memtape.lab.probes import AUTO
from memtape.lab.report import bench
from memtape.lab.scenario_file import DEFAULT_BUDGET, DEFAULT_HOT_N
from memtape.llm.cache import CACHE_ENV, DEFAULT_CACHE, caching
from memtape.policies.session import Session
from memtape.projections.audit import audit, life_data, parse_target, render_life
from memtape.projections.diffs import diff_data, render_diff, step_diff, step_diff_data
from memtape.projections.text import render_timeline, render_view
from memtape.projections.timeline import timeline
from memtape.projections.view import view_data
from memtape.redact import export_redacted
from memtape.runfiles import LoadedRun, load_run, save_run, trusted
from memtape.scenarios import SHIPPED, Scenario, is_scenario, load_scenario
from memtape.storage import (
    SQLITE_SUFFIX,
    is_sqlite,
    open_store,
    parse_address,
    resolve_address,
)
from memtape.viewer.page import view_page
from memtape.viewer.serve import live_source, serve

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
"""The status after Ctrl-C, as a shell reports a command that SIGINT stopped."""
RUN_HELP = "a run file (.jsonl), runs.db[#ID], or a scenario (a shipped name or a .toml file)"
"""The help of a RUN argument that a scenario, run in memory, may stand for."""
RUN_FILE_HELP = "a run file (.jsonl) or runs.db[#ID]"
"""The help of a RUN argument that must be a recorded run."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    _configure_logging(args.verbose)
    try:
        with caching(None) if args.no_cache else nullcontext():
            status: int = args.handler(args)
    except MemtapeError as error:
        print(f"memtape: error: {one_line(str(error))}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        # The reader (``| head``) left: not an error of ours.
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        # Ctrl-C (a long run waiting on a model): every write is atomic, so whatever was
        # being written is left as it was; one line, the shell's status for SIGINT.
        print("memtape: interrupted: nothing more was written", file=sys.stderr)
        return EXIT_INTERRUPTED
    return status


def _is_integer(text: str) -> bool:
    """Whether ``text`` is a whole number in ASCII digits, perhaps after a minus sign.

    ``int()`` alone also takes any script's decimal digits (``٣`` is 3), spaces
    around them and underscores between them: a number typed by mistake, or
    one that slips past a check reading its digits another way.
    """
    digits = text.removeprefix("-")
    return digits.isascii() and digits.isdigit()


def _integer(text: str) -> int:
    """The argparse type of every whole-number option: ASCII digits only.

    A minus sign is kept, for each command's range check to refuse with its
    own message.
    """
    if not _is_integer(text):
        raise argparse.ArgumentTypeError(f"expected a whole number in ASCII digits, got {text!r}")
    try:
        return int(text)
    except ValueError:  # past the interpreter's limit on the digits of an integer
        limit = sys.get_int_max_str_digits()
        raise argparse.ArgumentTypeError(
            f"expected a whole number of at most {limit} digits, got {len(text)} characters"
        ) from None


class _Parser(argparse.ArgumentParser):
    """argparse with its errors in memtape's one-line form."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"memtape: error: {message} (see {self.prog} --help)\n")


def _parser() -> argparse.ArgumentParser:  # noqa: PLR0915 (a list of registrations, one per command)
    parser = _Parser(
        prog="memtape",
        description="Simulate the memory policies of LLM agents as an event-sourced system.",
    )
    parser.add_argument("--version", action="version", version=f"memtape {__version__}")
    _add_global_options(parser, defaults=True)
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)

    demo = commands.add_parser("demo", help="walk through the three seed mechanisms")
    demo.set_defaults(handler=_demo)

    shipped = ", ".join(SHIPPED)
    run = commands.add_parser(
        "run",
        help="run a scenario and record its events",
        description=f"Run a scenario (shipped: {shipped}, or a TOML file) and record the run.",
    )
    run.add_argument("scenario", metavar="SCENARIO|FILE", help="a shipped scenario or a .toml file")
    run.add_argument(
        "--out",
        required=True,
        metavar="RUN.jsonl|RUNS.db",
        help="a JSONL file (replaced), or a .db store the run is added to",
    )
    _add_settings(run)
    _add_quiet(run)
    run.set_defaults(handler=_run)

    show = commands.add_parser(
        "show",
        help="the window, the store and the memory at one point of a run",
        description="Show the projections at event N of a run (a run file, or a scenario).",
    )
    show.add_argument("run", metavar="RUN", help=RUN_HELP)
    show.add_argument(
        "--at", type=_integer, metavar="N", help="after the N-th event (default: the end)"
    )
    show.add_argument("--json", action="store_true", help="print JSON (exact numbers)")
    _add_trust(show)
    show.set_defaults(handler=_show)

    diff = commands.add_parser(
        "diff",
        help="what changed between two points of a run, or two runs at one step",
        description=(
            "memtape diff RUN A B: what changed from event A to event B of a run. "
            "memtape diff RUN1 RUN2 --step N: the states after the N-th command of two runs "
            "of the same inputs (steps count commands, so two policies line up)."
        ),
    )
    diff.add_argument(
        "targets",
        nargs="+",
        metavar="TARGET",
        help="RUN A B (a run and two event numbers), or RUN1 RUN2 with --step N",
    )
    diff.add_argument("--step", type=_integer, metavar="N", help="compare two runs after command N")
    diff.add_argument("--json", action="store_true", help="print JSON (exact numbers)")
    _add_trust(diff)
    diff.set_defaults(handler=_diff)

    runs = commands.add_parser(
        "runs",
        help="list the runs in a store (runs.db)",
        description="List the runs a store holds: id, scenario, events, policies, creation time.",
    )
    runs.add_argument("store", type=Path, metavar="STORE", help="a run store (a .db file)")
    runs.add_argument("--json", action="store_true", help="print JSON")
    runs.set_defaults(handler=_runs)

    check = commands.add_parser(
        "check",
        help="verify a run file: integrity, invariants, and a re-decision",
        description=(
            "Re-fold a run file, verify the kernel's invariants and the log's integrity (its "
            "hash chain, and its signature when MEMTAPE_SIGNING_KEY is set), and decide every "
            "recorded command again, reporting the first event that differs. "
            "Exit 0 when clean, 1 when anything is wrong in a log it could open, 2 when the "
            "file cannot be opened or read as a run."
        ),
    )
    check.add_argument("run", metavar="RUN", type=Path, help=RUN_FILE_HELP)
    check.add_argument(
        "--live",
        action="store_true",
        help=(
            "also ask the model again each question the run recorded (no cache), and report "
            "each answer that differs (by default the recorded answers are used: nothing is asked)"
        ),
    )
    _add_trust(check)
    check.set_defaults(handler=_check)

    export = commands.add_parser(
        "export",
        help="a copy of a run with every free text replaced, for a bug report",
        description=(
            "Write a copy of a run in which every free text (turns, facts, keys, episodes, "
            "distilled facts and rules, header texts) is a stable placeholder of the same token "
            "count: every figure stays the same, none of the user's data does."
        ),
    )
    export.add_argument("run", metavar="RUN", type=Path, help=RUN_FILE_HELP)
    export.add_argument("--redact", action="store_true", required=True, help="replace free texts")
    export.add_argument(
        "--out", required=True, metavar="COPY.jsonl", help="the JSONL file to write"
    )
    export.set_defaults(handler=_export)

    fork = commands.add_parser(
        "fork",
        help="re-decide a run from a point under changed policy parameters",
        description=(
            "Keep the first N events of a run (N must fall between commands) and re-decide "
            "the remaining commands with the given settings: a counterfactual."
        ),
    )
    fork.add_argument("run", metavar="RUN", help=RUN_HELP)
    fork.add_argument(
        "--at", type=_integer, required=True, metavar="N", help="keep the first N events"
    )
    _add_settings(fork)
    fork.add_argument(
        "--out",
        required=True,
        metavar="RUN2.jsonl",
        help="a JSONL file (replaced), or a .db store the fork is added to",
    )
    _add_trust(fork)
    fork.set_defaults(handler=_fork)

    why = commands.add_parser(
        "why",
        help="the life of a turn or a fact, with the numbers behind each step",
        description=(
            "The life of a turn (turn:5) or a fact (its key, or its id) in a run, event by "
            "event, with the numbers that decided each step recomputed from the states there."
        ),
    )
    why.add_argument("run", metavar="RUN", help=RUN_HELP)
    why.add_argument(
        "target", metavar="turn:N|KEY|ID", help="a turn (turn:5), or a fact by its key or id"
    )
    why.add_argument("--json", action="store_true", help="print JSON (exact numbers)")
    _add_trust(why)
    why.set_defaults(handler=_why)

    line = commands.add_parser(
        "timeline",
        help="one row per event",
        description="One row per event of a run (a run file, or a scenario).",
    )
    line.add_argument("run", metavar="RUN", help=RUN_HELP)
    line.add_argument("--json", action="store_true", help="print JSON (exact numbers)")
    _add_trust(line)
    line.set_defaults(handler=_timeline)

    _add_viewer(commands)

    _add_lab(commands)
    for command in _subcommands(parser):
        _add_global_options(command, defaults=False, color=command.prog in COLOURED)
    return parser


COLOURED = frozenset({"memtape demo", "memtape show", "memtape timeline"})
"""The commands whose output has colour: the only ones that take ``--color`` after them."""


def _add_global_options(
    parser: argparse.ArgumentParser, *, defaults: bool, color: bool = True
) -> None:
    """``-v`` and ``--color`` (where there is colour), before the command (``defaults``)
    or after it.

    After it they have no default of their own, so an option given before the
    command is not overwritten by a subcommand that did not see it.
    """
    unset: dict[str, Any] = {} if defaults else {"default": argparse.SUPPRESS}
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="log each decision to stderr", **unset
    )
    if color:
        parser.add_argument(
            "--color",
            choices=("auto", "always", "never"),
            help="colour the meter (default: auto, when writing to a terminal)",
            **({"default": "auto"} if defaults else unset),
        )
    parser.add_argument(
        "--no-cache",
        action="store_true",
        help=(
            f"ask the model every time: no response cache (default: ${CACHE_ENV}, "
            f"else {DEFAULT_CACHE})"
        ),
        **unset,
    )


def _subcommands(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    """Every subcommand of ``parser``, nested ones (``generate support``) included."""
    # argparse has no public way to list the parsers its subcommands made.
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command in action.choices.values():
                yield command
                yield from _subcommands(command)


def _add_lab(commands: Any) -> None:
    """The policy lab's commands, added to ``commands``."""
    bench = commands.add_parser(
        "bench",
        help="compare policies on the same scenarios: a table, JSON and plots",
        description=(
            "Run every --policy (compaction or forgetting, NAME or NAME:k=v,k=v) on every "
            "scenario and compare the runs' metrics."
        ),
    )
    bench.add_argument(
        "scenarios", nargs="+", metavar="SCENARIO|FILE", help="a shipped scenario or a .toml file"
    )
    bench.add_argument(
        "--policy",
        action="append",
        default=[],
        required=True,
        metavar="NAME[:k=v,...]",
        help="a policy to compare, e.g. rolling-summary:keep=4 (repeatable)",
    )
    _add_settings(bench)
    bench.add_argument(
        "--grid",
        action="append",
        default=[],
        metavar="AXIS.PARAM=V1,V2,...",
        help="run every value (repeatable: every combination), on all cores",
    )
    bench.add_argument("--json", metavar="OUT.json", help="write the results as JSON")
    bench.add_argument("--plot", metavar="OUT.png", help="plot to OUT.png and OUT.svg")
    bench.add_argument(
        "--jobs",
        type=_integer,
        metavar="N",
        help="processes of --engine process (default: every core)",
    )
    bench.add_argument(
        "--engine",
        choices=("process", "ray"),
        default="process",
        help="run cells on local processes (the default) or as Ray tasks (the ray extra)",
    )
    bench.add_argument(
        "--address",
        metavar="auto|ray://HOST:PORT|HOST:PORT",
        help="the Ray cluster of --engine ray (default: start a local instance)",
    )
    bench.add_argument(
        "--results",
        metavar="FILE.jsonl",
        help="add each cell's result to FILE as it finishes (a killed sweep keeps them)",
    )
    bench.add_argument(
        "--resume",
        action="store_true",
        help="run only the cells whose results --results FILE does not hold yet",
    )
    bench.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    bench.add_argument(
        "--losses", action="store_true", help="list each lost probe and the event that lost it"
    )
    bench.add_argument(
        "--columns",
        metavar="NAME,...",
        help=(
            "the table's metric columns, by their --json names (peak_tokens,hit_at_k,...); "
            "default: every one that fits the terminal"
        ),
    )
    bench.set_defaults(handler=_bench)

    generate = commands.add_parser(
        "generate",
        help="write a seeded scenario file: a long support session, or a store workload",
        description="Write a scenario file from a seed; the same seed gives the same bytes.",
    )
    kinds = generate.add_subparsers(title="kinds", metavar="KIND", required=True)
    support = kinds.add_parser("support", help="a support session with planted probes")
    support.add_argument(
        "--turns", type=_integer, required=True, metavar="N", help="turns to write"
    )
    support.add_argument(
        "--probe-every",
        type=_integer,
        default=40,
        metavar="N",
        help="turns per probe (default: 40)",
    )
    store = kinds.add_parser("store", help="a store workload: writes, rewrites and queries")
    store.add_argument("--steps", type=_integer, required=True, metavar="N", help="steps to write")
    store.add_argument(
        "--customers", type=_integer, default=12, metavar="N", help="customers (default: 12)"
    )
    store.add_argument(
        "--capacity", type=_integer, default=4, metavar="N", help="forgetting capacity (default: 4)"
    )
    store.set_defaults(handler=_generate_store)
    for kind in (support, store):
        kind.add_argument(
            "--seed", type=_integer, required=True, metavar="S", help="the same seed, the same file"
        )
        _add_header_options(kind, turns=kind is support)
    support.set_defaults(handler=_generate_support)

    chat = commands.add_parser(
        "import",
        help=(
            "turn an agent's transcript (OpenAI Chat or Responses, Anthropic Messages, a Claude "
            "Code session, LangChain messages) into a scenario file"
        ),
        description=(
            "One turn per message of an agent's transcript, with its tool calls and results "
            "(calls and answers) kept whole; the format is told from the content unless "
            "--format says it. A Claude Code session's own compactions become the recorded "
            "policy's. Nothing is dropped silently: a part that cannot import is refused, "
            "named, and nothing is written."
        ),
    )
    chat.add_argument(
        "chat",
        type=Path,
        metavar="FILE",
        help="a transcript: JSONL, a JSON array, or a request or response object",
    )
    chat.add_argument(
        "--format",
        default="auto",
        choices=FORMATS,
        help="the transcript's format (default: auto, told from the content)",
    )
    chat.add_argument(
        "--salient",
        metavar="RULE",
        help=(
            "which turns are salient: tool (default), all, none, or roles the file has "
            "(tool,system: the system prompt is chatter, dropped first, unless named)"
        ),
    )
    chat.add_argument(
        "--pin",
        default="none",
        choices=PINS,
        help="pin the system turns, or the first turn: no policy moves them (default: none)",
    )
    chat.add_argument(
        "--tokenizer",
        default="words",
        metavar="NAME",
        help="the tokenizer the compaction policy measures with (default: words)",
    )
    chat.add_argument(
        "--sidechains",
        action="store_true",
        help="a Claude Code session's sidechains (subagents) too, in file order",
    )
    chat.add_argument(
        "--probes",
        metavar="auto|FILE",
        help=(
            "plant probes: auto (amounts, quantities, identifiers, paths, e-mail addresses "
            "and URLs said in user and tool turns, each due from the next turn), or a "
            ".toml ([[probe]] text, from) or .jsonl ({text, from} a line) file (default: none)"
        ),
    )
    _add_header_options(chat)
    chat.set_defaults(handler=_import)


def _add_header_options(command: argparse.ArgumentParser, *, turns: bool = True) -> None:
    """The options a written scenario file takes: where it goes and, for a file of
    ``turns``, its compaction policy (a store workload has no turns to compact)."""
    command.add_argument("--out", required=True, metavar="SCENARIO.toml", help="the file to write")
    if not turns:
        return
    command.add_argument(
        "--budget",
        type=_integer,
        default=DEFAULT_BUDGET,
        metavar="TOKENS",
        help=f"the compaction budget (default: {DEFAULT_BUDGET})",
    )
    command.add_argument(
        "--hot-n",
        type=_integer,
        default=DEFAULT_HOT_N,
        metavar="N",
        help=f"turns kept verbatim (default: {DEFAULT_HOT_N})",
    )


def _add_viewer(commands: Any) -> None:
    """``view`` and ``serve``: the viewer in the browser (memtape/viewer)."""
    view = commands.add_parser(
        "view",
        help="write a self-contained HTML page to scrub through a run",
        description="Write one HTML file (no network needed) to step through a run in a browser.",
    )
    view.add_argument("run", metavar="RUN", help=RUN_HELP)
    view.add_argument(
        "--out",
        metavar="PAGE.html",
        help="default: the scenario's name + .html, in the current directory",
    )
    view.add_argument("--compare", metavar="RUN2", help="a second run of the same inputs")
    _add_settings(view)
    _add_trust(view)
    _add_quiet(view)
    view.set_defaults(handler=_view)

    live = commands.add_parser(
        "serve",
        help="the viewer, live: step a scenario or a recorded run from the browser",
        description=(
            "Serve the viewer on 127.0.0.1 and drive a simulation from the page: its next "
            "step (a scenario's, or a recorded run's commands in order) or any command. "
            "Open the URL it prints: it carries the session's token, without which the "
            "server answers nothing (nor to another host's or origin's request)."
        ),
    )
    live.add_argument(
        "target",
        nargs="?",
        default="refund-desk",
        metavar="SCENARIO|RUN",
        help="a scenario, or a recorded run to replay (default: refund-desk)",
    )
    live.add_argument("--port", type=_integer, default=0, help="the port (default: a free one)")
    _add_settings(live)
    _add_trust(live)
    live.set_defaults(handler=_serve)


_HANDLER_NAME = "memtape-cli"


def _add_trust(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--trust",
        action="store_true",
        help=(
            "import the policies a run file names by import path (run files are data: "
            "without it, none is imported; also MEMTAPE_TRUST=1)"
        ),
    )


def _add_quiet(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="no progress on stderr (shown on a terminal, and with -v elsewhere)",
    )


def _add_settings(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="AXIS.PARAM=VALUE",
        help="a policy parameter to change, e.g. --set compaction.budget=60 (repeatable)",
    )


def _configure_logging(verbose: bool) -> None:
    """Show decision entries on stderr with ``-v``; otherwise leave the logger quiet.

    Idempotent, so that ``main`` can be called many times in one process.
    """
    logger = logging.getLogger(LOGGER_NAME)
    for handler in [h for h in logger.handlers if h.get_name() == _HANDLER_NAME]:
        logger.removeHandler(handler)
    if not verbose:
        logger.setLevel(logging.NOTSET)
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.set_name(_HANDLER_NAME)
    handler.setFormatter(logging.Formatter("%(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.KeyValueRenderer(key_order=["event", "at", "step"]),
        ],
    )


def _color(args: argparse.Namespace) -> bool:
    if args.color != "auto":
        return bool(args.color == "always")
    return sys.stdout.isatty() and "NO_COLOR" not in os.environ


def _print_lines(lines: Iterable[str]) -> None:
    for line in lines:
        print(line)


def _demo(args: argparse.Namespace) -> int:
    _print_lines(demo_lines(_color(args)))
    return 0


def _simulate(scenario: Scenario, args: argparse.Namespace | None = None) -> Session:
    """The session of ``scenario``'s steps, with progress on stderr for ``args``' command."""
    from memtape.lab.progress import EVERY  # noqa: PLC0415

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


def _out(text: str) -> Path:
    """A run's output path: a file or a store, never one run of a store (``runs.db#1``)."""
    if parse_address(text)[1] is not None:
        raise MemtapeError(f"{text}: --out takes a run file or a store, not the address of a run")
    return output_path(text)


def _run(args: argparse.Namespace) -> int:
    out = _out(args.out)
    scenario = load_scenario(args.scenario)
    if args.set:
        scenario = attrs.evolve(scenario, policies=scenario.policies.with_settings(args.set))
    session = _simulate(scenario, args)
    address = save_run(session, out, scenario.name)
    print(
        f"recorded {len(session.run)} events from {len(scenario.steps)} steps "
        f"of {scenario.name} to {address}"
    )
    return 0


def _open(
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
    """
    if is_scenario(target):
        scenario = load_scenario(target)
        if settings:
            scenario = attrs.evolve(scenario, policies=scenario.policies.with_settings(settings))
        return LoadedRun(_simulate(scenario, args), scenario.name, Path(target))
    if settings:
        raise BadInput(
            f"{target}: --set changes a scenario's policies; fork a recorded run instead"
        )
    path = parse_address(target)[0]
    if path.suffix not in {".jsonl", SQLITE_SUFFIX}:
        shipped = ", ".join(SHIPPED)
        missing = f"no such run file, and not a scenario (shipped: {shipped}, or a .toml file)"
        regular_file(path, "run file", missing=missing)
    loaded = load_run(target, trust=trusted(trust))
    if loaded.torn is not None:
        print(f"memtape: warning: {target}: {one_line(loaded.torn)}", file=sys.stderr)
    return loaded


def _show(args: argparse.Namespace) -> int:
    loaded = _open(args.run, trust=args.trust)
    run = loaded.session.run
    at = len(run) if args.at is None else _within(args.at, len(run), f"{args.run}: --at")
    view = view_data(run.state_at(at), at, loaded.session.policies_at(at))
    _emit(args, view, render_view)
    return 0


def _budget(loaded: LoadedRun, position: int) -> int | None:
    compaction = loaded.session.policies_at(position).compaction
    return None if compaction is None else compaction.budget


def _diff(args: argparse.Namespace) -> int:
    targets: list[str] = args.targets
    if args.step is not None:
        if len(targets) != 2:
            raise MemtapeError("diff --step compares two runs: memtape diff RUN1 RUN2 --step N")
        first, second = (_open(target, trust=args.trust) for target in targets)
        compared = step_diff(first.session.run, second.session.run, args.step)
        budgets = (_budget(first, compared.before), _budget(second, compared.after))
        data = step_diff_data(compared, budgets)
    else:
        if len(targets) == 2 and not _is_integer(targets[1]):
            raise MemtapeError(
                "diff of two runs needs --step N (after which command to compare them): "
                "memtape diff RUN1 RUN2 --step N"
            )
        if len(targets) != 3:
            raise MemtapeError("diff compares two points of a run: memtape diff RUN A B")
        loaded = _open(targets[0], trust=args.trust)
        run = loaded.session.run
        before, after = (_position(text, len(run), targets[0]) for text in targets[1:])
        budgets = (_budget(loaded, before), _budget(loaded, after))
        data = diff_data(run.diff(before, after), before=before, after=after, budgets=budgets)
    _emit(args, data, render_diff)
    return 0


def _position(text: str, length: int, name: str) -> int:
    if not _is_integer(text):
        raise MemtapeError(
            f"{name}: a point of a run is an event number in ASCII digits, got {text!r}"
        )
    return _within(int(text), length, f"{name}: event")


def _within(position: int, length: int, what: str) -> int:
    if not 0 <= position <= length:
        raise MemtapeError(f"{what} {position} is out of range 0..{length}")
    return position


def _emit(
    args: argparse.Namespace, data: Any, render: Callable[[Any, bool], Iterable[str]]
) -> None:
    """``data`` as JSON with ``--json`` (exact numbers), else as rendered text."""
    if args.json:
        print(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        _print_lines(render(data, _color(args)))


def _runs(args: argparse.Namespace) -> int:
    with open_store(args.store) as store:
        runs = store.runs()
    if args.json:
        print(json.dumps([attrs.asdict(run) for run in runs], indent=2, ensure_ascii=False))
        return 0
    rows = [("run", "scenario", "events", "policies", "created")]
    for run in runs:
        policies = ", ".join(
            f"{axis} {table.get('model' if axis == 'llm' else 'policy')}"
            for axis, table in (run.policies or {}).items()
            if isinstance(table, dict)
        )
        rows.append(
            (
                f"{args.store}#{run.id}",
                run.scenario or "-",
                str(run.events),
                policies or "no policies",
                run.created,
            )
        )
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
    for row in rows if runs else ():
        cells = [
            cell.rjust(width) if column == 2 else cell.ljust(width)
            for column, (cell, width) in enumerate(zip(row, widths, strict=True))
        ]
        print("  ".join(cells).rstrip())
    return 0


def _check(args: argparse.Namespace) -> int:
    if is_scenario(str(args.run)):
        raise MemtapeError(
            f"{args.run}: check takes a run file, not a scenario; record it first "
            f"(memtape run {args.run} --out RUN.jsonl)"
        )
    report = check_file(args.run, trust=trusted(args.trust), live=args.live)
    _print_lines(one_line(line) for line in report.lines())
    return 0 if report.ok else 1


def _export(args: argparse.Namespace) -> int:
    out = output_path(args.out)
    if is_sqlite(out):
        raise MemtapeError(f"{out}: export writes one JSONL file; give it another name")
    redacted = export_redacted(args.run, out)
    if redacted.torn is not None:
        print(f"memtape: warning: {args.run}: {one_line(redacted.torn)}", file=sys.stderr)
    print(f"wrote a redacted copy of {args.run} ({len(redacted.run)} events) to {out}")
    return 0


def _fork(args: argparse.Namespace) -> int:
    out = _out(args.out)
    if not is_sqlite(out):
        # A store takes the fork beside its source; a run file would lose the source.
        _not_an_input(out, [args.run])
    source = args.run if is_scenario(args.run) else resolve_address(args.run)
    loaded = _open(source, trust=args.trust)
    run = loaded.session.run
    _within(args.at, len(run), f"{args.run}: --at")
    if loaded.redacted:
        raise MemtapeError(f"{args.run}: a redacted run cannot be re-decided, so not forked")
    loaded.require_code("fork")
    try:
        forked = loaded.session.fork(args.at, args.set)
    except MemtapeError as error:
        raise MemtapeError(f"{args.run}: {error}") from None
    origin = {"run": source, "at": args.at, "set": args.set}
    address = save_run(forked, out, loaded.scenario, origin=origin)
    kept = sum(1 for step in range(1, run.steps + 1) if run.batch(step)[1] <= args.at)
    changes = ", ".join(args.set) or "no changes"
    print(
        f"forked {args.run} after event {args.at}: kept {kept} of {run.steps} steps, "
        f"re-decided the rest with {changes}; {len(forked.run)} events to {address}"
    )
    return 0


def _why(args: argparse.Namespace) -> int:
    loaded = _open(args.run, trust=args.trust)
    try:
        life = audit(loaded.session.run, loaded.session.policies_at, parse_target(args.target))
    except MemtapeError as error:
        raise MemtapeError(f"{args.run}: {error}") from None
    _emit(args, life_data(life), lambda data, _: render_life(life))
    return 0


def _timeline(args: argparse.Namespace) -> int:
    loaded = _open(args.run, trust=args.trust)
    rows = timeline(loaded.session.run, loaded.session.policies_at)
    if args.json:
        print(json.dumps([row.data() for row in rows], indent=2, ensure_ascii=False))
    else:
        import shutil  # noqa: PLC0415

        width = shutil.get_terminal_size().columns if sys.stdout.isatty() else None
        _print_lines(render_timeline(rows, _color(args), width))
    return 0


def _view(args: argparse.Namespace) -> int:
    # --set changes the scenario RUN; --compare RUN2 stays as it is (the baseline).
    targets = [args.run] + ([args.compare] if args.compare else [])
    given = None if args.out is None else _not_an_input(output_path(args.out), targets)
    opened = [args.run, *([args.compare] if args.compare else [])]
    runs = [
        _open(target, args.set if n == 0 else (), trust=args.trust, args=args)
        for n, target in enumerate(opened)
    ]
    out = given or _not_an_input(output_path(f"{_file_stem(runs[0].scenario)}.html"), targets)
    write_atomic(out, view_page(runs).encode("utf-8"))
    print(f"wrote {out}: open it in a browser")
    return 0


def _file_stem(name: str) -> str:
    """``name`` (a run header's scenario name) as a file name in the current directory:
    a header may say anything, so no separator or leading dot survives."""
    stem = re.sub(r"[^\w.-]+", "-", name).strip("-.")
    return stem or "run"


def _not_an_input(out: Path, targets: Iterable[str]) -> Path:
    """``out``, refused if it is the file one of ``targets`` names (a run, a store, a
    scenario, a transcript): the output would replace what it was made from."""
    for target in targets:
        if same_file(out, parse_address(target)[0]):
            raise BadInput(f"{out}: cannot write it: it is {target}, which this command reads")
    return out


def _serve(args: argparse.Namespace) -> int:
    return serve(live_source(args.target, args.set, trust=trusted(args.trust)), args.port)


def _bench(args: argparse.Namespace) -> int:
    from memtape.lab.table import column_names  # noqa: PLC0415 (rich: only for a bench)

    columns = None if args.columns is None else column_names(args.columns)
    return bench(
        args.scenarios,
        args.policy,
        settings=args.set,
        grid=args.grid,
        json_out=None if args.json is None else output_path(args.json),
        plot_out=None if args.plot is None else output_path(args.plot),
        jobs=args.jobs,
        quiet=args.quiet,
        losses=args.losses,
        engine=args.engine,
        address=args.address,
        results_out=None if args.results is None else output_path(args.results),
        resume=args.resume,
        columns=columns,
        verbose=args.verbose,
    )


def _write_scenario(text: str, make: Callable[[], str], reads: Sequence[str] = ()) -> int:
    # The path is checked before ``make``: a long generation should not end in a refusal.
    out = _not_an_input(output_path(text), reads)
    write_atomic(out, make().encode("utf-8"))
    print(f"wrote {out}")
    return 0


def _generate_support(args: argparse.Namespace) -> int:
    return _write_scenario(
        args.out,
        lambda: support_session(
            args.turns,
            args.seed,
            budget=args.budget,
            hot_n=args.hot_n,
            probe_every=args.probe_every,
        ),
    )


def _generate_store(args: argparse.Namespace) -> int:
    return _write_scenario(
        args.out,
        lambda: store_workload(
            args.steps,
            args.seed,
            customers=args.customers,
            capacity=args.capacity,
        ),
    )


def _import(args: argparse.Namespace) -> int:
    import warnings  # noqa: PLC0415

    from memtape.lab.importers.scenario import NothingSalient  # noqa: PLC0415

    reads = [str(args.chat)] + ([] if args.probes in {None, AUTO} else [args.probes])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", NothingSalient)
        status = _write_scenario(
            args.out,
            lambda: import_transcript(
                args.chat,
                format=args.format,
                salient=args.salient,
                pin=args.pin,
                budget=args.budget,
                hot_n=args.hot_n,
                tokenizer=args.tokenizer,
                sidechains=args.sidechains,
                probes=args.probes,
            ),
            reads,
        )
    for warning in caught:
        if isinstance(warning.message, NothingSalient):
            print(f"memtape: warning: {warning.message}", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
