"""The audit: the life of one turn or fact, event by event, with the numbers behind each step.

``audit`` walks the log once, and only at the events that touch its target
does it rebuild the states around them (before and after the event), so every
figure it reports (a window's tokens, a fact's score, the ranking an eviction
beat) is recomputed from the states at that point, never read from a guess.
Field names of ``life_data`` are a contract (``memtape why --json``); numbers
are exact there and rounded in ``render_life``. Its labels and step lines are
words for a reader, the run's texts in them ``visible``.

The package holds one job a module: the targets (``targets``), a life and the
states around its events (``lives``), the lives of turns and memory blocks
(``window``) and of facts (``facts``), and their JSON and lines (``rendering``).
"""

from collections.abc import Callable

from memtape.core.errors import BadInput
from memtape.core.run import Run
from memtape.policies.session import Policies
from memtape.projections.audit.facts import fact_lives
from memtape.projections.audit.lives import Life, Standing, Step, Subject
from memtape.projections.audit.rendering import life_data, render_life
from memtape.projections.audit.targets import (
    BlockTarget,
    FactTarget,
    KeyTarget,
    Target,
    TurnTarget,
    parse_target,
)
from memtape.projections.audit.window import block_life, turn_life

__all__ = [
    "BlockTarget",
    "FactTarget",
    "KeyTarget",
    "Life",
    "Standing",
    "Step",
    "Subject",
    "Target",
    "TurnTarget",
    "audit",
    "life_data",
    "parse_target",
    "render_life",
]


def audit(run: Run, policies: Policies | Callable[[int], Policies], target: Target) -> Life:
    """The life of ``target`` in ``run``, or ``BadInput`` if it never existed.

    ``policies`` may be a function of the position (``Session.policies_at``):
    each step is then measured against the policies that decided it (a fork).
    """
    policies_at = policies if callable(policies) else lambda _: policies
    if isinstance(target, TurnTarget):
        return Life(target, (turn_life(run, policies_at, target.turn),))
    if isinstance(target, BlockTarget):
        return Life(target, (block_life(run, target.label),))
    store = run.state.store
    if isinstance(target, FactTarget):
        if target.id not in store.facts:
            known = f"facts 1..{len(store.facts)}" if store.facts else "no facts"
            raise BadInput(f"no fact has id {target.id}: the run has {known}")
        ids = [target.id]
    else:
        ids = sorted(f.id for f in store.facts.values() if f.key == target.key)
        if not ids:
            raise BadInput(f"no fact has key {target.key!r}")
    if policies_at(len(run)).forgetting is None:
        raise BadInput("auditing a fact needs a [forgetting] policy to score it")
    return Life(target, fact_lives(run, policies_at, ids))
