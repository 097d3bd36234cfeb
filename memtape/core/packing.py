"""Records as rows of plain values, and rows built back into equal records.

A run keeps the part of its history that no append will touch again packed
(``memtape.core.history``). A row is a tuple whose first item is its
record's type (an index into ``RECORD_TYPES``) and whose others are the
record's fields in order; a nested record (a warm item, a model call) is a
row of its own. Rows hold the fields' values as they are, so a block of them
pickles into one bytes object and comes back exact (a float subclass such as
numpy's stays one; ``marshal`` would write it as bytes). Each type's packer
and builder are generated as straight-line code on its first record, like
attrs' own methods: a loop over the fields costs twice as much, and every
event of a run passes here.

Packing is for memory only: rows never leave the process, and nothing but
memtape's own records goes in (a record of another type refuses the whole
block, which then stays as it was).
"""

import typing
from collections.abc import Callable, Iterable
from types import MemberDescriptorType
from typing import Any, TypeVar

import attrs

from memtape.core.commands import COMMAND_TYPES
from memtape.core.events import (
    EVENT_TYPES,
    ModelCall,
    ProceduralRule,
    SemanticFact,
    WarmItem,
)

T = TypeVar("T")

Row = tuple[Any, ...]
"""A record packed: its type's index in ``RECORD_TYPES``, then its fields in order."""

RECORD_TYPES: tuple[type, ...] = (
    *EVENT_TYPES.values(),
    WarmItem,
    ModelCall,
    SemanticFact,
    ProceduralRule,
    *COMMAND_TYPES.values(),
)
"""Every type a row may hold, events, the records nested in them, and commands."""

_CODES = {cls: code for code, cls in enumerate(RECORD_TYPES)}


class Unpackable(Exception):
    """A record that has no row: not one of ``RECORD_TYPES``."""


def pack(record: Any) -> Row:
    """``record`` as a row; ``Unpackable`` when it is not one of ``RECORD_TYPES``."""
    try:
        packer = _PACKERS[type(record)]
    except KeyError:
        raise Unpackable(type(record).__name__) from None
    return packer(record)


def pack_all(records: Iterable[Any]) -> list[Row]:
    """Each of ``records`` as a row, in order (``pack`` of each, without a call apiece)."""
    packers = _PACKERS
    try:
        return [packers[type(record)](record) for record in records]
    except KeyError as error:
        raise Unpackable(getattr(error.args[0], "__name__", str(error.args[0]))) from None


def build(row: Row) -> Any:
    """The record ``row`` packs, equal to the one packed."""
    return _BUILDERS[row[0]](row)


def _nested(hint: Any) -> type | None:
    """The record type a field of type ``hint`` holds a tuple of, or None."""
    if typing.get_origin(hint) is tuple:
        arguments = typing.get_args(hint)
        if len(arguments) == 2 and arguments[1] is Ellipsis and arguments[0] in _CODES:
            return typing.cast(type, arguments[0])
    return None


def _rows(records: Any) -> tuple[Row, ...]:
    """A tuple of records as a tuple of rows (the generated packers pass an empty one on
    as it is)."""
    if type(records) is not tuple:
        raise Unpackable(type(records).__name__)
    return tuple(pack_all(records))


def _records(rows: tuple[Row, ...]) -> tuple[Any, ...]:
    """The tuple of records ``rows`` packs."""
    return tuple([build(row) for row in rows])


def _generated(cls: type) -> tuple[Callable[[Any], Row], Callable[[Row], Any]]:
    """The packer and the builder of ``cls``."""
    fields = attrs.fields(cls)
    if not _plain_slots(cls):
        raise TypeError(f"{cls.__name__} is more than its fields' slots")
    hints = typing.get_type_hints(cls)
    namespace: dict[str, Any] = {
        "_cls": cls,
        "_new": object.__new__,
        "_rows": _rows,
        "_records": _records,
    }
    reads, arguments = [], []
    for index, field in enumerate(fields, start=1):
        if _nested(hints[field.name]) is None:
            reads.append(f"r.{field.name}")
            arguments.append(f"row[{index}]")
        else:
            # Most of these are empty (a compaction that asked no model): no call then.
            reads.append(f"(r.{field.name} and _rows(r.{field.name}))")
            arguments.append(f"(row[{index}] and _records(row[{index}]))")
    # Each slot set through its descriptor: a frozen class's __init__ sets each
    # through object.__setattr__, a third slower, and does nothing else.
    namespace.update({f"_set{i}": getattr(cls, f.name).__set__ for i, f in enumerate(fields)})
    lines = [
        "def packer(r):",
        f"    return ({', '.join([str(_CODES[cls]), *reads])},)",
        "def builder(row):",
        "    record = _new(_cls)",
        *(f"    _set{i}(record, {argument})" for i, argument in enumerate(arguments)),
        "    return record",
    ]
    exec(compile("\n".join(lines), f"<memtape rows of {cls.__name__}>", "exec"), namespace)
    return namespace["packer"], namespace["builder"]


def maker(cls: type[T]) -> Callable[..., T]:
    """A function that makes a ``cls`` from every one of its fields, in order, as
    ``cls(...)`` would (``cls`` must be made of its slots alone: ``_plain_slots``).

    A frozen attrs class's ``__init__`` sets each field through ``object.__setattr__``;
    this sets each slot through its descriptor, on an object from ``object.__new__``,
    which costs a third less: the turn a policy makes at every command is made so.
    """
    record_type: type = cls
    if not _plain_slots(record_type):
        raise TypeError(f"{cls.__name__} is more than its fields' slots")
    names = [field.name for field in attrs.fields(record_type)]
    namespace: dict[str, Any] = {"_cls": cls, "_new": object.__new__}
    namespace.update({f"_set{i}": getattr(cls, name).__set__ for i, name in enumerate(names)})
    lines = [
        f"def make({', '.join(names)}):",
        "    record = _new(_cls)",
        *(f"    _set{i}(record, {name})" for i, name in enumerate(names)),
        "    return record",
    ]
    exec(compile("\n".join(lines), f"<memtape maker of {cls.__name__}>", "exec"), namespace)
    made: Callable[..., T] = namespace["make"]
    return made


def _plain_slots(cls: type) -> bool:
    """Whether an instance of ``cls`` is made by setting its fields' slots and nothing else:
    a slotted class whose ``__init__`` neither validates, converts nor runs a hook."""
    fields = attrs.fields(cls)
    return (
        not hasattr(cls, "__attrs_post_init__")
        and not hasattr(cls, "__attrs_pre_init__")
        and all(field.validator is None and field.converter is None for field in fields)
        and all(
            isinstance(getattr(cls, field.name, None), MemberDescriptorType) for field in fields
        )
    )


class _Packers(dict[type, Callable[[Any], Row]]):
    """The packer of each record type, generated on the type's first record."""

    def __missing__(self, cls: type) -> Callable[[Any], Row]:
        if cls not in _CODES:
            raise KeyError(cls)
        self[cls], _BUILDERS[_CODES[cls]] = _generated(cls)
        return self[cls]


class _Builders(dict[int, Callable[[Row], Any]]):
    """The builder of each record type by its code, generated with its packer."""

    def __missing__(self, code: int) -> Callable[[Row], Any]:
        _PACKERS[RECORD_TYPES[code]]
        return self[code]


_PACKERS = _Packers()
_BUILDERS = _Builders()
