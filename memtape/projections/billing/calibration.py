"""The bill a run simulated against the usage its transcript recorded, turn by turn.

An imported assistant turn may carry what the provider billed for the
request that produced it (``Billed``): its uncached input,
cache reads and cache writes. The simulated request it answered
(``CostTally.answered``) is set beside it, and the error of each kind is
measured: the mean absolute error in tokens, the relative error (the
absolute errors added up over the recorded tokens added up, so turns that
recorded nothing count), and the turn with the largest error of all three.
"""

from collections.abc import Mapping, Sequence
from statistics import median
from typing import Any, Protocol

import attrs

from memtape.projections.billing.tally import Request

KINDS = ("input", "cache_read", "cache_write")
"""What is compared: the kinds of prompt tokens a provider bills."""


class Billed(Protocol):
    """What a provider billed for one response (``memtape.scenarios.usage.Usage``); None
    where the transcript did not say."""

    @property
    def input(self) -> int | None:
        """Uncached prompt tokens."""
        ...

    @property
    def cache_read(self) -> int | None:
        """Prompt tokens read from the cache."""
        ...

    @property
    def cache_write(self) -> int | None:
        """Prompt tokens written to the cache."""
        ...


@attrs.frozen
class Compared:
    """One turn whose usage was recorded: what was simulated and what was recorded."""

    turn: int
    simulated: tuple[int, int, int]
    recorded: tuple[int, int, int]

    @property
    def error(self) -> int:
        """The absolute error of the three kinds, added up."""
        return sum(abs(s - r) for s, r in zip(self.simulated, self.recorded, strict=True))


@attrs.frozen
class Calibration:
    """The simulated bill of every turn with recorded usage, beside the recorded one, and
    the prices of the three kinds (USD per million: input, cache read, cache write)."""

    turns: tuple[Compared, ...]
    prices: tuple[float, float, float] = (0.0, 0.0, 0.0)

    def usd(self, *, simulated: bool) -> float:
        """What the compared turns' prompts cost, simulated or recorded, in US dollars."""
        return (
            sum(
                self.total(kind, simulated=simulated) * price
                for kind, price in zip(KINDS, self.prices, strict=True)
            )
            / 1_000_000
        )

    @property
    def usd_error(self) -> float | None:
        """The simulated prompts' cost against the recorded, relative to the recorded (None
        when nothing was recorded)."""
        recorded = self.usd(simulated=False)
        return None if not recorded else (self.usd(simulated=True) - recorded) / recorded

    def mean_absolute(self, kind: str) -> float | None:
        """The mean absolute error of ``kind`` in tokens (None without turns)."""
        if not self.turns:
            return None
        at = KINDS.index(kind)
        return sum(abs(t.simulated[at] - t.recorded[at]) for t in self.turns) / len(self.turns)

    def relative(self, kind: str) -> float | None:
        """The absolute errors of ``kind`` over its recorded tokens (None when none were
        recorded)."""
        at = KINDS.index(kind)
        recorded = sum(t.recorded[at] for t in self.turns)
        if not recorded:
            return None
        return sum(abs(t.simulated[at] - t.recorded[at]) for t in self.turns) / recorded

    def total(self, kind: str, *, simulated: bool) -> int:
        """The tokens of ``kind``, simulated or recorded, over the compared turns."""
        at = KINDS.index(kind)
        return sum((t.simulated if simulated else t.recorded)[at] for t in self.turns)

    @property
    def worst(self) -> Compared | None:
        """The turn with the largest error (the first of equals), or None."""
        return max(self.turns, key=lambda t: t.error, default=None)

    @property
    def unseen(self) -> int | None:
        """The median of the prompt tokens recorded beyond those simulated, turn by turn:
        what the agent sent that the transcript does not hold (its system prompt and its
        tools' definitions), or a tokenizer that counts otherwise."""
        if not self.turns:
            return None
        return round(median(sum(t.recorded) - sum(t.simulated) for t in self.turns))

    def data(self) -> dict[str, Any]:
        """The calibration as ``--json`` writes it."""
        worst = self.worst
        return {
            "turns": len(self.turns),
            "unseen_prompt_tokens": self.unseen,
            "kinds": {
                kind: {
                    "simulated": self.total(kind, simulated=True),
                    "recorded": self.total(kind, simulated=False),
                    "mean_absolute_error": self.mean_absolute(kind),
                    "relative_error": self.relative(kind),
                }
                for kind in KINDS
            },
            "usd": {
                "simulated": self.usd(simulated=True),
                "recorded": self.usd(simulated=False),
                "relative_error": self.usd_error,
            },
            "worst_turn": None if worst is None else worst.turn,
            "per_turn": [
                {"turn": t.turn, "simulated": list(t.simulated), "recorded": list(t.recorded)}
                for t in self.turns
            ],
        }


def calibrate(
    requests: Sequence[Request],
    answered: Mapping[int, int],
    usage: Mapping[int, Billed],
    prices: tuple[float, float, float] = (0.0, 0.0, 0.0),
) -> Calibration:
    """Each turn of ``usage`` that recorded its input, cache reads and writes (a kind left
    unsaid is 0) beside the simulated request it answered; a turn that answered no request
    is left out. ``prices`` (input, cache read, cache write) price both sides' prompts."""
    compared = []
    for turn in sorted(usage):
        index = answered.get(turn)
        if index is None:
            continue
        bill = requests[index].bill
        said = usage[turn]
        compared.append(
            Compared(
                turn,
                (bill.input, bill.cache_read, bill.cache_write),
                (said.input or 0, said.cache_read or 0, said.cache_write or 0),
            )
        )
    return Calibration(tuple(compared), prices)
