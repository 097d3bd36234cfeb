"""A transcript's own compactions, their token counts beside memtape's.

Claude Code says how large its context was just before a compaction
(``preTokens``) and, lately, just after (``postTokens``), counted by the
model's tokenizer over everything it sent (system prompt, tools, files).
memtape counts the same moments of the imported session with the
scenario's tokenizer, over the turns alone: the window as turn N arrives,
before the ``recorded`` policy applies the compaction, and after it (the
summary, the turns kept, without turn N). Shown side by side they say how
far the imported session stands from what the agent really sent, which is
what a budget chosen for the bench has to be read against.
"""

from collections.abc import Sequence

import attrs

from memtape.core.commands import AddTurn
from memtape.core.events import TurnAdded
from memtape.core.state import INITIAL_STATE
from memtape.policies.window.recorded import RecordedCompaction
from memtape.reducers import evolve


@attrs.frozen
class Measured:
    """One recorded compaction, before turn ``before``: the agent's counts (None where the
    transcript did not say) and memtape's, of the window before and after it."""

    before: int
    trigger: str | None
    agent_pre: int | None
    agent_post: int | None
    pre: int
    post: int

    def line(self, tokenizer: str) -> str:
        """The comparison in one line, ``tokenizer`` naming what measured the turns."""
        head = f"compaction before turn {self.before}{f' ({self.trigger})' if self.trigger else ''}"
        ours = f"memtape counts {self.pre:,} → {self.post:,} ({tokenizer}, turns only)"
        if self.agent_pre is None and self.agent_post is None:
            return f"{head}: {ours}; the transcript says no count"
        agent = f"{_count(self.agent_pre)} → {_count(self.agent_post)}"
        return f"{head}: the agent counted {agent} tokens; {ours}"


def measured(policy: RecordedCompaction, turns: Sequence[AddTurn]) -> tuple[Measured, ...]:
    """Each of ``policy``'s compactions as the session of ``turns`` meets it, measured."""
    records = {record.before: record for record in policy.compactions}
    last = max(records)
    state = INITIAL_STATE
    found = []
    for number, command in enumerate(turns[:last], start=1):
        pre = state.window.tokens
        events = policy.decide(state, command)
        for event in events:
            state = evolve(state, event)
        record = records.get(number)
        if record is not None:
            turn = events[0]
            post = state.window.tokens - (turn.tokens if isinstance(turn, TurnAdded) else 0)
            found.append(
                Measured(number, record.trigger, record.pre_tokens, record.post_tokens, pre, post)
            )
    return tuple(found)


def _count(value: int | None) -> str:
    return "?" if value is None else f"{value:,}"
