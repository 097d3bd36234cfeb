"""``memtape policies [NAME]``: every policy the zoo holds, or one in full."""

import argparse
import json
from collections.abc import Iterable, Iterator
from typing import Any

from memtape.commandline.output import print_json, print_lines
from memtape.core.visible import visible
from memtape.policies.plumbing.mechanisms import Setting
from memtape.projections.catalogue import (
    Description,
    MechanismDescription,
    described,
    find,
    mechanisms,
)


def run(args: argparse.Namespace) -> int:
    """List every policy with its axis, parameters and promises, then the mechanisms beside
    them, or (``NAME``) one in full; ``--json`` prints the same as JSON (the list: the
    policies alone, as it always has)."""
    if args.name is not None:
        description = find(args.name)
        if args.json:
            print_json(description.data())
        elif isinstance(description, MechanismDescription):
            print_lines(mechanism_in_full(description))
        else:
            print_lines(in_full(description))
        return 0
    descriptions = list(described())
    if args.json:
        print_json([description.data() for description in descriptions])
    else:
        print_lines(listed(descriptions))
    return 0


def listed(descriptions: Iterable[Description]) -> Iterator[str]:
    """A few lines a policy, under its axis."""
    axis = None
    for description in descriptions:
        if description.axis != axis:
            if axis is not None:
                yield ""
            axis = description.axis
            yield f"{axis}:"
        yield f"  {description.name}: {visible(description.summary)}"
        yield f"      parameters: {_parameters(description)}"
        yield f"      promises: {_promises(description)}"
    yield ""
    yield "mechanisms beside the policies:"
    for mechanism in mechanisms():
        yield f"  {mechanism.name}: {visible(mechanism.summary)}"
        yield f"      settings: {_settings(mechanism.settings)}"
        yield f"      promises: {', '.join(mechanism.promises)}"
    yield ""
    yield "memtape policies NAME shows one in full."


def mechanism_in_full(mechanism: MechanismDescription) -> Iterator[str]:
    """One mechanism: what it is, where a scenario turns it on, each setting with where it
    is written, its default and meaning, its promises, the names it is found by and the
    page that walks through it."""
    yield f"{mechanism.name} (a mechanism beside the policies)"
    yield visible(mechanism.summary)
    yield ""
    yield f"where: {visible(mechanism.where)}"
    yield "settings:"
    for setting in mechanism.settings:
        yield (
            f"  {setting.name} in {setting.table} ({_default(setting)}): {visible(setting.meaning)}"
        )
    yield f"promises: {', '.join(mechanism.promises)}"
    yield f"also found as: {', '.join(mechanism.aliases)}"
    yield f"guide: {mechanism.guide}"


def _default(setting: Setting) -> str:
    if setting.required:
        return "required"
    if setting.default is None:
        return "unset by default"
    return f"default {_shown(setting.default)}"


def _settings(settings: Iterable[Setting]) -> str:
    return ", ".join(f"{setting.name} ({setting.table})" for setting in settings)


def in_full(description: Description) -> Iterator[str]:
    """One policy: what it does, each parameter with its default and meaning, its promises,
    and where it comes from."""
    yield f"{description.name} ({description.axis})"
    yield visible(description.summary)
    yield ""
    yield "parameters:"
    for parameter in description.parameters:
        if parameter.required:
            default = "required"
        elif parameter.follows is not None:
            default = f"default follows {parameter.follows}"
        elif parameter.default is None:
            default = "unset by default"
        else:
            default = f"default {_shown(parameter.default)}"
        meaning = f": {visible(parameter.meaning)}" if parameter.meaning else ""
        yield f"  {parameter.name} ({default}){meaning}"
    if description.needs is not None:
        yield f"needs: {visible(description.needs)}"
    yield f"promises: {_promises(description)}"
    if description.upstream is not None:
        yield f"upstream: {visible(description.upstream)}"


def _parameters(description: Description) -> str:
    shown = []
    for parameter in description.parameters:
        if parameter.required:
            shown.append(f"{parameter.name} (required)")
        elif parameter.follows is not None:
            shown.append(f"{parameter.name} (follows {parameter.follows})")
        elif parameter.default is None:
            shown.append(f"{parameter.name} (unset)")
        else:
            shown.append(f"{parameter.name} = {_shown(parameter.default, SHORT)}")
    return ", ".join(shown) if shown else "none"


def _promises(description: Description) -> str:
    if description.promises is None:
        return "as its table decides"
    return ", ".join(description.promises) if description.promises else "none"


SHORT = 40
"""The most characters of a default the list shows (a prompt runs to hundreds)."""


def _shown(value: Any, most: int | None = None) -> str:
    """A default as a scenario table would write it, cut to ``most`` characters."""
    text = json.dumps(value, ensure_ascii=False)
    if most is not None and len(text) > most:
        text = text[: most - 1] + "…"
    return visible(text)
