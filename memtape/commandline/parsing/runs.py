"""The commands that make, read and re-decide runs: ``demo``, ``run``, ``show``, ``diff``,
``policies``, ``runs``, ``check``, ``export``, ``fork``, ``why``, ``audit``, ``timeline``."""

import argparse
from pathlib import Path

from memtape.commandline.numbers import integer
from memtape.commandline.parsing.arguments import (
    RUN_FILE_HELP,
    RUN_HELP,
    Command,
    add_prices,
    add_quiet,
    add_settings,
    add_trust,
    handler,
)


def demo(parser: argparse.ArgumentParser) -> None:
    """``demo``'s parser: no argument of its own."""
    parser.set_defaults(handler=handler("demo"))


def run(parser: argparse.ArgumentParser) -> None:
    """``run``'s parser."""
    from memtape.scenarios.shipped import SHIPPED  # noqa: PLC0415 (run's description only)

    shipped = ", ".join(SHIPPED)
    parser.description = f"Run a scenario (shipped: {shipped}, or a TOML file) and record the run."
    parser.add_argument(
        "scenario", metavar="SCENARIO|FILE", help="a shipped scenario or a .toml file"
    )
    parser.add_argument(
        "--out",
        required=True,
        metavar="RUN.jsonl|RUNS.db",
        help="a JSONL file (replaced), or a .db store the run is added to",
    )
    add_settings(parser)
    add_prices(parser)
    add_quiet(parser)
    parser.set_defaults(handler=handler("record"))


def show(parser: argparse.ArgumentParser) -> None:
    """``show``'s parser."""
    parser.description = "Show the projections at event N of a run (a run file, or a scenario)."
    parser.add_argument("run", metavar="RUN", help=RUN_HELP)
    parser.add_argument(
        "--at", type=integer, metavar="N", help="after the N-th event (default: the end)"
    )
    parser.add_argument("--json", action="store_true", help="print JSON (exact numbers)")
    add_prices(parser)
    add_trust(parser)
    parser.set_defaults(handler=handler("show"))


def diff(parser: argparse.ArgumentParser) -> None:
    """``diff``'s parser."""
    parser.description = (
        "memtape diff RUN A B: what changed from event A to event B of a run. "
        "memtape diff RUN1 RUN2 --step N: the states after the N-th command of two runs "
        "of the same inputs (steps count commands, so two policies line up)."
    )
    parser.add_argument(
        "targets",
        nargs="+",
        metavar="TARGET",
        help="RUN A B (a run and two event numbers), or RUN1 RUN2 with --step N",
    )
    parser.add_argument(
        "--step", type=integer, metavar="N", help="compare two runs after command N"
    )
    parser.add_argument("--json", action="store_true", help="print JSON (exact numbers)")
    add_trust(parser)
    parser.set_defaults(handler=handler("diff"))


def policies(parser: argparse.ArgumentParser) -> None:
    """``policies``'s parser."""
    parser.description = (
        "List every policy with its axis, parameters (with defaults) and promises; "
        "with NAME, show one in full: what it does, each parameter's default and "
        "meaning, its promises and its upstream source."
    )
    parser.add_argument("name", nargs="?", metavar="NAME", help="a policy's name")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(handler=handler("policies"))


