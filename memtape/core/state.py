"""State: immutable values that the reducers fold events into.

Collections that grow with the run are persistent (``immutables.Map``,
``Seq``, and ``Facts``, the store's facts by id in pages in a map), so a new
state shares nearly everything with its predecessor: one fold step costs the
same at event ten and at event a million, and keeping many states
(snapshots) is cheap. HOT is a plain tuple while it is short
and a ``Seq`` once it is long (``Hot``): a policy that compacts to its budget
keeps it short, and a short tuple is quicker to copy, walk and rebuild at
every step than a ``Seq``; ``none`` keeps every turn, and its HOT then grows
by appends that cost the same at every length. WARM follows the same rule
(``Warm``): a tiered policy keeps it to a few items, while
``clear-tool-results`` sends every lone tool result there as a placeholder
and never cools one, so under it WARM grows with the run, by appends.

``Window`` and ``State`` are named tuples rather than frozen attrs classes:
the fold builds a new one of each at nearly every event, and a tuple is
built at less than half the cost (each field of a frozen slotted class is
one ``object.__setattr__`` call).
"""

from collections.abc import Iterable, Iterator, Mapping, ValuesView
from itertools import chain
from typing import Literal, NamedTuple, final

import attrs
from immutables import Map

from memtape.core.events import EpisodeRecorded, ProceduralRule, SemanticFact, TurnAdded, WarmItem
from memtape.core.reprs import fields_repr
from memtape.core.seq import Seq

Tier = Literal["hot", "warm", "cold", "dropped"]
"""Where a turn sits in (or outside) the window."""

FactStatus = Literal["active", "retired", "evicted", "expired"]
"""A fact's standing in the store."""

SHORT_HOT = 256
"""The most turns a HOT holds as a tuple; a longer HOT is a ``Seq``.

Copying a tuple this long costs about two ``Seq`` appends, and a
policy that rebuilds HOT at every compaction (a sliding window) walks and
rebuilds a tuple several times quicker than a ``Seq``."""

Hot = tuple[TurnAdded, ...] | Seq[TurnAdded]
"""HOT's turns, oldest first: a tuple of at most ``SHORT_HOT`` turns, else a ``Seq``.

Which one depends only on the length, so equal windows hold equal HOTs (a
tuple never equals a ``Seq``); the window reducer keeps to the rule. Read it
as a sequence: iterate, index, slice (a slice of either is a tuple).
"""

Left = tuple[int, str, int]
"""A turn that left HOT, as a recall searches it: ``(turn, text, tokens)``, as it arrived.

A plain tuple of a number, a text and a number, which the cyclic collector
stops walking once it has seen it: a long run keeps every turn that left, and
kept as records (tracked objects), they were walked whole by each full
collection."""

Warm = tuple[WarmItem, ...] | Seq[WarmItem]
"""WARM's items, oldest first: as HOT, a tuple of at most ``SHORT_HOT`` items, else a
``Seq``, by length alone (so equal windows hold equal WARMs). Read it as a sequence."""


@attrs.frozen
class Block:
    """A memory block: a labelled text of at most ``limit`` characters, pinned in the window.

    ``tokens`` is what its value costs (the compaction policy's count, measured
    at its latest edit) and ``version`` how many times it was written (1: as
    created). A ``read_only`` block is never edited after its creation.
    """

    __repr__ = fields_repr

    label: str
    limit: int
    value: str
    tokens: int
    version: int
    read_only: bool = False


