"""Replicas that summarize: Anthropic's server-side compaction, Claude Code's and Codex's
auto-compaction, LangChain's summarization middleware, and the hybrid of JetBrains'
"The Complexity Trap", each ``rolling-summary`` with its product's defaults.

Each asks a model for its summary when the scenario has an ``[llm]`` table
(``summarizer = "llm"``, every answer recorded in the event, as
``rolling-summary`` does); without one, the deterministic ``salient``
summarizer stands in, and the table the run's header records says so
(``fallback``). ``summarizer`` names another as ``rolling-summary``'s does.

- ``anthropic-compaction`` (``compact_20260112``): over ``trigger`` (150,000
  input tokens) everything so far becomes one summary, the new start of the
  window (``keep`` 0); ``instructions`` replace the summary prompt's own.
- ``claude-code``: over ``"95%"`` of ``context_window`` (200,000), a summary
  of everything but a preserved tail (``keep`` 2). Pinned turns (the
  instructions file, ``import --pin``) stay, as Claude Code re-reads
  ``CLAUDE.md`` after compacting.
- ``codex``: over ``model_auto_compact_token_limit``, clamped to 90% of
  ``context_window`` (272,000), the history becomes a summary and the most
  recent user turns, up to ``user_message_tokens`` (20,000).
- ``langchain-summarization`` (``SummarizationMiddleware``): over the trigger
  (the budget, as LangChain has none by default; a fraction is a percentage
  here), everything but the last ``keep`` (20) turns is summarized, the
  summarizer reading only the newest ``trim_tokens_to_summarize`` (4,000)
  tokens of it.
- ``masking-then-summary``: observation masking (the last ``mask_keep``, 10,
  tool results verbatim) at every turn, and a summary once the trigger (the
  budget) fires.
"""

from collections.abc import Mapping
from typing import Any, ClassVar

import attrs

from memtape.core.commands import AddTurn
from memtape.core.errors import BadInput
from memtape.core.events import Event, TurnAdded
from memtape.core.state import State, Window
from memtape.policies.plumbing.building import build_settings
from memtape.policies.plumbing.params import Params
from memtape.policies.window.replicas.masking import MASK
from memtape.policies.window.rolling_summary import RollingSummary
from memtape.policies.window.tool_clearing import ClearToolResults
from memtape.policies.window.trigger import Trigger
from memtape.policies.window.units import Group

OFFLINE = "no [llm] model: the salient summarizer stands in"
"""What a replica's table says when it summarizes without a model."""

INSTRUCTED = """\
{instructions}

Summary so far:
{summary}

New turns, oldest first:
{turns}

Write at most {limit} tokens."""
"""The summary prompt of a replica given ``instructions``: them, then what to fold."""


@attrs.frozen
class SummarizingReplica(RollingSummary):
    """``rolling-summary`` that asks the ``[llm]`` model when there is one, else says it
    stands in with ``salient`` (``fallback``), and takes ``instructions`` for its prompt."""

    name: ClassVar[str] = "summarizing-replica"
    CONTEXT_WINDOW: ClassVar[int | None] = None
    """``context_window`` when a table leaves it out (None: none)."""
    instructions: str = attrs.field(default="", kw_only=True)
    fallback: str = attrs.field(default="", kw_only=True)

    @classmethod
    def from_params(cls, data: Mapping[str, Any], where: str) -> "RollingSummary":
        """Build the replica from a ``[compaction]`` table, choosing its summarizer."""
        table = dict(data)
        if cls.CONTEXT_WINDOW is not None:
            table.setdefault("context_window", cls.CONTEXT_WINDOW)
        if "summarizer" not in table:
            if build_settings().llm is not None:
                table["summarizer"] = "llm"
            else:
                table["summarizer"] = "salient"
                table.setdefault("fallback", OFFLINE)
        instructions = table.get("instructions", "")
        if instructions and table["summarizer"] == "llm":
            if "prompt" in table or "prompt_file" in table:
                raise BadInput(f"{where}: give instructions or a prompt, not both")
            if isinstance(instructions, str):
                table["prompt"] = INSTRUCTED.replace("{instructions}", instructions)
        return super().from_params(table, where)

    @classmethod
    def read_params(cls, params: Params) -> dict[str, Any]:
        """``rolling-summary``'s parameters, with ``instructions`` and ``fallback``."""
        read = super().read_params(params)
        read["instructions"] = params.text("instructions", "")
        read["fallback"] = params.text("fallback", "")
        return read

    def params(self) -> dict[str, Any]:
        """``rolling-summary``'s table, with the instructions (and not the prompt they make)
        and the fallback when set."""
        table = super().params()
        if self.instructions:
            table.pop("prompt", None)
            table["instructions"] = self.instructions
        if self.fallback:
            table["fallback"] = self.fallback
        return table


