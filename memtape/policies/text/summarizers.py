"""Summarizers: what folds old turns into a running summary.

A summarizer is any callable ``(previous, turns, limit) -> str``: the summary
so far (``""`` before the first), the turns leaving the window oldest first,
and the most tokens the summary may take. The deterministic default keeps
the salient texts and drops the chatter, as the seed's WARM tier does.

A summarizer that asks the outside world returns a ``ModelCall`` instead of
a string: its ``output`` is the summary, and the policy records the whole
call in the compaction event, so that replaying a run never asks again and
``memtape check`` re-decides against the recorded answer. ``"llm"`` asks a
model (``memtape.policies.text.llm_summary``); a summarizer named by import path
(``"mypkg.module:summarize"``) is a plug-in whose every answer is recorded
the same way, so a run made with it opens, and checks, without it. The
policy, not the summarizer, enforces the limit (``cap``).
"""

import json
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import attrs

from memtape.core.codec import event_data
from memtape.core.errors import BadInput, Rejected
from memtape.core.events import ModelCall, TurnAdded
from memtape.llm.answers import Question, answer
from memtape.llm.asking import prompt_hash
from memtape.policies.plumbing.building import build_settings
from memtape.policies.plumbing.imports import imported, is_import_path
from memtape.policies.plumbing.params import Params
from memtape.policies.plumbing.trust import TRUST_HINT
from memtape.policies.text.llm_summary import LlmSummarizer, prompt_param

Summarizer = Callable[[str, Sequence[TurnAdded], int], str | ModelCall]
"""``(previous summary, turns to fold in, token limit) -> the new summary`` (or the model
call that wrote it)."""


@attrs.frozen
class SalientTexts:
    """The deterministic summary: the previous one, then each salient turn's bare text."""

    name: ClassVar[str] = "salient"

    def __call__(self, previous: str, turns: Sequence[TurnAdded], limit: int) -> str:
        """``previous`` and the salient texts of ``turns``, joined by spaces; chatter dropped."""
        return " ".join([*([previous] if previous else []), *(t.text for t in turns if t.salient)])


SUMMARIZERS: dict[str, Summarizer] = {SalientTexts.name: SalientTexts()}
"""Summarizers by the name a scenario file gives them; register your own here to
name it in a file (or to load a run recorded with it)."""


def summarizer_named(name: str) -> Summarizer:
    """The summarizer registered as ``name``, or a clear error listing the known ones."""
    try:
        return SUMMARIZERS[name]
    except KeyError:
        known = ", ".join(sorted(SUMMARIZERS))
        raise BadInput(
            f"unknown summarizer {name!r} (known: {known}; register yours in "
            "memtape.policies.text.summarizers.SUMMARIZERS)"
        ) from None


def inputs_hash(previous: str, turns: Sequence[TurnAdded], limit: int) -> str:
    """The hash a plug-in's answer records as its prompt: that of its inputs, as JSON."""
    inputs = [previous, [event_data(turn) for turn in turns], limit]
    return prompt_hash(json.dumps(inputs, sort_keys=True, ensure_ascii=False))


@attrs.frozen
class PluginSummarizer:
    """A summarizer named by import path, whose every answer is recorded.

    ``name`` is the import path; ``function`` the callable it names, which
    returns a string (recorded as a ``ModelCall`` of model ``name``, no
    tokens, 0 seconds: a plug-in's time is not measured, so its runs stay
    byte for byte the same) or a ``ModelCall`` of its own (recorded as it
    says, with the prompt hash of its inputs).
    """

    name: str
    function: Callable[..., Any] = attrs.field(eq=False)

    def __call__(self, previous: str, turns: Sequence[TurnAdded], limit: int) -> ModelCall:
        """The plug-in's summary, or its recorded answer under a replay."""
        prompt = inputs_hash(previous, turns, limit)

        def ask() -> ModelCall:
            written = self.function(previous, tuple(turns), limit)
            if isinstance(written, ModelCall):
                return attrs.evolve(written, prompt=prompt)
            if not isinstance(written, str):
                raise BadInput(f"the summarizer {self.name!r} returned {written!r}, not a string")
            return ModelCall(written, self.name, prompt, 0, 0, 0.0, False)

        return answer(Question(self.name, prompt, ask))


