"""The zoo described: each policy's axis, parameters with their defaults and meaning,
promises and upstream source, read from the classes the zoo holds (``memtape policies``).

Nothing here keeps a list of its own: a policy registered in ``memtape.policies.zoo``
is described the moment it is. Its parameters are what its ``params()`` writes back
when it is built from its axis's shared parameters alone (``zoo.SHARED``), a shared
one that it cannot be built without being *required*; their meaning is the attribute
docstring of the class field of the same name, where the class has one. A policy
that its shared parameters alone cannot build (``recorded`` needs the compactions a
transcript recorded, the ``llm`` consolidation a model) is described from its
fields, with what it needs. Its upstream source is its class's ``upstream``, when
the class says one. A shared parameter a policy's table leaves out while it is
unset (``recall``, ``ttl``) is listed with it all the same, unset.

The mechanisms beside the policies (memory blocks, recall, expiry, bi-temporal
facts, judged supersession: ``memtape.policies.plumbing.mechanisms``) are described too,
and found by their name or any of their aliases.
"""

import ast
import inspect
import itertools
import textwrap
from collections.abc import Iterator, Mapping
from typing import Any

import attrs

from memtape.core.errors import BadInput
from memtape.policies.plumbing.mechanisms import MECHANISMS, SHARED_SETTINGS, Mechanism, Setting
from memtape.policies.zoo import AXES, SHARED

SAMPLE = {"budget": 1000, "capacity": 100}
"""A value for each shared parameter that a policy may require, to build it from: the
value is never shown (a required parameter is listed as required), and a default that
follows it (``rolling-summary``'s ``summary_tokens``, a share of the budget) is listed
as following it, the policy being built a second time from twice these values."""


@attrs.frozen
class Parameter:
    """One parameter of a policy's table: its name, its default (None when ``required``),
    and what it means (``""`` when its class does not say)."""

    name: str
    default: Any
    required: bool
    meaning: str
    follows: str | None = None
    """The shared parameter its default follows (None for a fixed default)."""

    def data(self) -> dict[str, Any]:
        """The parameter as ``memtape policies --json`` writes it."""
        return {
            "name": self.name,
            "default": self.default,
            "required": self.required,
            "follows": self.follows,
            "meaning": self.meaning,
        }


@attrs.frozen
class Description:
    """A policy of the zoo, as ``memtape policies`` shows it."""

    name: str
    axis: str
    summary: str
    """The first paragraph of its class's docstring, on one line."""
    parameters: tuple[Parameter, ...]
    promises: tuple[str, ...] | None
    """What it promises (None when it cannot be built from its shared parameters alone)."""
    upstream: str | None
    needs: str | None = None
    """What it needs beyond its shared parameters, when it cannot be built without it."""

    def data(self) -> dict[str, Any]:
        """The description as ``memtape policies --json`` writes it."""
        return {
            "name": self.name,
            "axis": self.axis,
            "summary": self.summary,
            "parameters": [parameter.data() for parameter in self.parameters],
            "promises": None if self.promises is None else list(self.promises),
            "upstream": self.upstream,
            "needs": self.needs,
        }


@attrs.frozen
class MechanismDescription:
    """A mechanism beside the policies (``memtape.policies.plumbing.mechanisms``), as ``memtape
    policies`` shows it."""

    name: str
    summary: str
    """The first paragraph of its module's docstring, on one line."""
    where: str
    settings: tuple[Setting, ...]
    promises: tuple[str, ...]
    guide: str
    aliases: tuple[str, ...]

    def data(self) -> dict[str, Any]:
        """The description as ``memtape policies NAME --json`` writes it."""
        return {
            "name": self.name,
            "kind": "mechanism",
            "summary": self.summary,
            "where": self.where,
            "settings": [setting.data() for setting in self.settings],
            "promises": list(self.promises),
            "guide": self.guide,
            "aliases": list(self.aliases),
        }


def names() -> list[str]:
    """Every policy name the zoo holds, on every axis."""
    return [name for registry in AXES.values() for name in registry]


def mechanisms() -> Iterator[MechanismDescription]:
    """Every mechanism beside the policies, in ``MECHANISMS``'s order."""
    for mechanism in MECHANISMS:
        yield _mechanism(mechanism)


def _mechanism(mechanism: Mechanism) -> MechanismDescription:
    import importlib  # noqa: PLC0415 (a mechanism's module only when it is described)

    module = importlib.import_module(mechanism.module)
    return MechanismDescription(
        mechanism.name,
        _summary(module),
        mechanism.where,
        mechanism.settings,
        mechanism.promises,
        mechanism.guide,
        mechanism.aliases,
    )


def described() -> Iterator[Description]:
    """Every policy of the zoo, axis by axis, in the zoo's order."""
    for axis, registry in AXES.items():
        for name in registry:
            yield describe(axis, name)


