"""``memtape import``: an agent's transcript as a scenario file."""

import argparse
import sys
import warnings
from collections.abc import Callable

from memtape.commandline.output import complain, print_lines, terminal_width
from memtape.commandline.writing import write_scenario
from memtape.core.visible import visible
from memtape.lab.choices import AUTO, DATA_SETS
from memtape.lab.importers import Ledger, import_transcript
from memtape.lab.importers.capture import Thread
from memtape.lab.importers.fields import UnreadCount
from memtape.lab.importers.records import SkippedLine, UnfinishedLine
from memtape.lab.importers.scenario import CallsLeftWaiting, NothingSalient
from memtape.lab.importers.tokens import Comparison, TokenizerWarning
from memtape.projections.wrapping import cells


def run(args: argparse.Namespace) -> int:
    """Write the transcript's scenario to ``--out``; progress over its messages on stderr
    (a bar on a terminal, lines with ``-v``, none with ``-q``)."""
    from memtape.lab.progress import Stages, progress_mode  # noqa: PLC0415 (rich, on a bar)

    mode = progress_mode(
        sys.stderr, verbose=bool(getattr(args, "verbose", False)), quiet=bool(args.quiet)
    )
    with Stages(str(args.chat), mode=mode, err=sys.stderr, unit="messages") as messages:

        def heard(done: int, total: int) -> None:
            messages.update("", done, total)
            if done == total:  # gone before "wrote ..." is printed
                messages.close()

        return _write(args, heard if mode != "off" else None)


def _write(args: argparse.Namespace, heard: Callable[[int, int], None] | None) -> int:
    """Write the scenario, ``heard`` told of the messages made steps; warn if a line was
    skipped (the last cut short, or a bad one under --skip-bad-lines) or nothing is salient;
    print the import's ledger and recorded compactions once the scenario is written."""
    reads = [str(args.chat)] + ([] if args.probes in {None, AUTO} else [args.probes])
    ledgers: list[Ledger] = []
    threads: list[Thread] = []
    compared: list[str] = []
    comparisons: list[Comparison] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", NothingSalient)
        warnings.simplefilter("always", CallsLeftWaiting)
        warnings.simplefilter("always", UnfinishedLine)
        warnings.simplefilter("always", SkippedLine)
        warnings.simplefilter("always", TokenizerWarning)
        warnings.simplefilter("always", UnreadCount)
        if args.format in DATA_SETS or args.question is not None or args.sample is not None:
            return write_scenario(args.out, lambda: _data_set(args), reads)
        status = write_scenario(
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
                progress=heard,
                skip_bad_lines=args.skip_bad_lines,
                ledger=ledgers.append,
                told=compared.append,
                compared=comparisons.append,
                observations=args.observations,
                key=args.path,
                thread=args.thread,
                threads=threads.extend,
            ),
            reads,
        )
    for warning in caught:
        if isinstance(
            warning.message,
            NothingSalient | CallsLeftWaiting | UnfinishedLine | SkippedLine | TokenizerWarning,
        ):
            complain("warning", visible(str(warning.message), "message"))
    unread = [
        str(warning.message) for warning in caught if isinstance(warning.message, UnreadCount)
    ]
    if unread:
        more = f" (and {len(unread) - 1} more such counts)" if len(unread) > 1 else ""
        complain("warning", f"{visible(unread[0], 'message')}{more}")
    width = terminal_width()
    for thread in threads:
        print(_cut(visible(thread.line(), "message"), width))
    said = [line for ledger in ledgers for line in ledger.lines()] + compared
    said += [comparison.line() for comparison in comparisons] if status == 0 else []
    print_lines((visible(line, "message") for line in said), width)
    return status


def _data_set(args: argparse.Namespace) -> str:
    """The scenario of one item of a long-memory data set's file (``--format longmemeval``
    with ``--question``, ``--format locomo`` with ``--sample``); an option of the other
    data set, or of a transcript, is refused."""
    from memtape.core.errors import BadInput  # noqa: PLC0415 (a refusal only)
    from memtape.lab.longmemory import import_benchmark  # noqa: PLC0415

    wanted = {"longmemeval": ("--question", args.question), "locomo": ("--sample", args.sample)}
    for format, (option, value) in wanted.items():
        if value is not None and args.format != format:
            raise BadInput(f"{option} is for --format {format}, not {args.format}")
    transcript_only = {
        "--salient": args.salient is not None,
        "--pin": args.pin != "none",
        "--sidechains": args.sidechains,
        "--probes": args.probes is not None,
        "--skip-bad-lines": args.skip_bad_lines,
        "--observations": args.observations != "auto",
        "--path": args.path is not None,
    }
    for option, given in transcript_only.items():
        if given:
            raise BadInput(f"{option} is for transcripts, not --format {args.format}")
    item = args.question if args.format == "longmemeval" else args.sample
    return import_benchmark(
        args.chat,
        args.format,
        item=item,
        budget=args.budget,
        hot_n=args.hot_n,
        tokenizer=args.tokenizer,
    )


def _cut(line: str, width: int | None) -> str:
    """``line`` cut to ``width`` cells, ``...`` saying so (a pipe gets it whole)."""
    if width is None or cells(line) <= width:
        return line
    kept = line
    while kept and cells(kept) > width - 3:
        kept = kept[: max(len(kept) - max(cells(kept) - width + 3, 1), 0)]
    return kept + "..."
