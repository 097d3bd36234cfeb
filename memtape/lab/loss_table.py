"""The audit's report: one column per policy of what its compactions kept, by probe kind.

Each cell says how many probes of a kind were at stake at the policy's
compactions and how many survived (added up over every compaction), and how
many of the losses were harmful (a later turn mentioned the probe again).
Under the table, each compaction's count, then each loss with the event that
made it and the turn that needed it again.
"""

from collections.abc import Sequence
from typing import Any

import attrs

from memtape.core.plural import counted
from memtape.core.visible import quoted, visible
from memtape.projections.losses import UNTYPED, KindCount, LossAudit
from memtape.scenarios.probes import PROBE_KINDS

ALL = "all"
"""The row that adds up every kind."""

LEGEND = (
    "kept/at stake: the probes due and visible just before a compaction, and how many "
    "were still visible after it, over every compaction; harmful: lost, then mentioned "
    "again by a later turn"
)
"""The line under the table that says how to read a cell."""


@attrs.frozen
class AuditedPolicy:
    """A policy's run of the session, audited: its label, its compactions' count, the audit."""

    label: str
    audit: LossAudit

    def data(self) -> dict[str, Any]:
        """The policy's column as ``audit --json`` writes it."""
        return {"policy": self.label, **self.audit.data()}


def kinds_shown(kinds: Sequence[str | None], audited: Sequence[AuditedPolicy]) -> list[str]:
    """The rows of the table: every kind among the probes (``kinds``) or a count, in the
    order of ``PROBE_KINDS``, the untyped and any other after them."""
    seen = {UNTYPED if kind is None else kind for kind in kinds}
    for policy in audited:
        seen.update(policy.audit.by_kind())
    known = [kind for kind in PROBE_KINDS if kind in seen]
    return [*known, *sorted(seen - set(known))]


def audit_lines(
    session: str, probes: str, audited: Sequence[AuditedPolicy], rows: Sequence[str]
) -> list[str]:
    """The report: a heading naming the ``session`` and where its ``probes`` came from,
    the table (one row per kind of ``rows``, then all of them; one column per policy),
    its legend, and each policy's compactions and losses."""
    table = [["kind", *(visible(policy.label) for policy in audited)]]
    for kind in rows:
        table.append(
            [visible(kind), *(_cell(policy.audit.by_kind().get(kind)) for policy in audited)]
        )
    table.append([ALL, *(_cell(_total(policy.audit)) for policy in audited)])
    widths = [max(len(row[column]) for row in table) for column in range(len(table[0]))]
    lines = [f"{visible(session)}: {probes}", ""]
    for row in table:
        lines.append(
            "   ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        )
    lines.extend(["", LEGEND])
    for policy in audited:
        lines.extend(_details(policy, rows))
    return lines


def _details(policy: AuditedPolicy, rows: Sequence[str]) -> list[str]:
    """A policy's compactions, one line each, then its losses."""
    label = visible(policy.label)
    audit = policy.audit
    lines = [f"{label}: {counted(len(audit.compactions), 'compaction')}"]
    for outcome in audit.compactions:
        counts = [
            f"{visible(kind)} {outcome.survived.get(kind, 0)}/{stake}"
            for kind in rows
            if (stake := outcome.survived.get(kind, 0) + outcome.lost.get(kind, 0))
        ]
        kept = sum(outcome.survived.values())
        stake = kept + sum(outcome.lost.values())
        said = f"kept {kept} of {stake}: {', '.join(counts)}" if stake else "nothing at stake"
        lines.append(f"{label}: event {outcome.at} (after turn {outcome.turn}) {said}")
    for item in audit.losses:
        loss = item.loss
        kind = visible(UNTYPED if loss.kind is None else loss.kind)
        cause = (
            f"never visible since it was due (turn {loss.turn})"
            if loss.at is None
            else f"lost by event {loss.at} ({loss.event}, after turn {loss.turn})"
        )
        needed = f", mentioned again at turn {item.mentioned}: harmful" if item.harmful else ""
        lines.append(f"{label}: {kind} {quoted(loss.probe)} {cause}{needed}")
    if audit.evidence:
        kept = sum(check.in_window for check in audit.evidence)
        lines.append(
            f"{label}: evidence in the window (HOT or WARM) for {kept} of "
            f"{counted(len(audit.evidence), 'question')}, at each one's turn"
        )
    for check in audit.evidence:
        if not check.in_window:
            where = ", ".join(f"turn {turn} {tier or 'not yet said'}" for turn, tier in check.tiers)
            lines.append(f"{label}: {quoted(check.probe)} at turn {check.turn}: {where}")
    return lines


def _total(audit: LossAudit) -> KindCount:
    """Every kind's count added up."""
    counts = audit.by_kind().values()
    return KindCount(
        sum(count.at_stake for count in counts),
        sum(count.survived for count in counts),
        sum(count.lost for count in counts),
        sum(count.harmful for count in counts),
    )


def _cell(count: KindCount | None) -> str:
    """A kind's cell: kept/at stake and the share kept, and the harmful losses if any;
    ``-`` when nothing of the kind was at stake."""
    if count is None or not count.at_stake:
        return "-"
    share = count.survived / count.at_stake
    harmful = f", {count.harmful} harmful" if count.harmful else ""
    return f"{count.survived}/{count.at_stake} kept ({share:.0%}){harmful}"


def audit_data(session: str, probes: int, audited: Sequence[AuditedPolicy]) -> dict[str, Any]:
    """The audit as ``audit --json`` writes it: the session, how many probes, and one
    entry per policy (``AuditedPolicy.data``), exact numbers."""
    return {
        "session": session,
        "probes": probes,
        "policies": [policy.data() for policy in audited],
    }