@attrs.frozen
class AnthropicCompaction(SummarizingReplica):
    """Anthropic's server-side compaction: over ``trigger`` (150,000), the whole window
    becomes one summary, its new start."""

    name: ClassVar[str] = "anthropic-compaction"
    DEFAULT_KEEP: ClassVar[int] = 0
    DEFAULT_TRIGGER: ClassVar[Any] = 150_000
    keep: int = 0


@attrs.frozen
class ClaudeCode(SummarizingReplica):
    """Claude Code's auto-compact: over 95% of ``context_window`` (200,000), everything
    but the last ``keep`` (2) turns and the pinned ones summarized."""

    name: ClassVar[str] = "claude-code"
    DEFAULT_TRIGGER: ClassVar[Any] = "95%"
    CONTEXT_WINDOW: ClassVar[int | None] = 200_000


@attrs.frozen
class LangChainSummarization(SummarizingReplica):
    """LangChain's ``SummarizationMiddleware``: over the trigger, all but the last ``keep``
    (20) turns summarized from their newest ``trim_tokens_to_summarize`` (4,000) tokens."""

    name: ClassVar[str] = "langchain-summarization"
    DEFAULT_KEEP: ClassVar[int] = 20
    keep: int = 20
    trim_tokens_to_summarize: int = attrs.field(default=4000, kw_only=True)

    @classmethod
    def read_params(cls, params: Params) -> dict[str, Any]:
        """The summarizing replica's parameters, with ``trim_tokens_to_summarize``."""
        read = super().read_params(params)
        read["trim_tokens_to_summarize"] = params.integer(
            "trim_tokens_to_summarize", 4000, minimum=0
        )
        return read

    def params(self) -> dict[str, Any]:
        """The summarizing replica's table, with ``trim_tokens_to_summarize``."""
        return {**super().params(), "trim_tokens_to_summarize": self.trim_tokens_to_summarize}

    def _summarized(self, folded: tuple[TurnAdded, ...]) -> tuple[TurnAdded, ...]:
        """The newest folded turns that fit in ``trim_tokens_to_summarize`` tokens."""
        room = self.trim_tokens_to_summarize
        start = len(folded)
        while start and folded[start - 1].tokens <= room:
            start -= 1
            room -= folded[start].tokens
        return folded[start:]


