"""The conservation ledger of an import: what came in, what went out, what was left out and why.

Every import ends with one. A reader counts what the file holds apart
from the turns it builds, so that a reader that loses part of a session
(a branch it did not walk, a result it did not pair) is caught rather
than trusted:

1. ``Tally(source)`` opens the ledger over the file's records.
2. For every record, the reader says what became of it, with the ids of
   the tool calls and tool results the record itself holds, read from its
   raw data (``calls_in`` and ``results_in`` are these, summed over every
   record, whatever the reader went on to do with it):

   - ``tally.took(where, calls=..., results=...)``: the record went into
     the turns (or into a recorded compaction);
   - ``tally.left_out(kind, where, calls=..., results=...)``: the record
     was left out on purpose, as one of ``kind`` (``progress``,
     ``sidechain``, ``rewound branch``...); its calls and results are
     counted as left out, by kind, not lost.

3. ``tally.close(turns)`` gives the ``Ledger``, or refuses the import:
   a record the reader did not account for, or a call or result that came
   in and is neither in a turn nor in a record left out, is named (the
   first one, in file order), and nothing is written.

So calls in = calls out + calls left out, and the same for results; the
ledger shows both sides and each kind left out with its count. A reader
for a new format fills it this way and gets the refusal and the
``[import]`` table for nothing. A reader that imports every record (or
refuses the file) needs only a function reading one record's ids:
``every_record(source, ids)``.
"""

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from memtape.core.errors import BadInput
from memtape.core.plural import counted

if TYPE_CHECKING:
    from memtape.lab.importers.records import Source
    from memtape.lab.importers.transcript import Turns


Ids = Callable[[Any], tuple[Sequence[str], Sequence[str]]]
"""What a format's reader counts in one record's raw data: the ids of the tool calls it
makes and of the calls whose results it carries."""


@attrs.frozen
class LeftOut:
    """The records of one ``kind`` left out of the turns on purpose, and the tool calls
    and results they held."""

    kind: str
    entries: int
    calls: int = 0
    results: int = 0


@attrs.frozen
class Ledger:
    """What one import read and wrote: ``entries`` read (records, and lines skipped),
    ``turns`` written, tool calls and results in (counted from every record) and out (in
    the turns), what was left out by kind, the lines skipped, and the call ids made unique
    (a reused id's later calls: unique id, the file's id)."""

    entries: int
    turns: int
    calls_in: int
    results_in: int
    calls_out: int
    results_out: int
    left_out: tuple[LeftOut, ...] = ()
    skipped_lines: tuple[str, ...] = ()
    renamed: tuple[tuple[str, str], ...] = ()

    def lines(self) -> list[str]:
        """The ledger in words, one fact a line, as ``import`` prints it."""
        lines = [
            f"read {counted(self.entries, 'entry', 'entries')}, wrote "
            f"{counted(self.turns, 'turn')}",
            f"tool calls: {self.calls_in} in, {self.calls_out} out"
            + _aside(sum(kind.calls for kind in self.left_out)),
            f"tool results: {self.results_in} in, {self.results_out} out"
            + _aside(sum(kind.results for kind in self.left_out)),
        ]
        for kind in self.left_out:
            held = [
                counted(n, what) for n, what in ((kind.calls, "call"), (kind.results, "result"))
            ]
            holding = [text for text, n in zip(held, (kind.calls, kind.results), strict=True) if n]
            also = f" (holding {' and '.join(holding)})" if holding else ""
            entries = counted(kind.entries, f"{kind.kind} entry", f"{kind.kind} entries")
            lines.append(f"left out: {entries}{also}")
        lines.extend(f"skipped {line}" for line in self.skipped_lines)
        for unique, original in self.renamed:
            lines.append(f"call id {original!r} made again after it was answered: now {unique!r}")
        return lines

    def table(self) -> dict[str, Any]:
        """The ledger as the scenario's ``[import]`` table (data the loader keeps and no
        policy reads)."""
        table: dict[str, Any] = {
            "entries_read": self.entries,
            "turns_written": self.turns,
            "calls_in": self.calls_in,
            "calls_out": self.calls_out,
            "results_in": self.results_in,
            "results_out": self.results_out,
        }
        if self.left_out:
            table["left_out"] = {kind.kind: kind.entries for kind in self.left_out}
            table["calls_left_out"] = sum(kind.calls for kind in self.left_out)
            table["results_left_out"] = sum(kind.results for kind in self.left_out)
        if self.skipped_lines:
            table["skipped_lines"] = list(self.skipped_lines)
        if self.renamed:
            table["renamed_ids"] = dict(self.renamed)
        return table


