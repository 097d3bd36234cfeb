"""The ``memtape`` command: its parser, and the dispatch to each command.

Every error the user can cause is one line on stderr and exit status 2:
no traceback, and nothing written.

Building the parser imports no command: each is a module of
``memtape.commandline``, imported when it runs, and the help's names and
defaults come from modules that import nothing heavy. ``memtape --help``
starts as quickly as Python itself, nearly (``tests/test_quick_start.py``
holds the modules it imports).
"""

import argparse
import gc
import importlib
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any, NoReturn

from memtape._version import __version__
from memtape.commandline.numbers import integer as _integer
from memtape.core.collector import collector_paused
from memtape.core.errors import MemtapeError
from memtape.core.visible import visible
from memtape.lab.choices import (
    DATA_SETS,
    DEFAULT_BUDGET,
    DEFAULT_HOT_N,
    FORMATS,
    OBSERVATIONS,
    PINS,
)
from memtape.llm.cache_location import CACHE_ENV, DEFAULT_CACHE
from memtape.scenarios.shipped import SHIPPED

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
"""The status after Ctrl-C, as a shell reports a command that SIGINT stopped."""
RUN_HELP = "a run file (.jsonl), runs.db[#ID], or a scenario (a shipped name or a .toml file)"
"""The help of a RUN argument that a scenario, run in memory, may stand for."""
RUN_FILE_HELP = "a run file (.jsonl) or runs.db[#ID]"
"""The help of a RUN argument that must be a recorded run."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status.

    Run as the ``memtape`` command (``argv`` None: the process's own
    arguments), the process ends right after, so every object left is frozen
    (``gc.freeze``) for the interpreter's last collection to skip: walking
    them was a good part of a small command's time, and what its parser and
    its command's modules built is filed as long-lived. Called with ``argv``,
    as a program or a test does, it leaves the collector as it was: it pauses
    it while it builds and imports, files nothing, and freezes nothing.
    """
    status = _main(argv)
    if argv is None:
        gc.freeze()
    return status


def _main(argv: Sequence[str] | None) -> int:
    as_process = argv is None
    with collector_paused(file_as_old=as_process):  # the parser lives as long as the command
        parser = _parser()
    args = parser.parse_args(argv)
    args.as_process = as_process
    try:
        with _verbosity(args.verbose), _no_cache() if args.no_cache else nullcontext():
            status: int = args.handler(args)
    except MemtapeError as error:
        print(f"memtape: error: {visible(str(error), 'message')}", file=sys.stderr)
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


class _Parser(argparse.ArgumentParser):
    """argparse with its errors in memtape's one-line form."""

    def error(self, message: str) -> NoReturn:
        self.exit(
            EXIT_USAGE,
            f"memtape: error: {visible(message, 'message')}{_hint(message)} "
            f"(see {self.prog} --help)\n",
        )


def _hint(message: str) -> str:
    """``": did you mean 'show'?"`` after argparse's ``invalid choice: 'shwo' (choose from
    ...)``, when a choice is close; ``""`` otherwise."""
    if "invalid choice: " not in message:
        return ""
    import re  # noqa: PLC0415 (a mistyped command only)

    from memtape.core.spelling import did_you_mean  # noqa: PLC0415

    found = re.search(
        r"invalid choice: '(?P<given>[^']*)' \(choose from (?P<choices>.*)\)", message
    )
    if found is None:
        return ""
    # Quoted or not, as Python's versions differ.
    choices = [choice.strip().strip("'") for choice in found["choices"].split(",")]
    return did_you_mean(found["given"], choices)


