"""A transcript-like session, generated from a seed, as an agent's session reads once
imported: a pinned system prompt (``--pin system``), user requests, assistant turns
calling one to three tools, results coming back one by one or several in one turn and in
any order, now and then a tool output many times a small budget, and a last call left
unanswered (the session ended there)."""

import random

from memtape.core.commands import AddTurn

TOOLS = ("read_file", "grep", "run_tests", "get_order", "search_docs")
"""The tools the agent calls, by name (the names read in its turns' texts)."""

WORDS = ("the", "order", "ORD-3300", "refund", "src/app.py", "line", "passed", "failed", "ok")
"""What the session's texts are made of."""


def transcript(seed: int, exchanges: int) -> list[AddTurn]:
    """An agent session's turns: ``exchanges`` user requests, each worked through with tools."""
    rng = random.Random(seed)

    def text(low: int, high: int) -> str:
        return " ".join(rng.choice(WORDS) for _ in range(rng.randint(low, high)))

    turns = [AddTurn("system", "You are a coding agent. " + text(8, 20), pin=True)]
    number = 0
    for _ in range(exchanges):
        turns.append(AddTurn("user", text(3, 15)))
        for _ in range(rng.randint(0, 3)):
            ids = []
            for _ in range(rng.randint(1, 3)):
                number += 1
                ids.append(f"toolu_{number:04d}")
            names = ", ".join(f"{rng.choice(TOOLS)}({text(1, 3)})" for _ in ids)
            turns.append(AddTurn("assistant", f"{text(0, 6)} calls {names}", calls=tuple(ids)))
            rng.shuffle(ids)
            while ids:
                take = rng.randint(1, len(ids))
                answered, ids = tuple(ids[:take]), ids[take:]
                size = (2, 40) if rng.random() < 0.9 else (200, 400)
                turns.append(AddTurn("tool", text(*size), answers=answered))
        turns.append(AddTurn("assistant", text(2, 25)))
    number += 1
    turns.append(AddTurn("assistant", "one more look", calls=(f"toolu_{number:04d}",)))
    return turns


TURNS = transcript(seed=11, exchanges=120)
"""About a thousand turns and three hundred calls."""