class SummarizerNotHere(Rejected):
    """A summary was needed from a summarizer this memtape cannot run (not imported, or not
    registered): only its recorded answers are at hand."""


@attrs.frozen
class StoodInSummarizer:
    """A run file's summarizer that is not run here: named by import path (run files are
    data, so it is not imported) or by a name not registered in ``SUMMARIZERS``.

    It folds nothing new; under a replay (``memtape check``) it gives back the
    answers the run recorded, and asked for a new summary it refuses in one line.
    """

    name: str

    def __call__(self, previous: str, turns: Sequence[TurnAdded], limit: int) -> ModelCall:
        """The recorded answer under a replay; otherwise ``SummarizerNotHere``."""
        return answer(Question(self.name, inputs_hash(previous, turns, limit), self._refuse))

    def _refuse(self) -> ModelCall:
        if is_import_path(self.name):
            why = (
                "which this run names by import path; run files are data, so memtape did "
                f"not import it ({TRUST_HINT})"
            )
        else:
            why = "which is not registered here (memtape.policies.text.summarizers.SUMMARIZERS)"
        raise SummarizerNotHere(f"a new summary needs summarizer {self.name!r}, {why}")


def summarizer_from(params: Params) -> Summarizer:
    """The summarizer a compaction table names (``summarizer``, default ``salient``), with
    its own parameters: ``prompt`` or ``prompt_file`` for ``"llm"``.

    Built within ``memtape.policies.plumbing.building``: ``"llm"`` takes the ``[llm]``
    settings in force; an import path is imported, or stood in for when
    imports are off (a run file), as is a name not registered here.
    """
    name = params.text("summarizer", SalientTexts.name)
    settings = build_settings()
    if name == LlmSummarizer.name:
        if settings.llm is None:
            raise params.error(
                "summarizer",
                '"llm" needs a model: add an [llm] table with model = "..." to the scenario '
                "(or --set llm.model=...)",
            )
        return LlmSummarizer(settings.llm, prompt_param(params, strict=settings.imports))
    if not settings.imports and (is_import_path(name) or name not in SUMMARIZERS):
        return StoodInSummarizer(name)
    if is_import_path(name):
        function = imported(name, params.where, "summarizer", "mypkg.module:summarize")
        if not callable(function):
            raise params.error("summarizer", f"{name!r} names {function!r}, which is not callable")
        return PluginSummarizer(name, function)
    try:
        return summarizer_named(name)
    except BadInput as error:
        raise params.error("summarizer", str(error)) from None


SUMMARIZER_PARAMS = ("prompt", "prompt_file")
"""The parameters that belong to a summarizer rather than to its policy: they go when
``--set`` names another summarizer."""


def summarizer_params(summarizer: Summarizer) -> dict[str, Any]:
    """The table entries that name ``summarizer`` (``summarizer_from`` reads them back)."""
    table: dict[str, Any] = {"summarizer": name_of(summarizer)}
    if isinstance(summarizer, LlmSummarizer):
        table["prompt"] = summarizer.prompt
    return table


def name_of(summarizer: Summarizer) -> str:
    """The name a run file records for ``summarizer``: its ``name``, else its ``__name__``."""
    for attribute in ("name", "__name__"):
        name = getattr(summarizer, attribute, None)
        if isinstance(name, str) and name:
            return name
    return type(summarizer).__name__


def cap(text: str, limit: int, count: Callable[[str], int]) -> str:
    """``text`` if it costs at most ``limit`` tokens, else its newest words that do.

    The oldest words go first, as the oldest WARM items are the first to go
    cold in the tiered policy. Words are rejoined by single spaces.
    """
    if count(text) <= limit:
        return text
    words = text.split()
    # The most trailing words that fit: a binary search, then a step back in case a
    # tokenizer is not monotone in the words it is given.
    low, high = 0, len(words)
    while low < high:
        middle = (low + high + 1) // 2
        if count(" ".join(words[-middle:])) <= limit:
            low = middle
        else:
            high = middle - 1
    while low and count(" ".join(words[-low:])) > limit:
        low -= 1
    return " ".join(words[-low:]) if low else ""
