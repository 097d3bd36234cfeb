"""The hash chain that makes a run's log tamper-evident, and the optional signature of its head.

A run's chain starts from its header and takes in its events in order::

    seed   = sha256("memtape chain 1\\n" ‖ canonical(header minus counts, head and signature))
    link_i = sha256(link_(i-1) ‖ canonical(record_i))        with link_0 = seed
    head   = link_n

``record_i`` is event i as stored, without its link: its position, step,
type, version and fields, the command on a batch's first event and the end
mark on its last (a JSONL line, or a SQLite row spelled as one). ``canonical``
is JSON with sorted keys and no spaces (orjson), so a line and a row of the
same event hash alike however each was spelled, and a reformatted file still
checks. Each event stores the first 128 bits of its link (32 hex digits, ``h``)
to say where a chain breaks; the header stores the whole head (64 hex digits,
``chain``), so a cut tail or a changed header shows too. The links chain on
whole digests: the shortened ones stored are only for finding the break.

Anyone can recompute a chain, so a chain alone shows an edit by someone who
did not. With a key (``MEMTAPE_SIGNING_KEY``) the head is signed
(HMAC-SHA256, ``signature``): an edit that recomputes the chain cannot
recompute the signature without the key. The key itself is never written.
A write without the key leaves the run unsigned, even one signed before: only
a holder of the key can sign, and a stale signature would only say "broken".
Removing a signature leaves an unsigned run, which is all a reader without
other knowledge can tell; ``memtape check --require-signed`` (or
``MEMTAPE_REQUIRE_SIGNED=1``) refuses such a run. For the same reason a
write with the key extends only a run already validly signed under it (or
an empty one): it would otherwise sign what nobody signed.

The head says how far the run goes. Anyone can chain more events on after
it, so what comes after the event whose link is the head (``covered``) is no
part of the run: readers load only the steps up to it, and a check reports
the rest as added after the run was written, a torn tail or not.
"""

import enum
import os
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs
import orjson

from memtape.core.reprs import fields_repr

LINK = "h"
"""The field of an event line holding its link (the first ``LINK_HEX`` hex digits)."""

HEAD = "chain"
"""The header field holding the chain's head (the last event's whole link, in hex)."""

SIGNATURE = "signature"
"""The header field holding the HMAC-SHA256 of the head, in hex, when a key signed it."""

KEY_VARIABLE = "MEMTAPE_SIGNING_KEY"
"""The environment variable whose value (as UTF-8) is the signing key."""

LINK_HEX = 32
"""Hex digits of its link an event stores: 128 bits."""

HEAD_HEX = 64
"""Hex digits of the head the header stores: the whole SHA-256."""

UNHASHED = frozenset({"events", "steps", HEAD, SIGNATURE})
"""Header fields the seed leaves out: the counts (the chain covers every event) and the
chain's own fields."""

_SEED_TAG = b"memtape chain 1\n"
_HEX = re.compile(r"[0-9a-f]+")


def canonical(data: Any) -> bytes:
    """``data`` as the chain hashes it: JSON with sorted keys and no spaces.

    Raises ``orjson.JSONEncodeError`` (a ``TypeError``) for what JSON cannot
    hold, or orjson cannot: an integer past 64 bits, nesting past 254 levels.
    """
    return orjson.dumps(data, option=orjson.OPT_SORT_KEYS)


def seed(header: Mapping[str, Any]) -> bytes:
    """The chain's first link: the digest of the header, without its counts and chain fields."""
    import hashlib  # noqa: PLC0415 (OpenSSL's, loaded by a write or a check only)

    kept = {name: value for name, value in header.items() if name not in UNHASHED}
    return hashlib.sha256(_SEED_TAG + canonical(kept)).digest()


def link(previous: bytes, record: Mapping[str, Any]) -> bytes:
    """The link after ``previous`` for an event stored as ``record`` (without its own link)."""
    import hashlib  # noqa: PLC0415 (OpenSSL's, loaded by a write or a check only)

    return hashlib.sha256(previous + canonical(record)).digest()


def shown(digest: bytes) -> str:
    """What an event stores of its link: the first ``LINK_HEX`` hex digits."""
    return digest.hex()[:LINK_HEX]


def sign(head: str, key: bytes) -> str:
    """The signature of a chain's ``head`` (its hex) under ``key``: HMAC-SHA256, in hex."""
    import hashlib  # noqa: PLC0415 (OpenSSL's, loaded by a write or a check only)
    import hmac  # noqa: PLC0415

    return hmac.new(key, head.encode("ascii"), hashlib.sha256).hexdigest()


def signing_key() -> bytes | None:
    """The key in ``MEMTAPE_SIGNING_KEY``, or None when it is unset or empty."""
    value = os.environ.get(KEY_VARIABLE)
    # surrogateescape gives back the variable's own bytes, whatever they are.
    return value.encode("utf-8", "surrogateescape") if value else None


class Chain:
    """A chain being extended one event at a time, from a header's seed or a stored head."""

    def __init__(self, start: bytes) -> None:
        self._last = start

    @classmethod
    def of(cls, header: Mapping[str, Any]) -> "Chain":
        """The empty chain of a run with ``header``: its head is the header's seed."""
        return cls(seed(header))

    def add(self, record: Mapping[str, Any]) -> str:
        """Take in the next event, stored as ``record``; what it stores as its link."""
        self._last = link(self._last, record)
        return shown(self._last)

    @property
    def head(self) -> str:
        """The whole last link, in hex: what the header stores."""
        return self._last.hex()

    def signature(self, key: bytes | None) -> str | None:
        """The head's signature under ``key``, or None without one."""
        return None if key is None else sign(self.head, key)


