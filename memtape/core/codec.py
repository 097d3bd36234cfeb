"""One codec for events and commands: objects to JSON-ready data and back, exactly.

Floats survive at full precision; tuples come back as tuples. Structuring is
strict: a string where a number belongs is an error, not a guess.

Nothing is prepared at import: cattrs's converter is made when first needed
(writing an event, or data the fast path declines), and each type's fast
builder on its first value, so that a command reading a small run starts quickly.
"""

import functools
import json
import math
import types
import typing
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import attrs

from memtape.core.commands import COMMAND_KINDS, COMMAND_TYPES, ROLES, Command
from memtape.core.errors import BadInput
from memtape.core.events import EVENT_TYPES, OMITTED_WHEN_EMPTY, BlockEdit, Event, ModelCall
from memtape.core.upcast import upcast
from memtape.core.values import impossible

if TYPE_CHECKING:
    import cattrs

T = TypeVar("T")


class _WrongType(TypeError):
    """A value of the wrong kind for its field: what the field wants, and what it got."""

    def __init__(self, wanted: str, value: Any) -> None:
        super().__init__(f"expected {wanted}, got {value!r}")
        self.wanted = wanted
        self.value = value


def _strict_int(value: Any, _: type) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _WrongType("an integer", value)
    return value


def _strict_float(value: Any, _: type) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _WrongType("a finite number", value)
    try:
        number = float(value)
    except OverflowError:
        raise _WrongType("a finite number", value) from None
    if not math.isfinite(number):
        raise _WrongType("a finite number", value)
    return number


def _strict_str(value: Any, _: type) -> str:
    if not isinstance(value, str):
        raise _WrongType("a string", value)
    return value


def _strict_bool(value: Any, _: type) -> bool:
    if not isinstance(value, bool):
        raise _WrongType("true or false", value)
    return value


def _is_tuple(hint: Any) -> bool:
    return typing.get_origin(hint) is tuple


def _strict_tuple(value: Any, hint: Any) -> Any:
    # cattrs makes a tuple of any iterable: "" or {} would quietly become ().
    if not isinstance(value, list | tuple):
        raise _WrongType("a list", value)
    return _converters()[1].structure(value, hint)


_NESTED_OMITTING: tuple[type, ...] = (ModelCall, BlockEdit)
"""The records inside events whose log lines, too, leave out fields at their default."""

_OMITTING = frozenset((*EVENT_TYPES.values(), *_NESTED_OMITTING, *COMMAND_TYPES.values()))
"""Every type whose fields marked ``OMITTED_WHEN_EMPTY`` a log line may leave out (a
command's too: a turn's measured ``tokens``)."""


def _omitted(cls: type) -> tuple[str, ...]:
    """The fields of ``cls`` a log line leaves out while they hold their default."""
    return tuple(f.name for f in attrs.fields(cls) if f.metadata.get(OMITTED_WHEN_EMPTY))


@functools.cache
def _converters() -> "tuple[cattrs.Converter, cattrs.Converter]":
    """The single cattrs converter memtape uses for its own types, and a copy made before
    its tuple hook (cattrs's own tuple handling, with the strict hooks), for ``_strict_tuple``.
    """
    import cattrs  # noqa: PLC0415 (made on first use: see the module's docstring)
    from cattrs.gen import make_dict_unstructure_fn, override  # noqa: PLC0415

    made = cattrs.Converter(forbid_extra_keys=True)
    made.register_structure_hook(int, _strict_int)
    made.register_structure_hook(float, _strict_float)
    made.register_structure_hook(str, _strict_str)
    made.register_structure_hook(bool, _strict_bool)
    lenient = made.copy()
    made.register_structure_hook_func(_is_tuple, _strict_tuple)
    # The nested records first: an event's function takes the hook of each field's type.
    for cls in (*_NESTED_OMITTING, *EVENT_TYPES.values(), *COMMAND_TYPES.values()):
        if _omitted(cls):
            overrides: dict[str, Any] = {n: override(omit_if_default=True) for n in _omitted(cls)}
            made.register_unstructure_hook(cls, make_dict_unstructure_fn(cls, made, **overrides))
    return made, lenient


def __getattr__(name: str) -> Any:
    """``converter``: the single cattrs converter memtape uses, made on first use."""
    if name == "converter":
        return _converters()[0]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def event_data(event: Event) -> dict[str, Any]:
    """The event's fields as JSON-ready data (its type and version are not included)."""
    data: dict[str, Any] = _converters()[0].unstructure(event)
    return data


def event_from_data(type_name: str, version: int, data: Any) -> Event:
    """Rebuild an event from its type name, schema version and fields.

    Fields stored at an older version are first brought to the class's
    ``VERSION`` by the upcasters in force (``memtape.core.upcast``); a newer
    version, or an older one with no upcasters, is a ``BadInput``, and so is a
    value no policy writes (``memtape.core.values``).
    """
    cls = EVENT_TYPES.get(type_name)
    if cls is None:
        raise BadInput(f"unknown event type {type_name!r}")
    if type(version) is not int or version != cls.VERSION:
        data, _ = upcast(type_name, version, data, current=cls.VERSION)
    event = _structure(data, cls, type_name)
    problem = impossible(event)
    if problem is not None:
        raise BadInput(problem)
    return event


