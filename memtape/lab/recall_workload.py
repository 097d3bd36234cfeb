"""A seeded support session where the agent recalls what left its window.

It is ``memtape generate support``'s session (the same turns and probes for the
same seed) with a ``recall`` step ``recall_after`` turns after each probe: by
then the probe's turn has left a small window, and the agent asks for it back
with the words around the value it needs (the probe's turn without the probe:
"refund calculator: order ORD-4012 comes to after fees"), as an agent that
remembers what it talked about but not the figure would. The header turns
recall on (``recall = "bm25"``) and has the window compact to three quarters
of its budget (``target``), leaving room for what a recall brings back: a
window compacted to its budget is full, and a recall into it brings nothing.
The bench's "probes kept" counts what recall brought back beside what the
window kept.
"""

import tomllib
from typing import Any

from memtape.lab.generate import support_session
from memtape.lab.scenario_file import check_count
from memtape.scenarios.writer import Value, scenario_file


def recall_workload(
    turns: int,
    seed: int,
    *,
    budget: int,
    hot_n: int,
    probe_every: int = 40,
    recall_after: int = 20,
    k: int = 2,
) -> str:
    """The support session of ``(turns, seed)`` with a recall of each probe's turn
    ``recall_after`` turns after it (the ``k`` best matches brought back)."""
    check_count(recall_after, "--recall-after")
    check_count(k, "--k")
    session = tomllib.loads(
        support_session(turns, seed, budget=budget, hot_n=hot_n, probe_every=probe_every)
    )
    texts = [step["text"] for step in session["step"]]
    recalls: dict[int, str] = {}
    for probe in session.get("probe", []):
        turn = probe["from"] + recall_after
        if turn <= turns:
            said = texts[probe["from"] - 1].replace(probe["text"], " ")
            recalls[turn] = " ".join(said.split())
    steps: list[dict[str, Value]] = []
    for number, step in enumerate(session["step"], start=1):
        steps.append(step)
        if number in recalls:
            steps.append({"recall": recalls[number], "k": k})
    policies: dict[str, Any] = {**session}
    compaction = {
        **policies["compaction"],
        "target": max(budget * 3 // 4, 1),
        "recall": "bm25",
    }
    header = {"compaction": compaction, "forgetting": policies["forgetting"]}
    comment = (
        f"A generated recall session: {turns} turns, seed {seed}, a recall {recall_after} "
        f"turns after each probe.\nmemtape generate recall --turns {turns} --seed {seed} "
        f"--recall-after {recall_after} (probes every {probe_every})"
    )
    info: dict[str, Value] = {
        "name": f"recall-{turns}-seed-{seed}",
        "about": (
            f"{turns} generated support turns, {len(recalls)} recalls of the planted probes."
        ),
    }
    return scenario_file(comment, info, header, steps, session.get("probe", []))
