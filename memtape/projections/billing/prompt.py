"""The prompt each request sends, item by item, kept step by step as a run is made.

A request sends the window in the order an API takes it: what the agent
sends that the window does not hold (``[cost] prefix``: a system prompt and
tool definitions a transcript leaves out), the pinned turns (an instructions
file: an API takes them before the messages), then the COLD gist, the WARM
items and the other HOT turns, each item at its recorded tokens. Two
requests share a prefix up to their first item that differs: a compaction
that rewrites an early item (a summary that changes, a turn that leaves)
breaks the prefix from that item on.

Between two compactions a window only gains turns, so the prompt grows by
appends and the shared prefix is the whole previous prompt: a request costs
its new turns. Only after a compaction is the prompt rebuilt and compared
item by item, which costs the window's size, as the compaction's fold did.
"""

from collections.abc import Iterable

import attrs

from memtape.core.events import TurnAdded, WarmItem
from memtape.core.state import Window

Item = TurnAdded | WarmItem | tuple[str, int]
"""An item of a prompt: a HOT turn, a WARM item, or the gist (its text and tokens)."""


@attrs.frozen
class Prompt:
    """One request's prompt, as its cache sees it: its tokens, the tokens and items it
    shares with the previous request's prompt, and the end of its pinned prefix."""

    tokens: int
    items: int
    shared_items: int
    """How many leading items equal the previous prompt's."""
    shared_tokens: int
    """The tokens of those items."""
    pinned_items: int
    """How many leading items are pinned turns (the system prefix)."""
    pinned_tokens: int
    """The tokens of those items."""


class PromptTracker:
    """The prompt of each request, from the windows a run goes through."""

    def __init__(self, unseen: int = 0) -> None:
        self._unseen: tuple[Item, ...] = (("", unseen),) if unseen else ()
        """What the agent sends before the window's first item and the window does not hold
        (a system prompt, tool definitions): an item of its own, first and never changed."""
        self._items: list[Item] = []
        self._prefix: list[int] = [0]
        for item in self._unseen:
            self._append(item)
        self._pinned = len(self._unseen)
        self._added: list[TurnAdded] = []
        self._rebuild = False

    def added(self, turns: Iterable[TurnAdded]) -> None:
        """Turns joined the window (a pinned one rebuilds the prompt: it goes before the
        messages)."""
        for turn in turns:
            self._added.append(turn)
            self._rebuild |= turn.pinned

    def compacted(self) -> None:
        """The window was compacted: the next prompt is rebuilt and compared whole."""
        self._rebuild = True

    def prompt(self, window: Window) -> Prompt:
        """The prompt sent with ``window`` now, against the one sent before."""
        if self._rebuild:
            shared = self._rebuilt(window)
        else:
            shared = len(self._items)
            for turn in self._added:
                self._append(turn)
        self._added.clear()
        self._rebuild = False
        prefix, pinned = self._prefix, self._pinned
        return Prompt(prefix[-1], len(self._items), shared, prefix[shared], pinned, prefix[pinned])

    def _append(self, item: Item) -> None:
        self._items.append(item)
        self._prefix.append(self._prefix[-1] + _tokens(item))

    def _rebuilt(self, window: Window) -> int:
        """Rebuild the prompt from ``window``; how many leading items it shares with the
        previous one."""
        old = self._items
        pinned = [*self._unseen, *(turn for turn in window.hot if turn.pinned)]
        ordered: list[Item] = list(pinned)
        if window.gist:
            ordered.append((window.gist, window.gist_tokens))
        ordered.extend(window.warm)
        ordered.extend(window.recalled)
        ordered.extend(turn for turn in window.hot if not turn.pinned)
        shared = 0
        for before, now in zip(old, ordered, strict=False):
            if before is not now and before != now:
                break
            shared += 1
        self._items, self._prefix, self._pinned = [], [0], len(pinned)
        for item in ordered:
            self._append(item)
        return shared


def _tokens(item: Item) -> int:
    return item[1] if isinstance(item, tuple) else item.tokens
