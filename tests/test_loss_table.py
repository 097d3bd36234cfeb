"""memtape.lab.loss_table: the audit's report, one column per policy."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

from memtape.lab.loss_table import AuditedPolicy, audit_lines, kinds_shown
from memtape.projections.losses import CompactionOutcome, LossAudit


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
