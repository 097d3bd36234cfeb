"""The store's rules every forgetting policy shares.

Writes and reads are checked the same way under every policy; a write
supersedes by key (or, under ``add-only``, never), and a write that takes
the store over capacity evicts the weakest fact under the policy's own
ranking, one at a time, re-ranking after each (a policy may normalize its
factors over the active facts, so the ranking, not a fact's score alone, is
the authority).
"""

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from memtape.core.commands import Query, ReadFact, WriteFact
from memtape.core.errors import BadInput, Rejected
from memtape.core.events import Event, Evicted, FactRead, FactWritten, Judged, Superseded
from memtape.core.state import Fact, State, Store
from memtape.policies.plumbing.params import Params
from memtape.policies.plumbing.promises import (
    CAPACITY,
    EVICTS_WEAKEST,
    EXPIRES,
    JUDGED,
    SUPERSEDES,
    VALID_AS_OF,
)
from memtape.policies.plumbing.protocols import Scored
from memtape.policies.store.expiry import NO_TTL, Ttl, expiry_of, read_ttl, with_ttl
from memtape.policies.store.querying import Ranks, answer_query
from memtape.policies.store.temporal import check_validity, closes
from memtape.reducers import store as store_reducers

if TYPE_CHECKING:
    from memtape.policies.store.judged import Judge

SUPERSESSIONS = ("key", "add-only", "llm")
"""How a write treats an active fact on its key: ``key`` retires it, ``add-only`` keeps both,
``llm`` asks a model, against the most similar facts (``memtape.policies.store.judged``)."""


class RankedStore(Ranks, Protocol):
    """What the shared rules need of a policy: its capacity, supersession rule and ranking."""

    @property
    def capacity(self) -> int:
        """The most active facts the store holds after a command."""
        ...

    @property
    def supersession(self) -> str:
        """How a write treats an active fact on its key (one of ``SUPERSESSIONS``)."""
        ...


def check_capacity(capacity: object) -> None:
    """Refuse a capacity that is not an integer of at least 1."""
    if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1:
        raise BadInput(f"capacity must be an integer >= 1, got {capacity!r}")


def check_supersession(supersession: object, judge: object = None) -> None:
    """Refuse a supersession rule not in ``SUPERSESSIONS``, and ``llm`` without a judge."""
    if supersession not in SUPERSESSIONS:
        raise BadInput(f"supersession {_must_be_one(supersession)}")
    if (supersession == "llm") != (judge is not None):
        raise BadInput('a judge (a model) goes with supersession "llm", and only with it')


def read_supersession(params: Params) -> str:
    """The ``supersession`` parameter (default ``key``), checked."""
    value = params.text("supersession", "key")
    if value not in SUPERSESSIONS:
        raise params.error("supersession", _must_be_one(value))
    return value


def _must_be_one(value: object) -> str:
    return f"must be one of {', '.join(SUPERSESSIONS)}, got {value!r}"


def capacity_only(data: Mapping[str, Any], where: str) -> tuple[int, str, Ttl, "Judge | None"]:
    """The capacity (required), supersession, TTL and judge of a ``[forgetting]`` table
    holding nothing else."""
    params = Params(data, where)
    capacity = params.integer("capacity", minimum=1)
    supersession = read_supersession(params)
    # Imported here: the judge brings the model client, which ``memtape.policy`` (which
    # imports these rules) must not load.
    from memtape.policies.store.judged import read_judge  # noqa: PLC0415

    judge = read_judge(params, supersession, where)
    ttl = read_ttl(params)
    params.done()
    return capacity, supersession, ttl, judge


def capacity_table(
    name: str, capacity: int, supersession: str, ttl: Ttl = NO_TTL, judge: "Judge | None" = None
) -> dict[str, Any]:
    """The scenario table of a forgetting policy whose only parameters are the shared ones."""
    table = with_ttl({"policy": name, "capacity": capacity, "supersession": supersession}, ttl)
    return table if judge is None else {**table, "candidates": judge.k}


def last_touch(fact: Fact) -> float:
    """The latest read of the fact (a returned query counts), or its write if never read.

    What LRU, MemoryBank and Generative Agents count as the last touch; the
    seed's policy counts the write alone.
    """
    return fact.written_at if fact.last_read_at is None else fact.last_read_at


def promises_of(supersession: str) -> frozenset[str]:
    """Capacity, eviction of the weakest, expiry and bi-temporal queries; supersession only
    when writes supersede by key, judged writes only when a model judges them."""
    promised = {CAPACITY, EVICTS_WEAKEST, EXPIRES, VALID_AS_OF}
    if supersession == "key":
        promised.add(SUPERSEDES)
    if supersession == "llm":
        promised.add(JUDGED)
    return frozenset(promised)


