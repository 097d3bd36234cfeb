"""What a run's decisions asked of models, added up.

An event whose decision called a model (a summary written by one) records its calls
(``asked``); bench reports their sum as its ``llm_*`` metrics.
"""

from collections.abc import Iterable

import attrs

from memtape.core.events import Event


@attrs.frozen
class ModelUsage:
    """What a run's decisions asked of models: the calls, those the cache answered, the
    tokens the servers counted, and the seconds spent waiting (on calls not cached)."""

    calls: int
    cache_hits: int
    prompt_tokens: int
    completion_tokens: int
    seconds: float

    def data(self) -> dict[str, int | float]:
        """The usage as the bench's ``llm_*`` metrics."""
        return {
            "llm_calls": self.calls,
            "llm_cache_hits": self.cache_hits,
            "llm_prompt_tokens": self.prompt_tokens,
            "llm_completion_tokens": self.completion_tokens,
            "llm_seconds": self.seconds,
        }


def model_usage(events: Iterable[Event]) -> ModelUsage:
    """The model calls ``events`` recorded, added up."""
    calls = hits = prompt = completion = 0
    seconds = 0.0
    for event in events:
        for call in getattr(event, "asked", ()):
            calls += 1
            hits += call.cached
            prompt += call.prompt_tokens
            completion += call.completion_tokens
            if not call.cached:
                seconds += call.seconds
    return ModelUsage(calls, hits, prompt, completion, seconds)
