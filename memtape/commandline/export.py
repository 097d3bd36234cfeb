"""``memtape export --redact``: a copy of a run with every free text replaced."""

import argparse
import sys

from memtape.core.errors import MemtapeError, one_line
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
        print(f"memtape: warning: {args.run}: {one_line(dropped)}", file=sys.stderr)
    print(f"wrote a redacted copy of {args.run} ({len(redacted.run)} events) to {out}")
    return 0
