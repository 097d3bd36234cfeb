"""What each compaction of a run kept and lost of its probes, by kind, and which losses hurt.

A probe is *at stake* at a compaction when it is due (its ``start`` is at most
the turn the compaction follows) and visible in the window just before the
compaction event; it *survives* when it is still visible just after it, and is
*lost* otherwise. The losses are the bench's (``memtape.projections.metrics``'s
``ProbeLoss``, the same probes lost by the same events): a loss is *harmful*
when a later turn mentions the probe's text again, so the agent needed what
the compaction had dropped.

A probe that names its ``evidence`` (the turns that hold what answers its
question, as the long-memory benchmarks mark them) is also checked at its
turn: where each evidence turn then is, HOT (verbatim), WARM (its stand-in),
COLD (in the gist) or dropped. Its evidence is *in the window* when every
evidence turn is HOT or WARM.
"""

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from memtape.core.events import CompactionTriggered, TurnAdded
from memtape.core.run import Run
from memtape.core.state import Window
from memtape.projections.metrics import Planted, ProbeLoss, compaction_metrics, steps, visible
from memtape.reducers import evolve

UNTYPED = "untyped"
"""The kind the audit counts a probe under when nobody said what it is."""


def kind_of(probe: Planted | ProbeLoss) -> str:
    """A probe's kind, ``UNTYPED`` when it has none."""
    return UNTYPED if probe.kind is None else probe.kind


@attrs.frozen
class CompactionOutcome:
    """What one compaction event did to the probes at stake: survivors and losses by kind."""

    at: int
    """The 1-based position of the ``CompactionTriggered`` event."""
    turn: int
    """The turn the compaction followed (the turns in the window's history then)."""
    survived: Mapping[str, int]
    lost: Mapping[str, int]

    def data(self) -> dict[str, Any]:
        """The outcome as ``audit --json`` writes it."""
        return {
            "at": self.at,
            "turn": self.turn,
            "survived": dict(self.survived),
            "lost": dict(self.lost),
        }


@attrs.frozen
class AuditedLoss:
    """A lost probe, and the first turn after its loss whose text mentions it again (None
    when none does)."""

    loss: ProbeLoss
    mentioned: int | None

    @property
    def harmful(self) -> bool:
        """Whether a later turn needed what was lost."""
        return self.mentioned is not None

    def data(self) -> dict[str, Any]:
        """The loss as ``audit --json`` writes it: the bench's fields, then ``mentioned``."""
        return {**self.loss.data(), "mentioned": self.mentioned}


@attrs.frozen
class KindCount:
    """One kind's probes over every compaction of a run."""

    at_stake: int = 0
    survived: int = 0
    lost: int = 0
    harmful: int = 0

    @property
    def kept(self) -> float | None:
        """The share of the probes at stake that survived (None when none was)."""
        return self.survived / self.at_stake if self.at_stake else None

    def data(self) -> dict[str, Any]:
        """The count as ``audit --json`` writes it."""
        return {
            "at_stake": self.at_stake,
            "survived": self.survived,
            "lost": self.lost,
            "harmful": self.harmful,
            "kept": self.kept,
        }


IN_WINDOW = frozenset({"hot", "warm"})
"""The tiers where an evidence turn still shows: verbatim, or as its stand-in."""


@attrs.frozen
class EvidenceCheck:
    """Where a probe's evidence turns were at the probe's ``turn``: each turn's tier
    (``hot``, ``warm``, ``cold`` or ``dropped``; None for a turn not yet arrived)."""

    probe: str
    """The probe's question, or its text when it asks none."""
    turn: int
    tiers: tuple[tuple[int, str | None], ...]

    @property
    def in_window(self) -> bool:
        """Whether every evidence turn was HOT or WARM."""
        return all(tier in IN_WINDOW for _, tier in self.tiers)

    def data(self) -> dict[str, Any]:
        """The check as ``audit --json`` writes it."""
        return {
            "probe": self.probe,
            "turn": self.turn,
            "evidence": [{"turn": turn, "tier": tier} for turn, tier in self.tiers],
            "in_window": self.in_window,
        }