def runs(parser: argparse.ArgumentParser) -> None:
    """``runs``'s parser."""
    parser.description = (
        "List the runs a store holds: id, scenario, events, policies, creation time."
    )
    parser.add_argument("store", type=Path, metavar="STORE", help="a run store (a .db file)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(handler=handler("runs"))


def check(parser: argparse.ArgumentParser) -> None:
    """``check``'s parser."""
    parser.description = (
        "Re-fold a run file, verify the kernel's invariants and the log's integrity (its "
        "hash chain, and its signature when MEMTAPE_SIGNING_KEY is set), and decide every "
        "recorded command again, reporting the first event that differs. "
        "Exit 0 when clean, 1 when anything is wrong in a log it could open, 2 when the "
        "file cannot be opened or read as a run."
    )
    parser.add_argument("run", metavar="RUN", type=Path, help=RUN_FILE_HELP)
    parser.add_argument(
        "--live",
        action="store_true",
        help=(
            "also ask the model again each question the run recorded (no cache), and report "
            "each answer that differs (by default the recorded answers are used: nothing is asked)"
        ),
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="llm.PARAM=VALUE",
        help=(
            "the model --live asks, e.g. --set llm.model=NAME [--set llm.base_url=URL] "
            "(a run's own [llm] table is asked only with --trust; repeatable)"
        ),
    )
    parser.add_argument(
        "--require-signed",
        action="store_true",
        help=(
            "fail a run that is not signed under MEMTAPE_SIGNING_KEY: unsigned (a removed "
            "signature leaves a run so), unchained, or signed with another key (also "
            "MEMTAPE_REQUIRE_SIGNED=1, which every command that reads a run honours)"
        ),
    )
    add_trust(parser)
    add_quiet(parser)
    parser.set_defaults(handler=handler("check"))


def export(parser: argparse.ArgumentParser) -> None:
    """``export``'s parser."""
    parser.description = (
        "Write a copy of a run in which every free text (turns, facts, keys, episodes, "
        "distilled facts and rules, header texts) is a stable placeholder of the same token "
        "count: every figure stays the same, none of the user's data does."
    )
    parser.add_argument("run", metavar="RUN", type=Path, help=RUN_FILE_HELP)
    parser.add_argument("--redact", action="store_true", required=True, help="replace free texts")
    parser.add_argument(
        "--out", required=True, metavar="COPY.jsonl", help="the JSONL file to write"
    )
    parser.set_defaults(handler=handler("export"))


def fork(parser: argparse.ArgumentParser) -> None:
    """``fork``'s parser."""
    parser.description = (
        "Keep the first N events of a run (N must fall between commands) and re-decide "
        "the remaining commands with the given settings: a counterfactual."
    )
    parser.add_argument("run", metavar="RUN", help=RUN_HELP)
    parser.add_argument(
        "--at", type=integer, required=True, metavar="N", help="keep the first N events"
    )
    add_settings(parser)
    parser.add_argument(
        "--out",
        required=True,
        metavar="RUN2.jsonl",
        help="a JSONL file (replaced), or a .db store the fork is added to",
    )
    add_trust(parser)
    parser.set_defaults(handler=handler("fork"))


def why(parser: argparse.ArgumentParser) -> None:
    """``why``'s parser."""
    parser.description = (
        "The life of a turn (turn:5) or a fact (its key, or its id) in a run, event by "
        "event, with the numbers that decided each step recomputed from the states there."
    )
    parser.add_argument("run", metavar="RUN", help=RUN_HELP)
    parser.add_argument(
        "target",
        metavar="turn:N|KEY|ID",
        help="a turn (turn:5), a fact by its key (fact:KEY, or the bare key) or id, "
        "or a memory block (block:LABEL)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON (exact numbers)")
    add_prices(parser)
    add_trust(parser)
    parser.set_defaults(handler=handler("why"))


def audit(parser: argparse.ArgumentParser) -> None:
    """``audit``'s parser."""
    parser.description = (
        "Count, per probe kind, the probes each compaction kept and lost, with the event "
        "that lost each one and the first later turn that mentioned it again (a harmful "
        "loss); one column per --policy."
    )
    parser.add_argument("session", metavar="SESSION|RUN", help=RUN_HELP)
    parser.add_argument(
        "--policy",
        action="append",
        default=[],
        metavar="NAME[:k=v,...]",
        help="a compaction policy to re-decide the session under (repeatable: one column each)",
    )
    parser.add_argument(
        "--probes",
        metavar="auto|FILE",
        help="the probes to count (default: the scenario's own, else auto)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON (exact numbers)")
    add_trust(parser)
    parser.set_defaults(handler=handler("audit"))


def timeline(parser: argparse.ArgumentParser) -> None:
    """``timeline``'s parser."""
    parser.description = "One row per event of a run (a run file, or a scenario)."
    parser.add_argument("run", metavar="RUN", help=RUN_HELP)
    parser.add_argument("--json", action="store_true", help="print JSON (exact numbers)")
    add_trust(parser)
    parser.set_defaults(handler=handler("timeline"))


COMMANDS = {
    "demo": Command("walk through the three seed mechanisms", demo),
    "run": Command("run a scenario and record its events", run),
    "show": Command("the window, the store and the memory at one point of a run", show),
    "diff": Command("what changed between two points of a run, or two runs at one step", diff),
    "policies": Command("list the policies memtape ships, or show one in full", policies),
    "runs": Command("list the runs in a store (runs.db)", runs),
    "check": Command("verify a run file: integrity, invariants, and a re-decision", check),
    "export": Command("a copy of a run with every free text replaced, for a bug report", export),
    "fork": Command("re-decide a run from a point under changed policy parameters", fork),
    "why": Command("the life of a turn or a fact, with the numbers behind each step", why),
    "audit": Command(
        "what each compaction lost, by probe kind, and which losses a later turn needed", audit
    ),
    "timeline": Command("one row per event", timeline),
}
"""This family's commands, in the order ``memtape --help`` lists them."""
