"""``Seq``: an immutable, append-only sequence that shares structure between versions.

It is a 32-way trie of plain tuples with a tail, as in Clojure's persistent
vector. Appending copies the tail (at most 32 items) and, once every 32
appends, one path of the trie: O(log32 n), effectively constant. The nodes
are ordinary tuples, so the garbage collector sees only a new version's
copied path, and stops tracking the nodes that hold only numbers and
strings altogether. (A persistent vector whose nodes are hidden inside one
object is walked whole by every collection that finds it young: a cost that
grows with the run.)
"""

import bisect
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import chain, islice
from typing import Any, TypeVar, final, overload

T = TypeVar("T")

_BITS = 5
_WIDTH = 1 << _BITS
_MASK = _WIDTH - 1

Node = tuple[Any, ...]


@final
class Seq(Sequence[T]):
    """An immutable sequence with effectively constant-time ``append``."""

    __slots__ = ("_count", "_root", "_shift", "_tail")
    _count: int
    _shift: int
    _root: Node
    _tail: tuple[T, ...]

    def __init__(self, items: Iterable[T] = ()) -> None:
        # Built level by level from slices rather than by appends: the trie is
        # the one the appends would build (each node packed to the left, as few
        # levels as hold the leaves), at the cost of copying the items once.
        items = tuple(items)
        count = len(items)
        start = (count - 1) & ~_MASK if count else 0
        nodes: list[Node] = [items[i : i + _WIDTH] for i in range(0, start, _WIDTH)]
        shift = _BITS
        while len(nodes) > _WIDTH:
            nodes = [tuple(nodes[i : i + _WIDTH]) for i in range(0, len(nodes), _WIDTH)]
            shift += _BITS
        self._count, self._shift, self._root, self._tail = count, shift, tuple(nodes), items[start:]

    def append(self, item: T) -> "Seq[T]":
        """This sequence with ``item`` at the end."""
        count, tail = self._count, self._tail
        if len(tail) < _WIDTH:
            # Nearly every append: the new version built here, not through ``_seq`` (a
            # call costs a third of an append, and a run's window makes several a turn).
            seq: Seq[T] = _NEW(Seq)
            seq._count = count + 1
            seq._shift = self._shift
            seq._root = self._root
            seq._tail = (*tail, item)
            return seq
        shift, root = self._shift, self._root
        if (count >> _BITS) > (1 << shift):
            root, shift = (root, _path(shift, tail)), shift + _BITS
        else:
            root = _push(count, shift, root, tail)
        return _seq(count + 1, shift, root, (item,))

    def extend(self, items: Iterable[T]) -> "Seq[T]":
        """This sequence with ``items`` at the end."""
        more = tuple(items)
        if len(self._tail) + len(more) <= _WIDTH:
            # The commonest case, a few items that fit in the tail: one copy of it.
            if not more:
                return self
            seq: Seq[T] = _NEW(Seq)
            seq._count = self._count + len(more)
            seq._shift = self._shift
            seq._root = self._root
            seq._tail = self._tail + more
            return seq
        seq = self
        for item in more:
            seq = seq.append(item)
        return seq

    def prefix(self, length: int) -> "Seq[T]":
        """The first ``length`` items, sharing every leaf before the one that ends them:
        O(log32 n), so a change near the end (``prefix`` then ``extend``) costs the items
        after it, not the sequence."""
        if not 0 <= length <= self._count:
            raise IndexError(f"Seq prefix {length} out of range 0..{self._count}")
        start = self._count - len(self._tail)
        if length > start:
            return _seq(length, self._shift, self._root, self._tail[: length - start])
        if length == 0:
            return Seq()
        # The leaf holding the last item kept becomes the tail; the leaves before it stay.
        tail_start = (length - 1) & ~_MASK
        tail = self._leaf(tail_start)[: length - tail_start]
        leaves = tail_start >> _BITS
        root, shift = _first_leaves(self._root, self._shift, leaves), self._shift
        # As few levels as hold the leaves, as the appends would have built it.
        while shift > _BITS and leaves <= 1 << (shift - _BITS):
            root = root[0] if root else ()
            shift -= _BITS
        return _seq(length, shift, root, tail)

    def bisect(self, x: Any, key: Callable[[T], Any] | None = None, *, right: bool = False) -> int:
        """``bisect.bisect_left`` (or ``bisect_right``) over this sorted sequence: the tail
        or the leaves searched at C speed, so a look-up costs a few steps, not one
        ``__getitem__`` per probe (most look-ups land in the tail, near the end)."""
        search = bisect.bisect_right if right else bisect.bisect_left
        tail = self._tail
        start = self._count - len(tail)
        if not start or _before(tail[0], x, key, right):
            return start + search(tail, x, key=key)
        low, high = 0, start >> _BITS
        while low < high:
            middle = (low + high) // 2
            if _before(self._leaf(middle << _BITS)[0], x, key, right):
                low = middle + 1
            else:
                high = middle
        if not low:
            return 0
        first = (low - 1) << _BITS
        return first + search(self._leaf(first), x, key=key)

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[T, ...]: ...

    def __getitem__(self, index: int | slice) -> T | tuple[T, ...]:
        if isinstance(index, slice):
            start, stop, step = index.indices(self._count)
            length = stop - start
            if step == 1 and length > _WIDTH:
                # A long run of items, walked at C speed: from the first item when the
                # items to skip are fewer than those taken, else from the leaf that holds
                # ``start``, so that a slice near the end does not walk the whole trie.
                if start <= length:
                    return tuple(islice(self, start, stop))
                return tuple(islice(self._from(start), length))
            return tuple(self._at(i) for i in range(start, stop, step))
        position = index + self._count if index < 0 else index
        if not 0 <= position < self._count:
            raise IndexError(f"Seq index {index} out of range")
        return self._at(position)

    def _from(self, position: int) -> Iterator[T]:
        """The items from ``position`` on, each leaf looked up once."""
        first = position & ~_MASK
        leaves = map(self._leaf, range(first, self._count - len(self._tail), _WIDTH))
        return islice(chain(chain.from_iterable(leaves), self._tail), position - first, None)

    def _at(self, position: int) -> T:
        start = self._count - len(self._tail)
        if position >= start:
            return self._tail[position - start]
        return self._leaf(position)[position & _MASK]  # type: ignore[no-any-return]

    def _leaf(self, position: int) -> Node:
        node, level = self._root, self._shift
        while level > 0:
            node = node[(position >> level) & _MASK]
            level -= _BITS
        return node

    def __iter__(self) -> Iterator[T]:
        # Chained iterators rather than a generator: every item then comes at
        # C speed, and Python runs only once per call, not once per item.
        items: Iterator[Any] = iter(self._root)
        for _ in range(self._shift // _BITS):
            items = chain.from_iterable(items)
        return chain(items, self._tail)

    def __reversed__(self) -> Iterator[T]:
        items: Iterator[Any] = reversed(self._root)
        for _ in range(self._shift // _BITS):
            items = chain.from_iterable(map(reversed, items))
        return chain(reversed(self._tail), items)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Seq):
            return NotImplemented
        # The trie's shape depends only on the count, so equal sequences
        # have equal nodes, and tuples compare at C speed.
        return (
            self._count == other._count and self._tail == other._tail and self._root == other._root
        )

    def __hash__(self) -> int:
        return hash((self._count, self._root, self._tail))

    def __repr__(self) -> str:
        return f"Seq({list(self)!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (Seq, (list(self),))


def _before(item: Any, x: Any, key: Callable[[Any], Any] | None, right: bool) -> bool:
    """Whether the answer lies after ``item``: its key is below ``x`` (at most ``x`` for
    ``bisect_right``)."""
    value = item if key is None else key(item)
    return bool(value <= x if right else value < x)


def bisect_left(items: Sequence[T], x: Any, key: Callable[[T], Any] | None = None) -> int:
    """``bisect.bisect_left`` of ``items``, a ``Seq`` searched by its leaves."""
    if type(items) is Seq:
        return items.bisect(x, key)
    return bisect.bisect_left(items, x, key=key)


def bisect_right(items: Sequence[T], x: Any, key: Callable[[T], Any] | None = None) -> int:
    """``bisect.bisect_right`` of ``items``, a ``Seq`` searched by its leaves."""
    if type(items) is Seq:
        return items.bisect(x, key, right=True)
    return bisect.bisect_right(items, x, key=key)


_NEW = object.__new__
"""``Seq.__new__``: a ``Seq`` is its four slots, set by whoever makes it."""


def _seq(count: int, shift: int, root: Node, tail: tuple[T, ...]) -> Seq[T]:
    seq: Seq[T] = _NEW(Seq)
    seq._count, seq._shift, seq._root, seq._tail = count, shift, root, tail
    return seq


def _path(level: int, node: Node) -> Node:
    """``node`` wrapped in single-child nodes down from ``level`` to the leaves."""
    while level > 0:
        node = (node,)
        level -= _BITS
    return node


def _push(count: int, level: int, parent: Node, leaf: Node) -> Node:
    """``parent`` with the full tail ``leaf`` added as the leaf after the last one."""
    index = ((count - 1) >> level) & _MASK
    if level == _BITS:
        child = leaf
    elif index < len(parent):
        child = _push(count, level - _BITS, parent[index], leaf)
    else:
        child = _path(level - _BITS, leaf)
    return (*parent[:index], child, *parent[index + 1 :])


def _first_leaves(node: Node, level: int, leaves: int) -> Node:
    """``node`` (at ``level``) holding only its first ``leaves`` leaves."""
    if level == _BITS:
        return node[:leaves]
    per = 1 << (level - _BITS)
    whole, rest = divmod(leaves, per)
    if not rest:
        return node[:whole]
    return (*node[:whole], _first_leaves(node[whole], level - _BITS, rest))
