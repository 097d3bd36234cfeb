"""The query step: the top ``k`` active facts under a forgetting policy's ranking."""

from typing import Protocol

from memtape.core.commands import Query
from memtape.core.errors import Rejected
from memtape.core.events import Queried
from memtape.core.state import State, Store
from memtape.policies.plumbing.protocols import Scored
from memtape.policies.store import temporal


class Ranks(Protocol):
    """What answering a query needs of a policy: its ranking, given the query text."""

    def rank(self, store: Store, now: float, query: str = "") -> list[Scored]:
        """The active facts by score, highest first."""
        ...


def check_query(command: Query) -> None:
    """Reject a query whose text, key or ``k`` is impossible."""
    if not isinstance(command.text, str):
        raise Rejected(f"a query's text must be a string, got {command.text!r}")
    if not isinstance(command.key, str):
        raise Rejected(f"a query's expected key must be a string, got {command.key!r}")
    k = command.k
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise Rejected(f"a query's k must be an integer >= 1, got {k!r}")


def answer_query(policy: Ranks, state: State, command: Query) -> Queried:
    """The top ``k`` of the policy's ranking at the state's clock for the query's text;
    a bi-temporal query (``as_of``, ``known_at``) ranks the facts valid then, as known
    then (``memtape.policies.store.temporal``)."""
    check_query(command)
    if command.as_of is None and command.known_at is None:
        top = policy.rank(state.store, state.clock, command.text)[: command.k]
        return Queried(
            command.text,
            command.key,
            command.k,
            tuple(s.fact.id for s in top),
            tuple(float(s.score) for s in top),
        )
    as_of, known_at = temporal.times(command, state.clock)
    then = temporal.store_as_of(state, as_of, known_at)
    top = policy.rank(then, state.clock, command.text)[: command.k]
    return Queried(
        command.text,
        command.key,
        command.k,
        tuple(s.fact.id for s in top),
        tuple(float(s.score) for s in top),
        None if command.as_of is None else as_of,
        None if command.known_at is None else known_at,
    )