def _aside(left: int) -> str:
    return f", {left} in entries left out" if left else ""


class Tally:
    """A ledger being filled by a reader, record by record (see the module's docstring)."""

    def __init__(self, source: "Source") -> None:
        self.source = source
        self._accounted: set[str] = set()
        self._calls: list[tuple[str, str]] = []
        self._results: list[tuple[str, str]] = []
        self._left: dict[str, list[int]] = {}
        self._left_calls: Counter[str] = Counter()
        self._left_results: Counter[str] = Counter()

    def took(self, where: str, *, calls: Iterable[str] = (), results: Iterable[str] = ()) -> None:
        """The record at ``where`` went into the turns; ``calls`` and ``results`` are the
        ids of the tool calls and results its raw data holds."""
        self._accounted.add(where)
        self._calls.extend((call, where) for call in calls)
        self._results.extend((result, where) for result in results)

    def left_out(
        self, kind: str, where: str, *, calls: Iterable[str] = (), results: Iterable[str] = ()
    ) -> None:
        """The record at ``where`` was left out on purpose, as one of ``kind``, with the
        calls and results its raw data holds."""
        self._accounted.add(where)
        counts = self._left.setdefault(kind, [0, 0, 0])
        counts[0] += 1
        for call in calls:
            self._calls.append((call, where))
            self._left_calls[call] += 1
            counts[1] += 1
        for result in results:
            self._results.append((result, where))
            self._left_results[result] += 1
            counts[2] += 1

    def close(self, turns: "Turns") -> Ledger:
        """The ledger, once every record was accounted for; a record not accounted for, or
        a call or result lost between the file and the turns, refuses the import."""
        for record in self.source.records:
            if record.where not in self._accounted:
                raise BadInput(f"{record.where}: this entry was neither imported nor left out")
        made = Counter(turns.original(call) for turn in turns.turns for call in turn.calls)
        answered = Counter(turns.original(a) for turn in turns.turns for a in turn.answers)
        order = {record.where: index for index, record in enumerate(self.source.records)}
        calls = sorted(self._calls, key=lambda came: order.get(came[1], -1))
        results = sorted(self._results, key=lambda came: order.get(came[1], -1))
        _check_kept(calls, made + self._left_calls, "tool call")
        _check_kept(results, answered + self._left_results, "tool result for call")
        left = tuple(LeftOut(kind, *counts) for kind, counts in sorted(self._left.items()))
        return Ledger(
            entries=len(self.source.records) + len(self.source.skipped),
            turns=len(turns),
            calls_in=len(self._calls),
            results_in=len(self._results),
            calls_out=sum(made.values()),
            results_out=sum(answered.values()),
            left_out=left,
            skipped_lines=self.source.skipped,
            renamed=turns.renamed,
        )


def every_record(source: "Source", ids: Ids) -> Tally:
    """The tally of a reader that imports every record of ``source``, each record's calls
    and results read by ``ids`` from its raw data."""
    tally = Tally(source)
    for record in source.records:
        calls, results = ids(record.data)
        tally.took(record.where, calls=calls, results=results)
    return tally


def _check_kept(came: Sequence[tuple[str, str]], went: Mapping[str, int], what: str) -> None:
    """Refuse, naming the first in file order, an id that came in more often than it went
    out; one that went out more often than it came in is a reader's mistake, refused too."""
    remaining = Counter(went)
    for identity, where in came:
        if remaining[identity] <= 0:
            raise BadInput(
                f"{where}: {what} {identity!r} is in the file but not in the imported "
                "turns: the import would lose it"
            )
        remaining[identity] -= 1
    extra = sorted(identity for identity, count in remaining.items() if count > 0)
    if extra:
        raise BadInput(f"{what} {extra[0]!r} is in the imported turns more often than in the file")
