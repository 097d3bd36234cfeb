"""What a bench cell measured: its metrics, in the order of the JSON contract, and its
result with the series a plot draws."""

from typing import Any

import attrs

from memtape.lab.spread import Replicated
from memtape.projections.answers import Verdict
from memtape.projections.billing.tally import COST_METRICS
from memtape.projections.metrics import ProbeLoss

METRICS = (
    "peak_tokens",
    "peak_over_budget",
    "tokens_resent",
    "compactions",
    "probe_retention",
    "harmful_losses",
    "hit_at_k",
    "stale_reads",
    "evictions",
    "regret",
    "decide_us_per_command",
    "llm_calls",
    "llm_cache_hits",
    "llm_prompt_tokens",
    "llm_completion_tokens",
    "llm_seconds",
    "answers_correct",
    "answers_judged",
    *COST_METRICS,
)
"""The metrics of a result, in the order of the JSON contract.

``peak_over_budget`` is true when some turn sent more tokens than the budget, for
any reason: the policy's floor (the turns it must keep), a policy that promises no
budget (``none``), or a broken promise (``Result.over_budget`` says which; the
table marks the peak with it); false otherwise, and null where ``peak_tokens`` is.
``harmful_losses`` counts the probes a compaction lost that a later turn mentioned again
(``memtape audit``'s harmful losses; ``CompactionMetrics.harmful_losses``).
The ``llm_*`` ones add up the model calls a cell's decisions made
(``memtape.projections.model_calls.model_usage``; a judge's calls are not among them).
``answers_correct`` and ``answers_judged`` count the questions a ``--judge`` model answered
correctly and those a judge had to grade, read from the cell's ``Answered`` events
(``memtape.lab.judge``); null without ``--judge``. The cost ones
(``memtape.projections.billing.tally.COST_METRICS``) bill a compaction cell's
requests at the price of the scenario's ``[cost] model`` (or ``--set
cost.model=NAME``), and are null without one.
"""


@attrs.frozen
class Result:
    """What one cell measured, with the series a plot draws."""

    scenario: str
    label: str
    policy: str
    params: dict[str, Any] | None
    metrics: dict[str, Any]
    budget: int | None
    sent: tuple[int, ...]
    retention: tuple[float | None, ...]
    notable: dict[str, Any] = attrs.field(factory=dict)
    """The parameters a table shows: the shared one and those off the policy's defaults."""
    losses: tuple[ProbeLoss, ...] = ()
    """Each probe lost, with the event that lost it."""
    over_budget: str | None = None
    """Why the peak went over the budget (``memtape.projections.metrics.OVER_BUDGET_CAUSES``),
    or None when it did not."""
    idle: str | None = None
    """Why the cell's policy had nothing to apply to the scenario (``recorded`` on one that
    recorded no compaction), or None; such a result has no params and no metrics."""
    verdicts: tuple[Verdict, ...] = ()
    """Each question the ``--judge`` model was asked, with its reply and verdict."""
    spread: Replicated | None = None
    """For a cell run ``--replicates N`` times, each metric's spread over the replicates
    (``metrics`` then holds the medians); None for a cell run once."""
    priced_as: str | None = None
    """The price table's model the cost metrics were billed as (a dated snapshot is priced
    as its model's row), or None when no model is priced."""

    def data(self, *, losses: bool = False) -> dict[str, Any]:
        """The result as the JSON contract writes it; with ``losses``, each lost probe too
        (``ProbeLoss.data``, its kind among its fields); for replicates, their ``spread``
        (``Replicated.data``); for a priced cell, the model it was billed as."""
        data: dict[str, Any] = {
            "scenario": self.scenario,
            "policy": self.policy,
            "params": self.params,
            "metrics": self.metrics,
        }
        if self.priced_as is not None:
            data["priced_as"] = self.priced_as
        if self.metrics.get("answers_correct") is not None:
            data["answers"] = [verdict.data() for verdict in self.verdicts]
        if self.spread is not None:
            data.update(self.spread.data())
        if losses:
            data["losses"] = [loss.data() for loss in self.losses]
        return data
