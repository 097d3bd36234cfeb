"""Recorded compaction: apply the compactions a transcript recorded, where they happened.

A Claude Code session records its own compactions: at each compact
boundary the agent replaced its context with a summary it wrote, and went
on from there. ``recorded`` replays that, so the agent's real behaviour
benches beside memtape's policies on the same session, with the same
metrics.

Where it learns what to apply. A policy is built from its own
``[compaction]`` table only, so the table carries the compactions:
``compactions = [{before = N, summary = "...", trigger = "auto",
pre_tokens = T}, ...]``, each the turn the boundary came before (so the
compaction happens as turn N arrives), the summary, and what the
transcript said of it (``trigger``, and ``pre_tokens`` and ``post_tokens``,
the agent's own count of its context just before and just after; kept, not
used). ``preserved = [FIRST, LAST]`` says the agent kept those turns
verbatim (a partial compaction: Claude Code's ``preservedSegment``): they
stay HOT, and only the other turns before N fold. The Claude Code importer writes
this table and does not write the summary as a turn: it is not
conversation, and another policy benched on the session must not see it.
``bench --policy recorded`` on that scenario keeps its table (the bench
keeps every parameter of the scenario's own policy); on a scenario whose
policy is another, ``recorded`` gets the shared parameters alone, has
nothing to apply, and says so (``NothingToApply``; the bench's cell says
it). So does a table whose list is empty.

What a compaction does. As turn N arrives, every HOT turn before it leaves
HOT, but pinned turns (no policy moves them) and the rest of turn N's unit
(a call and its results stay together; ``memtape.policies.window.units``; in a
real session no call waits at a boundary), and the summary becomes the one
WARM item, under the number of the newest turn it folded in, as
``rolling-summary`` files its running summary. The other folded turns go
COLD, with no gist of their own, and so do the WARM items already there (an
earlier boundary's summary, which the agent folded into the new one): the
summary speaks for them. COLD rather than dropped, because Claude Code
writes the summary from those turns: they are folded into it, not gone
without a trace (which is what a sliding window's dropped turns are), and
the session file keeps them, as the run keeps its COLD turns; it is also
the record ``rolling-summary`` makes of the same act, so ``show``, ``why``
and the bench compare like with like. An empty summary is no WARM item:
every folded turn goes COLD. A boundary with nothing to fold (every HOT
turn pinned) leaves the window as it is. The summary is measured by this
policy's tokenizer; the gist stays as it was (a window forked from another
policy keeps its gist). The turns of a compaction's ``preserved`` stay HOT
where they are, each with the rest of its unit (a call is never kept without
its results): only the others fold.

What an agent did that is not a summary. A capture (``memtape.lab.importers.
capture``) sees more than summaries: the agent dropped turns from the front
of its requests (a truncation), or rewrote a tool result in place (a
clearing). A record says so with three fields, each optional:

- ``folded = [[FIRST, LAST], ...]``: the turns folded into the summary, and
  no other (without it, every HOT turn before N but the ``preserved`` ones);
- ``dropped = [[FIRST, LAST], ...]``: the turns dropped, as a sliding
  window drops them (no summary stands for them); a record with turns
  dropped needs no ``summary``;
- ``cleared = [{turn = T, text = "..."}, ...]``: turns that stay HOT, in
  place, reading ``text`` from now on, as ``clear-tool-results`` clears.

A unit (a call and its results) moves only when every turn of it is named;
a pinned turn never does. ``label`` is the record's own words (a capture
names the exchange where the agent did it), which ``memtape why`` shows
beside the turns it moved (``reason``).

What it promises: the newest turn HOT verbatim (``RECENT_VERBATIM``, one
turn, with its unit), whole units (``WELL_FORMED``), pinned turns in place
(``PINNED``), and not the budget. The agent compacted when its own context filled
(at ``pre_tokens`` of its own tokenizer), not at memtape's budget, which for
this policy only sets the meter's red line, as for ``none``.
"""

from collections.abc import Mapping
from typing import Any, ClassVar

import attrs

from memtape.core.commands import AddTurn
from memtape.core.errors import BadInput, NothingToApply
from memtape.core.events import CompactionTriggered, Event, TurnAdded, WarmItem
from memtape.core.state import State
from memtape.policies.plumbing.params import Params
from memtape.policies.plumbing.promises import PINNED, RECENT_VERBATIM, WELL_FORMED
from memtape.policies.text.tokenizers import Tokenizer, WordCount, as_tokenizer
from memtape.policies.window.compaction_records import CompactionRecord, check_record, read_record
from memtape.policies.window.turns import arriving, check_shared, shared_params
from memtape.policies.window.units import Group, older_units

NOTHING_RECORDED = "the scenario recorded no compaction"
"""Why ``recorded`` has nothing to apply on a scenario without compactions."""


