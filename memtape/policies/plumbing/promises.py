"""The invariants a policy may promise.

Some invariants hold for every policy and are always checked: replay
equality, the codec round trip, a rejected command leaving no trace,
determinism, and a ranking that holds exactly the active facts. The others
belong to a policy's design, so a policy declares which of them it keeps in
its ``promises`` and the checks (``memtape.testing``, ``memtape check``) hold
it to those and no more: ``none`` keeps every turn verbatim but promises no
budget bound, an add-only store promises no supersession.
"""

BUDGET = "budget"
"""After each turn the window holds at most ``max(limit, policy.floor(window))`` tokens.

``floor(window)`` is the least the policy's own rules let it keep in that
window (for the tiered policy, the last ``hot_n`` turns with the rest of
their units, the pinned turns with theirs, and the gist), so a window is
over its limit only when the policy could not have done better.

The limit is the budget, unless the policy has a trigger and a target
(``memtape.policies.window.trigger``): after a turn that made a compaction,
the target; after one that made none, the lowest token count the trigger
fires over. Between compactions nothing bounds the window when only turns
trigger (``messages``, ``every``) or when ``clear_at_least`` may have held a
compaction back. Without them, trigger and target are the budget, and this
is the budget bound it always was.
"""

RECENT_VERBATIM = "recent-verbatim"
"""After each turn HOT ends with the last ``policy.verbatim`` turns and the rest of their
units (``memtape.policies.window.units``), exactly as they arrived.

A unit is a call, its results and the turns between them, so a result among
the last ``verbatim`` turns keeps its call HOT too, and every turn since; a
call still waiting for its result holds everything after it. On turns that
call and answer nothing, each unit is one turn and this is the last
``verbatim`` turns alone. The floor of ``BUDGET`` grows by what this keeps.
"""

WELL_FORMED = "well-formed"
"""After each command HOT is a request the major APIs accept, as far as tool calls go.

Every id a HOT turn answers was called by an earlier HOT turn, and a HOT
turn's call that has been answered has that answer HOT too: a call and its
results stay, fold or leave together. A policy keeps it by moving whole
units only (``memtape.policies.window.units``), never part of one; clearing a
result's text in place keeps it. A turn whose structure the run does not
allow (answering an id no call waits on, calling an id that still waits) is
rejected (``memtape.policies.window.turns.structure_error``), never recorded.
"""

PINNED = "pinned"
"""A pinned turn is never dropped, folded or cleared: after each command every pinned
turn so far is HOT, exactly as it arrived.

A pinned turn counts against the budget and enters the policy's floor, with
its unit (a pinned call keeps its results, a pinned result its call).
"""

CAPACITY = "capacity"
"""After each command the store holds at most ``policy.capacity`` active facts."""

EVICTS_WEAKEST = "evicts-weakest"
"""An eviction takes the lowest score of ``policy.rank`` among the active facts just before
it (the new fact included), ties to the oldest write, then the lowest id; and only over
capacity. The ranking, not ``score`` alone, is the authority: a policy may normalize its
factors over the active facts."""

SUPERSEDES = "supersedes"
"""A write to a key retires the active fact on it: at most one active fact per key, so
no read returns a stale fact."""

EXPIRES = "expires"
"""A fact whose ``expires_at`` has come is never ranked, read or returned: after each
command no active fact's time is at or before the clock (it left as ``Expired``)."""

VALID_AS_OF = "valid-as-of"
"""A bi-temporal query (``as_of``, ``known_at``) returns only facts that were true at
``as_of`` as the store knew them at ``known_at``, never one outside its validity."""

RECALL_BUDGET = "recall-budget"
"""A recall never takes the window over budget: after each ``Recalled`` that brought a turn
back, the window (its recall tier included) holds at most the compaction policy's budget,
or its trigger's lowest token count when lower (``memtape.policies.window.recall.limit``);
and it brings back only turns that had left HOT, verbatim. No compaction moves the recall
tier, so ``BUDGET``'s floor counts it, as it counts pinned turns."""
BLOCK_LIMIT = "block-limit"
"""A memory block is never over its limit: after each command every block holds at most
its ``limit`` characters (an edit that would pass it is refused), and a ``read_only``
block is at its first version (every edit of it is refused), whether a step or a
consolidation pass asked for the edit.

Blocks are the session's, not a policy's (``memtape.policies.window.blocks``),
so every session keeps this whatever its policies promise: the checks hold
each run to it, and it is not one of ``PROMISES``."""

JUDGED = "judged"
"""A write a model judged (``Judged``) retires only facts among its candidates: its
``UPDATE`` or ``DELETE`` names one of them, and no ``Superseded`` in its batch retires
another."""

PROMISES = frozenset(
    {
        BUDGET,
        RECENT_VERBATIM,
        WELL_FORMED,
        PINNED,
        CAPACITY,
        EVICTS_WEAKEST,
        SUPERSEDES,
        EXPIRES,
        VALID_AS_OF,
        RECALL_BUDGET,
        JUDGED,
    }
)
"""Every invariant a policy may promise."""
