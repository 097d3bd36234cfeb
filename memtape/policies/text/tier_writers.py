"""What a model writes for tiered compaction: WARM stand-ins (``warm = "llm"``) and the COLD
gist (``gist = "llm"``).

``warm = "llm"`` asks for one stand-in per unit that folds to WARM (a tool
call with its results, or a single salient turn): the model reads the call
beside its result, which a stand-in of a lone result could not, and a unit
costs one request rather than one per turn. The stand-in is the WARM item
of the unit's newest turn; its other turns are WARM items with no text and
no tokens (the stand-in speaks for them), so every turn still sits in one
tier and goes COLD in its turn. Its prompt, ``DEFAULT_WARM_PROMPT`` unless
the table gives ``warm_prompt = "..."`` or ``warm_prompt_file = "path"``,
may say:

- ``{turns}``: the unit's turns, oldest first, one a line, as the rolling
  summary lists them (``[5] assistant (calls get_order_1): Let me look.``);
- ``{limit}``: the most tokens the stand-in may take: ``warm_tokens``, or
  what the unit's texts cost verbatim if that is less (a stand-in never
  costs more than what it stands for).

``gist = "llm"`` asks, once per compaction that pushes WARM items COLD, for
the new gist: the gist so far with the pushed items folded in, in at most
``gist_tokens`` tokens, on one line. Its prompt, ``DEFAULT_GIST_PROMPT``
unless the table gives ``gist_prompt`` or ``gist_prompt_file``, may say:

- ``{gist}``: the gist so far (``(none yet)`` before the first);
- ``{items}``: the WARM items going COLD, oldest first, one a line
  (``[4] order A-1001: two charges``), those with no text left out;
- ``{cold}``: how many turns are COLD once they have gone;
- ``{limit}``: ``gist_tokens``.

Each answer is recorded in the compaction event's ``asked``, in the order
asked (the stand-ins, then the gist), so that replay never asks again and
``memtape check`` re-decides against the recorded answers. The policy, not
the model, enforces each limit (``memtape.policies.text.summarizers.cap``).
"""

from collections.abc import Sequence
from typing import ClassVar

import attrs

from memtape.core.events import ModelCall, TurnAdded, WarmItem
from memtape.llm.answers import Question, answer
from memtape.llm.asking import ask, prompt_hash
from memtape.llm.config import ModelConfig
from memtape.policies.plumbing.building import build_settings
from memtape.policies.plumbing.params import Params
from memtape.policies.text.llm_summary import NO_SUMMARY, render_turns
from memtape.policies.text.prompts import fill, prompt_param

DEFAULT_WARM_PROMPT = """\
Some turns of a conversation between a user, an assistant and its tools are leaving the \
live window. Write the note that stands in for them from now on: keep what later turns \
will need (decisions, figures, names, ids, dates, tool results and promises made) and \
drop the rest. Write plain text of at most {limit} tokens, and nothing else.

Turns, oldest first:
{turns}
"""
"""The prompt of ``warm = "llm"`` unless the table gives its own."""

DEFAULT_GIST_PROMPT = """\
You keep the gist of the oldest part of a conversation between a user, an assistant and \
its tools: one line standing for its {cold} earliest turns. Fold the notes below into the \
gist so far, keeping only what the rest of the conversation may still need (decisions, \
figures, ids, promises). Write one line of plain text of at most {limit} tokens, and \
nothing else.

Gist so far:
{gist}

Notes to fold in, oldest first:
{items}
"""
"""The prompt of ``gist = "llm"`` unless the table gives its own."""

NO_ITEMS = "(none)"
"""What ``{items}`` reads when every item going COLD is one with no text."""

VERBATIM = "verbatim"
"""``warm = "verbatim"`` (the default): a WARM item is its salient turn's bare text."""

COUNT = "count"
"""``gist = "count"`` (the default): the gist says how many turns are COLD (``gist_for``)."""

LLM = "llm"
"""``warm = "llm"`` / ``gist = "llm"``: a model writes it."""

WRITER_PARAMS: dict[str, tuple[str, ...]] = {
    "warm": ("warm_tokens", "warm_prompt", "warm_prompt_file"),
    "gist": ("gist_tokens", "gist_prompt", "gist_prompt_file"),
}
"""The parameters that belong to ``warm = "llm"`` and ``gist = "llm"``: they go when
``--set`` chooses another ``warm`` or ``gist``."""

