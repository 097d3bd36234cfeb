"""A short session with a memory block created and edited twice, for the projections' tests."""

from memtape.core.commands import AddTurn, CreateBlock, EditBlock
from memtape.policies.session import Policies, Session


def blocked_session() -> Session:
    """Events 1 to 5: block 'human' created (2 tokens), turn 1 (13), the block appended to
    (5), found and replaced in (5), turn 2 (14), under a sliding window of 40."""
    session = Session(
        Policies.from_params({"compaction": {"policy": "sliding-window", "budget": 40}})
    )
    session.execute_all(
        [
            CreateBlock("human", 60, "Name: Dana."),
            AddTurn("user", "Hi, I moved to Lisbon last week and I like it there"),
            EditBlock("human", "append", "Lives in Lisbon."),
            EditBlock("human", "find-replace", "Porto", "Lisbon"),
            AddTurn("assistant", "Noted, welcome to Lisbon and all the best with the move"),
        ]
    )
    return session