def command_data(command: Command) -> dict[str, Any]:
    """The command as JSON-ready data, with its ``kind``."""
    data: dict[str, Any] = _converters()[0].unstructure(command)
    return {"kind": COMMAND_KINDS[type(command)], **data}


def canonical_role(command: Any) -> None:
    """Make a command's data, before it is decoded, hold its role as one of ``ROLES``' own
    strings (a JSON parser makes a new string for each)."""
    if type(command) is dict:
        role = command.get("role")
        if type(role) is str:
            command["role"] = _ROLES.get(role, role)


def sharing_strings(command: Any, event: Any) -> None:
    """Make a step's first event's data, before it is decoded, hold the strings it has in
    common with its command's data (a turn's role and text, a fact's key and text): a
    loaded run then keeps one copy of each, as a run decided live does."""
    if type(command) is not dict or type(event) is not dict:
        return
    for name in _SHARED_FIELDS:
        value = command.get(name)
        if type(value) is str and event.get(name) == value:
            event[name] = value


_ROLES = {role: role for role in ROLES}
"""Each turn role, by itself: the one copy a loaded command's role becomes."""

_SHARED_FIELDS = ("role", "key", "text")
"""The fields an event shares with its command when they are equal (a turn's role and
text, a written fact's key and text)."""


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
        fast: Build | None = _FAST[cls]
    except KeyError:
        fast = None
    if fast is not None:
        try:
            built: T = fast(data)
        except _Declined:
            pass
        else:
            return built
    from cattrs.errors import ClassValidationError  # noqa: PLC0415 (the slow path only)

    try:
        return _converters()[0].structure(data, cls)
    except ClassValidationError as error:
        raise BadInput("; ".join(_problems(error, name))) from None


# The error path: cattrs gathers every problem of a structure with the
# field or index it happened at; these say each in the run file's terms.


def _problems(error: BaseException, path: str, hint: Any = None) -> list[str]:
    """Each problem under ``error``, named by its path (``TurnAdded.warm[0].tokens``)."""
    from cattrs.errors import (  # noqa: PLC0415 (cattrs, loaded by the error's converter)
        AttributeValidationNote,
        ClassValidationError,
        IterableValidationError,
    )

    if isinstance(error, ClassValidationError | IterableValidationError):
        with_notes, without = error.group_exceptions()
        found = []
        for inner, note in with_notes:
            if isinstance(note, AttributeValidationNote):
                found.extend(_problems(inner, f"{path}.{note.name}", note.type))
            else:
                found.extend(_problems(inner, f"{path}[{note.index}]", note.type))
        return found + [_problem(inner, path, None) for inner in without]
    return [_problem(error, path, hint)]


def _problem(error: BaseException, path: str, hint: Any) -> str:
    """One problem in a sentence: ``TurnAdded.tokens must be an integer, got "abc"``."""
    from cattrs.errors import ForbiddenExtraKeysError  # noqa: PLC0415 (as in ``_problems``)

    if isinstance(error, _WrongType):
        return f"{path} must be {error.wanted}, got {_spelled(error.value)}"
    if isinstance(error, KeyError):
        return f"{path} is missing"
    if isinstance(error, ForbiddenExtraKeysError):
        extra = sorted(error.extra_fields)
        return f"{path} has no field{'s' if len(extra) > 1 else ''} {', '.join(extra)}"
    if hint is not None and attrs.has(hint):
        return f"{path} must be an object of fields"
    return f"{path}: {error}"


