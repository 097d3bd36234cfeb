"""A broken invariant as the kit reports it, and the counterexample it saves: the session
that breaks it, as a scenario file ``memtape run`` replays."""

import os
import re
from collections.abc import Sequence
from pathlib import Path

from memtape.checking.invariants import Violation
from memtape.core.commands import Command
from memtape.policies.session import Policies
from memtape.scenarios.writer import scenario_text

COUNTEREXAMPLES = Path(".memtape") / "counterexamples"
"""Where counterexamples go by default (``$MEMTAPE_COUNTEREXAMPLES`` overrides it)."""


class InvariantBroken(AssertionError):
    """A policy broke an invariant; ``path`` holds the session that shows it, as a scenario."""

    def __init__(
        self, policy: str, violation: Violation, path: Path | None, steps: int, why: str = ""
    ) -> None:
        self.policy = policy
        self.violation = violation
        self.path = path
        self.steps = steps
        lines = [f"{policy} breaks {violation.invariant}: {violation}"]
        if path is not None:
            lines.append(f"counterexample ({steps} step{'' if steps == 1 else 's'}): {path}")
            lines.append(f"replay it: memtape run {path} --out run.jsonl")
        elif why:
            lines.append(f"the counterexample could not be saved: {why}")
        super().__init__("\n".join(lines))


def save_counterexample(
    folder: Path | str | None,
    name: str,
    policies: Policies,
    violation: Violation,
    steps: Sequence[Command],
) -> Path:
    """Write the session ``steps`` that breaks ``violation``'s invariant under ``name``'s
    ``policies`` as a scenario file that ``memtape run`` replays, in ``folder`` (by default
    ``$MEMTAPE_COUNTEREXAMPLES``, else ``COUNTEREXAMPLES``); its path."""
    where = Path(
        folder if folder is not None else os.environ.get("MEMTAPE_COUNTEREXAMPLES", COUNTEREXAMPLES)
    )
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-.") or "policy"
    comment = (
        f"A counterexample found by memtape.testing: {name} breaks {violation.invariant}."
        f"\n{violation}\nReplay it: memtape run FILE --out run.jsonl"
    )
    text = scenario_text(
        slug,
        f"{name} breaks {violation.invariant} at event {violation.position}",
        policies.params(),
        steps,
        comment=comment,
    )
    where.mkdir(parents=True, exist_ok=True)
    path = where / f"{slug}.toml"
    path.write_text(text, "utf-8")
    return path
