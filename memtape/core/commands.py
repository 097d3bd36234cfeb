"""Commands: what the outside world asks a session to do.

A command is a request, not a fact: a policy decides which events (if any)
honour it, or rejects it.
"""

import attrs

from memtape.core.events import OMITTED_WHEN_EMPTY
from memtape.core.reprs import fields_repr

ROLES: tuple[str, ...] = ("system", "user", "assistant", "tool")
"""The roles a turn may have: a closed set (an importer maps its format's roles onto it),
so that a role is never free text: it holds nothing of the user's, and survives redaction."""


def role_error(role: object) -> str | None:
    """Why ``role`` is not a turn's role, or None when it is one of ``ROLES``."""
    if isinstance(role, str) and role in ROLES:
        return None
    return role_refused(role)


def role_refused(role: object) -> str:
    """What is said of ``role`` when it is not one of ``ROLES``."""
    return f"a turn's role is one of {', '.join(ROLES)}, got {role!r}"


@attrs.frozen
class AddTurn:
    """Add a conversation turn; ``salient=None`` means salient iff the role is ``tool``.

    ``calls`` are the ids of the tool calls the turn makes, in order;
    ``answers`` the ids of the calls whose results it carries. A ``pin``ned
    turn (a system prompt, an instructions file) is one no policy moves.
    ``tokens``, when given, is what the turn costs, measured outside memtape (a
    provider's recorded count): the policy's tokenizer does not count it. A log
    line leaves it out while it is None, so a run written before it existed reads
    back, and folds, as it did.
    """

    __repr__ = fields_repr

    role: str
    text: str
    salient: bool | None = None
    calls: tuple[str, ...] = ()
    answers: tuple[str, ...] = ()
    pin: bool = False
    tokens: int | None = attrs.field(default=None, metadata={OMITTED_WHEN_EMPTY: True})


@attrs.frozen
class AdvanceClock:
    """Move the logical clock forward to the time ``to``."""

    __repr__ = fields_repr

    to: float


@attrs.frozen
class WriteFact:
    """Write a fact; an active fact on ``key`` (or on ``supersedes``) is retired.

    ``expires_at`` is the clock at which the fact leaves the store (None: when
    the forgetting policy's TTL says, or never). ``valid_from`` and
    ``valid_to`` say when the fact was true in the world (None: from the
    write; open); a write naming ``valid_from`` closes the validity of the
    facts it supersedes there.
    """

    __repr__ = fields_repr

    key: str
    text: str
    importance: float
    supersedes: str | None = None
    expires_at: float | None = attrs.field(default=None, metadata={OMITTED_WHEN_EMPTY: True})
    valid_from: float | None = attrs.field(default=None, metadata={OMITTED_WHEN_EMPTY: True})
    valid_to: float | None = attrs.field(default=None, metadata={OMITTED_WHEN_EMPTY: True})


@attrs.frozen
class ReadFact:
    """Read one active fact, named by its ``key`` or by its ``id`` (exactly one)."""

    __repr__ = fields_repr

    key: str | None = None
    id: int | None = None


@attrs.frozen
class Query:
    """Read the top ``k`` active facts under the policy's ranking, best first.

    ``text`` is what the query asks ("" for none; a policy with a relevance
    factor ranks by it); ``key`` is the key the query expects to find ("" for
    none), which the policy does not see: it is there to score the answer.
    ``as_of`` (valid time) and ``known_at`` (record time, at most the clock)
    make it bi-temporal: the facts true at ``as_of`` as the store knew them at
    ``known_at`` (each defaulting to the other, then to the clock).
    """

    __repr__ = fields_repr

    text: str = ""
    key: str = ""
    k: int = 3
    as_of: float | None = attrs.field(default=None, metadata={OMITTED_WHEN_EMPTY: True})
    known_at: float | None = attrs.field(default=None, metadata={OMITTED_WHEN_EMPTY: True})


@attrs.frozen
class RecordEpisode:
    """Record a raw episode for the next consolidation pass."""

    __repr__ = fields_repr

    text: str


@attrs.frozen
class Consolidate:
    """Run a sleep-time consolidation pass over every recorded episode."""

    __repr__ = fields_repr


@attrs.frozen
class CreateBlock:
    """Create memory block ``label``, holding ``value``, of at most ``limit`` characters;
    ``read_only``: no edit may change it afterwards (Letta's read-only blocks)."""

    __repr__ = fields_repr

    label: str
    limit: int
    value: str = ""
    read_only: bool = attrs.field(default=False, metadata={OMITTED_WHEN_EMPTY: True})


BLOCK_OPS: tuple[str, ...] = ("replace", "append", "find-replace")
"""What an ``EditBlock`` may do to a block, as Letta's memory tools do."""


@attrs.frozen
class EditBlock:
    """Edit memory block ``label``: ``replace`` its value with ``text``, ``append`` ``text``
    to it (on a new line), or ``find-replace`` the first ``find`` in it with ``text``."""

    __repr__ = fields_repr

    label: str
    op: str
    text: str
    find: str = ""


@attrs.frozen
class Recall:
    """Search the turns that left the window for ``text`` and bring the ``k`` best back
    into its recall tier (those that fit under the budget); it needs a compaction policy
    with ``recall`` set."""

    __repr__ = fields_repr

    text: str
    k: int = 3


@attrs.frozen
class Ask:
    """Ask model ``model`` (with ``seed``, when given) ``question`` against the window as it
    stands, and score its reply against the reference ``answer`` (``bench --judge`` asks a
    probe's question at its turn); no scenario step is one."""

    __repr__ = fields_repr

    question: str
    answer: str
    model: str
    seed: int | None = attrs.field(default=None, metadata={OMITTED_WHEN_EMPTY: True})


Command = (
    AddTurn
    | AdvanceClock
    | WriteFact
    | ReadFact
    | Query
    | RecordEpisode
    | Consolidate
    | CreateBlock
    | EditBlock
    | Recall
    | Ask
)
"""Any command of the kernel."""

COMMAND_TYPES: dict[str, type[Command]] = {
    "turn": AddTurn,
    "advance": AdvanceClock,
    "write": WriteFact,
    "read": ReadFact,
    "query": Query,
    "episode": RecordEpisode,
    "consolidate": Consolidate,
    "recall": Recall,
    "block": CreateBlock,
    "edit": EditBlock,
    "ask": Ask,
}
"""Every command type by its kind, the name it carries in scenarios and logs."""

STEP_KINDS: tuple[str, ...] = tuple(kind for kind in COMMAND_TYPES if kind != "ask")
"""The kinds a scenario's steps may be: every command's but ``ask``, which only a bench's
judge gives."""

COMMAND_KINDS: dict[type[Command], str] = {cls: kind for kind, cls in COMMAND_TYPES.items()}
"""The kind of each command type (the inverse of ``COMMAND_TYPES``)."""
