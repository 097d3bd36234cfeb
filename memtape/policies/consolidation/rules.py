"""Rule-based consolidation: a sleep-time pass distills episodes into durable
semantic facts, procedural rules and memory-block edits, and prunes every episode
it consumed.

A block rule (``block = {label = "human", op = "append", text = "Lives in {city}."}``)
is a sleep-time agent rewriting a memory block: the pass's ``Consolidated``
carries the edit, which the session decides as an edit step
(``memtape.policies.window.blocks.consolidated``)."""

import re
import string
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import attrs

from memtape.core.commands import BLOCK_OPS, Consolidate, RecordEpisode
from memtape.core.errors import BadInput, Rejected
from memtape.core.events import (
    BlockEdit,
    Consolidated,
    EpisodeRecorded,
    Event,
    ProceduralRule,
    SemanticFact,
)
from memtape.core.state import State
from memtape.policies.plumbing.params import Params


def _groups(pattern: re.Pattern[str], text: str) -> dict[str, str] | None:
    match = pattern.search(text)
    if match is None:
        return None
    return {name: value or "" for name, value in match.groupdict().items()}


@attrs.frozen
class SemanticPattern:
    """An episode matching ``pattern`` becomes a fact; texts may name its groups.

    A match whose key comes out blank distills nothing (the next rule may).
    """

    pattern: re.Pattern[str]
    key: str
    text: str
    importance: float

    def distill(self, episode: EpisodeRecorded) -> SemanticFact | None:
        """The fact ``episode`` becomes, or None if it does not match."""
        groups = _groups(self.pattern, episode.text)
        if groups is None:
            return None
        key, text = self.key.format_map(groups), self.text.format_map(groups)
        if not key.strip():
            # No fact can live under a blank key; the episode is still consumed.
            return None
        return SemanticFact(key, text, self.importance, episode.id)


@attrs.frozen
class ProceduralPattern:
    """An episode matching ``pattern`` becomes a procedural rule (``text``)."""

    pattern: re.Pattern[str]
    text: str

    def distill(self, episode: EpisodeRecorded) -> ProceduralRule | None:
        """The rule ``episode`` becomes, or None if it does not match."""
        groups = _groups(self.pattern, episode.text)
        if groups is None:
            return None
        return ProceduralRule(self.text.format_map(groups), episode.id)


@attrs.frozen
class BlockPattern:
    """An episode matching ``pattern`` becomes an edit of memory block ``label``: ``op``
    with ``text`` (and ``find``), which may name the pattern's groups."""

    pattern: re.Pattern[str]
    label: str
    op: str
    text: str
    find: str = ""

    def distill(self, episode: EpisodeRecorded) -> BlockEdit | None:
        """The block edit ``episode`` becomes, or None if it does not match."""
        groups = _groups(self.pattern, episode.text)
        if groups is None:
            return None
        return BlockEdit(
            self.label, self.op, self.text.format_map(groups), self.find.format_map(groups)
        )


Rule = SemanticPattern | ProceduralPattern | BlockPattern
"""A consolidation rule: a pattern and what a matching episode becomes."""


