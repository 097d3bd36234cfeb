"""Upcasting: bring events stored at an older schema version to the current one.

Each event type carries a schema version in ``VERSION``. An upcaster is a
pure function that takes an event's fields at version ``v`` to version
``v + 1``; loading an event at version ``v`` applies the upcasters for
``v``, ``v + 1``, ... until it reaches the class's ``VERSION``, and only then
structures it (``memtape.core.codec.event_from_data`` does this, so every
loader gets it for free).

To change an event's fields in a later memtape:

1. change the class in ``memtape.core.events`` and bump its ``VERSION``
   (say ``TurnAdded`` from 1 to 2);
2. write a function here that turns a version-1 field dict into a version-2
   one, without mutating its argument, e.g.
   ``def _turn_added_v1_v2(data): return {**data, "lang": "en"}``;
3. register it in ``UPCASTERS`` under the type's name and the version it
   starts from: ``("TurnAdded", 1): _turn_added_v1_v2``;
4. add an old-format fixture under ``tests/fixtures/`` that loads through it.

Upcasters are never removed: a log written at any released version must stay
readable. A version newer than this memtape's is refused, never guessed at.
"""

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from memtape.core.errors import BadInput
from memtape.core.events import EVENT_TYPES

Upcaster = Callable[[dict[str, Any]], dict[str, Any]]
"""Takes an event's fields at one version to the next; pure, never mutates its argument."""

Upcasters = Mapping[tuple[str, int], Upcaster]
"""Upcasters by (event type name, version they start from)."""


def _turn_added_v1_v2(data: dict[str, Any]) -> dict[str, Any]:
    """A version-1 turn made no tool calls, answered none, and was not pinned."""
    return {**data, "calls": [], "answers": [], "pinned": False}


def _compaction_triggered_v1_v2(data: dict[str, Any]) -> dict[str, Any]:
    """A version-1 compaction asked no model and cleared no turn in place."""
    return {**data, "asked": [], "cleared": []}


def _compaction_triggered_v2_v3(data: dict[str, Any]) -> dict[str, Any]:
    """A version-2 compaction named every turn that stayed HOT (``hot``); version 3 names
    only what moves. The list is carried as ``kept``, which the fold checks the split
    against, as it did (a log whose list disagrees with HOT stays refused)."""
    fields = dict(data)
    kept = fields.pop("hot")
    if type(kept) is not list:
        raise TypeError(f"hot must be a list of turn numbers, got {kept!r}")
    fields["kept"] = kept
    return fields


def _consolidated_v1_v2(data: dict[str, Any]) -> dict[str, Any]:
    """A version-1 pass asked no model."""
    return {**data, "asked": []}


def _never_cut(data: dict[str, Any]) -> dict[str, Any]:
    """A model call recorded before answers were capped was never cut (``cut`` 0)."""
    if "asked" not in data:
        return dict(data)
    asked = data["asked"]
    if type(asked) is not list or not all(type(call) is dict for call in asked):
        raise TypeError(f"asked must be a list of model calls, got {asked!r}")
    return {**data, "asked": [{**call, "cut": 0} for call in asked]}


def _fact_written_v1_v2(data: dict[str, Any]) -> dict[str, Any]:
    """A version-1 fact never expires."""
    return {**data, "expires_at": None, "ttl": ""}


def _fact_written_v2_v3(data: dict[str, Any]) -> dict[str, Any]:
    """A version-2 fact was true from its write until a later write retired it."""
    return {**data, "valid_from": None, "valid_to": None}


def _queried_v1_v2(data: dict[str, Any]) -> dict[str, Any]:
    """A version-1 query asked about now."""
    return {**data, "as_of": None, "known_at": None}


def _block_edited_v1_v2(data: dict[str, Any]) -> dict[str, Any]:
    """A version-1 block was never read-only."""
    return {**data, "read_only": False}


def _compaction_triggered_v4_v5(data: dict[str, Any]) -> dict[str, Any]:
    """A version-4 compaction kept nothing for a recall: none was written by one."""
    return {**data, "recall": False}


def _consolidated_v3_v4(data: dict[str, Any]) -> dict[str, Any]:
    """A version-3 pass edited no memory block."""
    return {**data, "blocks": []}


UPCASTERS: Upcasters = {
    ("TurnAdded", 1): _turn_added_v1_v2,
    ("CompactionTriggered", 1): _compaction_triggered_v1_v2,
    ("CompactionTriggered", 2): _compaction_triggered_v2_v3,
    ("CompactionTriggered", 3): _never_cut,
    ("CompactionTriggered", 4): _compaction_triggered_v4_v5,
    ("Consolidated", 1): _consolidated_v1_v2,
    ("Consolidated", 2): _never_cut,
    ("Consolidated", 3): _consolidated_v3_v4,
    ("BlockEdited", 1): _block_edited_v1_v2,
    ("FactWritten", 1): _fact_written_v1_v2,
    ("FactWritten", 2): _fact_written_v2_v3,
    ("Queried", 1): _queried_v1_v2,
}
"""The upcasters memtape ships, by (event type, the version each starts from)."""

_in_force: ContextVar[Upcasters] = ContextVar("upcasters", default=UPCASTERS)


@contextmanager
def use_upcasters(upcasters: Upcasters) -> Iterator[None]:
    """Load events with ``upcasters`` instead of the shipped ones, within the block.

    Every loader (``read_run`` and any other) sees them, since they all decode
    through ``event_from_data``. The previous set is restored on exit; the
    setting is per thread and per asyncio task.
    """
    token = _in_force.set(upcasters)
    try:
        yield
    finally:
        _in_force.reset(token)


def upcast(
    type_name: str,
    version: int,
    data: Any,
    *,
    upcasters: Upcasters | None = None,
    current: int | None = None,
) -> tuple[dict[str, Any], int]:
    """Bring an event's fields from ``version`` to the current one: ``(fields, current)``.

    ``upcasters`` defaults to the set in force (the shipped ones, or those of
    ``use_upcasters``); ``current`` defaults to the event class's ``VERSION``.
    The first upcaster gets a copy of ``data``, so one that sets or pops a
    field leaves the caller's dict as it was. A version newer than ``current``, a version
    with no chain of upcasters to ``current``, a version that is not a
    non-negative integer, fields that are not an object, or fields an
    upcaster cannot read: each is a ``BadInput`` naming the type and versions.
    """
    if current is None:
        cls = EVENT_TYPES.get(type_name)
        if cls is None:
            raise BadInput(f"unknown event type {type_name!r}")
        current = cls.VERSION
    if type(version) is not int:
        raise BadInput(f"{type_name} version {version!r} is not a schema version (an integer)")
    if version < 0:
        raise BadInput(f"{type_name} version {version} is not a schema version (below 0)")
    if version > current:
        raise BadInput(
            f"{type_name} version {version} is not readable here: it is newer than this "
            f"memtape reads ({current}); upgrade memtape"
        )
    if not isinstance(data, dict):
        raise BadInput(f"{type_name}: expected an object of fields, got {data!r}")
    steps = _in_force.get() if upcasters is None else upcasters
    fields: dict[str, Any] = dict(data)
    for start in range(version, current):
        step = steps.get((type_name, start))
        if step is None:
            raise BadInput(
                f"{type_name} version {version} is not readable here: no upcaster from "
                f"version {start} to {start + 1} (this memtape reads version {current})"
            )
        try:
            fields = step(fields)
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise BadInput(
                f"{type_name} version {start} cannot be upcast to version {start + 1}: "
                f"{type(error).__name__}: {error}"
            ) from None
    return fields, current
