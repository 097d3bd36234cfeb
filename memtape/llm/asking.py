"""One model call, through the cache: what a policy's question does when it is asked live."""

import hashlib
from collections.abc import Mapping, Sequence

import attrs

from memtape.core.events import ModelCall
from memtape.llm.cache import cache_in_force, cache_key
from memtape.llm.client import chat
from memtape.llm.config import MAX_ANSWER_BYTES, ModelConfig

PROMPT_HASH_HEX = 32
"""How many hex digits of a prompt's SHA-256 a record keeps: enough to tell prompts apart,
short enough for a lean log line."""


def prompt_hash(prompt: str) -> str:
    """The hash a ``ModelCall`` records for ``prompt``: the first hex digits of its SHA-256."""
    return hashlib.sha256(prompt.encode("utf-8")).hexdigest()[:PROMPT_HASH_HEX]


def capped(text: str, limit: int) -> tuple[str, int]:
    """``text`` cut to at most ``limit`` bytes of UTF-8, on a character boundary, and how
    many characters were cut (0: it was within the limit)."""
    if len(text) * 4 <= limit:  # no character takes more than 4 bytes
        return text, 0
    # A lone surrogate (JSON may carry one) has no UTF-8 form: counted as three bytes.
    encoded = text.encode("utf-8", errors="surrogatepass")
    kept = encoded[:limit].decode("utf-8", errors="ignore")
    return kept, len(text) - len(kept)


def ask(
    config: ModelConfig,
    messages: Sequence[Mapping[str, str]],
    prompt: str,
    *,
    json_object: bool = False,
) -> ModelCall:
    """Ask ``config``'s model ``messages`` (whose hash is ``prompt``), or answer from the cache;
    ``json_object`` asks for a JSON object (``memtape.llm.client.chat``).

    An answer from the cache is recorded as ``cached`` with the seconds the
    model took when it was asked, so that runs made from a warm cache are
    the same bytes. An answer longer than ``max_answer_bytes`` is cut to it
    before it is cached or recorded, and says how many characters it lost
    (``ModelCall.cut``). The cache is looked up under the server the table names,
    so that a run's recorded table, which may send nothing, finds the answers
    it was given (``ModelConfig.named_server``).
    """
    cache = cache_in_force()
    parameters = config.parameters()
    if json_object:
        parameters["response_format"] = "json_object"
    if config.max_answer_bytes != MAX_ANSWER_BYTES:
        parameters["max_answer_bytes"] = config.max_answer_bytes
    key = cache_key(config.named_server(), config.model, messages, parameters)
    stored = None if cache is None else cache.get(key)
    if stored is not None:
        return ModelCall(
            stored.output,
            config.model,
            prompt,
            stored.prompt_tokens,
            stored.completion_tokens,
            stored.seconds,
            True,
            stored.cut,
        )
    reply = chat(config, messages, json_object=json_object)
    output, cut = capped(reply.output, config.max_answer_bytes)
    if cache is not None:
        cache.put(key, attrs.evolve(reply.stored(), output=output, cut=cut))
    return ModelCall(
        output,
        config.model,
        prompt,
        reply.prompt_tokens,
        reply.completion_tokens,
        reply.seconds,
        False,
        cut,
    )
