"""The LLM summarizer: ``summarizer = "llm"`` asks a model to fold turns into the summary.

The prompt is a template with three placeholders, each replaced by plain
text (other braces are left as they are):

- ``{summary}``: the summary so far (``(none yet)`` before the first);
- ``{turns}``: the turns to fold in, oldest first, one a line:
  ``[5] assistant (calls get_order_1): Let me look that up.`` and
  ``[6] tool (result of get_order_1): {"status": "shipped"}``;
- ``{limit}``: the most tokens the summary may take.

``DEFAULT_PROMPT`` is the one used when the compaction table gives neither
``prompt = "..."`` nor ``prompt_file = "path"`` (``memtape.policies.text.prompts``).
The model's whole answer is recorded in the compaction event; the policy
still enforces the limit on it (``memtape.policies.text.summarizers.cap``).
"""

import re
from collections.abc import Sequence
from typing import ClassVar

import attrs

from memtape.core.events import ModelCall, TurnAdded
from memtape.llm.answers import Question, answer
from memtape.llm.asking import ask, prompt_hash
from memtape.llm.config import ModelConfig
from memtape.policies.plumbing.params import Params
from memtape.policies.text.prompts import prompt_param as _prompt_param

DEFAULT_PROMPT = """\
You keep the running summary of a conversation between a user, an assistant and its tools.
Fold the new turns into the summary so far. Keep what later turns will need: decisions, \
figures, names, ids, dates, tool results and promises made; drop greetings and small talk. \
Write plain text of at most {limit} tokens, and nothing else.

Summary so far:
{summary}

New turns, oldest first:
{turns}
"""
"""The prompt of ``summarizer = "llm"`` unless the table gives its own."""

PLACEHOLDERS = ("{summary}", "{turns}", "{limit}")
"""What a prompt may say, each replaced by its text."""

NO_SUMMARY = "(none yet)"
"""What ``{summary}`` reads before the first summary."""


def render_turns(turns: Sequence[TurnAdded]) -> str:
    """The turns as the prompt lists them: number, role, tool calls and results, text."""
    lines = []
    for turn in turns:
        tags = []
        if turn.calls:
            tags.append(f"calls {', '.join(turn.calls)}")
        if turn.answers:
            tags.append(f"result of {', '.join(turn.answers)}")
        head = f"[{turn.turn}] {turn.role}" + (f" ({'; '.join(tags)})" if tags else "")
        lines.append(f"{head}: {turn.text}")
    return "\n".join(lines)


def render_prompt(template: str, previous: str, turns: Sequence[TurnAdded], limit: int) -> str:
    """``template`` with its placeholders replaced, in one pass (a placeholder a turn's
    text happens to hold is not replaced in turn)."""
    values = {
        "{summary}": previous or NO_SUMMARY,
        "{turns}": render_turns(turns),
        "{limit}": str(limit),
    }
    return _PLACEHOLDER.sub(lambda match: values[match.group(0)], template)


_PLACEHOLDER = re.compile("|".join(re.escape(p) for p in PLACEHOLDERS))


@attrs.frozen
class LlmSummarizer:
    """A summarizer that asks ``config``'s model with ``prompt`` (a template)."""

    name: ClassVar[str] = "llm"
    config: ModelConfig
    prompt: str = DEFAULT_PROMPT

    def __call__(self, previous: str, turns: Sequence[TurnAdded], limit: int) -> ModelCall:
        """The model's summary of ``previous`` and ``turns`` in at most ``limit`` tokens."""
        text = render_prompt(self.prompt, previous, turns, limit)
        messages = ({"role": "user", "content": text},)
        hashed = prompt_hash(text)
        config = self.config
        return answer(Question(config.model, hashed, lambda: ask(config, messages, hashed)))


def prompt_param(params: Params, *, strict: bool) -> str:
    """The summary prompt a compaction table gives (``prompt`` or ``prompt_file``), or the
    default; in a scenario (``strict``) it must say ``{turns}``."""
    return _prompt_param(params, DEFAULT_PROMPT, "{turns}", "the turns to fold in", strict=strict)