class Window(NamedTuple):
    """The context window the model sees: COLD gist, WARM items, HOT turns.

    ``tokens`` is kept as a running total of hot, warm and gist tokens, so no
    step ever re-counts the window. ``waiting`` maps each tool-call id that a
    turn called and no turn has answered yet to the number of the turn that
    called it, wherever that turn now is (it is what an arriving turn may
    answer); ``unit_length`` is how many turns the newest turn's unit spans,
    the newest included (a turn that arrives while a call waits joins the
    unit it waits in; see ``memtape.policies.window.units``); ``cleared`` lists,
    in order, the HOT turns whose text was cleared in place (a tool result now
    read as a placeholder); ``structured`` says whether any turn so far called
    or answered a tool or was pinned (until one has, every unit is one turn, and
    a policy may decide as it did before units, at the same cost);
    ``tool_turns`` lists, in order, the number of every turn of role ``tool``
    that has arrived, wherever it now is (so a policy looking for tool results
    finds them without walking HOT). ``blocks`` holds the memory blocks in
    the order they were created (a handful: a tuple): always in the window,
    their tokens in ``tokens`` (``block_tokens``).

    ``recalled`` is the recall tier: the turns the latest ``Recalled`` brought
    back, verbatim, counted in ``tokens``, until the next recall replaces it
    (no compaction moves it: the policy keeps the rest within budget). ``left``
    holds every turn that left HOT by a drop or a fold, as it arrived (``Left``), in the
    order they left: what a recall searches (its index is built beside the
    state from it, ``memtape.policies.window.recall``). Both are additions of
    the recall family; a run without a recall has an empty tier.
    """

    hot: Hot
    warm: Warm
    cold: Seq[int]
    gist: str
    gist_tokens: int
    dropped: Seq[int]
    tokens: int
    turns: int
    waiting: Map[str, int] = Map()
    unit_length: int = 1
    cleared: Seq[int] = Seq()
    structured: bool = False
    tool_turns: Seq[int] = Seq()
    recalled: tuple[WarmItem, ...] = ()
    left: Seq[Left] = Seq()
    blocks: tuple[Block, ...] = ()

    @property
    def block_tokens(self) -> int:
        """What the memory blocks cost, all of them: a part of ``tokens`` no policy moves."""
        return sum(block.tokens for block in self.blocks)

    def block(self, label: str) -> Block | None:
        """The memory block ``label``, or None when there is none."""
        return next((block for block in self.blocks if block.label == label), None)

    def tier_of(self, turn: int) -> Tier | None:
        """The tier that holds ``turn`` now, or None if it has not arrived yet."""
        if turn < 1 or turn > self.turns:
            return None
        if any(t.turn == turn for t in self.hot):
            return "hot"
        if any(w.turn == turn for w in self.warm):
            return "warm"
        if turn in self.cold:
            return "cold"
        return "dropped"


@attrs.frozen
class Fact:
    """One fact in the store, with what the fold knows of its life.

    ``written_at`` is the clock at the write; ``last_read_at`` the clock at
    the latest read. Which of them counts as the "last touch" is a policy's
    business, not the store's. ``expires_at`` is the clock at which the fact
    leaves as ``expired`` (None: never), and ``ttl`` the TTL rule that set it
    (``""``: the write named it; see ``FactWritten``). ``valid_from`` and
    ``valid_to`` are when the write said it was true (None: from its write;
    open), and ``closed_to`` the valid time a later write (``closed_by``, at
    the clock ``closed_at``) closed it at (``memtape.policies.store.temporal``).
    """

    __repr__ = fields_repr

    id: int
    key: str
    text: str
    importance: float
    written_at: float
    reads: int = 0
    last_read_at: float | None = None
    status: FactStatus = "active"
    ended_at: float | None = None
    superseded_by: int | None = None
    evicted_score: float | None = None
    expires_at: float | None = None
    ttl: str = ""
    expired_reason: str | None = None
    valid_from: float | None = None
    valid_to: float | None = None
    closed_to: float | None = None
    closed_at: float | None = None
    closed_by: int | None = None


_PAGE_BITS = 5
"""A page of ``Facts`` holds 32 facts: fact ``i`` is item ``(i - 1) % 32`` of page
``(i - 1) // 32``."""
_SLOT = (1 << _PAGE_BITS) - 1


