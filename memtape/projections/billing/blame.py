"""Which compaction broke the cached prefix a turn's request paid for (``memtape why turn:N``).

The run is billed from its start (``CostTally``); the request a turn paid
for is the one sent after it (after the last of a row of tool results), or,
for an assistant turn, the one it answered. When a compaction broke that
request's cached prefix, the line names the compaction's event and the
policy that decided it.
"""

from collections.abc import Callable
from typing import Any

from memtape.core.run import Run
from memtape.projections.billing.prices import Price
from memtape.projections.billing.tally import Request, bill_run


def turn_request(
    run: Run, turn: int, price: Price, ttl: str = "5m", unseen: int = 0, *, warm: bool = False
) -> Request | None:
    """The request turn ``turn`` paid for, billed at ``price``; None when it paid for none
    (an assistant turn before any request)."""
    tally = bill_run(run, price, ttl, unseen, warm=warm)
    requests = tally.metrics().requests
    index = tally.answered.get(turn)
    if index is not None:
        return requests[index]
    # A tool result's request may be sent after the results that follow it.
    return next((request for request in requests if request.turn >= turn), None)


def blame_data(request: Request | None, policy_at: Callable[[int], str]) -> dict[str, Any]:
    """The request as ``why --json`` adds it (``cost``), with the compaction that broke its
    prefix and that compaction's policy (``policy_at`` of its position), or nulls."""
    if request is None:
        return {"request": None, "broken_by": None}
    broken = request.broken_by
    return {
        "request": request.data(),
        "broken_by": None if broken is None else {"at": broken, "policy": policy_at(broken)},
    }


def blame_line(model: str, data: dict[str, Any]) -> str:
    """The line ``why turn:N`` ends with: what the turn's request was billed, and what broke
    its cached prefix, if anything did."""
    request = data["request"]
    if request is None:
        return f"{'':<5}  billed as {model}: the turn paid for no request"
    said = (
        f"{'':<5}  billed as {model}: the request after turn {request['turn']} read "
        f"{request['cache_read']:,} cached tokens, wrote {request['cache_write']:,}, "
        f"paid {request['input']:,} as input (${request['usd']:.6f})"
    )
    broken = data["broken_by"]
    if broken is None:
        return f"{said}; no compaction broke its cached prefix"
    return (
        f"{said}; its cached prefix was broken by the compaction at event {broken['at']} "
        f"({broken['policy']})"
    )