def _parser() -> argparse.ArgumentParser:  # noqa: PLR0915 (a list of registrations, one per command)
    parser = _Parser(
        prog="memtape",
        description="Simulate the memory policies of LLM agents as an event-sourced system.",
    )
    parser.add_argument("--version", action="version", version=f"memtape {__version__}")
    _add_global_options(parser, defaults=True)
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)

    demo = commands.add_parser("demo", help="walk through the three seed mechanisms")
    demo.set_defaults(handler=_command("demo"))

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
    run.set_defaults(handler=_command("record"))

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
    show.set_defaults(handler=_command("show"))

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
    diff.set_defaults(handler=_command("diff"))

    policies = commands.add_parser(
        "policies",
        help="list the policies memtape ships, or show one in full",
        description=(
            "List every policy with its axis, parameters (with defaults) and promises; "
            "with NAME, show one in full: what it does, each parameter's default and "
            "meaning, its promises and its upstream source."
        ),
    )
    policies.add_argument("name", nargs="?", metavar="NAME", help="a policy's name")
    policies.add_argument("--json", action="store_true", help="print JSON")
    policies.set_defaults(handler=_command("policies"))

    runs = commands.add_parser(
        "runs",
        help="list the runs in a store (runs.db)",
        description="List the runs a store holds: id, scenario, events, policies, creation time.",
    )
    runs.add_argument("store", type=Path, metavar="STORE", help="a run store (a .db file)")
    runs.add_argument("--json", action="store_true", help="print JSON")
    runs.set_defaults(handler=_command("runs"))

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
    check.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="llm.PARAM=VALUE",
        help=(
            "the model --live asks, e.g. --set llm.model=NAME [--set llm.base_url=URL] "
            "(a run's own [llm] table is asked only with --trust; repeatable)"
        ),
    )
    check.add_argument(
        "--require-signed",
        action="store_true",
        help=(
            "fail a run that is not signed under MEMTAPE_SIGNING_KEY: unsigned (a removed "
            "signature leaves a run so), unchained, or signed with another key (also "
            "MEMTAPE_REQUIRE_SIGNED=1, which every command that reads a run honours)"
        ),
    )
    _add_trust(check)
    _add_quiet(check)
    check.set_defaults(handler=_command("check"))

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
    export.set_defaults(handler=_command("export"))

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
    fork.set_defaults(handler=_command("fork"))

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
        "target",
        metavar="turn:N|KEY|ID",
        help="a turn (turn:5), a fact by its key (fact:KEY, or the bare key) or id, "
        "or a memory block (block:LABEL)",
    )
    why.add_argument("--json", action="store_true", help="print JSON (exact numbers)")
    _add_trust(why)
    why.set_defaults(handler=_command("why"))

    audit = commands.add_parser(
        "audit",
        help="what each compaction lost, by probe kind, and which losses a later turn needed",
        description=(
            "Count, per probe kind, the probes each compaction kept and lost, with the event "
            "that lost each one and the first later turn that mentioned it again (a harmful "
            "loss); one column per --policy."
        ),
    )
    audit.add_argument("session", metavar="SESSION|RUN", help=RUN_HELP)
    audit.add_argument(
        "--policy",
        action="append",
        default=[],
        metavar="NAME[:k=v,...]",
        help="a compaction policy to re-decide the session under (repeatable: one column each)",
    )
    audit.add_argument(
        "--probes",
        metavar="auto|FILE",
        help="the probes to count (default: the scenario's own, else auto)",
    )
    audit.add_argument("--json", action="store_true", help="print JSON (exact numbers)")
    _add_trust(audit)
    audit.set_defaults(handler=_command("audit"))

    line = commands.add_parser(
        "timeline",
        help="one row per event",
        description="One row per event of a run (a run file, or a scenario).",
    )
    line.add_argument("run", metavar="RUN", help=RUN_HELP)
    line.add_argument("--json", action="store_true", help="print JSON (exact numbers)")
    _add_trust(line)
    line.set_defaults(handler=_command("timeline"))

    _add_viewer(commands)

    _add_lab(commands)
    _add_record(commands)
    _add_standin(commands)
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


