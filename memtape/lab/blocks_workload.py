"""A seeded support session whose agent notes each fact that matters in a memory block.

It is ``memtape generate support`` with the same arguments, turn for turn and
probe for probe, plus a ``human`` block (Letta's core memory about the user)
created first, and after each planted fact an edit that appends it to the
block; when the next line would take the block past its limit, the agent
rewrites the block to that line alone (``replace``), as an agent does when its
core memory fills up, so no edit is ever refused. Bench it beside the plain
support session of the same seed: the same turns, the same probes, and the
block's cost in every window against what it keeps.
"""

import tomllib
from typing import Any

from memtape.lab.generate import support_session
from memtape.lab.scenario_file import check_count
from memtape.scenarios.writer import Value, scenario_file

BLOCK = "human"
"""The label of the block the agent keeps its notes in."""


def blocks_workload(
    turns: int, seed: int, *, budget: int, hot_n: int, probe_every: int = 40, limit: int = 200
) -> str:
    """The support session of these arguments with the agent's notes in block ``human`` of
    at most ``limit`` characters: one note per planted probe, right after its turn."""
    check_count(limit, "--limit")
    plain = tomllib.loads(
        support_session(turns, seed, budget=budget, hot_n=hot_n, probe_every=probe_every)
    )
    planted = {probe["from"]: probe["text"] for probe in plain["probe"]}
    rows: list[dict[str, Value]] = [{"block": BLOCK, "limit": limit, "value": ""}]
    value = ""
    turn = 0
    for step in plain["step"]:
        rows.append(step)
        turn += 1
        if turn not in planted:
            continue
        note = f"turn {turn}: {planted[turn]}"[:limit]
        appended = f"{value}\n{note}" if value else note
        if len(appended) <= limit:
            rows.append({"edit": BLOCK, "op": "append", "text": note})
            value = appended
        else:
            rows.append({"edit": BLOCK, "op": "replace", "text": note})
            value = note
    comment = (
        f"A generated support session whose agent keeps notes in a memory block: {turns} "
        f"turns, seed {seed}.\nmemtape generate blocks --turns {turns} --seed {seed} "
        f"--limit {limit} (probes every {probe_every}; the same turns as generate support)"
    )
    info: dict[str, Value] = {
        "name": f"blocks-{turns}-seed-{seed}",
        "about": (
            f"{turns} generated support turns, {len(planted)} planted probes, each noted in "
            f"block {BLOCK!r} ({limit} characters)."
        ),
    }
    policies: dict[str, Any] = {
        axis: table for axis, table in plain.items() if axis not in ("scenario", "step", "probe")
    }
    return scenario_file(comment, info, policies, rows, plain["probe"])
