"""Long support sessions for the benchmarks, and memtape running them.

A session is a list of ``AddTurn`` commands: users ask, assistants answer,
tools report. Every turn is 5 to 20 words; tool turns are salient (the
``AddTurn`` default), the others are chatter. The same seed always gives the
same session, and nothing here touches global randomness.
"""

import random
from collections.abc import Iterable
from functools import cache

from memtape.core.commands import AddTurn
from memtape.policies.session import Policies, Session
from memtape.policies.window.tiered import TieredCompaction

ROLES = ("user", "assistant", "tool")
"""Who speaks in a support session."""

ROLE_WEIGHTS = (4, 4, 2)
"""How often each role speaks: a tool reports about every fifth turn."""

MIN_WORDS = 5
"""The fewest words in a turn's text."""

MAX_WORDS = 20
"""The most words in a turn's text."""

_PHRASES = {
    "user": (
        "hi can you check my order ORD-3300 please I want a refund for the earbuds "
        "they stopped working after two weeks is the warranty still valid thanks "
        "how long will it take and do I need the receipt or the original box"
    ),
    "assistant": (
        "sure let me look that up for you I can see the order was placed on the "
        "fifth your refund will go back to the original card within five business "
        "days once the return is scanned at the warehouse"
    ),
    "tool": (
        "policy search: order lookup: calculator: refunds within 30 days of purchase "
        "restocking fee 10% applies after the window $200.00 $180.00 Globex earbuds "
        "2-year limited warranty status shipped delivered returned"
    ),
}
_VOCABULARY = {role: tuple(phrase.split()) for role, phrase in _PHRASES.items()}


@cache
def support_session(turns: int, seed: int = 0) -> tuple[AddTurn, ...]:
    """``turns`` turns of a support session; the same seed gives the same session.

    Sessions are immutable, so each is generated once and then shared.
    """
    rng = random.Random(seed)
    roles = rng.choices(ROLES, weights=ROLE_WEIGHTS, k=turns)
    session: list[AddTurn] = []
    for role in roles:
        words = rng.choices(_VOCABULARY[role], k=rng.randint(MIN_WORDS, MAX_WORDS))
        session.append(AddTurn(role, " ".join(words)))
    return tuple(session)


def run_tiered(commands: Iterable[AddTurn], budget: int, hot_n: int) -> Session:
    """memtape's real API on a session: every turn decided, appended and folded."""
    session = Session(Policies(compaction=TieredCompaction(budget, hot_n)))
    for command in commands:
        session.execute(command)
    return session