@attrs.frozen
class LossAudit:
    """A run's compactions and its losses, measured against its probes."""

    compactions: tuple[CompactionOutcome, ...]
    losses: tuple[AuditedLoss, ...]
    """Every loss, in the order the bench finds them (by compaction or otherwise)."""
    evidence: tuple[EvidenceCheck, ...] = ()
    """Each probe with evidence turns, checked at its turn, in the order of the probes."""

    def by_kind(self) -> dict[str, KindCount]:
        """The counts of each kind seen at some compaction or loss, in order of appearance:
        probes at stake, survivors and losses over every compaction, and the harmful
        losses among them."""
        survived: Counter[str] = Counter()
        lost: Counter[str] = Counter()
        for outcome in self.compactions:
            survived.update(outcome.survived)
            lost.update(outcome.lost)
        harmful = Counter(kind_of(item.loss) for item in self.by_compaction() if item.harmful)
        kinds = dict.fromkeys([*survived, *lost])
        return {
            kind: KindCount(survived[kind] + lost[kind], survived[kind], lost[kind], harmful[kind])
            for kind in kinds
        }

    def by_compaction(self) -> tuple[AuditedLoss, ...]:
        """The losses a compaction event made (the others were never visible since due)."""
        made = {outcome.at for outcome in self.compactions}
        return tuple(item for item in self.losses if item.loss.at in made)

    def data(self) -> dict[str, Any]:
        """The audit as ``audit --json`` writes it."""
        return {
            "kinds": {kind: count.data() for kind, count in self.by_kind().items()},
            "compactions": [outcome.data() for outcome in self.compactions],
            "losses": [item.data() for item in self.losses],
            "evidence": [check.data() for check in self.evidence],
        }


def loss_audit(run: Run, probes: Sequence[Planted]) -> LossAudit:
    """The audit of ``run`` against ``probes``: each compaction's survivors and losses by
    kind, and each loss with the turn that next mentioned it."""
    losses = compaction_metrics(run, probes).losses
    texts = [event.text for event in run.events if isinstance(event, TurnAdded)]
    audited = tuple(AuditedLoss(loss, _mentioned(texts, loss)) for loss in losses)
    lost_at: dict[int, Counter[str]] = {}
    for loss in losses:
        if loss.at is not None:
            lost_at.setdefault(loss.at, Counter())[kind_of(loss)] += 1
    # A question probe may name no string (the probe schema of the long-memory loaders):
    # what it keeps is its evidence turns, not a text the window shows.
    looked = [(probe, probe.text) for probe in probes if probe.text is not None]
    outcomes = []
    cited = [(index, probe) for index, probe in enumerate(probes) if _evidence(probe)]
    checks: dict[int, EvidenceCheck] = {}
    for step, batch, before, later in steps(run):
        window = later.window
        for index, probe in cited:
            if index not in checks and probe.start <= window.turns:
                tiers = tuple((turn, window.tier_of(turn)) for turn in _evidence(probe))
                asked = getattr(probe, "question", None)
                label = asked if isinstance(asked, str) else (probe.text or "")
                checks[index] = EvidenceCheck(label, window.turns, tiers)
        if not any(isinstance(event, CompactionTriggered) for event in batch):
            continue
        first = run.batch(step)[0] + 1
        state = before
        for at, event in enumerate(batch, start=first):
            after = evolve(state, event)
            if isinstance(event, CompactionTriggered):
                turn = state.window.turns
                shown, kept_shown = _shown(state.window), _shown(after.window)
                kept = Counter(
                    kind_of(probe)
                    for probe, text in looked
                    if probe.start <= turn
                    and _holds(shown, state.window, text)
                    and _holds(kept_shown, after.window, text)
                )
                outcomes.append(CompactionOutcome(at, turn, kept, lost_at.get(at, Counter())))
            state = after
    evidence = tuple(checks[index] for index, _ in cited if index in checks)
    return LossAudit(tuple(outcomes), audited, evidence)


_PARTS = "\x00"
"""What joins a window's parts for one search: no probe taken from a turn's text holds it."""


def _shown(window: Window) -> str:
    """Every text the window shows (the gist, WARM items, HOT turns), joined by ``_PARTS``."""
    return _PARTS.join(
        [window.gist, *(item.text for item in window.warm), *(turn.text for turn in window.hot)]
    )


def _holds(shown: str, window: Window, text: str) -> bool:
    """``visible(window, text)``, found in the window's joined texts ``shown`` in one search
    (a text holding the joint is looked for part by part, as ``visible`` does)."""
    return visible(window, text) if _PARTS in text else text in shown


def _evidence(probe: Planted) -> tuple[int, ...]:
    """The evidence turns a probe names (none on a probe of the schema before them)."""
    turns = getattr(probe, "evidence", None) or ()
    return tuple(turn for turn in turns if isinstance(turn, int) and not isinstance(turn, bool))


def _mentioned(texts: Sequence[str], loss: ProbeLoss) -> int | None:
    """The first turn after ``loss.turn`` whose text holds the lost probe (1-based)."""
    for number in range(loss.turn + 1, len(texts) + 1):
        if loss.probe in texts[number - 1]:
            return number
    return None
