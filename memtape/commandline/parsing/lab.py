"""The policy lab's commands that run and write scenarios: ``bench`` and ``generate``
(``import`` is ``importing``'s); and the options every written scenario file takes."""

import argparse
from typing import Any

from memtape.commandline.numbers import integer
from memtape.commandline.parsing.arguments import Command, add_prices, add_settings, handler
from memtape.lab.choices import DEFAULT_BUDGET, DEFAULT_HOT_N


def bench(bench: argparse.ArgumentParser) -> None:
    """``bench``'s parser."""
    bench.description = (
        "Run every --policy (compaction or forgetting, NAME or NAME:k=v,k=v) on every "
        "scenario and compare the runs' metrics."
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
    add_settings(bench)
    add_prices(bench)
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
        type=integer,
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
        type=integer,
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
        help="write each cell's run to DIR (new or empty, or with --resume the sweep's own): "
        "show, timeline and check read them",
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
    bench.set_defaults(handler=handler("bench"))


def generate(generate: argparse.ArgumentParser) -> None:
    """``generate``'s parser: one subcommand per kind of scenario file."""
    generate.description = "Write a scenario file from a seed; the same seed gives the same bytes."
    kinds = generate.add_subparsers(title="kinds", metavar="KIND", required=True)
    support = kinds.add_parser("support", help="a support session with planted probes")
    support.add_argument("--turns", type=integer, required=True, metavar="N", help="turns to write")
    support.add_argument(
        "--probe-every",
        type=integer,
        default=40,
        metavar="N",
        help="turns per probe (default: 40)",
    )
    store = kinds.add_parser("store", help="a store workload: writes, rewrites and queries")
    store.add_argument("--steps", type=integer, required=True, metavar="N", help="steps to write")
    store.add_argument(
        "--customers", type=integer, default=12, metavar="N", help="customers (default: 12)"
    )
    store.add_argument(
        "--capacity", type=integer, default=4, metavar="N", help="forgetting capacity (default: 4)"
    )
    store.set_defaults(handler=handler("generate", "store"))
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
            "--seed", type=integer, required=True, metavar="S", help="the same seed, the same file"
        )
        add_header_options(kind, turns=kind in (support, blocks, recall))
    support.set_defaults(handler=handler("generate", "support"))


def _add_recall_generator(kinds: Any) -> argparse.ArgumentParser:
    """``generate recall``: a support session that recalls each probe after it left the window
    (memtape.lab.recall_workload)."""
    kind: argparse.ArgumentParser = kinds.add_parser(
        "recall", help="a support session that recalls each probe after it left the window"
    )
    kind.add_argument("--turns", type=integer, required=True, metavar="N", help="turns to write")
    for option, default, about in (
        ("--probe-every", 40, "turns per probe"),
        ("--recall-after", 20, "turns from a probe to its recall"),
    ):
        kind.add_argument(
            option,
            type=integer,
            default=default,
            metavar="N",
            help=f"{about} (default: {default})",
        )
    kind.set_defaults(handler=handler("generate", "recall"))
    return kind


def _add_blocks_generator(kinds: Any) -> argparse.ArgumentParser:
    """``generate blocks``: a support session whose agent notes each planted fact in a memory
    block (memtape.lab.blocks_workload)."""
    blocks: argparse.ArgumentParser = kinds.add_parser(
        "blocks", help="a support session whose agent keeps notes in a memory block"
    )
    blocks.add_argument("--turns", type=integer, required=True, metavar="N", help="turns to write")
    blocks.add_argument(
        "--probe-every", type=integer, default=40, metavar="N", help="turns per probe (40)"
    )
    blocks.add_argument(
        "--limit", type=integer, default=200, metavar="N", help="the block's characters (200)"
    )
    blocks.set_defaults(handler=handler("generate", "blocks"))
    return blocks


def _add_family_generator(
    kinds: Any, name: str, about: str, customers: int, capacity: int
) -> argparse.ArgumentParser:
    """``generate expiry`` or ``generate temporal``: a store workload of one memory family
    (memtape.lab.expiry_workload, memtape.lab.temporal_workload)."""
    kind: argparse.ArgumentParser = kinds.add_parser(name, help=about)
    kind.add_argument("--steps", type=integer, required=True, metavar="N", help="steps to write")
    kind.add_argument(
        "--customers",
        type=integer,
        default=customers,
        metavar="N",
        help=f"customers (default: {customers})",
    )
    kind.add_argument(
        "--capacity",
        type=integer,
        default=capacity,
        metavar="N",
        help=f"forgetting capacity (default: {capacity})",
    )
    kind.set_defaults(handler=handler("generate", name))
    return kind


def add_header_options(
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
        type=integer,
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
        type=integer,
        default=DEFAULT_HOT_N,
        metavar="N",
        help=f"turns kept verbatim (default: {DEFAULT_HOT_N})",
    )


COMMANDS = {
    "bench": Command("compare policies on the same scenarios: a table, JSON and plots", bench),
    "generate": Command(
        "write a seeded scenario file: a long support session, or a store workload", generate
    ),
}
"""This family's commands, in the order ``memtape --help`` lists them."""
