"""The compactions a transcript recorded, as a scenario's ``recorded`` table holds them.

``CompactionRecord`` is one of them; ``read_record`` reads and checks one entry of the
table's ``compactions`` list. The policy that replays them is
``memtape.policies.window.recorded``.
"""

from collections.abc import Mapping
from typing import Any

import attrs

from memtape.core.errors import BadInput
from memtape.policies.plumbing.params import Params


@attrs.frozen
class CompactionRecord:
    """One compaction a transcript recorded: before turn ``before`` the agent's context became
    ``summary``; ``trigger`` and ``pre_tokens`` are what the transcript said of it."""

    before: int
    summary: str
    trigger: str | None = None
    pre_tokens: int | None = None
    post_tokens: int | None = None
    preserved: tuple[int, int] | None = None
    """The first and last turn the agent kept verbatim, or None: it folded every turn."""
    folded: tuple[tuple[int, int], ...] | None = None
    """The turns folded into the summary (first and last of each run), or None: every HOT
    turn before ``before`` but the ``preserved`` ones."""
    dropped: tuple[tuple[int, int], ...] = ()
    """The turns dropped with nothing standing for them (first and last of each run)."""
    cleared: tuple[tuple[int, str], ...] = ()
    """The turns that stay HOT reading another text from now on, and that text."""
    label: str | None = None
    """What the record says of itself (where the agent did it), for ``memtape why``."""

    def params(self) -> dict[str, Any]:
        """The record as a scenario table writes it (absent fields left out)."""
        table: dict[str, Any] = {"before": self.before}
        if self.summary or not (self.dropped or self.cleared):
            table["summary"] = self.summary
        if self.trigger is not None:
            table["trigger"] = self.trigger
        if self.pre_tokens is not None:
            table["pre_tokens"] = self.pre_tokens
        if self.post_tokens is not None:
            table["post_tokens"] = self.post_tokens
        if self.preserved is not None:
            table["preserved"] = list(self.preserved)
        if self.folded is not None:
            table["folded"] = [list(run) for run in self.folded]
        if self.dropped:
            table["dropped"] = [list(run) for run in self.dropped]
        if self.cleared:
            table["cleared"] = [{"turn": turn, "text": text} for turn, text in self.cleared]
        if self.label is not None:
            table["label"] = self.label
        return table


def read_record(item: Any, where: str) -> CompactionRecord:
    """One entry of a ``recorded`` table's ``compactions`` list, checked; a refusal names
    ``where`` and the field."""
    if not isinstance(item, Mapping):
        raise BadInput(f"{where}: a compaction is a table with before and summary, got {item!r}")
    params = Params(item, where)
    before = params.integer("before", minimum=2)
    moves = "dropped" in item or "cleared" in item
    summary = params.text("summary", "" if moves else None)
    trigger = params.optional("trigger")
    pre_tokens = params.optional("pre_tokens")
    post_tokens = params.optional("post_tokens")
    preserved = params.optional("preserved")
    folded = params.optional("folded")
    dropped = params.optional("dropped")
    cleared = params.optional("cleared")
    label = params.optional("label")
    params.done()
    if preserved is not None:
        if not isinstance(preserved, list) or len(preserved) != 2:
            raise params.error("preserved", f"must be [FIRST, LAST] turns, got {preserved!r}")
        preserved = (preserved[0], preserved[1])
    record = CompactionRecord(
        before,
        summary,
        trigger,
        pre_tokens,
        post_tokens,
        preserved,
        folded=None if folded is None else _runs(folded, f"{where}: folded"),
        dropped=() if dropped is None else _runs(dropped, f"{where}: dropped"),
        cleared=() if cleared is None else _clearings(cleared, f"{where}: cleared"),
        label=label,
    )
    check_record(record, where)
    return record


def check_record(record: CompactionRecord, where: str) -> None:
    """Refuse, naming ``where``, a record whose fields are not of their kinds or whose turns
    are not before its own (one built in code is held to what a table is)."""
    before, pre = record.before, record.pre_tokens
    if isinstance(before, bool) or not isinstance(before, int) or before < 2:
        raise BadInput(f"{where}: before must be an integer >= 2, got {before!r}")
    if not isinstance(record.summary, str):
        raise BadInput(f"{where}: summary must be a string, got {record.summary!r}")
    if record.trigger is not None and not isinstance(record.trigger, str):
        raise BadInput(f"{where}: trigger must be a string, got {record.trigger!r}")
    for name, count in (("pre_tokens", pre), ("post_tokens", record.post_tokens)):
        if count is not None and (
            isinstance(count, bool) or not isinstance(count, int) or count < 0
        ):
            raise BadInput(f"{where}: {name} must be an integer >= 0, got {count!r}")
    if record.label is not None and not isinstance(record.label, str):
        raise BadInput(f"{where}: label must be a string, got {record.label!r}")
    for name, runs in (("folded", record.folded or ()), ("dropped", record.dropped)):
        for run in runs:
            if not (
                isinstance(run, tuple)
                and len(run) == 2
                and all(isinstance(n, int) and not isinstance(n, bool) for n in run)
                and 1 <= run[0] <= run[1] < before
            ):
                raise BadInput(
                    f"{where}: {name} must be runs of turns FIRST <= LAST before turn "
                    f"{before}, got {run!r}"
                )
    for cleared in record.cleared:
        if not (
            isinstance(cleared, tuple)
            and len(cleared) == 2
            and isinstance(cleared[0], int)
            and not isinstance(cleared[0], bool)
            and 1 <= cleared[0] < before
            and isinstance(cleared[1], str)
        ):
            raise BadInput(
                f"{where}: cleared must be turns before turn {before} and their texts, "
                f"got {cleared!r}"
            )
    kept = record.preserved
    if kept is not None and not (
        isinstance(kept, tuple)
        and len(kept) == 2
        and all(isinstance(n, int) and not isinstance(n, bool) for n in kept)
        and 1 <= kept[0] <= kept[1] < before
    ):
        raise BadInput(
            f"{where}: preserved must be two turns FIRST <= LAST before turn {before}, got {kept!r}"
        )


def _runs(value: Any, where: str) -> tuple[tuple[int, int], ...]:
    """A record's ``[[FIRST, LAST], ...]`` (checked against its turn by ``check_record``)."""
    if not isinstance(value, list) or not all(
        isinstance(run, list) and len(run) == 2 for run in value
    ):
        raise BadInput(f"{where}: must be a list of [FIRST, LAST] turns, got {value!r}")
    return tuple((run[0], run[1]) for run in value)


def _clearings(value: Any, where: str) -> tuple[tuple[int, str], ...]:
    """A record's ``[{turn = T, text = "..."}, ...]``."""
    if not isinstance(value, list):
        raise BadInput(f"{where}: must be a list of tables with turn and text, got {value!r}")
    clearings = []
    for number, entry in enumerate(value):
        if not isinstance(entry, Mapping):
            raise BadInput(f"{where}[{number}]: a table with turn and text, got {entry!r}")
        params = Params(entry, f"{where}[{number}]")
        turn = params.integer("turn", minimum=1)
        text = params.text("text")
        params.done()
        clearings.append((turn, text))
    return tuple(clearings)