@final
class Facts(Mapping[int, Fact]):
    """Every fact ever written, by id: an immutable mapping, changed by ``set``.

    Ids run 1, 2, 3, ... in the order the facts were written (the fold refuses
    any other), so the facts sit in pages of 32 consecutive ids, a tuple
    each, in an ``immutables.Map`` by page number. A change copies one page
    and one path of the map, and the facts a run reads, retires and evicts
    are nearly always recent ones: the changes between two snapshots fall in
    the same few pages, and a snapshot shares the rest with the one before.
    (A map keyed by id spreads consecutive ids over all its branches: between
    two snapshots it copied most of them, the largest part of an open run's
    memory.)
    """

    __slots__ = ("_count", "_pages")

    def __init__(self, facts: Iterable[Fact] = ()) -> None:
        ordered = tuple(facts)
        for position, fact in enumerate(ordered, start=1):
            if fact.id != position:
                raise ValueError(f"fact {fact.id} cannot be fact {position}: ids run 1, 2, 3, ...")
        self._count = len(ordered)
        size = 1 << _PAGE_BITS
        self._pages: Map[int, tuple[Fact, ...]] = Map(
            {
                page: ordered[page * size : (page + 1) * size]
                for page in range(-(-len(ordered) // size))
            }
        )

    def __getitem__(self, key: int) -> Fact:
        if type(key) is not int:
            # As a dict would: an id of another type is the id it equals (True, 1.0, an enum).
            if key not in range(1, self._count + 1):
                raise KeyError(key)
            key = int(key)
        elif not 0 < key <= self._count:
            raise KeyError(key)
        return self._pages[(key - 1) >> _PAGE_BITS][(key - 1) & _SLOT]

    def __contains__(self, key: object) -> bool:
        if type(key) is int:
            return 0 < key <= self._count
        return key in range(1, self._count + 1)

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[int]:
        return iter(range(1, self._count + 1))

    def values(self) -> ValuesView[Fact]:
        """The facts, in id order."""
        return _FactValues(self)

    def set(self, key: int, fact: Fact) -> "Facts":
        """These facts with ``fact`` as fact ``key``: a written one, or the next."""
        count, pages = self._count, self._pages
        if key not in range(1, count + 2):
            raise KeyError(f"fact {key} is neither written nor the next ({count + 1})")
        index = int(key) - 1
        page, slot = index >> _PAGE_BITS, index & _SLOT
        if index < count:
            facts = pages[page]
            pages = pages.set(page, (*facts[:slot], fact, *facts[slot + 1 :]))
        else:
            pages = pages.set(page, pages[page] + (fact,) if slot else (fact,))
            count += 1
        table: Facts = _new(Facts)
        table._count, table._pages = count, pages
        return table

    def __eq__(self, other: object) -> bool:
        # Equal to another table only, as a Map is to another Map: so equal tables hash alike.
        if not isinstance(other, Facts):
            return NotImplemented
        return self._count == other._count and self._pages == other._pages

    def __hash__(self) -> int:
        return hash((self._count, self._pages))

    def __repr__(self) -> str:
        return f"Facts({list(self.values())!r})"


_new = object.__new__


class _FactValues(ValuesView[Fact]):
    """The facts of a ``Facts``, walked a page at a time (not looked up one id at a time)."""

    _mapping: Facts

    def __iter__(self) -> Iterator[Fact]:
        pages = self._mapping._pages
        return chain.from_iterable(pages[page] for page in range(len(pages)))


@attrs.frozen
class Store:
    """Every fact ever written (by id), the active ids, and the newest active id per key.

    ``shared`` counts the active facts of each key that has more than one
    (only a policy that never supersedes leaves such keys after a command):
    when the fact answering for a key leaves, the fold looks among the
    actives for the next one only if the key is shared, so an eviction does
    not cost a walk through every active fact.
    """

    __repr__ = fields_repr

    facts: Facts
    active: Map[int, None]
    by_key: Map[str, int]
    shared: Map[str, int] = attrs.field(factory=Map)

    def active_facts(self) -> list[Fact]:
        """The active facts, oldest write first."""
        return sorted((self.facts[i] for i in self.active), key=lambda f: f.id)

    def with_status(self, status: FactStatus) -> list[Fact]:
        """The facts with ``status``, oldest write first."""
        return sorted((f for f in self.facts.values() if f.status == status), key=lambda f: f.id)


@attrs.frozen
class Memory:
    """Episodes waiting for consolidation, and what passes distilled from them."""

    __repr__ = fields_repr

    episodes: Seq[EpisodeRecorded]
    recorded: int
    semantic: Seq[SemanticFact]
    procedural: Seq[ProceduralRule]


class State(NamedTuple):
    """Everything a run knows at one point: the clock, the window, the store, the memory."""

    clock: float
    window: Window
    store: Store
    memory: Memory


EMPTY_WINDOW = Window(
    hot=(),
    warm=(),
    cold=Seq(),
    gist="",
    gist_tokens=0,
    dropped=Seq(),
    tokens=0,
    turns=0,
    waiting=Map(),
    unit_length=1,
    cleared=Seq(),
    structured=False,
    tool_turns=Seq(),
    recalled=(),
    left=Seq(),
    blocks=(),
)
"""The window before any turn."""

EMPTY_STORE = Store(facts=Facts(), active=Map(), by_key=Map(), shared=Map())
"""The store before any write."""

EMPTY_MEMORY = Memory(episodes=Seq(), recorded=0, semantic=Seq(), procedural=Seq())
"""The memory before any episode."""

INITIAL_STATE = State(clock=0.0, window=EMPTY_WINDOW, store=EMPTY_STORE, memory=EMPTY_MEMORY)
"""The state of every run before its first event (``state_at(0)``)."""
