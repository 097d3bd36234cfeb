"""``memtape generate``: a seeded scenario file (a support session, or a store workload).

Each kind is a row of ``KINDS``: the generator that writes it, the option giving its size
(``--turns`` or ``--steps``) and the options it passes on by name. A kind's handler (the
name the parser gives it, ``support``, ``store``...) writes that row's file.
"""

import argparse
from collections.abc import Callable

import attrs

from memtape.commandline.writing import write_scenario
from memtape.lab.blocks_workload import blocks_workload
from memtape.lab.expiry_workload import expiry_workload
from memtape.lab.generate import store_workload, support_session
from memtape.lab.judged_workload import judged_workload
from memtape.lab.recall_workload import recall_workload
from memtape.lab.temporal_workload import temporal_workload


@attrs.frozen
class Kind:
    """One kind of generated file: ``make(size, seed, **options)`` writes it."""

    make: Callable[..., str]
    size: str
    """The option that sizes it: ``turns`` or ``steps``."""
    options: tuple[str, ...]
    """The options passed to ``make`` by their names."""
    about: str
    """What it is, as its handler's docstring says."""


_SESSION = ("budget", "hot_n", "probe_every")
_WORKLOAD = ("customers", "capacity")

KINDS = {
    "support": Kind(support_session, "turns", _SESSION, "a support session with planted probes"),
    "store": Kind(
        store_workload, "steps", _WORKLOAD, "a store workload: writes, rewrites and queries"
    ),
    "expiry": Kind(
        expiry_workload,
        "steps",
        _WORKLOAD,
        "an expiry workload: durable facts, session notes under a TTL, promotions",
    ),
    "temporal": Kind(
        temporal_workload,
        "steps",
        _WORKLOAD,
        "a bi-temporal workload: changes learned late, corrections, queries of the past",
    ),
    "judged": Kind(
        judged_workload,
        "steps",
        _WORKLOAD,
        "a judged-supersession workload: facts restated under new keys, repeats, retractions",
    ),
    "recall": Kind(
        recall_workload,
        "turns",
        (*_SESSION, "recall_after"),
        "a recall session: the support session, recalling each probe once it left",
    ),
    "blocks": Kind(
        blocks_workload,
        "turns",
        (*_SESSION, "limit"),
        "a support session whose agent notes each planted fact in a memory block",
    ),
}
"""Every kind ``memtape generate`` writes, by name."""


def write(name: str, args: argparse.Namespace) -> int:
    """Write the file of kind ``name`` that ``args`` ask for."""
    kind = KINDS[name]
    return write_scenario(
        args.out,
        lambda: kind.make(
            getattr(args, kind.size),
            args.seed,
            **{option: getattr(args, option) for option in kind.options},
        ),
    )


def _handler(name: str) -> Callable[[argparse.Namespace], int]:
    """The handler of ``generate NAME``, the parser's name for it."""

    def handler(args: argparse.Namespace) -> int:
        return write(name, args)

    handler.__name__ = handler.__qualname__ = name
    handler.__doc__ = f"Write {KINDS[name].about}."
    return handler


# The parser names each kind's handler by its kind (``_command("generate", "store")``).
support = _handler("support")
store = _handler("store")
expiry = _handler("expiry")
temporal = _handler("temporal")
judged = _handler("judged")
recall = _handler("recall")
blocks = _handler("blocks")
