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
"""After each turn the window holds at most ``max(budget, policy.floor(window))`` tokens.

``floor(window)`` is the least the policy's own rules let it keep in that
window (for the tiered policy, the last ``hot_n`` turns and the gist), so a
window is over budget only when the policy could not have done better.
"""

RECENT_VERBATIM = "recent-verbatim"
"""After each turn HOT ends with the last ``policy.verbatim`` turns, exactly as they arrived."""

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

PROMISES = frozenset({BUDGET, RECENT_VERBATIM, CAPACITY, EVICTS_WEAKEST, SUPERSEDES})
"""Every invariant a policy may promise."""