WRITER_PROMPTS = ("warm_prompt", "gist_prompt")
"""The parameters that hold a prompt (a page of text, which the bench table leaves out)."""


def _asked(config: ModelConfig, text: str) -> ModelCall:
    """The answer to ``text`` asked of ``config``'s model, through the answers in force."""
    messages = ({"role": "user", "content": text},)
    hashed = prompt_hash(text)
    return answer(Question(config.model, hashed, lambda: ask(config, messages, hashed)))


@attrs.frozen
class LlmWarm:
    """``warm = "llm"``: ``config``'s model writes each unit's stand-in, in at most ``tokens``
    tokens, asked with ``prompt`` (a template)."""

    name: ClassVar[str] = LLM
    config: ModelConfig
    tokens: int
    prompt: str = DEFAULT_WARM_PROMPT

    def __call__(self, unit: Sequence[TurnAdded], limit: int) -> ModelCall:
        """The model's stand-in for ``unit`` in at most ``limit`` tokens."""
        values = {"{turns}": render_turns(unit), "{limit}": str(limit)}
        return _asked(self.config, fill(self.prompt, values))

    def params(self) -> dict[str, object]:
        """The table entries that build this stand-in writer again."""
        return {"warm": LLM, "warm_tokens": self.tokens, "warm_prompt": self.prompt}


@attrs.frozen
class LlmGist:
    """``gist = "llm"``: ``config``'s model writes the COLD gist, in at most ``tokens`` tokens,
    asked with ``prompt`` (a template)."""

    name: ClassVar[str] = LLM
    config: ModelConfig
    tokens: int
    prompt: str = DEFAULT_GIST_PROMPT

    def __call__(self, previous: str, items: Sequence[WarmItem], cold: int) -> ModelCall:
        """The model's gist of ``previous`` and ``items``, standing for ``cold`` turns."""
        lines = "\n".join(f"[{item.turn}] {item.text}" for item in items if item.text)
        values = {
            "{gist}": previous or NO_SUMMARY,
            "{items}": lines or NO_ITEMS,
            "{cold}": str(cold),
            "{limit}": str(self.tokens),
        }
        return _asked(self.config, fill(self.prompt, values))

    def params(self) -> dict[str, object]:
        """The table entries that build this gist writer again."""
        return {"gist": LLM, "gist_tokens": self.tokens, "gist_prompt": self.prompt}


def _config(params: Params, name: str) -> ModelConfig:
    config = build_settings().llm
    if config is None:
        raise params.error(
            name,
            '"llm" needs a model: add an [llm] table with model = "..." to the scenario '
            "(or --set llm.model=...)",
        )
    return config


def _choice(params: Params, name: str, default: str) -> str:
    choice = params.text(name, default)
    if choice not in (default, LLM):
        raise params.error(name, f'must be "{default}" or "{LLM}", got {choice!r}')
    return choice


def warm_from(params: Params, budget: int) -> LlmWarm | None:
    """What a tiered table's ``warm`` names: None for ``"verbatim"`` (the default), or the
    model's stand-ins with ``warm_tokens`` (default: a quarter of the budget) and
    ``warm_prompt`` or ``warm_prompt_file``."""
    if _choice(params, "warm", VERBATIM) == VERBATIM:
        return None
    config = _config(params, "warm")
    tokens = params.integer("warm_tokens", budget // 4, minimum=0)
    prompt = prompt_param(
        params,
        DEFAULT_WARM_PROMPT,
        "{turns}",
        "the turns to stand in for",
        strict=build_settings().imports,
        key="warm_prompt",
    )
    return LlmWarm(config, tokens, prompt)


def gist_from(params: Params, budget: int) -> LlmGist | None:
    """What a tiered table's ``gist`` names: None for ``"count"`` (the default), or the
    model's gist with ``gist_tokens`` (default: a quarter of the budget) and
    ``gist_prompt`` or ``gist_prompt_file``."""
    if _choice(params, "gist", COUNT) == COUNT:
        return None
    config = _config(params, "gist")
    tokens = params.integer("gist_tokens", budget // 4, minimum=0)
    prompt = prompt_param(
        params,
        DEFAULT_GIST_PROMPT,
        "{items}",
        "the items going COLD",
        strict=build_settings().imports,
        key="gist_prompt",
    )
    return LlmGist(config, tokens, prompt)
