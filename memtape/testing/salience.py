"""Whether a compaction policy's salience rule fires on the turns the kit draws.

A turn whose command leaves its salience unset is the policy's to judge.
Every shipped compaction policy marks such a turn salient when it is a tool
result and chatter otherwise (``memtape.policy.arriving``). A policy that
marks all of them alike, tool results and the rest, has a rule no drawn
turn reaches: the tutorial's example once marked every tool result chatter,
and a policy copied from it kept the bug with nothing to say so. The kit
counts what the policy decided across every session it draws, and once the
run is over reports a salience that never varied.
"""

from collections import Counter
from collections.abc import Sequence

from memtape.core.events import Event, TurnAdded

OPT_OUT = "salience_may_be_constant"
"""The class attribute a compaction policy sets to True when its salience is constant by
design; the kit then leaves its salience alone."""


class SalienceNeverVaries(AssertionError):
    """A compaction policy gave every drawn turn left to it the same salience, tool results
    and the other turns alike: its salience rule never fires."""

    def __init__(self, policy: str, message: str) -> None:
        self.policy = policy
        super().__init__(message)


class DrawnSalience:
    """What a policy decided for the drawn turns whose command left salience unset, counted
    by the turn's role and the salience decided."""

    def __init__(self) -> None:
        self.seen: Counter[tuple[str, bool]] = Counter()

    def record(self, events: Sequence[Event]) -> None:
        """Count the turn that ``events``, the batch of one such turn, added (if any)."""
        for event in events:
            if isinstance(event, TurnAdded):
                self.seen[event.role, event.salient is True] += 1
                return

    @property
    def turns(self) -> int:
        """How many turns were counted."""
        return sum(self.seen.values())

    def verdict(self, policy: str) -> SalienceNeverVaries | None:
        """The failure to report when ``policy`` marked every counted turn alike, or None.

        Only turns of both kinds, tool results and others, make a verdict: on
        those the shipped rule marks some salient and some not.
        """
        total = self.turns
        tools = sum(count for (role, _), count in self.seen.items() if role == "tool")
        salient = sum(count for (_, marked), count in self.seen.items() if marked)
        if tools in (0, total) or 0 < salient < total:
            return None
        if salient == 0:
            seen = (
                f"marked none of the {total} drawn turns left to it salient "
                f"({tools} of them tool results)"
            )
            shipped = "marks a tool result salient"
        else:
            seen = (
                f"marked all {total} drawn turns left to it salient "
                f"({total - tools} of them not tool results)"
            )
            shipped = "marks a turn other than a tool result chatter"
        return SalienceNeverVaries(
            policy,
            f"{policy} {seen}: its salience rule never fires. Every shipped compaction policy "
            f"{shipped} unless the turn says otherwise (memtape.policy.arriving applies "
            f"that rule); if {policy}'s salience is constant by design, set "
            f"{OPT_OUT} = True on its class",
        )
