"""memtape.projections.losses: each compaction's survivors and losses by kind, and which
losses a later turn needed."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

from pathlib import Path

import attrs
import pytest

from memtape.core.commands import AddTurn
from memtape.policies.session import Policies, Session
from memtape.policies.window.tiered import TieredCompaction
from memtape.projections.losses import (
    UNTYPED,
    AuditedLoss,
    CompactionOutcome,
    EvidenceCheck,
    KindCount,
    LossAudit,
    loss_audit,
)
from memtape.projections.metrics import ProbeLoss, compaction_metrics
from memtape.scenarios import Probe, load_scenario

LEDGER = Path(__file__).parent / "fixtures" / "ledger-audit.toml"


def _ledger() -> LossAudit:
    scenario = load_scenario(str(LEDGER))
    session = Session(scenario.policies)
    session.execute_all(scenario.steps)
    return loss_audit(session.run, scenario.probes)


class TestByKind:
    def test_the_fixture_session_counts_as_counted_by_hand(self) -> None:
        # Budget 30 words, hot_n 2. Event 5 (after turn 4) keeps turns 3 and 4 HOT: of the
        # five probes due (constraint and path from turns 1 and 2, identifier from 2,
        # command and number from 3), the command and the number survive. Event 9 (after
        # turn 7) keeps 6 and 7 HOT and turn 3 (a tool result) WARM: of the four visible
        # (command, number, decision from turn 4, url from turn 5), command and number
        # survive. Turn 8 asks about the lost path again.
        assert {
            "constraint": KindCount(1, 0, 1, 0),
            "path": KindCount(1, 0, 1, 1),
            "identifier": KindCount(1, 0, 1, 0),
            "command": KindCount(2, 2, 0, 0),
            "number": KindCount(2, 2, 0, 0),
            "decision": KindCount(1, 0, 1, 0),
            "url": KindCount(1, 0, 1, 0),
        } == _ledger().by_kind()

    def test_kept_is_the_share_of_those_at_stake_that_survived(self) -> None:
        assert (0.5, None) == (KindCount(4, 2, 2, 1).kept, KindCount().kept)


class TestCompactions:
    def test_each_compaction_counts_its_own_survivors_and_losses(self) -> None:
        assert (
            CompactionOutcome(
                5, 4, {"command": 1, "number": 1}, {"constraint": 1, "path": 1, "identifier": 1}
            ),
            CompactionOutcome(9, 7, {"command": 1, "number": 1}, {"decision": 1, "url": 1}),
        ) == _ledger().compactions

    def test_a_probe_is_looked_for_in_each_part_never_across_two(self) -> None:
        session = Session(Policies(compaction=TieredCompaction(budget=5, hot_n=1)))
        session.execute_all([AddTurn("user", "a x"), AddTurn("user", "y b"), AddTurn("user", "c")])
        audit = loss_audit(session.run, [Probe("x\x00y", 1, "identifier")])
        assert {} == audit.by_kind()

    def test_a_probe_not_yet_due_is_not_at_stake(self) -> None:
        session = Session(Policies(compaction=TieredCompaction(budget=4, hot_n=1)))
        session.execute_all([AddTurn("user", "a GX-1"), AddTurn("user", "b c")])
        audit = loss_audit(session.run, [Probe("GX-1", 3, "identifier")])
        assert (CompactionOutcome(3, 2, {}, {}),) == audit.compactions


class TestLosses:
    def test_the_losses_are_the_bench_s(self) -> None:
        scenario = load_scenario(str(LEDGER))
        session = Session(scenario.policies)
        session.execute_all(scenario.steps)
        bench = compaction_metrics(session.run, scenario.probes).losses
        assert bench == tuple(item.loss for item in _ledger().losses)

    def test_a_loss_mentioned_again_later_is_harmful_and_names_the_turn(self) -> None:
        found = {item.loss.probe: item.mentioned for item in _ledger().losses}
        assert {
            "Never push to main.": None,
            "src/ledger/export.py": 8,
            "INV-2041": None,
            "We decided to round half to even.": None,
            "https://docs.example/rounding": None,
        } == found

    def test_a_mention_before_the_loss_does_not_count(self) -> None:
        session = Session(Policies(compaction=TieredCompaction(budget=6, hot_n=1)))
        session.execute_all(
            [AddTurn("user", "GX-1 one"), AddTurn("user", "GX-1 two"), AddTurn("user", "x y z")]
        )
        audit = loss_audit(session.run, [Probe("GX-1", 2, "identifier")])
        assert [None] == [item.mentioned for item in audit.losses]

    def test_an_untyped_probe_is_counted_apart(self) -> None:
        session = Session(Policies(compaction=TieredCompaction(budget=4, hot_n=1)))
        session.execute_all([AddTurn("user", "a GX-1"), AddTurn("user", "b c")])
        audit = loss_audit(session.run, [Probe("GX-1", 2)])
        assert {UNTYPED: KindCount(1, 0, 1, 0)} == audit.by_kind()

    def test_a_probe_never_seen_since_due_is_listed_but_lost_by_no_compaction(self) -> None:
        loss = ProbeLoss("GX-1", 2, None, None, "identifier")
        audit = LossAudit((), (AuditedLoss(loss, None),))
        assert ((), {}) == (audit.by_compaction(), audit.by_kind())

    def test_the_json_holds_the_kinds_the_compactions_and_the_losses(self) -> None:
        data = _ledger().data()
        assert {"at_stake": 1, "survived": 0, "lost": 1, "harmful": 1, "kept": 0.0} == data[
            "kinds"
        ]["path"]
        assert {
            "probe": "src/ledger/export.py",
            "kind": "path",
            "turn": 4,
            "at": 5,
            "event": "CompactionTriggered",
            "mentioned": 8,
        } == data["losses"][1]


@attrs.frozen
class Cited:
    """A probe with a question and its evidence turns, as the loader's ``Probe`` carries
    them on branch tokens."""

    text: str
    start: int
    kind: str | None = None
    question: str | None = None
    answer: str | None = None
    evidence: tuple[int, ...] = ()


class TestEvidence:
    def test_each_evidence_turn_s_tier_is_read_at_the_probe_s_turn(self) -> None:
        # At turn 9 of the ledger session: turn 2 was dropped by the first compaction,
        # turn 3 (a tool result) went WARM at the second, turn 8 is HOT.
        scenario = load_scenario(str(LEDGER))
        session = Session(scenario.policies)
        session.execute_all(scenario.steps)
        asked = Cited("INV-2041", 9, "identifier", "Which invoice?", "INV-2041", (2, 3, 8))
        early = Cited("$10.02", 4, "number", None, None, (3,))
        audit = loss_audit(session.run, [asked, early])
        assert (
            EvidenceCheck("Which invoice?", 9, ((2, "dropped"), (3, "warm"), (8, "hot"))),
            EvidenceCheck("$10.02", 4, ((3, "hot"),)),
        ) == audit.evidence
        assert [False, True] == [check.in_window for check in audit.evidence]

    def test_a_probe_without_evidence_is_not_checked(self) -> None:
        assert () == _ledger().evidence


class TestHarmfulCount:
    @pytest.mark.parametrize("policy", ["tiered", "sliding-window"])
    def test_the_bench_counts_the_audits_harmful_losses(self, policy: str) -> None:
        """The ledger fixture: the path, asked about again at turn 8, is the one harmful loss
        under either policy (its other losses are not mentioned again)."""
        scenario = load_scenario(str(LEDGER))
        session = Session(scenario.policies.with_settings([f"compaction.policy={policy}"]))
        session.execute_all(scenario.steps)
        audited = loss_audit(session.run, scenario.probes).by_kind()
        measured = compaction_metrics(session.run, scenario.probes)
        assert (1, 1, True) == (
            sum(count.harmful for count in audited.values()),
            measured.harmful_losses,
            len(measured.losses) > 1,
        )

    def test_a_turn_before_the_loss_does_not_make_it_harmful(self) -> None:
        session = Session(Policies(TieredCompaction(budget=6, hot_n=1)))
        session.execute_all(AddTurn("user", text) for text in ("a b ORD-1", "ORD-1 c", "d e f"))
        measured = compaction_metrics(session.run, [Probe("ORD-1", 1)])
        assert (True, 0) == (bool(measured.losses), measured.harmful_losses)

    def test_a_turn_after_the_loss_makes_it_harmful(self) -> None:
        session = Session(Policies(TieredCompaction(budget=6, hot_n=1)))
        texts = ("a b ORD-1", "c d e", "f g h", "ORD-1 again")
        session.execute_all(AddTurn("user", text) for text in texts)
        assert 1 == compaction_metrics(session.run, [Probe("ORD-1", 1)]).harmful_losses
