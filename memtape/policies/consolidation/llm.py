"""LLM consolidation: ``policy = "llm"`` asks a model to distill the pending episodes.

The model answers with a JSON object (the request asks for one)::

    {"semantic": [{"key": "user.name", "text": "the user is Dana",
                   "importance": 0.9, "episode": 4}],
     "procedural": [{"text": "after the 30-day window, apply a 10% fee", "episode": 2}]}

Each fact names its key (not blank), its text, its importance in [0, 1] and
the episode it comes from (one of the pending ones); each rule its text (not
blank) and episode. An answer that does not parse or breaks this contract is
refused with the reason, and the model is asked again with the reason added
to the prompt, up to ``max_retries`` times (the ``[llm]`` table's); then the
pass is rejected with the last reason, and nothing is appended. Every
episode pending is consumed, as the rules policy does. Every call made,
refused ones included, is recorded in the ``Consolidated`` event.

The prompt (``prompt = "..."`` or ``prompt_file``) may say ``{episodes}``,
the pending episodes one a line as ``[3] text``; ``DEFAULT_PROMPT`` asks
for the shape above.

In a session with memory blocks the model is a sleep-time agent too: the
prompt ends with the blocks (``BLOCKS``: each label, limit, read-only or not,
and value), and the answer may carry ``"blocks": [{"label": "human", "op":
"append", "text": "..."}]`` (``op`` one of ``replace``, ``append``,
``find-replace``, the last with ``find``). An edit the blocks would refuse (no
such block, a read-only one, past its limit, nothing found) refuses the
answer as any broken contract does, so the pass that is taken edits within
every limit; a session without blocks is asked exactly what it was before.
"""

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import attrs

from memtape.core.block_edits import edited_value
from memtape.core.commands import Consolidate, RecordEpisode
from memtape.core.errors import BadInput, Rejected
from memtape.core.events import (
    BlockEdit,
    Consolidated,
    EpisodeRecorded,
    Event,
    ProceduralRule,
    SemanticFact,
)
from memtape.core.state import State, Window
from memtape.llm.config import ModelConfig
from memtape.llm.usable import Refused, ask_until_usable, json_object
from memtape.policies.plumbing.building import build_settings
from memtape.policies.plumbing.params import Params
from memtape.policies.text.prompts import prompt_param

DEFAULT_PROMPT = """\
You distill an agent's raw episodes into durable memory.
From the episodes below, write the facts worth keeping ("semantic": a key naming what the \
fact is about, such as "user.name", the fact's text, and its importance from 0 to 1) and the \
how-to rules worth following ("procedural"). Give each the number of the episode it comes \
from. Leave out what is not worth keeping.
Answer with a JSON object only, in this shape:
{"semantic": [{"key": "...", "text": "...", "importance": 0.5, "episode": 1}], \
"procedural": [{"text": "...", "episode": 2}]}

Episodes:
{episodes}
"""
"""The prompt of ``policy = "llm"`` unless the table gives its own."""

BLOCKS = """

Memory blocks (always in the agent's context; each holds at most its limit in characters):
{blocks}
You may also rewrite blocks that are not read-only, adding to the object:
"blocks": [{"label": "...", "op": "append", "text": "..."}] (op is "replace", "append", or \
"find-replace" with "find": the text to replace). Keep each block within its limit.
"""
"""What the prompt ends with in a session with memory blocks, ``{blocks}`` the blocks."""


def render_episodes(episodes: Sequence[EpisodeRecorded]) -> str:
    """The pending episodes as the prompt lists them: ``[id] text``, one a line."""
    return "\n".join(f"[{episode.id}] {episode.text}" for episode in episodes)


def render_blocks(window: Window) -> str:
    """The memory blocks as the prompt lists them: ``[label] (limit N, read-only): value``."""
    return "\n".join(
        f"[{block.label}] (limit {block.limit}{', read-only' if block.read_only else ''}): "
        f"{json.dumps(block.value, ensure_ascii=False)}"
        for block in window.blocks
    )


def block_edits(output: str, state: State) -> tuple[BlockEdit, ...]:
    """The block edits a model's ``output`` asks for, each one the blocks would make, or
    ``Refused`` saying why not."""
    data = json_object(output)
    edits = tuple(_edit(item, n) for n, item in enumerate(_list(data, "blocks"), start=1))
    held = {block.label: block for block in state.window.blocks}
    for number, asked in enumerate(edits, start=1):
        block = held.get(asked.label)
        if block is None:
            raise Refused(f"block edit {number}: there is no block {asked.label!r}")
        try:
            value = edited_value(block, asked.op, asked.text, asked.find)
        except Rejected as error:
            raise Refused(f"block edit {number}: {error}") from None
        held[block.label] = attrs.evolve(block, value=value, version=block.version + 1)
    return edits


def _edit(item: Any, number: int) -> BlockEdit:
    where = f"block edit {number}"
    if not isinstance(item, dict):
        raise Refused(f"{where} is not an object")
    label, op, text, find = (item.get(name, "") for name in ("label", "op", "text", "find"))
    for name, value in (("label", label), ("op", op), ("text", text), ("find", find)):
        if not isinstance(value, str):
            raise Refused(f"{where} has a {name} that is not text: {value!r}")
    return BlockEdit(label, op, text, find)


