"""What a run's untrusted policy code means to the commands that read it: the hint that says
how to trust it, the refusal a stand-in gives, and telling a stand-in from a policy.

Apart from ``memtape.policies.unimported`` (the stand-ins themselves), so that
a command reading a run that names no policy by import path never defines
the stand-ins' classes (``memtape.policies.session.is_stand_in`` tells one without
importing them).
"""

from memtape.core.errors import BadInput

TRUST_HINT = "if you trust this run's code, pass --trust or set MEMTAPE_TRUST=1"
"""How to proceed when a run's own policy code is needed: the user says it is trusted."""


class NotImported(BadInput):
    """A run's policy was needed (to decide, or to score) but is named by import path,
    and memtape imports no code a run file names unless told to trust it."""


def not_imported(path: str, needed: str) -> str:
    """The one-line reason a stand-in for ``path`` cannot do what was ``needed``."""
    return (
        f"{needed} needs policy {path!r}, which this run names by import path; run files "
        f"are data, so memtape did not import it; {TRUST_HINT}"
    )