def _spelled(value: Any) -> str:
    """``value`` as the run file spells it (JSON), cut short if long."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= _SPELLED_MAX else f"{text[: _SPELLED_MAX - 3]}..."


_SPELLED_MAX = 60
"""The longest value an error message quotes whole."""


# The fast path. Loading a long run structures a million events; cattrs with
# its strict hooks costs several microseconds each. For data of exactly the
# expected shape and types, these precomputed builders make the same objects
# directly; anything else (a missing or extra field, an int where a float
# belongs, a wrong type) is declined and goes through cattrs, which decides
# it and words the error. So the fast path changes speed, never results.


class _Declined(Exception):
    """The fast path does not take this value; cattrs will."""


Build = Callable[[Any], Any]


def _exactly(kind: type) -> Build:
    def build(value: Any) -> Any:
        if type(value) is not kind:
            raise _Declined
        return value

    return build


def _atoms(kind: type) -> Build:
    """A builder of a tuple of ``kind`` (ints, strings or bools): most are empty or short,
    and a type test per element and one ``tuple`` beat a builder call per element."""

    def build(value: Any) -> tuple[Any, ...]:
        if type(value) is not list:
            raise _Declined
        for element in value:
            if type(element) is not kind:
                raise _Declined
        return tuple(value)

    return build


def _finite(value: Any) -> float:
    if type(value) is not float or not math.isfinite(value):
        raise _Declined
    return value


def _builder(hint: Any) -> Build | None:
    if hint in (int, str, bool):
        return _exactly(hint)
    if hint is float:
        return _finite
    args = typing.get_args(hint)
    if typing.get_origin(hint) is tuple and len(args) == 2 and args[1] is Ellipsis:
        if args[0] in (int, str, bool):
            return _atoms(args[0])
        item = _builder(args[0])
        if item is None:
            return None

        def items(value: Any) -> tuple[Any, ...]:
            if type(value) is not list:
                raise _Declined
            return tuple([item(element) for element in value])

        return items
    if isinstance(hint, types.UnionType) and len(args) == 2 and type(None) in args:
        inner = _builder(next(arg for arg in args if arg is not type(None)))
        if inner is None:
            return None
        return lambda value: None if value is None else inner(value)
    if attrs.has(hint):
        return _record(hint)
    return None


_ATOMIC_TESTS = {
    int: "type({0}) is int",
    str: "type({0}) is str",
    bool: "type({0}) is bool",
    float: "type({0}) is float and _isfinite({0})",
}
"""How a generated builder tests a field of each atomic type, inline."""


def _atomic_test(hint: Any, name: str) -> str | None:
    """An inline test that ``name`` holds exactly ``hint`` (atomic or optional atomic)."""
    if hint in _ATOMIC_TESTS:
        return _ATOMIC_TESTS[hint].format(name)
    args = typing.get_args(hint)
    if isinstance(hint, types.UnionType) and len(args) == 2 and type(None) in args:
        inner = next(arg for arg in args if arg is not type(None))
        if inner in _ATOMIC_TESTS:
            return f"({name} is None or {_ATOMIC_TESTS[inner].format(name)})"
    return None


def _record(cls: type) -> Build | None:
    """A builder for ``cls``, generated as straight-line code like attrs' own methods.

    Atomic fields are tested inline; the others (tuples, nested records) go
    through their own builders. A loop over per-field closures costs about
    twice as much per event, which a million-event load notices. A field a
    log line may leave out (``OMITTED_WHEN_EMPTY``) takes its default when absent.
    """
    fields = attrs.fields(cls)
    if not all(field.init and not field.kw_only and field.alias == field.name for field in fields):
        return None  # built positionally below: only plain fields qualify
    hints = typing.get_type_hints(cls)
    namespace: dict[str, Any] = {"_cls": cls, "_Declined": _Declined, "_isfinite": math.isfinite}
    reads, tests, arguments = [], [], []
    omitted = set(_omitted(cls)) if cls in _OMITTING else set()
    size = " + ".join([str(len(fields) - len(omitted)), *(f"({n!r} in value)" for n in omitted)])
    for index, field in enumerate(fields):
        local = f"f{index}"
        if field.name in omitted:
            namespace[f"_default{index}"] = field.default
            builder = _builder(hints[field.name])
            if builder is None:
                return None
            namespace[f"_build{index}"] = builder
            reads.append(
                f"        {local} = _build{index}(value[{field.name!r}]) "
                f"if {field.name!r} in value else _default{index}"
            )
            arguments.append(local)
            continue
        reads.append(f"        {local} = value[{field.name!r}]")
        test = _atomic_test(hints[field.name], local)
        if test is not None:
            tests.append(test)
            arguments.append(local)
            continue
        builder = _builder(hints[field.name])
        if builder is None:
            return None
        namespace[f"_build{index}"] = builder
        if _is_tuple(hints[field.name]):
            # Most tuples of a run are empty (a turn's calls and answers): no call for those.
            arguments.append(
                f"(() if type({local}) is list and not {local} else _build{index}({local}))"
            )
        else:
            arguments.append(f"_build{index}({local})")
    lines = [
        "def build(value):",
        f"    if type(value) is not dict or len(value) != {size}:",
        "        raise _Declined",
        "    try:",
        *(reads or ["        pass"]),
        "    except KeyError:",
        "        raise _Declined from None",
        *([f"    if not ({' and '.join(tests)}):", "        raise _Declined"] if tests else []),
        f"    return _cls({', '.join(arguments)})",
    ]
    exec(compile("\n".join(lines), f"<memtape builder for {cls.__name__}>", "exec"), namespace)
    build: Build = namespace["build"]
    return build


class _Builders(dict[type, Build]):
    """The fast builder of each event and command type, generated on the type's first
    value; a type without one (cattrs builds it) is a ``KeyError``."""

    def __missing__(self, cls: type) -> Build:
        build = None if cls in _SLOW or cls not in _FAST_TYPES else _record(cls)
        if build is None:
            _SLOW.add(cls)
            raise KeyError(cls)
        self[cls] = build
        return build


_FAST_TYPES = frozenset((*EVENT_TYPES.values(), *COMMAND_TYPES.values()))
"""The types the fast path may build."""

_SLOW: set[type] = set()
"""The types found to have no fast builder."""

_FAST = _Builders()
