"""``Seq``: an immutable, append-only sequence that shares structure between versions.

It is a hash array mapped trie (``immutables.Map``) keyed by position.
Appending copies only the trie's path to the new position, O(log32 n), and
the trie's nodes are ordinary garbage-collected objects, so a new version
costs the collector that path, not the whole sequence. (A persistent vector
whose nodes are hidden inside one object is walked whole by every
collection that finds it young: a cost that grows with the run.)
"""

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, TypeVar, final, overload

import immutables

T = TypeVar("T")


@final
class Seq(Sequence[T]):
    """An immutable sequence with O(log n) ``append`` and ``extend`` per item."""

    __slots__ = ("_items",)
    _items: immutables.Map[int, T]

    def __init__(self, items: Iterable[T] = ()) -> None:
        builder: immutables.MapMutation[int, T] = immutables.Map[int, T]().mutate()
        for position, item in enumerate(items):
            builder[position] = item
        self._items = builder.finish()

    @classmethod
    def _of(cls, items: "immutables.Map[int, T]") -> "Seq[T]":
        seq: Seq[T] = cls.__new__(cls)
        seq._items = items
        return seq

    def append(self, item: T) -> "Seq[T]":
        """This sequence with ``item`` at the end."""
        return Seq._of(self._items.set(len(self._items), item))

    def extend(self, items: Iterable[T]) -> "Seq[T]":
        """This sequence with ``items`` at the end."""
        builder = self._items.mutate()
        position = len(self._items)
        for item in items:
            builder[position] = item
            position += 1
        if position == len(self._items):
            return self
        return Seq._of(builder.finish())

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[T, ...]: ...

    def __getitem__(self, index: int | slice) -> T | tuple[T, ...]:
        if isinstance(index, slice):
            items = self._items
            return tuple(items[i] for i in range(*index.indices(len(items))))
        position = index + len(self._items) if index < 0 else index
        try:
            return self._items[position]
        except KeyError:
            raise IndexError(f"Seq index {index} out of range") from None

    def __iter__(self) -> Iterator[T]:
        items = self._items
        for position in range(len(items)):
            yield items[position]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Seq):
            return NotImplemented
        return self._items is other._items or self._items == other._items

    def __hash__(self) -> int:
        return hash(self._items)

    def __repr__(self) -> str:
        return f"Seq({list(self)!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (Seq, (list(self),))
