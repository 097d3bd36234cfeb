"""One codec for events and commands: objects to JSON-ready data and back, exactly.

Floats survive at full precision; tuples come back as tuples. Structuring is
strict: a string where a number belongs is an error, not a guess.
"""

import math
from typing import Any, TypeVar

import cattrs
from cattrs.errors import ClassValidationError

from memtape.core.commands import COMMAND_KINDS, COMMAND_TYPES, Command
from memtape.core.errors import BadInput
from memtape.core.events import EVENT_TYPES, Event
from memtape.core.upcast import upcast

T = TypeVar("T")

converter = cattrs.Converter(forbid_extra_keys=True)
"""The single cattrs converter memtape uses for its own types."""


def _strict_int(value: Any, _: type) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"expected an integer, got {value!r}")
    return value


def _strict_float(value: Any, _: type) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"expected a finite number, got {value!r}")
    try:
        number = float(value)
    except OverflowError:
        raise TypeError(
            f"expected a finite number, got an integer of {len(str(value))} digits"
        ) from None
    if not math.isfinite(number):
        raise TypeError(f"expected a finite number, got {value!r}")
    return number


def _strict_str(value: Any, _: type) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {value!r}")
    return value


def _strict_bool(value: Any, _: type) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"expected true or false, got {value!r}")
    return value


converter.register_structure_hook(int, _strict_int)
converter.register_structure_hook(float, _strict_float)
converter.register_structure_hook(str, _strict_str)
converter.register_structure_hook(bool, _strict_bool)


def event_data(event: Event) -> dict[str, Any]:
    """The event's fields as JSON-ready data (its type and version are not included)."""
    data: dict[str, Any] = converter.unstructure(event)
    return data


def event_from_data(type_name: str, version: int, data: Any) -> Event:
    """Rebuild an event from its type name, schema version and fields.

    Fields stored at an older version are first brought to the class's
    ``VERSION`` by the upcasters in force (``memtape.core.upcast``); a newer
    version, or an older one with no upcasters, is a ``BadInput``.
    """
    cls = EVENT_TYPES.get(type_name)
    if cls is None:
        raise BadInput(f"unknown event type {type_name!r}")
    if type(version) is not int or version != cls.VERSION:
        data, _ = upcast(type_name, version, data, current=cls.VERSION)
    return _structure(data, cls, type_name)


def command_data(command: Command) -> dict[str, Any]:
    """The command as JSON-ready data, with its ``kind``."""
    data: dict[str, Any] = converter.unstructure(command)
    return {"kind": COMMAND_KINDS[type(command)], **data}


def command_from_data(data: Any) -> Command:
    """Rebuild a command from ``command_data``'s output."""
    if not isinstance(data, dict) or not isinstance(data.get("kind"), str):
        raise BadInput(f"a command must be an object with a kind, got {data!r}")
    fields = dict(data)
    kind = fields.pop("kind")
    cls = COMMAND_TYPES.get(kind)
    if cls is None:
        raise BadInput(f"unknown command kind {kind!r}")
    return _structure(fields, cls, kind)


def _structure(data: Any, cls: type[T], name: str) -> T:
    if not isinstance(data, dict):
        raise BadInput(f"{name}: expected an object of fields, got {data!r}")
    try:
        return converter.structure(data, cls)
    except ClassValidationError as error:
        problems = "; ".join(cattrs.transform_error(error, path=name))
        raise BadInput(problems) from None