@attrs.frozen
class Codex(SummarizingReplica):
    """Codex's auto-compact: over ``model_auto_compact_token_limit`` clamped to 90% of
    ``context_window`` (272,000), the history becomes a summary and the recent user turns
    (up to ``user_message_tokens``, 20,000)."""

    name: ClassVar[str] = "codex"
    DEFAULT_KEEP: ClassVar[int] = 0
    CONTEXT_WINDOW: ClassVar[int | None] = 272_000
    keep: int = 0
    model_auto_compact_token_limit: int | None = attrs.field(default=None, kw_only=True)
    user_message_tokens: int = attrs.field(default=20_000, kw_only=True)

    @classmethod
    def from_params(cls, data: Mapping[str, Any], where: str) -> "RollingSummary":
        """Build the replica, its trigger the auto-compact limit clamped to 90% of the
        window (unless ``trigger`` says otherwise)."""
        table: dict[str, Any] = dict(data)
        window: Any = table.setdefault("context_window", cls.CONTEXT_WINDOW)
        limit: Any = table.get("model_auto_compact_token_limit")
        if "trigger" not in table and _whole(window) and window > 0:
            clamp = window * 9 // 10
            table["trigger"] = min(limit, clamp) if _whole(limit) and limit > 0 else clamp
        return super().from_params(table, where)

    @classmethod
    def read_params(cls, params: Params) -> dict[str, Any]:
        """The summarizing replica's parameters, with Codex's own two."""
        read = super().read_params(params)
        limit = params.optional("model_auto_compact_token_limit")
        if limit is not None and (not _whole(limit) or limit < 1):
            raise params.error(
                "model_auto_compact_token_limit", f"must be an integer >= 1, got {limit!r}"
            )
        read["model_auto_compact_token_limit"] = limit
        read["user_message_tokens"] = params.integer("user_message_tokens", 20_000, minimum=0)
        return read

    def params(self) -> dict[str, Any]:
        """The summarizing replica's table, with Codex's own two."""
        table = super().params()
        if self.model_auto_compact_token_limit is not None:
            table["model_auto_compact_token_limit"] = self.model_auto_compact_token_limit
        table["user_message_tokens"] = self.user_message_tokens
        return table

    def floor(self, window: Window) -> int:
        """``rolling-summary``'s floor, and the newest user turns the fold keeps (each user
        turn counted as if a unit of its own: the floor may only be higher than the least)."""
        room = self.user_message_tokens
        kept = 0
        for turn in reversed(window.hot):
            if turn.role != "user" or turn.pinned:
                continue
            if turn.tokens > room:
                break
            room -= turn.tokens
            kept += turn.tokens
        return super().floor(window) + kept

    def _folded(self, groups: list[Group]) -> list[TurnAdded]:
        """Every unit but the pinned ones and the newest user turns that fit in
        ``user_message_tokens``."""
        room = self.user_message_tokens
        stays: set[int] = set()
        for turns, pinned, _ in reversed(groups):
            if pinned or len(turns) != 1 or turns[0].role != "user":
                continue
            if turns[0].tokens > room:
                break
            room -= turns[0].tokens
            stays.add(turns[0].turn)
        folded = [old for turns, pinned, _ in groups if not pinned for old in turns]
        return [old for old in folded if old.turn not in stays]


@attrs.frozen
class MaskingThenSummary(SummarizingReplica):
    """Observation masking at every turn (the last ``mask_keep``, 10, tool results
    verbatim), and ``rolling-summary``'s fold once the trigger fires."""

    name: ClassVar[str] = "masking-then-summary"
    mask_keep: int = attrs.field(default=10, kw_only=True)
    placeholder: str = attrs.field(default=MASK, kw_only=True)
    masking: ClearToolResults = attrs.field(init=False, eq=False, repr=False)
    """The masking half: ``clear-tool-results`` at every turn."""

    def __attrs_post_init__(self) -> None:
        super().__attrs_post_init__()
        masking = ClearToolResults(
            self.budget,
            self.mask_keep,
            self.placeholder,
            self.tokenizer,
            trigger=Trigger(every=1),
        )
        object.__setattr__(self, "masking", masking)

    @classmethod
    def read_params(cls, params: Params) -> dict[str, Any]:
        """The summarizing replica's parameters, with the masking's two."""
        read = super().read_params(params)
        read["mask_keep"] = params.integer("mask_keep", 10, minimum=0)
        read["placeholder"] = params.text("placeholder", MASK)
        return read

    def params(self) -> dict[str, Any]:
        """The summarizing replica's table, with the masking's two."""
        return {**super().params(), "mask_keep": self.mask_keep, "placeholder": self.placeholder}

    @property
    def verbatim(self) -> int:
        """The newest turn with its unit, when both the fold and the masking keep it."""
        return min(self.keep, 1 if self.mask_keep else 0)

    def decide(self, state: State, command: AddTurn) -> tuple[Event, ...]:
        """The fold when the trigger fires, else the masking."""
        folded = super().decide(state, command)
        if len(folded) > 1:
            return folded
        return self.masking.decide(state, command)


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
