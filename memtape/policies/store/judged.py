"""Supersession judged by a model: ``supersession = "llm"`` on a forgetting policy.

Each write is put to a model beside its candidates, the ``candidates`` (k)
active facts most like it by the words they share (the Jaccard index of
key and text, ``memtape.policies.store.relevance``; ties to the newest
fact). The model answers with a JSON object::

    {"decision": "UPDATE", "fact": 3}

``ADD`` stores the write beside them, ``UPDATE`` stores it and retires the
candidate it names, ``DELETE`` retires the candidate it names and stores
nothing, ``NOOP`` stores nothing. An answer that does not parse, decides
something else or names a fact that is not a candidate is refused with the
reason, and the model asked again with it (up to the ``[llm]`` table's
``max_retries``); then the write is rejected in one line and nothing is
appended. A write with no candidate (no active fact shares a word with it)
is added without asking. The decision, its candidates and every call made
are recorded in a ``Judged`` event, so replay never asks.
"""

from collections.abc import Sequence
from typing import Any

import attrs

from memtape.core.commands import WriteFact
from memtape.core.errors import BadInput
from memtape.core.events import Judged
from memtape.core.state import Fact, Store
from memtape.llm.config import ModelConfig
from memtape.llm.usable import Refused, ask_until_usable, json_object
from memtape.policies.plumbing.building import build_settings
from memtape.policies.plumbing.params import Params
from memtape.policies.store.relevance import fact_words, words
from memtape.reducers.store import JUDGEMENTS

CANDIDATES = 3
"""How many similar active facts a write is judged against, unless the table says."""

DEFAULT_PROMPT = """\
You keep an agent's long-term memory free of stale and duplicate facts.
A new fact is about to be written. Compare it with the stored facts below and decide:
ADD (it is new: keep it beside them), UPDATE (it replaces one of them: name it),
DELETE (it says one of them is no longer true, and is not worth keeping itself: name it)
or NOOP (it says nothing new).
Answer with a JSON object only, in this shape: {{"decision": "UPDATE", "fact": 2}}
("fact" only for UPDATE and DELETE: the number of a stored fact below).

New fact: {key}: {text}

Stored facts:
{candidates}
"""
"""What the model is asked; ``{key}``, ``{text}`` and ``{candidates}`` are filled in."""


def candidates(store: Store, command: WriteFact, k: int) -> tuple[Fact, ...]:
    """The ``k`` active facts most like the write (Jaccard index of their words, above 0),
    most alike first, ties to the newest."""
    written = words(f"{command.key} {command.text}")
    scored: list[tuple[float, int]] = []
    for fact_id in store.active:
        held = fact_words(store.facts[fact_id])
        union = written | held
        shared = len(written & held) / len(union) if union else 0.0
        if shared > 0:
            scored.append((shared, fact_id))
    scored.sort(key=lambda pair: (-pair[0], -pair[1]))
    return tuple(store.facts[fact_id] for _, fact_id in scored[:k])


def render_candidates(facts: Sequence[Fact]) -> str:
    """The candidates as the prompt lists them: ``[id] key: text``, one a line."""
    return "\n".join(f"[{fact.id}] {fact.key}: {fact.text}" for fact in facts)


def judgement(output: str, among: Sequence[int]) -> tuple[str, int]:
    """The decision and target (0 for none) a model's ``output`` gives, or ``Refused``."""
    data = json_object(output)
    decision = data.get("decision")
    if not isinstance(decision, str) or decision.upper() not in JUDGEMENTS:
        raise Refused(f"it decides {decision!r}, not one of {', '.join(JUDGEMENTS)}")
    decision = decision.upper()
    if decision in ("ADD", "NOOP"):
        return decision, 0
    target = data.get("fact")
    if type(target) is not int or target not in among:
        named = ", ".join(str(i) for i in among)
        raise Refused(f"its {decision} names fact {target!r}, which is not a candidate ({named})")
    return decision, target


@attrs.frozen
class Judge:
    """Who judges a write: ``config``'s model, against the ``k`` most similar active facts."""

    config: ModelConfig
    k: int = CANDIDATES

    def judge(self, store: Store, command: WriteFact) -> Judged:
        """The model's judgement of ``command`` against its candidates, or ``Rejected``."""
        found = candidates(store, command, self.k)
        ids = tuple(fact.id for fact in found)
        if not found:
            return Judged(command.key, "ADD", ids)
        prompt = DEFAULT_PROMPT.format(
            key=command.key, text=command.text, candidates=render_candidates(found)
        )
        (decision, target), asked = ask_until_usable(
            self.config,
            prompt,
            lambda output: judgement(output, ids),
            f"judgement of the write to {command.key!r}",
        )
        return Judged(command.key, decision, ids, target, asked)


def read_judge(params: Params, supersession: str, where: str) -> Judge | None:
    """The judge of ``supersession = "llm"`` (its ``candidates`` parameter and the ``[llm]``
    table's model), or None for another supersession."""
    if supersession != "llm":
        return None
    k = params.integer("candidates", CANDIDATES, minimum=1)
    config = build_settings().llm
    if config is None:
        raise BadInput(
            f'{where}: supersession "llm" needs a model: add an [llm] table with '
            'model = "..." to the scenario (or --set llm.model=...)'
        )
    return Judge(config, k)


def with_judge(table: dict[str, Any], judge: Judge | None) -> dict[str, Any]:
    """``table`` with the judge's ``candidates``, as a scenario would write it."""
    if judge is None:
        return table
    return {**table, "candidates": judge.k}
