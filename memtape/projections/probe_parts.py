"""Which parts of a window show each probe, followed event by event as a run is made.

The window metrics (``memtape.projections.metrics.WindowTally``) ask it, at each
turn, which probes are visible and which event lost one; it follows a compaction
through what its event names rather than reading the whole window again, so a
turn costs the same however long the run.
"""

import re
from collections.abc import Iterable
from typing import Any

from memtape.core.events import (
    BlockEdited,
    CompactionTriggered,
    Event,
    Recalled,
    TurnAdded,
    WarmItem,
)
from memtape.core.state import Window


class ProbeParts:
    """How many window parts show each probe, followed event by event.

    A part is a HOT turn (by its number), a memory block (by its label), a
    WARM item (by its place in the order WARM received items over the run) or
    a turn of the recall tier, and only the parts that show some probe are
    kept. A compaction names what it moves, drops, clears and cools, so
    following one costs what it changes, not the window: a policy that keeps a
    long HOT (clear-tool-results) costs the bench the same per turn at any
    length; a block edit costs the block, a recall the tier.
    """

    def __init__(self, texts: tuple[str, ...]) -> None:
        self._texts = texts
        self._hot: dict[int, tuple[int, ...]] = {}
        """The probes each HOT turn's text shows, by turn number (only turns that show some)."""
        self._warm: dict[int, tuple[int, ...]] = {}
        """The probes each WARM item shows, by its place in the run's WARM order."""
        self._warm_first = 0
        """The place of WARM's oldest item; the next item to arrive takes ``_warm_next``."""
        self._warm_next = 0
        self._blocks: dict[str, tuple[int, ...]] = {}
        """The probes each memory block's value shows, by label."""
        self._recalled: tuple[tuple[int, ...], ...] = ()
        """The probes each turn of the recall tier shows (the tier is replaced whole)."""
        self._counts = [0] * len(texts)
        self._gist = ""
        self._in_gist: tuple[int, ...] = ()
        self._changed: set[int] = set()
        self._was: dict[int, int] = {}
        """The counts, before the event being followed, of the probes it changed."""
        self._lost: dict[int, int] = {}
        """The position of the event that first hid each probe it hid, in the last batch."""
        self.mentioned: dict[int, int] = {}
        """The last turn whose own text, as it arrived, showed each probe (by index)."""
        self.followed = True
        """Whether the last batch was followed event by event (``lost_at`` knows its losses);
        not after an old log's compaction, followed by reading the window after it."""
        distinct = tuple(dict.fromkeys(texts))
        either = _either(text for text in distinct if text)
        self._any = re.compile(either or "")
        self._starts = re.compile(f"(?=({either}))")
        """At each place a probe starts, the longest probe starting there."""
        self._everywhere = tuple(index for index, text in enumerate(texts) if not text)
        """The probes whose text is empty, which every text holds."""
        indices: dict[str, list[int]] = {}
        for index, text in enumerate(texts):
            indices.setdefault(text, []).append(index)
        self._prefixes = {
            text: tuple(
                index
                for length in range(1, len(text) + 1)
                for index in indices.get(text[:length], ())
            )
            for text in distinct
        }
        """For each probe text, the probes whose text it begins with (itself among them)."""

    def visible(self, index: int) -> bool:
        """Whether probe ``index`` shows in the last window."""
        return self._counts[index] > 0

    def changed(self) -> set[int]:
        """The probes that began or stopped showing since the last call (some may have
        changed back)."""
        changed, self._changed = self._changed, set()
        return changed

    def lost_at(self, index: int) -> int | None:
        """The position of the event of the last batch that first hid probe ``index``
        (it showed before that event and not after it), or None if none did."""
        return self._lost.get(index)

    def add(self, turns: Iterable[TurnAdded]) -> None:
        """Follow the window as it gains ``turns`` and loses nothing."""
        self._lost, self.followed = {}, True
        if not self._texts:
            return
        for turn in turns:
            self._arrive(turn.turn, turn.text)
        self._was.clear()

    def follow(self, events: Iterable[Event], window: Window, offset: int) -> None:
        """Follow the window through ``events`` (the first at position ``offset + 1``),
        after which it is ``window``."""
        self._lost, self.followed = {}, True
        if not self._texts:
            return
        counts, lost = self._counts, self._lost
        for position, event in enumerate(events, start=offset + 1):
            if isinstance(event, TurnAdded):
                self._arrive(event.turn, event.text)
            elif isinstance(event, BlockEdited):
                self._see_block(event.label, event.value)
            elif isinstance(event, Recalled):
                self._see_recalled(event.brought)
            elif isinstance(event, CompactionTriggered):
                if event.kept is not None:
                    # An old log's compaction lists what stays rather than what goes.
                    self._rebuild(window)
                    self._was.clear()
                    self.followed = False
                    return
                self._compact(event)
            for index, was in self._was.items():
                if was and not counts[index] and index not in lost:
                    lost[index] = position
            self._was.clear()

    def _compact(self, event: CompactionTriggered) -> None:
        """Follow one compaction, as the window reducer applies it."""
        for item in event.warm:
            self._leave_hot(item.turn)
        for number in event.dropped:
            self._leave_hot(number)
        for item in event.cleared:
            self._leave_hot(item.turn)
            self._enter_hot(item.turn, item.text)
        for item in event.warm:
            found = self._found(item.text)
            if found:
                self._warm[self._warm_next] = found
                self._count(found, 1)
            self._warm_next += 1
        first = self._warm_first
        for place in range(first, first + event.cold):
            self._count(self._warm.pop(place, ()), -1)
        self._warm_first = first + event.cold
        self._see_gist(event.gist)

    def _rebuild(self, window: Window) -> None:
        """Follow the window to ``window`` by reading the whole of it."""
        for found in (*self._hot.values(), *self._warm.values(), *self._blocks.values()):
            self._count(found, -1)
        self._hot, self._warm, self._blocks = {}, {}, {}
        for block in window.blocks:
            self._see_block(block.label, block.value)
        self._see_recalled(window.recalled)
        self._warm_first, self._warm_next = 0, 0
        for turn in window.hot:
            self._enter_hot(turn.turn, turn.text)
        for item in window.warm:
            found = self._found(item.text)
            if found:
                self._warm[self._warm_next] = found
                self._count(found, 1)
            self._warm_next += 1
        self._see_gist(window.gist)

    def _see_block(self, label: str, value: str) -> None:
        self._count(self._blocks.pop(label, ()), -1)
        found = self._found(value)
        if found:
            self._blocks[label] = found
            self._count(found, 1)

    def _see_recalled(self, items: tuple[WarmItem, ...]) -> None:
        for found in self._recalled:
            self._count(found, -1)
        self._recalled = tuple(self._found(item.text) for item in items)
        for found in self._recalled:
            self._count(found, 1)

    def _arrive(self, number: int, text: str) -> None:
        self._enter_hot(number, text)
        for index in self._hot.get(number, ()):
            self.mentioned[index] = number

    def _enter_hot(self, number: int, text: str) -> None:
        found = self._found(text)
        if found:
            self._hot[number] = found
            self._count(found, 1)

    def _leave_hot(self, number: int) -> None:
        self._count(self._hot.pop(number, ()), -1)

    def _see_gist(self, gist: str) -> None:
        if gist != self._gist:
            self._count(self._in_gist, -1)
            self._gist = gist
            self._in_gist = self._found(gist)
            self._count(self._in_gist, 1)

    def _found(self, text: str) -> tuple[int, ...]:
        # One scan for any probe first: most parts hold none. Then, at each place
        # a probe starts, the longest probe starting there, and with it every probe
        # it begins with: a part costs its text's length, however many probes.
        if self._any.search(text) is None:
            return self._everywhere
        found: set[int] = set(self._everywhere)
        for match in self._starts.finditer(text):
            found.update(self._prefixes[match.group(1)])
        return tuple(sorted(found))

    def _count(self, indices: tuple[int, ...], delta: int) -> None:
        counts, was = self._counts, self._was
        for index in indices:
            if index not in was:
                was[index] = counts[index]
            if not counts[index] or counts[index] == -delta:
                self._changed.add(index)
            counts[index] += delta


def _either(texts: Iterable[str]) -> str:
    """A pattern matching any of ``texts``, the longest one at a place where several start.

    The texts are laid out as a trie (``$1|$12|$2`` as ``\\$(?:1(?:2)?|2)``): a regex
    alternation of literal strings tries each at every place, so a search would cost
    the probes' number, which grows with a generated session, at every part.
    """
    root: dict[str, Any] = {}
    for text in texts:
        node = root
        for character in text:
            node = node.setdefault(character, {})
        node[""] = {}
    return _branches(root)


def _branches(node: dict[str, Any]) -> str:
    """The pattern of the texts below ``node`` (a text ends where ``""`` is a key)."""
    branches = []
    for character, first in sorted(node.items()):
        if not character:
            continue
        run, below = character, first
        # A chain of single continuations is one literal: fewer groups to enter.
        while len(below) == 1 and "" not in below:
            ((following, below),) = below.items()
            run += following
        branches.append(re.escape(run) + _branches(below))
    if not branches:
        return ""
    body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
    # Greedy: a longer text is tried before the one that ends here.
    return f"(?:{body})?" if "" in node else body