def distilled(
    output: str, episodes: Sequence[EpisodeRecorded]
) -> tuple[tuple[SemanticFact, ...], tuple[ProceduralRule, ...]]:
    """The facts and rules a model's ``output`` gives, or ``Refused`` saying why none."""
    data = json_object(output)
    pending = {episode.id for episode in episodes}
    semantic = tuple(
        _fact(item, n, pending) for n, item in enumerate(_list(data, "semantic"), start=1)
    )
    procedural = tuple(
        _rule(item, n, pending) for n, item in enumerate(_list(data, "procedural"), start=1)
    )
    return semantic, procedural


Distilled = tuple[tuple[SemanticFact, ...], tuple[ProceduralRule, ...], tuple[BlockEdit, ...]]
"""What a usable answer gives: the facts, the rules and the block edits."""


def _list(data: Mapping[str, Any], name: str) -> list[Any]:
    items = data.get(name, [])
    if not isinstance(items, list):
        raise Refused(f"{name} is not a list")
    return items


def _episode(item: Mapping[str, Any], where: str, pending: set[int]) -> int:
    episode = item.get("episode")
    if type(episode) is not int or episode not in pending:
        raise Refused(f"{where} names episode {episode!r}, which is not pending")
    return episode


def _fact(item: Any, number: int, pending: set[int]) -> SemanticFact:
    where = f"semantic fact {number}"
    if not isinstance(item, dict):
        raise Refused(f"{where} is not an object")
    key, text, importance = item.get("key"), item.get("text"), item.get("importance")
    if not isinstance(key, str) or not key.strip():
        raise Refused(f"{where} has an empty key")
    if not isinstance(text, str):
        raise Refused(f"{where} has no text")
    if (
        isinstance(importance, bool)
        or not isinstance(importance, int | float)
        or not math.isfinite(importance)
        or not 0 <= importance <= 1
    ):
        raise Refused(f"{where} has importance {importance!r}, not a number in [0, 1]")
    return SemanticFact(key, text, float(importance), _episode(item, where, pending))


def _rule(item: Any, number: int, pending: set[int]) -> ProceduralRule:
    where = f"procedural rule {number}"
    if not isinstance(item, dict):
        raise Refused(f"{where} is not an object")
    text = item.get("text")
    if not isinstance(text, str) or not text.strip():
        raise Refused(f"{where} has an empty text")
    return ProceduralRule(text, _episode(item, where, pending))


@attrs.frozen
class LlmConsolidation:
    """Distill the pending episodes by asking ``config``'s model with ``prompt``."""

    name: ClassVar[str] = "llm"
    config: ModelConfig
    """The model asked (the scenario's ``[llm]`` table)."""
    prompt: str = DEFAULT_PROMPT
    """What the model is asked, the pending episodes put in for ``{episodes}``."""

    @classmethod
    def from_params(cls, data: Mapping[str, Any], where: str) -> "LlmConsolidation":
        """Build the policy from a ``[consolidation]`` table and the ``[llm]`` settings."""
        params = Params(data, where)
        strict = build_settings().imports
        prompt = prompt_param(
            params, DEFAULT_PROMPT, "{episodes}", "the pending episodes", strict=strict
        )
        params.done()
        config = build_settings().llm
        if config is None:
            raise BadInput(
                f'{where}: policy "llm" needs a model: add an [llm] table with model = "..." '
                "to the scenario (or --set llm.model=...)"
            )
        return cls(config, prompt)

    @property
    def promises(self) -> frozenset[str]:
        """None beyond the invariants every policy keeps."""
        return frozenset()

    def params(self) -> dict[str, Any]:
        """The parameters, as a scenario table would write them."""
        return {"policy": self.name, "prompt": self.prompt}

    def makes_semantic_facts(self) -> bool:
        """True: a model may distill facts, which need a forgetting policy."""
        return True

    def decide(self, state: State, command: RecordEpisode | Consolidate) -> tuple[Event, ...]:
        """Record an episode, or ask the model to distill every pending one."""
        if isinstance(command, RecordEpisode):
            if not isinstance(command.text, str):
                raise Rejected(f"an episode's text must be a string, got {command.text!r}")
            return (EpisodeRecorded(state.memory.recorded + 1, command.text),)
        episodes = state.memory.episodes
        ids = tuple(episode.id for episode in episodes)
        if not episodes:
            return (Consolidated(ids, (), ()),)
        prompt = self.prompt.replace("{episodes}", render_episodes(episodes))
        if state.window.blocks:
            prompt += BLOCKS.replace("{blocks}", render_blocks(state.window))

        def read(output: str) -> Distilled:
            # The facts and rules first: an answer broken in both is refused for them.
            semantic, procedural = distilled(output, episodes)
            edits = block_edits(output, state) if state.window.blocks else ()
            return semantic, procedural, edits

        (semantic, procedural, edits), asked = ask_until_usable(
            self.config, prompt, read, "consolidation"
        )
        return (Consolidated(ids, semantic, procedural, asked, edits),)
