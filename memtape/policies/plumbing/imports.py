"""Policies (and summarizers) named by import path: ``policy = "mypkg.mymodule:MyPolicy"``.

A user's policy need not be registered: a scenario (or ``--set``) names its
class by import path, and the class builds itself from the rest of the table
with ``from_params(data, where)``, as the shipped policies do.
"""

import importlib
import os
import sys
from types import ModuleType
from typing import Any

from memtape.core.errors import BadInput


class Unimportable(BadInput):
    """An import path that names no policy class here: its module does not import, or
    holds no such class. The path may be right elsewhere (another directory, another
    environment), so whoever reads it from a run file cannot rebuild the policy at all."""


def is_import_path(name: str) -> bool:
    """Whether a policy name is an import path (``module:Class``) rather than a registered name."""
    return ":" in name


def import_path(cls: type) -> str:
    """The import path that names ``cls`` (``module:Qualified.Name``)."""
    return f"{cls.__module__}:{cls.__qualname__}"


def policy_class(path: str, where: str) -> Any:
    """The policy class ``path`` names, or ``BadInput`` saying why there is none."""
    found = imported(path, where, "policy", "mypkg.module:Policy")
    if not isinstance(found, type) or not callable(getattr(found, "from_params", None)):
        raise Unimportable(
            f"{where}: policy {path!r} is not a policy class with from_params(data, where)"
        )
    return found


def imported(
    path: str, where: str, what: str = "policy", example: str = "mypkg.module:Name"
) -> Any:
    """What ``path`` (``module:Qualified.Name``) names, or ``Unimportable`` saying why nothing.

    ``what`` (policy, summarizer) and ``example`` word the refusals.
    """
    module_name, _, qualname = path.partition(":")
    if not module_name.strip() or not qualname.strip():
        raise BadInput(f"{where}: {what} {path!r} is not an import path like {example}")
    try:
        module = _import(module_name)
    except ImportError as error:
        message = f"cannot import {module_name}: {error}"
        raise Unimportable(f"{where}: {what} {path!r}: {message}") from None
    except Exception as error:
        # A user's module may fail in any way while it loads; say so in one line.
        message = f"importing {module_name} failed: {type(error).__name__}: {error}"
        raise Unimportable(f"{where}: {what} {path!r}: {message}") from None
    found: Any = module
    for part in qualname.split("."):
        found = getattr(found, part, None)
        if found is None:
            raise Unimportable(f"{where}: {what} {path!r}: {module_name} has no {qualname}")
    return found


def _import(name: str) -> ModuleType:
    """Import ``name``; a module beside the working directory is found too.

    A console script does not put the working directory on ``sys.path``
    (``python -m`` does), so ``memtape run`` from a project's root would not
    find the project's own policies without this second try.
    """
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as error:
        here = os.getcwd()
        top = name.partition(".")[0]
        if error.name != top or here in sys.path or "" in sys.path:
            raise
    sys.path.append(here)
    return importlib.import_module(name)
