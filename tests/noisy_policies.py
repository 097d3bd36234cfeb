"""A deliberately noisy compaction policy: it samples, with its seed, how much to drop."""

import random
from collections.abc import Mapping
from typing import Any, ClassVar

import attrs

from memtape.core.commands import AddTurn
from memtape.core.events import CompactionTriggered, Event
from memtape.core.state import State, Window
from memtape.policies.plumbing.params import Params
from memtape.policies.text.tokenizers import WordCount
from memtape.policies.window.turns import arriving, shared_params


@attrs.frozen
class DropsAtRandom:
    """Over ``budget``, drops a random number of the oldest HOT turns (at least one, never
    the newest), drawn from a generator seeded with ``seed`` and the turn's number: the same
    seed decides the same way, another seed otherwise. It promises nothing."""

    name: ClassVar[str] = "drops-at-random"
    budget: int
    seed: int = 0

    @classmethod
    def from_params(cls, data: Mapping[str, Any], where: str) -> "DropsAtRandom":
        """A budget (counted in words) and a seed."""
        params = Params(data, where)
        budget, _ = shared_params(params)
        seed = params.integer("seed", 0, minimum=0)
        params.done()
        return cls(budget, seed)

    @property
    def promises(self) -> frozenset[str]:
        """None."""
        return frozenset()

    @property
    def verbatim(self) -> int:
        """The newest turn stays."""
        return 1

    def floor(self, window: Window) -> int:
        """The newest turn."""
        return window.hot[-1].tokens if window.hot else 0

    def params(self) -> dict[str, Any]:
        """Its table."""
        return {"policy": self.name, "budget": self.budget, "tokenizer": "words", "seed": self.seed}

    def decide(self, state: State, command: AddTurn) -> tuple[Event, ...]:
        """The turn, and over the budget a compaction dropping a random number of turns."""
        window = state.window
        turn = arriving(window, command, WordCount())
        older = window.hot
        if window.tokens + turn.tokens <= self.budget or not older:
            return (turn,)
        draw = random.Random(self.seed * 1_000_003 + turn.turn)
        dropped = tuple(old.turn for old in older[: draw.randint(1, len(older))])
        return (
            turn,
            CompactionTriggered(self.budget, (), dropped, 0, window.gist, window.gist_tokens),
        )
