"""What a bench runs: the policies compared (``--policy``), the grid's points and the cells
they make, one scenario under one policy with one set of settings."""

import hashlib
import itertools
import json
import re
from collections.abc import Sequence
from pathlib import Path

import attrs

from memtape.core.errors import BadInput
from memtape.core.spelling import did_you_mean
from memtape.policies.zoo import AXES
from memtape.projections.billing.prices import PriceTable

BENCHED_AXES = ("compaction", "forgetting")
"""The axes whose policies a bench compares."""


@attrs.frozen
class PolicySpec:
    """A policy to bench: its axis, its name, and ``AXIS.PARAM=VALUE`` settings for it."""

    axis: str
    name: str
    settings: tuple[str, ...]
    label: str


def parse_policy(text: str) -> PolicySpec:
    """``NAME`` or ``NAME:k=v,k=v`` (e.g. ``rolling-summary:keep=4``) as a policy to bench."""
    name, _, rest = text.partition(":")
    name = name.strip()
    axes = [axis for axis in BENCHED_AXES if name in AXES[axis]]
    if not axes:
        elsewhere = [axis for axis in AXES if axis not in BENCHED_AXES and name in AXES[axis]]
        if elsewhere:
            raise BadInput(
                f"--policy {text!r}: {name!r} is a {elsewhere[0]} policy, and bench compares "
                f"{' or '.join(BENCHED_AXES)} policies"
            )
        names = sorted(n for axis in BENCHED_AXES for n in AXES[axis])
        hint = did_you_mean(name, names)
        raise BadInput(f"--policy {text!r}: no policy {name!r} (known: {', '.join(names)}){hint}")
    axis = axes[0]
    settings = []
    for pair in filter(None, (part.strip() for part in rest.split(","))):
        param, sep, value = pair.partition("=")
        if not sep or not param.strip() or param.strip() == "policy":
            raise BadInput(f"--policy {text!r}: write NAME:PARAM=VALUE,PARAM=VALUE, got {pair!r}")
        settings.append(f"{axis}.{param.strip()}={value.strip()}")
    return PolicySpec(axis, name, tuple(settings), text.strip())


def parse_grid(texts: Sequence[str]) -> tuple[tuple[str, ...], ...]:
    """The points of a grid: ``["compaction.budget=500,1000"]`` gives one setting per value.

    Several grid options multiply (every combination, the first option varying slowest).
    """
    axes = []
    for text in texts:
        name, sep, values = text.partition("=")
        choices = [value.strip() for value in values.split(",") if value.strip()]
        if not sep or "." not in name or not choices:
            raise BadInput(
                f"--grid {text!r}: write AXIS.PARAM=V1,V2,..., e.g. compaction.budget=500,1000"
            )
        axes.append([f"{name.strip()}={value}" for value in choices])
    return tuple(tuple(point) for point in itertools.product(*axes))


@attrs.frozen
class Cell:
    """One run of the bench: a scenario, a policy, and settings on top of both."""

    scenario: str
    spec: PolicySpec
    settings: tuple[str, ...]
    point: tuple[str, ...]
    """The grid point among ``settings``, shown in labels."""
    judge: str | None = None
    """The model that answers the probes' questions (``bench --judge``), or None."""
    probes: str | None = None
    """A probes file whose probes are added to the scenario's (``bench --probes``), or None."""
    replicate: int | None = None
    """Which replicate of the cell this run is (``bench --replicates``), counted from 0: its
    decisions ask models afresh, past the response cache, with the replicate's seed
    (``replicate_settings``); None for a cell run once, the cache in force."""
    prices: PriceTable | None = None
    """The price table its run is billed at (``--prices``); None: the shipped one."""
    runs: str | None = None
    """The directory its run is written to (``bench --runs``, resolved: a worker may run
    elsewhere), or None."""

    @property
    def label(self) -> str:
        """The policy and its grid point, as tables and plots show it."""
        return " ".join((self.spec.label, *self.point))

    @property
    def run_name(self) -> str:
        """The name of its run's file under ``--runs``: the scenario's name, its label and
        replicate in safe characters, and a digest of the cell that keeps any two apart."""
        key = [self.scenario, self.spec.label, list(self.settings), self.replicate]
        digest = hashlib.sha256(json.dumps(key, ensure_ascii=False).encode("utf-8"))
        again = "" if self.replicate is None else f" r{self.replicate}"
        named = f"{Path(self.scenario).stem} {self.label}{again}"
        return f"{_UNSAFE.sub('-', named).strip('-')}-{digest.hexdigest()[:8]}.jsonl"


_UNSAFE = re.compile(r"[^A-Za-z0-9._]+")
"""What a run file's name writes as one dash: anything but ASCII letters, digits, dots and
underscores."""
