"""memtape.testing.salience: the verdict on a compaction policy's salience across drawn turns."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

from memtape.core.events import CompactionTriggered, TurnAdded
from memtape.testing.salience import DrawnSalience


def drawn(*turns: tuple[str, bool]) -> DrawnSalience:
    """A count of turns, each a role and the salience the policy decided."""
    counted = DrawnSalience()
    for number, (role, salient) in enumerate(turns, start=1):
        counted.record((TurnAdded(number, role, "t", 2, salient),))
    return counted


class TestRecord:
    def test_the_turn_of_a_batch_is_counted_by_role_and_salience(self) -> None:
        """A batch's compaction is not a turn; its turn counts once."""
        counted = DrawnSalience()
        turn = TurnAdded(1, "tool", "t", 2, True)
        counted.record((turn, CompactionTriggered(4, (), (1,), 0, "", 0)))
        assert {("tool", True): 1} == dict(counted.seen)

    def test_a_rejected_turn_counts_nothing(self) -> None:
        counted = DrawnSalience()
        counted.record(())
        assert 0 == counted.turns


class TestVerdict:
    def test_tool_results_as_chatter_is_reported_with_what_was_seen(self) -> None:
        """The message names the policy, how many turns and how many tool results."""
        verdict = drawn(("tool", False), ("user", False), ("tool", False)).verdict("keep-last")
        assert verdict is not None
        expected = (
            "keep-last marked none of the 3 drawn turns left to it salient (2 of them tool "
            "results): its salience rule never fires. Every shipped compaction policy marks a "
            "tool result salient unless the turn says otherwise (memtape.policy.arriving applies "
            "that rule); if keep-last's salience is constant by design, set "
            "salience_may_be_constant = True on its class"
        )
        assert ("keep-last", expected) == (verdict.policy, str(verdict))

    def test_every_turn_salient_is_reported(self) -> None:
        verdict = drawn(("tool", True), ("user", True), ("assistant", True)).verdict("p")
        assert verdict is not None
        assert str(verdict).startswith(
            "p marked all 3 drawn turns left to it salient (2 of them not tool results): "
        )

    def test_a_salience_that_varies_passes(self) -> None:
        """The shipped rule: tool results salient, the rest chatter."""
        assert None is drawn(("tool", True), ("user", False)).verdict("tiered")

    def test_a_salience_that_varies_otherwise_passes_too(self) -> None:
        """The kit asks that the rule fires, not that it is the shipped one."""
        assert None is drawn(("tool", False), ("user", True), ("user", False)).verdict("p")

    def test_no_verdict_without_both_kinds_of_turn(self) -> None:
        """Tool results alone, or none, would be all alike under the shipped rule as well."""
        verdicts = [
            drawn(("user", False), ("assistant", False)).verdict("p"),
            drawn(("tool", False), ("tool", False)).verdict("p"),
            drawn().verdict("p"),
        ]
        assert [None, None, None] == verdicts