def _add_lab(commands: Any) -> None:  # noqa: PLR0915 (a list of registrations, one per kind)
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
        metavar="NAME[:k=v,...]",
        help="a policy to compare, e.g. rolling-summary:keep=4 (repeatable; not with --calibrate)",
    )
    _add_settings(bench)
    bench.add_argument(
        "--prices",
        metavar="FILE.toml",
        help='prices to bill at, over the shipped ones ([models."NAME"] tables, USD per million)',
    )
    bench.add_argument(
        "--calibrate",
        action="store_true",
        help="bill each session as its agent ran it and compare with the usage it recorded",
    )
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
        action="append",
        metavar="FILE.jsonl|FILE.parquet",
        help=(
            "add each cell's result to FILE.jsonl as it finishes (a killed sweep keeps them); "
            "write a table, a row per cell, to FILE.parquet (the results extra); both may be given"
        ),
    )
    bench.add_argument(
        "--resume",
        action="store_true",
        help="run only the cells whose results --results FILE does not hold yet",
    )
    _add_gate(bench)
    _add_lab_tail(bench)

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
    store.set_defaults(handler=_command("generate", "store"))
    expiry = _add_family_generator(
        kinds, "expiry", "a store workload where session notes and promotions expire", 12, 8
    )
    temporal = _add_family_generator(
        kinds, "temporal", "a store workload of changes learned late, asked about the past", 8, 16
    )
    judged = _add_family_generator(
        kinds, "judged", "a store workload of facts restated under new keys, for a judge", 8, 16
    )
    blocks = _add_blocks_generator(kinds)
    recall = _add_recall_generator(kinds)
    for kind in (support, store, expiry, temporal, judged, blocks, recall):
        kind.add_argument(
            "--seed", type=_integer, required=True, metavar="S", help="the same seed, the same file"
        )
        _add_header_options(kind, turns=kind in (support, blocks, recall))
    support.set_defaults(handler=_command("generate", "support"))

    chat = commands.add_parser(
        "import",
        help=(
            "turn an agent's transcript (OpenAI Chat or Responses, Anthropic Messages, a Claude "
            "Code session, LangChain messages, a Codex CLI rollout, a Gemini CLI chat, a "
            "SWE-agent or mini-swe-agent trajectory, a memtape record capture) into a scenario "
            "file"
        ),
        description=(
            "One turn per message of an agent's transcript, with its tool calls and results "
            "(calls and answers) kept whole; the format is told from the content unless "
            "--format says it. A Claude Code session's or Codex rollout's own compactions "
            "become the recorded policy's. Nothing is dropped silently: a part that cannot "
            "import is refused, named, and nothing is written; what is not conversation is "
            "left out and counted by kind in the import's ledger."
        ),
    )
    chat.add_argument(
        "chat",
        type=Path,
        metavar="FILE",
        help=(
            "a transcript: JSONL, a JSON array, a request or response object, or a document "
            "wrapping its messages (an agent's trajectory)"
        ),
    )
    chat.add_argument(
        "--format",
        default="auto",
        choices=FORMATS + DATA_SETS,
        help=(
            "the transcript's format (default: auto, told from the content); longmemeval and "
            "locomo read one item of those data sets' JSON files, with its questions"
        ),
    )
    chat.add_argument(
        "--question",
        metavar="ID",
        help="--format longmemeval: the question_id of the question to import",
    )
    chat.add_argument(
        "--sample",
        metavar="ID|N",
        help="--format locomo: the sample_id (or place, from 1) of the conversation to import",
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
        default=None,
        metavar="NAME",
        help="the tokenizer the compaction policy measures with (default: o200k_base with "
        "the bpe extra, else words); recorded measures each turn by the provider's recorded "
        "counts (usage), the default tokenizer the rest",
    )
    chat.add_argument(
        "--sidechains",
        action="store_true",
        help="a Claude Code session's sidechains (subagents) too, in file order",
    )
    chat.add_argument(
        "--skip-bad-lines",
        action="store_true",
        help=(
            "skip a malformed line of a JSONL transcript, named in the ledger, rather than "
            "refuse the file (a half-written last line is always skipped, with a warning)"
        ),
    )
    chat.add_argument(
        "--path",
        metavar="KEY",
        help=(
            "where a JSON document keeps its messages: a key, or keys joined by dots "
            "(traj, run.history); default: told from the content (messages, input, output, "
            "then history, traj)"
        ),
    )
    chat.add_argument(
        "--observations",
        default="auto",
        choices=OBSERVATIONS,
        help=(
            "how a user message after an action reads: user-after-action makes it a tool "
            "result answering the action (salient, kept with it); as-written keeps it a user "
            "turn; auto (default) pairs them in text-mode SWE-agent and mini-swe-agent "
            "trajectories"
        ),
    )
    chat.add_argument(
        "--thread",
        metavar="N|KEY",
        help=(
            "a capture's thread to import: its number in the list import prints, or its key "
            "(default: the one with the most turns)"
        ),
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
    _add_header_options(chat, measured=True)
    _add_quiet(chat)
    chat.set_defaults(handler=_command("transcript"))


def _add_gate(bench: argparse.ArgumentParser) -> None:
    """``bench``'s CI gate: a baseline and the rules each cell is held to."""
    bench.add_argument(
        "--baseline",
        metavar="OLD.parquet|OLD.jsonl|OLD.json",
        help="the results --fail-if rules compare each cell with (matched by scenario, "
        "policy and parameters)",
    )
    bench.add_argument(
        "--fail-if",
        action="append",
        default=[],
        metavar="RULE",
        help="exit 1 naming each cell where METRIC OP EXPR holds, e.g. "
        "'probe_retention < baseline - 0.02' (repeatable)",
    )
    bench.add_argument(
        "--fail-if-missing",
        action="store_true",
        help="a cell the --baseline lacks fails too (by default it is said, not compared)",
    )


def _add_lab_tail(bench: argparse.ArgumentParser) -> None:
    """``bench``'s reporting options."""
    bench.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    bench.add_argument(
        "--losses", action="store_true", help="list each lost probe and the event that lost it"
    )
    bench.add_argument(
        "--replicates",
        type=_integer,
        metavar="N",
        help=(
            "run every cell N times past the response cache, each with its own seed; "
            "report medians and their spread (a 95%% interval from 5 on)"
        ),
    )
    bench.add_argument(
        "--probes",
        metavar="FILE",
        help="add a .toml or .jsonl file's probes to every scenario (questions among them)",
    )
    bench.add_argument(
        "--judge",
        metavar="MODEL",
        help=(
            "ask MODEL each probe's question against the window at its turn, and judge the "
            "replies that differ from the answer (answers_correct, answers_judged)"
        ),
    )
    bench.add_argument(
        "--frontier",
        action="store_true",
        help=(
            "say each scenario's cost frontier (usd, else tokens re-sent, against answers "
            "correct, else probes kept); --plot draws it"
        ),
    )
    bench.add_argument(
        "--runs",
        metavar="DIR",
        help="write each cell's run to DIR (new or empty): show, timeline and check read them",
    )
    bench.add_argument(
        "--frontier-on",
        metavar="GAIN",
        help="--frontier, ranked on GAIN: answers_correct, probe_retention or harmful_losses",
    )
    bench.add_argument(
        "--columns",
        metavar="NAME,...",
        help=(
            "the table's metric columns, by their --json names (peak_tokens,hit_at_k,...); "
            "default: every one that fits the terminal"
        ),
    )
    bench.set_defaults(handler=_command("bench"))


def _add_recall_generator(kinds: Any) -> argparse.ArgumentParser:
    """``generate recall``: a support session that recalls each probe after it left the window
    (memtape.lab.recall_workload)."""
    kind: argparse.ArgumentParser = kinds.add_parser(
        "recall", help="a support session that recalls each probe after it left the window"
    )
    kind.add_argument("--turns", type=_integer, required=True, metavar="N", help="turns to write")
    for option, default, about in (
        ("--probe-every", 40, "turns per probe"),
        ("--recall-after", 20, "turns from a probe to its recall"),
    ):
        kind.add_argument(
            option,
            type=_integer,
            default=default,
            metavar="N",
            help=f"{about} (default: {default})",
        )
    kind.set_defaults(handler=_command("generate", "recall"))
    return kind


def _add_blocks_generator(kinds: Any) -> argparse.ArgumentParser:
    """``generate blocks``: a support session whose agent notes each planted fact in a memory
    block (memtape.lab.blocks_workload)."""
    blocks: argparse.ArgumentParser = kinds.add_parser(
        "blocks", help="a support session whose agent keeps notes in a memory block"
    )
    blocks.add_argument("--turns", type=_integer, required=True, metavar="N", help="turns to write")
    blocks.add_argument(
        "--probe-every", type=_integer, default=40, metavar="N", help="turns per probe (40)"
    )
    blocks.add_argument(
        "--limit", type=_integer, default=200, metavar="N", help="the block's characters (200)"
    )
    blocks.set_defaults(handler=_command("generate", "blocks"))
    return blocks


def _add_family_generator(
    kinds: Any, name: str, about: str, customers: int, capacity: int
) -> argparse.ArgumentParser:
    """``generate expiry`` or ``generate temporal``: a store workload of one memory family
    (memtape.lab.expiry_workload, memtape.lab.temporal_workload)."""
    kind: argparse.ArgumentParser = kinds.add_parser(name, help=about)
    kind.add_argument("--steps", type=_integer, required=True, metavar="N", help="steps to write")
    kind.add_argument(
        "--customers",
        type=_integer,
        default=customers,
        metavar="N",
        help=f"customers (default: {customers})",
    )
    kind.add_argument(
        "--capacity",
        type=_integer,
        default=capacity,
        metavar="N",
        help=f"forgetting capacity (default: {capacity})",
    )
    kind.set_defaults(handler=_command("generate", name))
    return kind


def _add_header_options(
    command: argparse.ArgumentParser, *, turns: bool = True, measured: bool = False
) -> None:
    """The options a written scenario file takes: where it goes and, for a file of
    ``turns``, its compaction policy (a store workload has no turns to compact). A
    ``measured`` import's budget defaults to the largest prompt its usage recorded."""
    command.add_argument("--out", required=True, metavar="SCENARIO.toml", help="the file to write")
    if not turns:
        return
    command.add_argument(
        "--budget",
        type=_integer,
        default=None if measured else DEFAULT_BUDGET,
        metavar="TOKENS",
        help=(
            "the compaction budget (default: the largest prompt the transcript's usage "
            f"recorded, rounded down to two significant digits, else {DEFAULT_BUDGET})"
            if measured
            else f"the compaction budget (default: {DEFAULT_BUDGET})"
        ),
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
        help=(
            "default: the run file's name + .html (a.jsonl: a.html, runs.db#3: runs-3.html, "
            "a comparison: a-vs-b.html), in the current directory"
        ),
    )
    view.add_argument("--compare", metavar="RUN2", help="a second run of the same inputs")
    view.add_argument(
        "--force",
        action="store_true",
        help="replace the page even if it shows another run (or is not a memtape page)",
    )
    view.add_argument(
        "--probes",
        metavar="auto|SOURCE",
        help=(
            "the probes to follow (default: the scenario's, or for a run file the shipped "
            "scenario's its header names): auto (planted by import's rule on each run's "
            "turns), a scenario (its [[probe]] tables), or a .toml or .jsonl probes file"
        ),
    )
    _add_settings(view)
    _add_trust(view)
    _add_quiet(view)
    view.set_defaults(handler=_command("view"))

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
    live.set_defaults(handler=_command("serve"))


def _add_record(commands: Any) -> None:
    """``record``: the capture proxy (memtape/capture)."""
    record = commands.add_parser(
        "record",
        help="run an agent behind a local proxy that records its model requests",
        description=(
            "Run CMD with OPENAI_BASE_URL and ANTHROPIC_BASE_URL pointing at a proxy on "
            "127.0.0.1 that forwards each request to the real provider, relays the response "
            "as it arrives (streams chunk by chunk), and appends each exchange to a capture "
            "file: the request, the reassembled response, timings, status and a thread key; "
            "never a credential or any header off its allow-list. Exits with CMD's status. "
            "With --serve-only, prints the two variables to export and serves until Ctrl-C."
        ),
    )
    record.add_argument(
        "--out", required=True, metavar="CAPTURE.jsonl", help="the capture file (appended to)"
    )
    record.add_argument(
        "--port", type=_integer, default=0, help="the proxy's port (default: a free one)"
    )
    record.add_argument(
        "--upstream-openai",
        metavar="URL",
        help="where OpenAI requests go (default: $OPENAI_BASE_URL, else https://api.openai.com/v1)",
    )
    record.add_argument(
        "--upstream-anthropic",
        metavar="URL",
        help=(
            "where Anthropic requests go (default: $ANTHROPIC_BASE_URL, else "
            "https://api.anthropic.com)"
        ),
    )
    record.add_argument(
        "--serve-only", action="store_true", help="run no command: serve until Ctrl-C"
    )
    record.add_argument(
        "command",
        nargs=argparse.REMAINDER,
        metavar="-- CMD [ARGS...]",
        help="the agent to run, after --",
    )
    record.set_defaults(handler=_command("capture"))


def _add_standin(commands: Any) -> None:
    """``llm-standin``: a stand-in for a model server (memtape/llm/standin.py)."""
    standin = commands.add_parser(
        "llm-standin",
        help="a stand-in for a model server on 127.0.0.1, to try an [llm] table offline",
        description=(
            "Serve a stand-in for an OpenAI-compatible model server on 127.0.0.1, until "
            "Ctrl-C: it answers POST /v1/chat/completions with the first sentence of each of "
            "the last three lines of the user and tool messages it is sent, and GET /v1/models. "
            "It is not a model: it shows the whole path (a request, the answer recorded into "
            "the run, a replay that asks nothing) before you point memtape at a real server. "
            "Export the OPENAI_BASE_URL it prints."
        ),
    )
    standin.add_argument(
        "--port",
        type=_integer,
        default=STANDIN_PORT,
        help=f"the port (default: {STANDIN_PORT}; 0 for a free one)",
    )
    standin.set_defaults(handler=_command("llm_standin"))


STANDIN_PORT = 8808
"""The stand-in's port unless ``--port`` says another: fixed, so a scenario may name it."""


def _add_trust(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--trust",
        action="store_true",
        help=(
            "trust a run file's code and model: import the policies it names by import "
            "path, and ask the model and server its [llm] table records (run files are "
            "data: without it, neither; also MEMTAPE_TRUST=1)"
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


def _verbosity(verbose: bool) -> AbstractContextManager[object]:
    """Decision entries on stderr while the command runs, with ``-v``; nothing otherwise
    (a quiet command does not import ``logging``)."""
    if not verbose:
        return nullcontext()
    from memtape.commandline.verbose import decisions_shown  # noqa: PLC0415 (-v only)

    return decisions_shown()


def _command(name: str, function: str = "run") -> Callable[[argparse.Namespace], int]:
    """The handler of a command: ``function`` of ``memtape.commandline.<name>``, imported
    when the command runs (building the parser imports no command)."""

    def handler(args: argparse.Namespace) -> int:
        # Importing defines classes and functions that live as long as the process: the
        # collections their allocations set off find nothing to free, and without the
        # pause's filing them as old, the first young collection after it walks them all.
        with collector_paused(file_as_old=args.as_process):
            module = importlib.import_module(f"memtape.commandline.{name}")
        status: int = getattr(module, function)(args)
        return status

    handler.__name__ = name if function == "run" else f"{name}_{function}"
    return handler


def _no_cache() -> AbstractContextManager[object]:
    """No response cache while a command runs (``--no-cache``)."""
    from memtape.llm.cache import caching  # noqa: PLC0415 (SQLite only when it is asked about)

    return caching(None)


if __name__ == "__main__":
    sys.exit(main())
