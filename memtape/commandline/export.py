"""``memtape export --redact``: a copy of a run with every free text replaced."""

import argparse

from memtape.commandline.output import complain
from memtape.core.errors import MemtapeError
from memtape.core.visible import visible
from memtape.lab.files import output_path
from memtape.runs.redact import export_redacted
from memtape.runs.signed import signature_required
from memtape.storage import is_sqlite


def run(args: argparse.Namespace) -> int:
    """Write the redacted copy to ``--out``."""
    out = output_path(args.out)
    if is_sqlite(out):
        raise MemtapeError(f"{out}: export writes one JSONL file; give it another name")
    redacted = export_redacted(args.run, out, require=signature_required())
    for dropped in redacted.dropped:
        warning = visible(f"{args.run}: {dropped}", "message")
        complain("warning", warning)
    print(
        f"wrote a redacted copy of {visible(str(args.run))} ({len(redacted.run)} events) "
        f"to {visible(str(out))}"
    )
    return 0