def find(name: str) -> Description | MechanismDescription:
    """The policy called ``name``, on whichever axis holds it, else the mechanism of that
    name or alias; ``BadInput`` naming the closest name when none is."""
    for axis, registry in AXES.items():
        if name in registry:
            return describe(axis, name)
    for mechanism in MECHANISMS:
        if name == mechanism.name or name in mechanism.aliases:
            return _mechanism(mechanism)
    from memtape.core.spelling import did_you_mean  # noqa: PLC0415 (a refusal only)

    known = [*names(), *(n for m in MECHANISMS for n in (m.name, *m.aliases))]
    raise BadInput(
        f"no policy or mechanism {name!r} (see memtape policies for the list)"
        f"{did_you_mean(name, known)}"
    )


def describe(axis: str, name: str) -> Description:
    """The policy ``name`` of ``axis``, read from its class."""
    policy_class = AXES[axis][name]
    meanings = _field_docstrings(policy_class)
    shared = {key: SAMPLE[key] for key in SHARED[axis] if key in SAMPLE}
    required = {key for key in shared if _needs(policy_class, axis, shared, key)}
    where = f"[{axis}] policy {name!r}"
    try:
        policy = policy_class.from_params(shared, where)
    except BadInput as error:
        parameters = (*_from_fields(policy_class, required, meanings), *_unset(axis, {}))
        needs = str(error).removeprefix(f"{where}: ")
        return Description(
            name, axis, _summary(policy_class), parameters, None, _upstream(policy_class), needs
        )
    table = dict(policy.params())
    table.pop("policy", None)
    doubled = policy_class.from_params({key: 2 * value for key, value in shared.items()}, where)
    moved = {key for key, value in doubled.params().items() if table.get(key) != value}
    follows = ", ".join(sorted(required)) or None
    parameters = tuple(
        Parameter(
            key,
            None if key in required or key in moved else value,
            key in required,
            meanings.get(key, ""),
            follows if key in moved and key not in required else None,
        )
        for key, value in table.items()
    ) + tuple(_unset(axis, table))
    promises = tuple(sorted(getattr(policy, "promises", ())))
    return Description(
        name, axis, _summary(policy_class), parameters, promises, _upstream(policy_class)
    )


def _unset(axis: str, table: Mapping[str, Any]) -> Iterator[Parameter]:
    """The axis's shared parameters that ``table`` leaves out while unset, each unset."""
    for key in SHARED[axis]:
        setting = SHARED_SETTINGS.get((axis, key))
        if setting is not None and key not in table:
            yield Parameter(key, None, False, setting.meaning)


def _needs(policy_class: Any, axis: str, shared: dict[str, Any], key: str) -> bool:
    """Whether the policy cannot be built without the shared parameter ``key``."""
    without = {other: value for other, value in shared.items() if other != key}
    try:
        policy_class.from_params(without, axis)
    except BadInput as error:
        return f"missing parameter {key}" in str(error)
    return False


def _from_fields(
    policy_class: Any, required: set[str], meanings: dict[str, str]
) -> Iterator[Parameter]:
    """The parameters of a class that cannot be built here, from its attrs fields."""
    for field in attrs.fields(policy_class):
        if not field.init or field.name.startswith("_"):
            continue
        default = field.default
        if default is attrs.NOTHING:
            yield Parameter(field.name, None, True, meanings.get(field.name, ""))
            continue
        if isinstance(default, attrs.Factory):  # type: ignore[arg-type]
            made = default.factory()
            default = getattr(made, "name", made)
        yield Parameter(
            field.name, _plain(default), field.name in required, meanings.get(field.name, "")
        )


def _plain(value: Any) -> Any:
    """``value`` as JSON can hold it: a tuple as a list, anything else unknown as its text."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, tuple | list):
        return [_plain(item) for item in value]
    return str(value)


def _summary(documented: Any) -> str:
    """The first paragraph of a class's or module's docstring, on one line, without reST's
    quotes."""
    paragraph = inspect.cleandoc(documented.__doc__ or "").split("\n\n")[0]
    return " ".join(paragraph.replace("``", "`").split())


def _upstream(policy_class: Any) -> str | None:
    """The product or paper the policy replicates, when its class says (``upstream``)."""
    upstream = getattr(policy_class, "upstream", None)
    return upstream if isinstance(upstream, str) else None


def _field_docstrings(policy_class: Any) -> dict[str, str]:
    """Each field's attribute docstring (the string under it in the class body), on one
    line, from the class and the classes it derives from (the nearest wins)."""
    found: dict[str, str] = {}
    for klass in reversed(policy_class.__mro__):
        if klass is object:
            continue
        try:
            source = textwrap.dedent(inspect.getsource(klass))
        except (OSError, TypeError):
            continue
        body = ast.parse(source).body
        if not body or not isinstance(body[0], ast.ClassDef):
            continue
        statements = body[0].body
        for statement, following in itertools.pairwise(statements):
            if (
                isinstance(statement, ast.AnnAssign)
                and isinstance(statement.target, ast.Name)
                and isinstance(following, ast.Expr)
                and isinstance(following.value, ast.Constant)
                and isinstance(following.value.value, str)
            ):
                text = inspect.cleandoc(following.value.value).split("\n\n")[0]
                found[statement.target.id] = " ".join(text.replace("``", "`").split())
    return found