def by_rank(scored: Iterable[Scored]) -> list[Scored]:
    """``scored`` best first: highest score, ties to the oldest write, then the lowest id."""
    return sorted(scored, key=lambda s: (-s.score, s.fact.written_at, s.fact.id))


def weakest(ranking: Iterable[Scored]) -> Scored:
    """The fact an eviction takes: the lowest score, ties to the oldest write, then lowest id."""
    return min(ranking, key=lambda s: (s.score, s.fact.written_at, s.fact.id))


def decide(
    policy: RankedStore, state: State, command: WriteFact | ReadFact | Query
) -> tuple[Event, ...]:
    """The events that honour a write, a read or a query under ``policy``'s ranking."""
    if isinstance(command, ReadFact):
        return (FactRead(find_active(state.store, command)),)
    if isinstance(command, Query):
        return (answer_query(policy, state, command),)
    return decide_write(policy, state, command)


def decide_write(policy: RankedStore, state: State, command: WriteFact) -> tuple[Event, ...]:
    """The write, the facts it supersedes (none if ``add-only``; the one a model's UPDATE
    names if ``llm``, after its ``Judged``, or no write at all for a DELETE or NOOP), and
    any evictions."""
    check_write(command)
    by_key = policy.supersession == "key"
    store, clock = state.store, state.clock
    retire: list[int] = []
    if command.supersedes is not None:
        named = store.by_key.get(command.supersedes)
        if named is None:
            raise Rejected(f"cannot supersede {command.supersedes!r}: no active fact has that key")
        if by_key:
            retire.append(named)
    same_key = store.by_key.get(command.key)
    if by_key and same_key is not None and same_key not in retire:
        retire.append(same_key)
    ttl = getattr(policy, "ttl", NO_TTL)
    expires_at, pattern = expiry_of(ttl, command.key, command.expires_at, clock)
    check_validity(command, clock)
    judge: Judge | None = getattr(policy, "judge", None)
    judged: tuple[Judged, ...] = ()
    if policy.supersession == "llm" and judge is not None:
        # Asked last, once the write is known to be sound: a rejected write asks nothing.
        verdict = judge.judge(store, command)
        if verdict.decision in ("DELETE", "NOOP"):
            return (verdict,)
        judged = (verdict,)
        if verdict.decision == "UPDATE":
            retire.insert(0, verdict.target)
    written = FactWritten(
        len(store.facts) + 1,
        command.key,
        command.text,
        command.importance,
        expires_at,
        pattern,
        None if command.valid_from is None else float(command.valid_from),
        None if command.valid_to is None else float(command.valid_to),
    )
    supersessions = [Superseded(old, written.id) for old in retire]
    closed = closes(store, retire, command, written.id)
    events: list[Event] = [*judged, written, *supersessions, *closed]
    if len(store.active) - len(retire) + 1 <= policy.capacity:
        return tuple(events)
    after = store_reducers.fact_written(store, written, clock)
    for supersession_event in supersessions:
        after = store_reducers.superseded(after, supersession_event, clock)
    while len(after.active) > policy.capacity:
        condemned = weakest(policy.rank(after, clock))
        eviction = Evicted(condemned.fact.id, float(condemned.score))
        events.append(eviction)
        after = store_reducers.evicted(after, eviction, clock)
    return tuple(events)


def check_write(command: WriteFact) -> None:
    """Reject a write whose key, text or importance is impossible."""
    if not isinstance(command.key, str) or not command.key.strip():
        raise Rejected(f"a fact's key must be a non-empty string, got {command.key!r}")
    if not isinstance(command.text, str):
        raise Rejected(f"a fact's text must be a string, got {command.text!r}")
    importance = command.importance
    if (
        isinstance(importance, bool)
        or not isinstance(importance, int | float)
        or not 0 <= importance <= 1
    ):
        raise Rejected(f"importance must be within [0, 1], got {importance!r}")


def find_active(store: Store, command: ReadFact) -> int:
    """The id of the active fact a read names (by key: the newest active on it),
    or ``Rejected`` saying why there is none."""
    if (command.key is None) == (command.id is None):
        raise Rejected("a read names a fact by key or by id (exactly one of them)")
    if command.id is not None and (isinstance(command.id, bool) or not isinstance(command.id, int)):
        raise Rejected(f"a fact's id is an integer, got {command.id!r}")
    if command.key is not None:
        found = store.by_key.get(command.key)
        if found is None:
            raise Rejected(f"cannot read {command.key!r}: no active fact has that key")
        return found
    fact = store.facts.get(command.id) if command.id is not None else None
    if fact is None:
        raise Rejected(f"cannot read fact {command.id}: no fact has that id")
    if fact.status != "active":
        raise Rejected(f"cannot read fact {command.id} ({fact.key!r}): it was {fact.status}")
    return fact.id