class Signature(enum.Enum):
    """What a run's signature says, as far as this reader can tell."""

    NONE = "unsigned"
    VALID = "signed, and the signature is valid"
    INVALID = "signed, and the signature does not match"
    UNVERIFIED = "signed, but unverifiable without the key"


@attrs.frozen
class Break:
    """Where a chain first fails: an event's position (0: the header), and how."""

    __repr__ = fields_repr

    position: int
    problem: str


@attrs.frozen
class Verdict:
    """What verifying a run's chain found.

    ``chained`` says the run carries a chain at all (runs written before
    memtape chained its logs do not); ``broken`` is the first place it
    fails, or None; ``signature`` what its signature says. ``covered`` is
    the position of the event whose recomputed link is the header's head
    (0: the head is the seed, no event), or None when the chain never
    reaches it before ``broken``: the events the head, and so the signature,
    vouches for are those up to it.
    """

    __repr__ = fields_repr

    chained: bool
    broken: Break | None
    signature: Signature
    covered: int | None = None

    def vouches(self, events: int) -> bool:
        """Whether the chain vouches for the first ``events`` events: it holds up to them
        and they end at or before its head (what a reader shows need be no more)."""
        if self.covered is None or events > self.covered:
            return False
        return self.broken is None or self.broken.position > events


def _position(position: int) -> str:
    return f"position {position}"


def verify(
    header: Mapping[str, Any],
    records: Iterable[tuple[Mapping[str, Any], Any]],
    key: bytes | None,
    *,
    where: Callable[[int], str] = _position,
) -> Verdict:
    """Verify a run's chain: ``header`` as stored, then each event's record and stored link.

    ``records`` gives, in order, each event as stored without its link, and
    the link it stored (None when it has none); a torn tail (a last command
    without its end mark) is given too, an unfinished last line is not.
    Every link must follow from the one before, and the last whole command
    (the last record with ``"end": true``) must end at the header's head:
    a run cut short, or with events chained on after its head (forged ones
    ahead of a torn tail included), breaks there. ``where`` names an event's
    place for the problem (``line 3`` in a file). Never raises for what it
    is given: anything that does not verify is the ``Break``.
    """
    head = header.get(HEAD)
    signature = signature_status(head, header.get(SIGNATURE), key)
    if head is None:
        for position, (_, stored) in enumerate(records, start=1):
            if stored is not None:
                problem = f"{where(position)} carries a link, but the header has no chain head"
                return Verdict(True, Break(0, f"{problem} (it was removed)"), signature)
        return Verdict(False, None, signature)
    if not (isinstance(head, str) and len(head) == HEAD_HEX and _HEX.fullmatch(head)):
        problem = f"the chain head must be {HEAD_HEX} lowercase hex digits, got {head!r}"
        return Verdict(True, Break(0, problem), signature)
    try:
        last = seed(header)
    except TypeError as error:
        return Verdict(True, Break(0, f"the header cannot be hashed ({error})"), signature)
    target = bytes.fromhex(head)
    covered = 0 if last == target else None
    whole = 0
    for position, (record, stored) in enumerate(records, start=1):
        if stored is None:
            problem = f"{where(position)} has no link, though the header heads a chain"
            return Verdict(True, Break(position, problem), signature, covered)
        try:
            last = link(last, record)
        except TypeError as error:
            problem = f"{where(position)} cannot be hashed ({error})"
            return Verdict(True, Break(position, problem), signature, covered)
        if stored != shown(last):
            before = "the header" if position == 1 else "the header or an event before it"
            problem = (
                f"{where(position)} breaks the chain: it, or {before}, "
                "was changed after the run was written"
            )
            return Verdict(True, Break(position, problem), signature, covered)
        if covered is None and last == target:
            covered = position
        if record.get("end") is True:
            whole = position
    broken = _past_head(covered, whole, where)
    return Verdict(True, broken, signature, covered)


def _past_head(covered: int | None, whole: int, where: Callable[[int], str]) -> Break | None:
    """What is wrong when the last whole command (at ``whole``) does not end at the head,
    which the link at ``covered`` is (None: none is)."""
    if covered == whole:
        return None
    if covered is not None and covered < whole:
        problem = (
            f"{where(covered + 1)} and the events after it come after the header's chain head "
            f"({'the header' if covered == 0 else where(covered)} ends the run): they were "
            "added after the run was written, and are not part of it"
        )
        return Break(covered + 1, problem)
    if whole == 0:
        return Break(0, "the chain head is not the header's own: the header was changed")
    problem = (
        f"{where(whole)} is the last, but its link is not the header's chain head: "
        "events were cut from the end, or the head was changed"
    )
    return Break(whole, problem)


def signature_status(head: Any, signature: Any, key: bytes | None) -> Signature:
    """What a stored ``signature`` of a stored ``head`` says under ``key`` (one HMAC): only
    the head is judged, not the chain that should lead to it (``verify`` does both)."""
    if signature is None:
        return Signature.NONE
    if key is None:
        return Signature.UNVERIFIED
    if not (isinstance(head, str) and isinstance(signature, str)):
        return Signature.INVALID
    if not (head.isascii() and signature.isascii()):
        return Signature.INVALID
    import hmac  # noqa: PLC0415 (with ``sign``)

    return Signature.VALID if hmac.compare_digest(sign(head, key), signature) else Signature.INVALID
