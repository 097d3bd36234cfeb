"""The one ``__repr__`` (``memtape.core.reprs``) of the events', commands' and states'
classes, and of the other frozen classes ``memtape show`` makes: each stays a frozen attrs
class, and its repr is the text attrs' own would write."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

from typing import Any

import attrs
import pytest

from memtape.core import chain, commands, logfile, state
from memtape.core.commands import AddTurn, Consolidate
from memtape.core.events import TurnAdded, WarmItem, memory, parts, store
from memtape.core.events import window as window_events
from memtape.core.reprs import fields_repr
from memtape.policies.plumbing import building
from memtape.policies.text import tokenizers
from memtape.policies.window import trigger
from memtape.projections import meter
from memtape.runs import files

MODULES = (
    window_events,
    store,
    memory,
    parts,
    commands,
    state,
    chain,
    logfile,
    building,
    tokenizers,
    trigger,
    meter,
    files,
)

CLASSES = [
    value
    for module in MODULES
    for value in vars(module).values()
    if isinstance(value, type) and attrs.has(value) and value.__module__ == module.__name__
]
"""Every attrs class these modules make: the events, commands and states, and those of what
reading a run needs (its file, its chain, its policies' building, tokenizers and trigger,
the meter, the loaded run)."""

VALUES: list[Any] = ['it\'s "quoted"', 3, 1.5, None, (1, "two"), WarmItem(2, "warm", 1), True]
"""Field values of every kind a repr shows differently, one per field in turn."""


def _filled(cls: type, fields: "tuple[attrs.Attribute[Any], ...]") -> object:
    """An instance of ``cls`` holding ``VALUES`` in its fields, whatever their types."""
    made: object = object.__new__(cls)
    for place, field in enumerate(fields):
        object.__setattr__(made, field.name, VALUES[place % len(VALUES)])
    return made


def _attrs_own(cls: type) -> object:
    """A class attrs makes anew with ``cls``'s name and shown fields, repr compiled as
    attrs writes it, holding the same values as ``_filled(cls)``."""
    fields = attrs.fields(cls)
    made = attrs.make_class(
        cls.__name__,
        {field.name: attrs.field(repr=field.repr) for field in fields},
        frozen=True,
    )
    return _filled(made, attrs.fields(made))


class TestClasses:
    def test_every_module_makes_some(self) -> None:
        made = {cls.__module__ for cls in CLASSES}
        assert {module.__name__ for module in MODULES} == made

    @pytest.mark.parametrize("cls", CLASSES, ids=lambda cls: cls.__name__)
    def test_each_shares_the_one_repr(self, cls: type) -> None:
        assert fields_repr == vars(cls)["__repr__"]

    @pytest.mark.parametrize("cls", CLASSES, ids=lambda cls: cls.__name__)
    def test_each_is_still_frozen(self, cls: type) -> None:
        fields = attrs.fields(cls)
        made = _filled(cls, fields)
        with pytest.raises(attrs.exceptions.FrozenInstanceError):
            setattr(made, fields[0].name if fields else "anything", 0)


class TestRepr:
    @pytest.mark.parametrize("cls", CLASSES, ids=lambda cls: cls.__name__)
    def test_each_writes_what_attrs_writes(self, cls: type) -> None:
        assert repr(_attrs_own(cls)) == repr(_filled(cls, attrs.fields(cls)))

    @pytest.mark.parametrize(
        ("made", "shown"),
        [
            (
                TurnAdded(1, "user", "hi", 1, False),
                "TurnAdded(turn=1, role='user', text='hi', tokens=1, salient=False, calls=(), "
                "answers=(), pinned=False)",
            ),
            (
                AddTurn("tool", "x"),
                "AddTurn(role='tool', text='x', salient=None, calls=(), answers=(), pin=False, "
                "tokens=None)",
            ),
            (Consolidate(), "Consolidate()"),
        ],
        ids=["event", "command", "no-field"],
    )
    def test_as_attrs_wrote_it(self, made: object, shown: str) -> None:
        """The texts attrs' own repr wrote for these, before the classes shared one."""
        assert shown == repr(made)

    def test_a_subclass_is_named_as_itself(self) -> None:
        """attrs names the instance's own class, not the one the repr was made for."""

        class Later(WarmItem):
            __slots__ = ()

        assert "Later(turn=1, text='t', tokens=2)" == repr(Later(1, "t", 2))
