"""What a run's signature vouches for, as a command that reads a run or copies it needs it.

A reader loads only the steps its header's chain head covers
(``memtape.core.logfile.cut_at_head``); without a key that is all it can
tell, since anyone can chain events and recompute a head. With
``MEMTAPE_SIGNING_KEY`` set, a reader verifies the chain up to those steps
and the signature over the head, and warns in one line when they do not
hold. With ``MEMTAPE_REQUIRE_SIGNED=1`` (``memtape check --require-signed``)
a run that is not signed under the key, or whose chain does not hold up to
what is loaded, is refused: an unsigned run, one signed with another key, and
one whose signature was removed (which is an unsigned run) alike.

A copy written with the key set is signed (``export``, ``fork``), so it
would vouch for whatever it copies: a copy of a run is written only when the
source's own signature, under the same key, vouches for every step copied.
"""

import os

from memtape.core.chain import KEY_VARIABLE, Signature, Verdict, signing_key
from memtape.core.errors import BadInput
from memtape.storage import verify_address

REQUIRE_VARIABLE = "MEMTAPE_REQUIRE_SIGNED"
"""The environment variable that, set to 1, makes every command that reads a run require
it signed under ``MEMTAPE_SIGNING_KEY`` (as ``memtape check --require-signed`` does)."""

UNKEYED = f"{KEY_VARIABLE} is not set, so no signature can be verified"
"""Why a required signature cannot be had without the key."""

UNSIGNED = "it is unsigned (a signature removed leaves it so)"
"""Why a run without a signature is not signed: it may never have been, or have lost it."""

UNCHAINED = "it is unchained (written before memtape chained its logs), so unsigned"
"""Why a run without a chain is not signed."""


def signature_required(flag: bool = False) -> bool:
    """Whether the user requires runs signed: ``flag`` (``--require-signed``) or
    ``MEMTAPE_REQUIRE_SIGNED=1``."""
    return flag or os.environ.get(REQUIRE_VARIABLE) == "1"


def unsigned_reason(verdict: Verdict, events: int) -> str | None:
    """Why ``verdict`` does not vouch, under the key it was verified with, for a run's first
    ``events`` events; None when it does (chained, holding up to them, validly signed)."""
    if not verdict.chained:
        return UNCHAINED
    if not verdict.vouches(events):
        broken = verdict.broken.problem if verdict.broken is not None else "it breaks"
        return f"its chain does not hold up to its head: {broken}"
    if verdict.signature is Signature.NONE:
        return UNSIGNED
    if verdict.signature is not Signature.VALID:
        return (
            f"its signature does not match under {KEY_VARIABLE}: it was signed with another "
            "key, or changed and chained again without the key"
        )
    return None


def check_reading(address: str, events: int, *, require: bool) -> str | None:
    """Verify the run at ``address``, of which a reader loaded the first ``events`` events,
    when the key is set or a signature ``require``-d; the warning to print, or None.

    Without the key and not required, nothing is verified (nothing is hashed).
    Required, a run the key's signature does not vouch for is a ``BadInput``
    (one line saying why); with the key alone, only a chain that does not
    hold or a signature that does not match is worth a warning: an unsigned
    run is what most runs are.
    """
    required = f"{address}: a signed run is required ({REQUIRE_VARIABLE}=1), but"
    key = signing_key()
    if key is None:
        if require:
            raise BadInput(f"{required} {UNKEYED}")
        return None
    verdict = verify_address(address, key)
    reason = unsigned_reason(verdict, events)
    if reason is None:
        return None
    if require:
        raise BadInput(f"{required} {reason}")
    if not verdict.chained or (
        verdict.signature is not Signature.INVALID and verdict.vouches(events)
    ):
        return None
    return f"not vouched for by its chain and signature: {reason}"


def check_copying(address: str, events: int) -> None:
    """Refuse, in one line, to write a signed copy of the first ``events`` events of the run at
    ``address`` unless its own signature, under the same key, vouches for them.

    Only a write with ``MEMTAPE_SIGNING_KEY`` set signs, so without it every
    copy may be written (unsigned).
    """
    key = signing_key()
    if key is None:
        return
    reason = unsigned_reason(verify_address(address, key), events)
    if reason is not None:
        raise BadInput(
            f"{address}: not signing a copy of it: {reason} (a copy written with "
            f"{KEY_VARIABLE} set is signed; unset it to write an unsigned copy)"
        )
