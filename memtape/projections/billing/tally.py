"""The bill of a run, request by request, gathered step by step as the run is made.

A request goes out after every turn that is not the assistant's (the model
is asked to answer it), with the window as it stands after that turn and
any compaction it triggered; an assistant turn is the answer, billed as
the output of the request before it. Tool results in a row go back in one
request (the results of one response's parallel calls), sent after the
last of them. Each request's prompt is billed by
the provider's cache (``memtape.projections.billing.caches``) at the run's
clock, and priced as uncached input + cache reads + cache writes + output.

A request whose cached prefix a compaction broke (a live entry was longer
than what it shares with the request before) names that compaction: the
first one since the request before.
"""

from collections.abc import Sequence
from typing import Any

import attrs

from memtape.core.commands import AddTurn, Command
from memtape.core.events import CompactionTriggered, Event, Recalled, TurnAdded
from memtape.core.run import Run
from memtape.core.state import State
from memtape.projections.billing.caches import Bill, cache_for
from memtape.projections.billing.prices import Price
from memtape.projections.billing.prompt import PromptTracker
from memtape.projections.metrics import steps

COST_METRICS = (
    "billed_input_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "cache_breaks",
    "usd",
)
"""The bench's cost metrics, in the JSON contract's order (None without a priced model)."""

MILLION = 1_000_000


@attrs.frozen
class Request:
    """One request: the turn it followed, the clock, its prompt's tokens, its bill, its
    output, its price, and the position of the compaction that broke its cached prefix
    (None when nothing did)."""

    turn: int
    at: float
    tokens: int
    bill: Bill
    output: int
    usd: float
    broken_by: int | None

    def data(self) -> dict[str, Any]:
        """The request as ``--json`` writes it."""
        return {
            "turn": self.turn,
            "clock": self.at,
            "prompt_tokens": self.tokens,
            "input": self.bill.input,
            "cache_read": self.bill.cache_read,
            "cache_write": self.bill.cache_write,
            "output": self.output,
            "usd": self.usd,
            "broken_by": self.broken_by,
        }


@attrs.frozen
class CostMetrics:
    """A run's bill: every request, and their totals."""

    requests: tuple[Request, ...]

    @property
    def billed_input_tokens(self) -> int:
        """The prompt tokens billed at the full input price (read from no cache, written
        to none)."""
        return sum(request.bill.input for request in self.requests)

    @property
    def cache_read_tokens(self) -> int:
        """The prompt tokens read from the cache."""
        return sum(request.bill.cache_read for request in self.requests)

    @property
    def cache_write_tokens(self) -> int:
        """The prompt tokens written to the cache (billed as writes: Anthropic's)."""
        return sum(request.bill.cache_write for request in self.requests)

    @property
    def cache_breaks(self) -> int:
        """The compactions that broke a cached prefix."""
        return len({r.broken_by for r in self.requests if r.broken_by is not None})

    @property
    def usd(self) -> float:
        """What the run cost, in US dollars."""
        return sum(request.usd for request in self.requests)

    def data(self) -> dict[str, Any]:
        """The metrics under ``COST_METRICS``' names."""
        return {name: getattr(self, name) for name in COST_METRICS}


class CostTally:
    """The bill of a run at ``price``, its cache entries living ``ttl``, step by step; each
    prompt begins with ``unseen`` tokens the window does not hold (``[cost] prefix``),
    cached before the run begins when ``warm`` (``[cost] warm``).

    A step costs its new turns, or the window's size after a compaction (as the
    compaction's fold did): never the run's length.
    """

    def __init__(
        self, price: Price, ttl: str = "5m", unseen: int = 0, *, warm: bool = False
    ) -> None:
        self._price = price
        self._write = price.write_price(ttl)
        self._cache = cache_for(price, ttl)
        if warm and unseen:
            self._cache.prime(unseen, 0.0)
        self._prompts = PromptTracker(unseen)
        self._requests: list[Request] = []
        self._compaction: int | None = None
        """The position of the first compaction since the last request."""
        self.answered: dict[int, int] = {}
        """Each assistant turn's number, and the index of the request it answered."""
        self._waiting: State | None = None
        """The state after the last tool result, whose request is not sent yet."""

    @property
    def price(self) -> Price:
        """The price the run is billed at."""
        return self._price

    def step(
        self, command: Command, batch: Sequence[Event], before: State, after: State, offset: int
    ) -> None:
        """Take one step: its command, its events (the first at ``offset + 1``), the states
        before and after them."""
        result = isinstance(command, AddTurn) and command.role == "tool"
        if self._waiting is not None and not result:
            self._send(self._waiting)
        turns = []
        for position, event in enumerate(batch, start=offset + 1):
            if isinstance(event, TurnAdded):
                turns.append(event)
            elif isinstance(event, CompactionTriggered):
                self._prompts.compacted()
                if self._compaction is None:
                    self._compaction = position
            elif isinstance(event, Recalled):
                self._prompts.compacted()  # the recall tier, before HOT, changed
        self._prompts.added(turns)
        if not isinstance(command, AddTurn):
            return
        if command.role == "assistant":
            if self._requests:
                self.answered[after.window.turns] = len(self._requests) - 1
                answered = self._requests[-1]
                output = answered.output + sum(turn.tokens for turn in turns)
                self._requests[-1] = self._priced(attrs.evolve(answered, output=output))
            return
        # A tool result waits: the results of one response's parallel calls go back in one
        # request, sent when a turn that is not a result comes (or the run ends).
        self._waiting = after
        if not result:
            self._send(after)

    def _send(self, state: State) -> None:
        """Send the request of the window in ``state``, at its clock."""
        self._waiting = None
        prompt = self._prompts.prompt(state.window)
        bill = self._cache.bill(prompt, state.clock)
        broken_by = self._compaction if bill.broken else None
        self._compaction = None
        request = Request(state.window.turns, state.clock, prompt.tokens, bill, 0, 0.0, broken_by)
        self._requests.append(self._priced(request))

    def _priced(self, request: Request) -> Request:
        price, bill = self._price, request.bill
        usd = (
            bill.input * price.input
            + bill.cache_read * price.cache_read
            + bill.cache_write * self._write
            + request.output * price.output
        ) / MILLION
        return attrs.evolve(request, usd=usd)

    def metrics(self) -> CostMetrics:
        """The bill of the steps taken so far (a waiting tool result's request sent)."""
        if self._waiting is not None:
            self._send(self._waiting)
        return CostMetrics(tuple(self._requests))


def bill_run(
    run: Run,
    price: Price,
    ttl: str = "5m",
    unseen: int = 0,
    until: int | None = None,
    *,
    warm: bool = False,
) -> CostTally:
    """The tally of ``run``'s steps whose events end at or before event ``until`` (default:
    every step), billed at ``price``."""
    tally = CostTally(price, ttl, unseen, warm=warm)
    commands = run.commands
    for step, batch, before, after in steps(run):
        offset = run.batch(step)[0]
        if until is not None and offset + len(batch) > until:
            break
        tally.step(commands[step - 1], batch, before, after, offset)
    return tally
