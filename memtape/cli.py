"""The ``memtape`` command: the dispatch to each command.

Every error the user can cause is one line on stderr and exit status 2:
no traceback, and nothing written.

Building the parser imports no command: each is a module of
``memtape.commandline``, imported when it runs. The parser itself is
``memtape.commandline.parsing``'s, which fills in the arguments of the
command being run only. ``memtape --help`` starts as quickly as Python
itself, nearly (``tests/test_quick_start.py`` holds the modules it imports).
"""

import argparse
import gc
import sys
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext

from memtape.commandline.parsing.top import EVERY, EXIT_USAGE, build, for_arguments, subcommands
from memtape.core.collector import collector_paused
from memtape.core.errors import MemtapeError
from memtape.core.visible import visible

EXIT_INTERRUPTED = 130
"""The status after Ctrl-C, as a shell reports a command that SIGINT stopped."""


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
        parser = for_arguments(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    args.as_process = as_process
    try:
        with _verbosity(args.verbose), _no_cache() if args.no_cache else nullcontext():
            status: int = args.handler(args)
    except MemtapeError as error:
        from memtape.commandline.output import complain  # noqa: PLC0415 (an error only)

        complain("error", visible(str(error), "message"))
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


def _verbosity(verbose: bool) -> AbstractContextManager[object]:
    """Decision entries on stderr while the command runs, with ``-v``; nothing otherwise
    (a quiet command does not import ``logging``)."""
    if not verbose:
        return nullcontext()
    from memtape.commandline.verbose import decisions_shown  # noqa: PLC0415 (-v only)

    return decisions_shown()


def _no_cache() -> AbstractContextManager[object]:
    """No response cache while a command runs (``--no-cache``)."""
    from memtape.llm.cache import caching  # noqa: PLC0415 (SQLite only when it is asked about)

    return caching(None)


def _parser() -> argparse.ArgumentParser:
    """The whole parser, every command filled in (the docs' reference and the tests read it)."""
    return build(EVERY)


_subcommands = subcommands
"""Every subcommand of a parser (``memtape.commandline.parsing.top.subcommands``)."""


if __name__ == "__main__":
    sys.exit(main())