@attrs.frozen
class RecordedCompaction:
    """Apply each of ``compactions`` as its turn arrives; never compact otherwise."""

    name: ClassVar[str] = "recorded"
    budget: int
    compactions: tuple[CompactionRecord, ...]
    tokenizer: Tokenizer = attrs.field(factory=WordCount, converter=as_tokenizer)
    _at: dict[int, CompactionRecord] = attrs.field(init=False, eq=False, repr=False, factory=dict)

    def __attrs_post_init__(self) -> None:
        check_shared(self.budget, self.tokenizer)
        if not isinstance(self.compactions, tuple) or not all(
            isinstance(record, CompactionRecord) for record in self.compactions
        ):
            raise BadInput(
                f"compactions must be a tuple of CompactionRecord, got {self.compactions!r}"
            )
        if not self.compactions:
            raise NothingToApply("recorded", NOTHING_RECORDED)
        previous = 1
        for number, record in enumerate(self.compactions):
            where = f"compactions[{number}]"
            check_record(record, where)
            if record.before <= previous:
                raise BadInput(
                    f"{where}: before must be at least 2 and each greater than the last, "
                    f"got {record.before} after {previous}"
                )
            previous = record.before
        # The records by the turn they come before: a turn's lookup costs the same at any length.
        object.__setattr__(self, "_at", {record.before: record for record in self.compactions})

    @classmethod
    def from_params(cls, data: Mapping[str, Any], where: str) -> "RecordedCompaction":
        """Build the policy from a scenario's ``[compaction]`` table."""
        params = Params(data, where)
        budget, tokenizer = shared_params(params)
        given = params.raw("compactions", [])
        params.done()
        if not isinstance(given, list):
            raise params.error("compactions", f"must be a list of tables, got {given!r}")
        if not given:
            raise NothingToApply(where, NOTHING_RECORDED)
        records = tuple(
            read_record(item, f"{where}: compactions[{i}]") for i, item in enumerate(given)
        )
        try:
            return cls(budget, records, tokenizer)
        except BadInput as error:
            raise BadInput(f"{where}: {error}") from None

    @property
    def promises(self) -> frozenset[str]:
        """The newest turn verbatim, whole units, pinned turns kept; no budget bound (the
        agent compacted at its own limit)."""
        return frozenset({RECENT_VERBATIM, WELL_FORMED, PINNED})

    @property
    def verbatim(self) -> int:
        """The newest turn always stays HOT verbatim."""
        return 1

    def params(self) -> dict[str, Any]:
        """The parameters, as a scenario table would write them."""
        return {
            "policy": self.name,
            "budget": self.budget,
            "tokenizer": self.tokenizer.name,
            "compactions": [record.params() for record in self.compactions],
        }

    def decide(self, state: State, command: AddTurn) -> tuple[Event, ...]:
        """The turn, and the recorded compaction that comes before it, if one does."""
        window = state.window
        turn = arriving(window, command, self.tokenizer)
        record = self._at.get(turn.turn)
        if record is None:
            return (turn,)
        hot = (*window.hot, turn)
        _, groups = older_units(window, turn, hot, 1)
        if record.folded is None and not record.dropped and not record.cleared:
            kept = record.preserved
            folded = [
                old
                for turns, pinned, _ in groups
                if not pinned and (kept is None or not _overlaps(turns, kept))
                for old in turns
            ]
            dropped: list[TurnAdded] = []
        else:
            folded = _named(groups, record.folded or ())
            dropped = _named(groups, record.dropped)
            gone = {old.turn for old in dropped}
            folded = [old for old in folded if old.turn not in gone]
        cleared = self._cleared(record, groups, {old.turn for old in (*folded, *dropped)})
        if not folded and not dropped and not cleared:
            return (turn,)
        summary = record.summary if folded else ""
        # As rolling-summary does: the folded turns but the newest pass through WARM as
        # empty items and go COLD at once; the newest becomes the summary.
        passing = folded[:-1] if summary else folded
        warm = [WarmItem(old.turn, "", 0) for old in passing]
        if summary:
            warm.append(WarmItem(folded[-1].turn, summary, self.tokenizer.count(summary)))
        cooling = len(window.warm) + len(passing) if folded else 0
        compaction = CompactionTriggered(
            self.budget,
            tuple(warm),
            tuple(old.turn for old in dropped),
            cooling,
            window.gist,
            window.gist_tokens,
            cleared=cleared,
        )
        return (turn, compaction)

    def _cleared(
        self, record: CompactionRecord, groups: list[Group], moving: set[int]
    ) -> tuple[WarmItem, ...]:
        """The record's clearings of turns that stay HOT (not pinned, not moving, not in the
        newest turn's unit), each reading a text it does not read already."""
        if not record.cleared:
            return ()
        staying = {
            old.turn: old
            for turns, pinned, _ in groups
            if not pinned
            for old in turns
            if old.turn not in moving
        }
        items = []
        for number, text in record.cleared:
            old = staying.get(number)
            if old is not None and old.text != text:
                items.append(WarmItem(number, text, self.tokenizer.count(text)))
        return tuple(items)

    def reason(self, turn: int) -> str | None:
        """The label of the compaction recorded before turn ``turn``, if one is, for
        ``memtape why``."""
        record = self._at.get(turn)
        return record.label if record is not None else None


def _named(groups: list[Group], runs: tuple[tuple[int, int], ...]) -> list[TurnAdded]:
    """The HOT turns of the units every turn of which ``runs`` names (pinned units never)."""
    if not runs:
        return []
    named = {number for first, last in runs for number in range(first, last + 1)}
    return [
        old
        for turns, pinned, _ in groups
        if not pinned and all(old.turn in named for old in turns)
        for old in turns
    ]


def _overlaps(turns: tuple[TurnAdded, ...], kept: tuple[int, int]) -> bool:
    """Whether a unit holds a turn the agent kept verbatim."""
    first, last = kept
    return any(first <= old.turn <= last for old in turns)
