"""What the commands that write a file share: where their output may go, and writing a
scenario file."""

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from memtape.core.errors import BadInput, MemtapeError
from memtape.core.paths import same_file
from memtape.core.visible import visible
from memtape.lab.files import output_path, write_atomic
from memtape.storage import parse_address


def run_output(text: str) -> Path:
    """A run's output path: a file or a store, never one run of a store (``runs.db#1``)."""
    if parse_address(text)[1] is not None:
        raise MemtapeError(f"{text}: --out takes a run file or a store, not the address of a run")
    return output_path(text)


def not_an_input(out: Path, targets: Iterable[str]) -> Path:
    """``out``, refused if it is the file one of ``targets`` names (a run, a store, a
    scenario, a transcript): the output would replace what it was made from."""
    for target in targets:
        if same_file(out, parse_address(target)[0]):
            raise BadInput(f"{out}: cannot write it: it is {target}, which this command reads")
    return out


def write_scenario(text: str, make: Callable[[], str], reads: Sequence[str] = ()) -> int:
    """Write ``make()`` to the path ``text``, refused first if it is one of ``reads``."""
    # The path is checked before ``make``: a long generation should not end in a refusal.
    out = not_an_input(output_path(text), reads)
    write_atomic(out, make().encode("utf-8"))
    print(f"wrote {visible(str(out))}")
    return 0
