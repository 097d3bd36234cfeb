"""memtape.lab.loss_table: the audit's report, one column per policy."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

from memtape.lab.loss_table import AuditedPolicy, audit_lines, kinds_shown
from memtape.projections.losses import CompactionOutcome, EvidenceCheck, LossAudit


def _policy(label: str, survived: dict[str, int], lost: dict[str, int]) -> AuditedPolicy:
    return AuditedPolicy(label, LossAudit((CompactionOutcome(3, 2, survived, lost),), ()))


class TestRows:
    def test_kinds_come_in_the_probe_kinds_order_then_the_untyped(self) -> None:
        audited = [_policy("tiered", {"decision": 1}, {"path": 1})]
        assert ["path", "url", "decision", "untyped"] == kinds_shown([None, "url"], audited)


class TestCells:
    def test_a_kind_nothing_of_which_was_at_stake_reads_a_dash(self) -> None:
        audited = [_policy("tiered", {"path": 1}, {}), _policy("none", {}, {})]
        lines = audit_lines("s", "1 probe", audited, ["path"])
        assert ["path", "1/1", "kept", "(100%)", "-"] == lines[3].split()


class TestEvidence:
    def test_the_questions_whose_evidence_left_the_window_are_named(self) -> None:
        checks = (
            EvidenceCheck("Which invoice?", 9, ((2, "dropped"), (3, "warm"))),
            EvidenceCheck("How much?", 4, ((3, "hot"),)),
        )
        audited = [AuditedPolicy("tiered", LossAudit((), (), checks))]
        assert [
            "tiered: evidence in the window (HOT or WARM) for 1 of 2 questions, at each one's turn",
            "tiered: 'Which invoice?' at turn 9: turn 2 dropped, turn 3 warm",
        ] == audit_lines("s", "2 probes", audited, [])[-2:]


class TestCompactionLines:
    def test_a_compaction_with_nothing_at_stake_says_so(self) -> None:
        audited = [_policy("tiered", {}, {})]
        assert "tiered: event 3 (after turn 2) nothing at stake" in audit_lines(
            "s", "1 probe", audited, []
        )