@attrs.frozen
class RuleConsolidation:
    """Distill each episode with the first rule that matches it; consume them all."""

    name: ClassVar[str] = "rules"
    rules: tuple[Rule, ...]
    sources: tuple[Mapping[str, Any], ...] = attrs.field(default=(), eq=False, repr=False)

    @classmethod
    def from_params(cls, data: Mapping[str, Any], where: str) -> "RuleConsolidation":
        """Build the policy from a scenario's ``[consolidation]`` table and its rules."""
        params = Params(data, where)
        raw = params.raw("rule", [])
        params.done()
        if not isinstance(raw, list) or not all(isinstance(r, dict) for r in raw):
            raise BadInput(f"{where}: rule must be a list of tables ([[consolidation.rule]])")
        rules = tuple(_rule(r, f"{where} rule {n}") for n, r in enumerate(raw, start=1))
        return cls(rules, tuple(raw))

    @property
    def promises(self) -> frozenset[str]:
        """None beyond the invariants every policy keeps."""
        return frozenset()

    def params(self) -> dict[str, Any]:
        """The parameters, as a scenario table would write them."""
        return {"policy": self.name, "rule": [dict(r) for r in self.sources]}

    def makes_semantic_facts(self) -> bool:
        """Whether any rule writes facts (which then needs a forgetting policy)."""
        return any(isinstance(rule, SemanticPattern) for rule in self.rules)

    def decide(self, state: State, command: RecordEpisode | Consolidate) -> tuple[Event, ...]:
        """Record an episode, or run a pass over every pending one."""
        if isinstance(command, RecordEpisode):
            if not isinstance(command.text, str):
                raise Rejected(f"an episode's text must be a string, got {command.text!r}")
            return (EpisodeRecorded(state.memory.recorded + 1, command.text),)
        return (self.distill(state.memory.episodes),)

    def distill(self, episodes: Sequence[EpisodeRecorded]) -> Consolidated:
        """The pass over ``episodes``: each distilled by its first matching rule."""
        semantic: list[SemanticFact] = []
        procedural: list[ProceduralRule] = []
        edits: list[BlockEdit] = []
        for episode in episodes:
            for rule in self.rules:
                found = rule.distill(episode)
                if isinstance(found, SemanticFact):
                    semantic.append(found)
                elif isinstance(found, ProceduralRule):
                    procedural.append(found)
                elif isinstance(found, BlockEdit):
                    edits.append(found)
                if found is not None:
                    break
        ids = tuple(e.id for e in episodes)
        return Consolidated(ids, tuple(semantic), tuple(procedural), (), tuple(edits))


def _rule(data: Mapping[str, Any], where: str) -> Rule:
    params = Params(data, where)
    source = params.text("pattern")
    try:
        pattern = re.compile(source)
    except re.error as error:
        raise params.error("pattern", f"is not a regular expression: {error}") from None
    procedural = params.optional("procedural")
    semantic = params.optional("semantic")
    block = params.optional("block")
    params.done()
    if sum(kind is not None for kind in (procedural, semantic, block)) != 1:
        raise BadInput(f"{where}: give exactly one of procedural, semantic or block")
    groups = set(pattern.groupindex)
    if block is not None:
        return _block_rule(pattern, block, groups, where)
    if procedural is not None:
        if not isinstance(procedural, str):
            raise BadInput(f"{where}: procedural must be a string, got {procedural!r}")
        _check_fields(procedural, groups, f"{where} procedural")
        return ProceduralPattern(pattern, procedural)
    if not isinstance(semantic, dict):
        raise BadInput(f"{where}: semantic must be a table with key, text and importance")
    fact = Params(semantic, f"{where} semantic")
    key = fact.text("key")
    text = fact.text("text")
    importance = fact.number("importance", minimum=0.0, maximum=1.0)
    fact.done()
    for name, template in (("key", key), ("text", text)):
        _check_fields(template, groups, f"{where} semantic {name}")
    return SemanticPattern(pattern, key, text, importance)


def _block_rule(pattern: re.Pattern[str], block: Any, groups: set[str], where: str) -> BlockPattern:
    """A block rule's ``{label, op, text, find}`` table, read and checked."""
    if not isinstance(block, dict):
        raise BadInput(f"{where}: block must be a table with label, op and text")
    edit = Params(block, f"{where} block")
    label = edit.text("label")
    op = edit.text("op")
    if op not in BLOCK_OPS:
        raise edit.error("op", f"must be one of {', '.join(BLOCK_OPS)}, got {op!r}")
    text = edit.text("text")
    find = edit.text("find") if op == "find-replace" else ""
    edit.done()
    for name, template in (("text", text), ("find", find)):
        _check_fields(template, groups, f"{where} block {name}")
    return BlockPattern(pattern, label, op, text, find)


def _check_fields(template: str, groups: set[str], where: str) -> None:
    """Allow only plain ``{group}`` fields, so that filling a template cannot fail."""
    try:
        fields = list(string.Formatter().parse(template))
    except ValueError as error:
        raise BadInput(f"{where}: {error}") from None
    for _, name, spec, conversion in fields:
        if name is None:
            continue
        if spec or conversion:
            raise BadInput(f"{where}: write a group as {{{name}}}, with no conversion or format")
        if name not in groups:
            raise BadInput(f"{where}: {{{name}}} names no group of the pattern")
